"""The engine's event loop (:func:`archsim.engines.desim.loop.run_to_end`) is SimPy's, event for event."""

from __future__ import annotations

import pytest
import simpy

from archsim.engines.desim.loop import FIRED, LeanProcess, run_to_end


def _scenario(env: simpy.Environment, log: list[tuple[float, str]]) -> None:
    """Processes that tie at equal times, wait on each other and on conditions: the order of the log
    is the order SimPy processes the events in."""
    flag = env.event()

    def ticker(name: str, dt: float, n: int):
        for i in range(n):
            yield env.timeout(dt)
            log.append((env.now, f"{name}{i}"))
        if name == "a":
            flag.succeed()

    def waiter():
        yield flag
        log.append((env.now, "flag"))
        yield env.all_of([env.timeout(0.5), env.timeout(0.25)])
        log.append((env.now, "both"))

    env.process(ticker("a", 1.0, 3))
    env.process(ticker("b", 0.5, 6))  # ties with "a" at 1, 2, 3
    env.process(waiter())


def test_same_events_in_the_same_order_as_environment_run():
    runs = []
    for loop in (simpy.Environment.run, run_to_end):
        env = simpy.Environment()
        log: list[tuple[float, str]] = []
        _scenario(env, log)
        loop(env)
        runs.append((log, env.now, next(env._eid)))
    assert runs[0] == runs[1]
    assert runs[0][0][-1] == (3.5, "both")  # flag at 3, then the longer of 0.5 and 0.25


def test_a_failing_process_raises_as_environment_run_does():
    env = simpy.Environment()

    def bad():
        yield env.timeout(1.0)
        raise ValueError("broken op")

    env.process(bad())
    with pytest.raises(ValueError, match="broken op"):
        run_to_end(env)
    assert env.now == 1.0


def _lean_log(process_cls) -> tuple[list[tuple[float, str]], object]:
    env = simpy.Environment()
    log: list[tuple[float, str]] = []

    def worker(name: str, dt: float):
        for i in range(3):
            yield env.timeout(dt)
            log.append((env.now, f"{name}{i}"))
        return name

    procs = [process_cls(env, worker(n, dt)) for n, dt in (("a", 1.0), ("b", 0.5), ("c", 1.0))]
    both = env.all_of(procs)
    env.run()
    return log, [both.value[p] for p in procs]


def test_lean_process_runs_as_simpy_process():
    assert _lean_log(LeanProcess) == _lean_log(simpy.Process)


def test_lean_process_errors_read_as_in_simpy():
    env = simpy.Environment()

    def bad():
        yield env.timeout(1.0)
        raise ValueError("broken op")

    def not_an_event():
        yield 42

    def waits_on_failure():
        failing = env.event()
        failing.fail(KeyError("lost"))
        try:
            yield failing
        except KeyError:
            return "handled"

    LeanProcess(env, bad())
    with pytest.raises(ValueError, match="broken op"):
        run_to_end(env)
    env = simpy.Environment()
    LeanProcess(env, not_an_event())
    with pytest.raises(RuntimeError, match="Invalid yield value"):
        run_to_end(env)
    env = simpy.Environment()
    p = LeanProcess(env, waits_on_failure())
    run_to_end(env)
    assert p.value == "handled"


def test_fired_is_processed_as_an_event_without_callbacks():
    # Scheduled twice among real timeouts: SimPy's loop and run_to_end both process it (one event id
    # each, no callbacks) and leave the clock where the real events put it.
    for loop in (simpy.Environment.run, run_to_end):
        env = simpy.Environment()
        env.timeout(2.0)
        env.schedule(FIRED)
        env.schedule(FIRED, delay=1.0)
        loop(env)
        assert env.now == 2.0
        assert next(env._eid) == 3
        assert FIRED.callbacks == ()
