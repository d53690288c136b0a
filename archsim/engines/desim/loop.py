"""SimPy's event loop without a method call per event.

``simpy.Environment.run()`` calls ``step()`` once per event; on a run of cheap events (a kernel's
timer, its flow's completion, a task's done flag) that call is a sizeable share of the time per
event. :func:`run_to_end` runs the same loop inline: it pops the events in the same order (the
heap of ``(time, priority, event id, event)`` that ``Environment.schedule`` fills), sets the clock,
hands each event to its callbacks and raises a failed event's exception as ``step()`` does, so a
run is the same run, event for event. It reads SimPy's internals (``_queue``, ``_now``) as they are
in simpy 4.1 (``simpy/core.py``, ``Environment.step``); ``tests/unit/des/test_des_loop.py`` checks
it against ``Environment.run()``.
"""

from __future__ import annotations

from heapq import heappop

import simpy

__all__ = ["run_to_end"]


def run_to_end(env: simpy.Environment) -> None:
    """Process every scheduled event of ``env`` in order, until none is left (``env.run()``)."""
    queue = env._queue
    pop = heappop
    while queue:
        env._now, _, _, event = pop(queue)
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            # As Environment.step: a failed event nobody handled crashes the run, with a copy of its
            # exception chained to the original.
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc
