"""Independent pure jobs, run in this process, in local worker processes or on a Dask cluster.

One seam for every embarrassingly parallel loop of the book (event-generation chunks, rubric
sweep jobs, seed sweeps). A job is ``fn(item)``: a function importable by module name (so worker
processes can unpickle it) whose result depends on ``item`` only. Results reach the caller, in
this process, as jobs complete; callers that need a fixed order use the job index.

* ``client=None, workers=1``: in this process, in item order (monkeypatching and debuggers work).
* ``client=None, workers>1``: a pool of fresh (spawned) processes that exit when this process dies.
* ``client=<dask.distributed.Client>``: the jobs run on that cluster; a worker lost mid-job has
  its jobs rescheduled by the Dask scheduler.

:func:`dask_client` opens a client on a scheduler address or on a local cluster. A local cluster
listens on the loopback interface only (scheduler, workers, nannies and the dashboard, which has
no authentication); ``dashboard_address`` opens the dashboard wider. A remote scheduler runs the
jobs it is given and the client unpickles what its workers return: connect only to a scheduler
you trust, over ``tls://`` on a network you do not.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from posteval.progress import tqdm

#: Seconds between two checks, in a pool worker, that the process that started it is alive.
PARENT_POLL_SECONDS = 0.5
#: Interface of every listener of a local Dask cluster.
LOOPBACK = "127.0.0.1"
#: Default address of a local cluster's dashboard: the loopback interface, a free port.
LOCAL_DASHBOARD = f"{LOOPBACK}:0"


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    return int(workers)


def _exit_with_parent(parent_pid: int) -> None:
    """Pool-worker initializer: end this process as soon as ``parent_pid`` is gone.

    On Linux the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``); a daemon
    thread polling the parent pid covers other systems and a parent that died before the call.
    """
    try:

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _serial(fn, items) -> Iterator[tuple[int, Any]]:
    for i, item in enumerate(items):
        yield i, fn(item)


def _process_pool(fn, items, workers: int) -> Iterator[tuple[int, Any]]:
    # Fresh interpreters (spawn): no fork of a parent that may hold torch or BLAS threads.
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(min(workers, len(items)), mp_context=ctx, initializer=_exit_with_parent,
                               initargs=(os.getpid(),))
    finished = False
    try:
        pending = {pool.submit(fn, item): i for i, item in enumerate(items)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool as err:
                    raise RuntimeError("a worker process died; the main module must be importable (a script, "
                                       "a notebook), not stdin; results already handed over are kept") from err
                yield i, result
        finished = True
    finally:
        # On an error or an interruption do not wait for the running jobs; their workers exit on their own.
        pool.shutdown(wait=finished, cancel_futures=not finished)


def _dask(fn, items, client) -> Iterator[tuple[int, Any]]:
    from distributed import as_completed

    futures = client.map(fn, list(items), pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for future in as_completed(futures, loop=client.loop):
            result = future.result()
            future.release()
            yield index[future.key], result
    finally:
        client.cancel([f for f in futures if not f.done()])


def for_each_completed(fn: Callable[[Any], Any], items: Sequence, consume: Callable[[int, Any], None], *,
                       workers: int = 1, client=None, desc: str = "jobs", unit: str = "job",
                       progress: bool = True, initial: int = 0) -> None:
    """Run ``fn(item)`` for every item and call ``consume(index, result)`` here as each job completes.

    ``consume`` runs in the calling process, one result at a time, so it may write files. When it
    or a job raises, the jobs not started yet are cancelled and the error propagates.

    Parameters
    ----------
    fn : callable
        The job; with ``workers > 1`` or a ``client`` it must be importable by module name.
    items : sequence
        One item per job (picklable).
    consume : callable
        ``consume(index, result)``: ``index`` is the item's position in ``items``.
    workers : int
        Local processes when ``client`` is None; 1 runs the jobs in this process, in order.
    client : dask.distributed.Client, optional
        Run the jobs on this Dask cluster (``workers`` is then ignored).
    desc, unit, progress : str, str, bool
        The tqdm bar over completed jobs (``progress=False`` hides it).
    initial : int
        Jobs already done before this call (counted in the bar's total and start).
    """
    workers = _check_workers(workers)
    if isinstance(initial, bool) or not isinstance(initial, (int, np.integer)) or initial < 0:
        raise ValueError(f"initial must be a non-negative integer, got {initial!r}")
    items = list(items)
    if client is not None and items:
        results = _dask(fn, items, client)
    elif client is not None or workers == 1 or len(items) <= 1:
        results = _serial(fn, items)
    else:
        results = _process_pool(fn, items, workers)
    with tqdm(total=len(items) + int(initial), initial=int(initial), desc=desc, unit=unit,
              disable=not progress) as bar, contextlib.closing(results):
        for i, result in results:
            consume(i, result)
            bar.update(1)


def map_jobs(fn: Callable[[Any], Any], items: Sequence, **kwargs) -> list:
    """``[fn(item) for item in items]`` through :func:`for_each_completed` (same keyword arguments)."""
    items = list(items)
    out: list = [None] * len(items)

    def keep(i, result):
        out[i] = result

    for_each_completed(fn, items, keep, **kwargs)
    return out


class BackgroundJobs:
    """Jobs started in worker processes (or on a Dask ``client``) that run while this process goes on.

    ``results(indices)`` waits for those jobs only and returns their results in that order, so a
    notebook can start every job in one cell and use each result in the cell that needs it, while
    the jobs not needed yet keep running (FIFO: put the jobs needed first at the front of ``items``).
    The results are the same as ``map_jobs(fn, items, workers=..., client=...)``'s: only the
    moment they are waited for changes.

    When a job fails, the jobs not started yet are cancelled and a ``results`` call that needs a job
    that did not finish raises ``RuntimeError`` naming those jobs, from the job's error.

    Example
    -------
    >>> import math
    >>> jobs = BackgroundJobs(math.factorial, [5, 3, 4], workers=2)
    >>> jobs.results([2, 0])
    [24, 120]
    """

    def __init__(self, fn: Callable[[Any], Any], items: Sequence, *, workers: int = 1, client=None):
        self._items = list(items)
        workers = _check_workers(workers)
        self._done: dict[int, Any] = {}  # position -> result, in the order the jobs finished
        self._error: BaseException | None = None
        self._finished = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(fn, workers, client), name="background-jobs",
                                        daemon=True)
        self._thread.start()

    def _run(self, fn, workers, client) -> None:
        try:
            if self._items:
                # always other processes (a pool of one for workers=1): a job run in a thread of this
                # process would share torch's global RNG and thread settings with the caller
                results = _dask(fn, self._items, client) if client is not None else _process_pool(fn, self._items,
                                                                                                   workers)
                with contextlib.closing(results):
                    for i, result in results:
                        with self._changed:
                            self._done[i] = result
                            self._changed.notify_all()
        except BaseException as err:  # handed to the caller by results() and first_done()
            self._error = err
        finally:
            with self._changed:
                self._finished = True
                self._changed.notify_all()

    def __len__(self) -> int:
        return len(self._items)

    def _positions(self, indices: Sequence[int]) -> list[int]:
        indices = [int(i) for i in indices]
        bad = [i for i in indices if not 0 <= i < len(self._items)]
        if bad:
            raise IndexError(f"job positions {bad} outside 0..{len(self._items) - 1}")
        return indices

    def _wait(self, ready: Callable[[], bool], timeout: float | None, what: str) -> None:
        """Wait (holding the condition) until ``ready()`` or the jobs have all ended; TimeoutError naming ``what``."""
        if not self._changed.wait_for(lambda: ready() or self._finished, timeout=timeout):
            raise TimeoutError(f"{what} not finished after {timeout} s")

    def _not_finished(self, missing: list[int]) -> RuntimeError:
        return RuntimeError(f"jobs {missing} did not finish: {self._error!r}")

    def first_done(self, indices: Sequence[int], timeout: float | None = None) -> int:
        """The position, among ``indices``, of the job that finished first (waiting for one if none has).

        Lets a caller handle results in the order the jobs end rather than the order they were
        given; ``TimeoutError``, ``IndexError`` and ``RuntimeError`` as for :meth:`results`.
        """
        indices = self._positions(indices)
        if not indices:
            raise ValueError("first_done needs at least one job position")
        with self._changed:
            self._wait(lambda: any(i in self._done for i in indices), timeout, f"none of the jobs {indices}")
            done = [i for i in self._done if i in indices]
            if not done:
                raise self._not_finished(indices) from self._error
            return done[0]

    def results(self, indices: Sequence[int], timeout: float | None = None) -> list:
        """The results of the jobs ``indices`` (positions in ``items``), waiting for them if needed.

        ``TimeoutError`` after ``timeout`` seconds (None: no limit); ``IndexError`` for a position
        outside ``items``; ``RuntimeError`` from a job's error or a lost worker.
        """
        indices = self._positions(indices)
        with self._changed:
            self._wait(lambda: all(i in self._done for i in indices), timeout,
                       f"jobs {[i for i in indices if i not in self._done]}")
            missing = [i for i in indices if i not in self._done]
            if missing:
                raise self._not_finished(missing) from self._error
            return [self._done[i] for i in indices]


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, n_workers: int | None = None, *, timeout: float = 10.0,
                dashboard_address: str | None = LOCAL_DASHBOARD):
    """A ``dask.distributed.Client`` on ``scheduler`` (``"tcp://HOST:PORT"``) or on a new local cluster.

    With ``scheduler=None`` a ``LocalCluster`` of ``n_workers`` processes (one thread each) is started
    and closed on exit. Its scheduler, nannies, workers and their HTTP pages listen on 127.0.0.1
    only; its dashboard (no authentication) at ``dashboard_address``: the loopback interface and
    a free port by default, None for none, e.g. ``"0.0.0.0:8787"`` to open it to the network.

    A scheduler runs whatever its clients send, and the client unpickles its workers' results:
    connect only to one you trust, with ``tls://`` (and certificates) on a network you do not.
    ``ConnectionError`` naming the address if no scheduler answers within ``timeout`` seconds.
    """
    from distributed import Client, LocalCluster

    if (scheduler is None) == (n_workers is None):
        raise ValueError("give exactly one of scheduler (an address) and n_workers (a local cluster)")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if scheduler is not None:
        if not isinstance(scheduler, str) or "://" not in scheduler:
            raise ValueError(f"scheduler must be an address such as 'tcp://HOST:PORT', got {scheduler!r}")
        try:
            client = Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as err:
            reason = (str(err).splitlines() or [""])[0]
            raise ConnectionError(f"no Dask scheduler answered at {scheduler} within {timeout:g} s "
                                  f"({type(err).__name__}: {reason})") from err
        with client:
            yield client
        return
    n_workers = _check_workers(n_workers)
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host=LOOPBACK,
                      dashboard_address=dashboard_address, worker_dashboard_address=f"{LOOPBACK}:0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def integer_at_least(minimum: int) -> Callable[[str], int]:
    """An ``argparse`` type: an integer >= ``minimum`` (``ArgumentTypeError`` naming the text otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


def add_cluster_arguments(parser) -> None:
    """Add ``--scheduler ADDRESS``, ``--dask-workers N`` and ``--dask-dashboard ADDRESS`` to an ``argparse`` parser."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--scheduler", help="run on the Dask scheduler at this address, e.g. tcp://HOST:PORT "
                                           "(a trusted one: it runs what it is sent; tls:// across networks)")
    group.add_argument("--dask-workers", type=integer_at_least(1), help="run on a local Dask cluster of this many processes")
    parser.add_argument("--dask-dashboard", default=LOCAL_DASHBOARD, metavar="ADDRESS",
                        help=f"dashboard of the local cluster (no authentication), default {LOCAL_DASHBOARD}: "
                             "loopback only; e.g. 0.0.0.0:8787 opens it to the network")


@contextlib.contextmanager
def client_from_arguments(args):
    """The Dask client that the options of :func:`add_cluster_arguments` ask for, or None (local processes).

    A scheduler that does not answer ends the program with one line naming it (exit code 2).
    """
    if args.scheduler is None and args.dask_workers is None:
        yield None
        return
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(dask_client(args.scheduler, args.dask_workers,
                                                     dashboard_address=args.dask_dashboard))
        except ConnectionError as err:
            print(f"error: --scheduler: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        yield client
