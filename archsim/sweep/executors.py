"""Executors: where the chunks of a sweep run.

* ``serial``: in this process, chunk after chunk.
* ``processes`` (default): a local process pool, one worker per core unless ``workers`` says
  otherwise (``fork`` where the platform has it: workers start in milliseconds and inherit the
  imported modules; ``spawn`` elsewhere).
* ``dask``: a Dask cluster the user already has: ``address="tcp://host:8786"`` or a
  ``dask.distributed.Client`` (a SLURM cluster from dask-jobqueue, a ``LocalCluster``, ...). Needs the
  ``dask`` extra (``pip install archsim[dask]``). The shared payload is scattered to the workers once.

Every executor calls :func:`archsim.sweep.evaluate.evaluate_chunk` on the same chunks, and the sweep
orders the rows by point, so the executor never changes the result. ``on_done`` receives each finished
chunk's rows as soon as it completes (that is what makes the store incremental).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from archsim.allocator import keep_freed_memory
from archsim.errors import SweepError
from archsim.sweep.evaluate import ChunkPayload, PointTask, evaluate_chunk

__all__ = ["EXECUTORS", "execute", "default_workers"]

EXECUTORS: tuple[str, ...] = ("serial", "processes", "dask")

OnDone = Callable[[list[dict[str, Any]]], None]

_IN_FLIGHT_PER_WORKER = 2  # queued chunks per process worker: one running, one ready to start


def default_workers() -> int:
    """The cores this process may use (the scheduler affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _serial(payload: ChunkPayload, chunks: Sequence[Sequence[PointTask]], on_done: OnDone) -> None:
    for chunk in chunks:
        on_done(evaluate_chunk(payload, chunk))


def _init_worker(parent: int) -> None:
    """Pool-worker initializer: die with the parent (:func:`_die_with_parent`) and keep freed
    memory for reuse (:func:`keep_freed_memory`)."""
    _die_with_parent(parent)
    keep_freed_memory()


def _die_with_parent(parent: int) -> None:
    """The worker is killed when the sweep's process dies, even by SIGKILL (Linux
    ``prctl(PR_SET_PDEATHSIG)``); elsewhere a worker notices an orphaned pipe on its next task."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _processes(payload: ChunkPayload, chunks: Sequence[Sequence[PointTask]], on_done: OnDone,
               workers: int) -> None:
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=context,
                             initializer=_init_worker, initargs=(os.getpid(),)) as pool:
        # A few chunks per worker in flight, the next submitted as one finishes: a chunk's tasks
        # exist only from its submission to its result (a sweep's chunks may be built when read).
        todo = iter(chunks)
        pending = {pool.submit(evaluate_chunk, payload, chunk)
                   for chunk in itertools.islice(todo, _IN_FLIGHT_PER_WORKER * workers)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for chunk in itertools.islice(todo, len(done)):
                    pending.add(pool.submit(evaluate_chunk, payload, chunk))
                for fut in done:
                    on_done(fut.result())
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def _dask(payload: ChunkPayload, chunks: Sequence[Sequence[PointTask]], on_done: OnDone,
          address: str | None, client: Any) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SweepError("executor 'dask' needs dask.distributed: pip install 'archsim[dask]'") from None
    own = client is None
    if own:
        if not address:
            raise SweepError("executor 'dask' needs address='tcp://host:port' or client=<dask.distributed.Client>")
        check_address(address)
        from archsim.limits import limits

        timeout = limits().dask_timeout_s
        try:
            client = Client(address, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {address!r} within {timeout:g} s "
                             f"(ARCHSIM_DASK_TIMEOUT_S): {' '.join(str(exc).split())[:160]}") from None
        except (ValueError, TypeError) as exc:
            raise SweepError(f"Dask scheduler address {address!r} is not usable: {exc}; "
                             "expected 'tcp://host:port'") from None
    try:
        # hash=False: a fresh key per run. With content keys, a second sweep on the same cluster
        # scatters the same key that the first run's client is releasing, and the scheduler can
        # drop it under the new run's tasks ('lost dependencies').
        shared = client.scatter(payload, broadcast=True, hash=False)
        futures = [client.submit(evaluate_chunk, shared, list(chunk), pure=False) for chunk in chunks]
        try:
            for fut in as_completed(futures):
                on_done(fut.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own:
            client.close()


_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|ws|wss)://)?[\w.\-\[\]:]+:\d{1,5}/?$|^inproc://\S+$")


def check_address(address: Any) -> str:
    """A Dask scheduler address ``[scheme://]host:port``, or a SweepError saying what is expected."""
    if not isinstance(address, str) or not _ADDRESS.match(address.strip()):
        raise SweepError(f"Dask scheduler address {address!r} is not of the form 'tcp://host:port' "
                         "(schemes: tcp, tls, ucx, inproc, ws, wss)")
    return address.strip()


def execute(payload: ChunkPayload, chunks: Sequence[Sequence[PointTask]], on_done: OnDone, *,
            executor: str = "processes", workers: int | None = None, address: str | None = None,
            client: Any = None) -> None:
    """Run every chunk on ``executor``, calling ``on_done(rows)`` as each finishes."""
    if executor not in EXECUTORS:
        raise SweepError(f"executor {executor!r} is not known; allowed: {', '.join(EXECUTORS)}")
    if (address is not None or client is not None) and executor != "dask":
        raise SweepError("address/client are for executor='dask'")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers must be a positive integer, got {workers!r}")
    if address is not None:
        check_address(address)
    if not chunks:
        return
    if executor == "dask":
        _dask(payload, chunks, on_done, address, client)
    elif executor == "processes" and len(chunks) > 1 and (workers or default_workers()) > 1:
        _processes(payload, chunks, on_done, workers or default_workers())
    else:
        # One chunk or one core: a pool would only add its start-up time.
        _serial(payload, chunks, on_done)
