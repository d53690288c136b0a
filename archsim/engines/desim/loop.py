"""SimPy's event loop without a method call per event, a leaner process resume, and a done flag
that needs no event object.

``simpy.Environment.run()`` calls ``step()`` once per event; on a run of cheap events (a kernel's
timer, its flow's completion, a task's done flag) that call is a sizeable share of the time per
event. :func:`run_to_end` runs the same loop inline: it pops the events in the same order (the
heap of ``(time, priority, event id, event)`` that ``Environment.schedule`` fills), sets the clock,
hands each event to its callbacks and raises a failed event's exception as ``step()`` does, so a
run is the same run, event for event. It reads SimPy's internals (``_queue``, ``_now``) as they are
in simpy 4.1 (``simpy/core.py``, ``Environment.step``); ``tests/unit/des/test_des_loop.py`` checks
it against ``Environment.run()``, and :class:`LeanProcess` and :data:`FIRED` against SimPy's own.
"""

from __future__ import annotations

from heapq import heappop
from typing import Any

import simpy

__all__ = ["run_to_end", "LeanProcess", "FIRED"]


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


class LeanProcess(simpy.Process):
    """A ``simpy.Process`` whose resume (``Process._resume``, called once per event a process waits
    on) takes the successful path with fewer lookups: the generator's ``send`` and the resume
    callback itself are bound once per process instead of once per event. A failed event, a
    generator that raises and a yield of something that is not an event go through SimPy's own
    ``_resume``, so errors read as they do in SimPy."""

    def __init__(self, env: simpy.Environment, generator: Any) -> None:
        super().__init__(env, generator)
        self._send = generator.send
        self._resume_cb = self._resume

    def _resume(self, event: simpy.Event) -> None:
        env = self.env
        env._active_proc = self
        send = self._send
        while True:
            if not event._ok:
                simpy.Process._resume(self, event)
                return
            try:
                event = send(event._value)
            except StopIteration as stop:
                self._ok = True
                self._value = stop.args[0] if stop.args else None
                env.schedule(self)
                break
            except BaseException as exc:
                self._ok = False
                exc.__traceback__ = exc.__traceback__.tb_next  # type: ignore[union-attr]
                self._value = exc
                env.schedule(self)
                break
            try:
                callbacks = event.callbacks
            except AttributeError:
                raise RuntimeError(f'Invalid yield value "{event}"') from None
            if callbacks is not None:  # not yet processed: resume when it is
                callbacks.append(self._resume_cb)
                break
        self._target = event
        env._active_proc = None


class _Fired:
    """The done flag of a task that nothing waits on: scheduled and processed in the queue as the
    task's own event would be (same place, same event id, no callbacks to run), without an event
    object and its callback list per task. Nothing can wait on it (it has no callbacks to append
    to; a waiter needs a real ``simpy.Event``), so a run keeps real events for the tasks it waits on."""

    __slots__ = ()
    _ok = True
    _value = None

    @property
    def callbacks(self) -> tuple[()]:
        return ()

    @callbacks.setter
    def callbacks(self, _value: Any) -> None:
        pass  # processing sets an event's callbacks to None; there are none to drop


FIRED = _Fired()
