"""A search's scan on a Dask cluster (``wavedp.search(..., client=...)``).

The database is cut into shards of about equal residues; one task per shard opens the
database on its worker (memory-mapped from a shared file system, once per worker process),
scans the shard with that worker's engine (its device, the search's ``partition``) and
returns each query's best candidates with global indices; the client merges them in the hit
order of ``wavedp.ranking``.
Only the path, the shard's range, the encoded queries (a batch of them per round of tasks:
``search.api.BATCH_CELLS``) and the scoring travel to the workers. Tasks are deterministic:
Dask reruns those of a worker that dies. ``connect`` gives a client (of a running scheduler
or of a local cluster it starts), ``close`` closes it. A round of tasks that the cluster
holds but nobody runs is submitted again (``STALL_CHECK``), then fails with a DeviceError.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import engines
from ..db.database import Database
from ..device import Device, choose, gpu_status
from ..engines.common import shard_ranges
from ..errors import DeviceError, InputError
from ..ranking import PLUS, Candidates, Thresholds, merge, thresholds_of
from ..scoring import Scoring

#: seconds ``connect`` waits for a scheduler
CONNECT_TIMEOUT = 10.0
#: shards per worker thread when not told otherwise (a straggler holds up less of the work)
SHARDS_PER_THREAD = 2
#: a local cluster logs errors only (a lost worker's shards rerun elsewhere) and takes any
#: free port for its dashboard
_QUIET = {"silence_logs": logging.ERROR, "dashboard_address": ":0"}
# Dask's loop runner gives its IO-loop thread a fixed 10 s to start and then fails an assert; a
# loaded machine can miss that (seen once on a 2-core CI machine), so a local start is retried.
LOCAL_START_ATTEMPTS = 3
#: seconds without a shard finishing after which the client checks that the cluster is still at
#: work: a round whose tasks nobody runs (seen once: the client waiting, every worker idle) is
#: submitted again rather than waited on for ever
STALL_CHECK = 30.0
#: checks in a row that find the cluster idle before a round counts as stalled
STALL_CHECKS = 2
#: times a stalled round is submitted again before the search fails
STALL_RETRIES = 2


def _distributed():
    try:
        import distributed
    except ImportError:
        raise InputError("a Dask cluster needs dask.distributed: "
                         "pip install 'wavedp[cluster]'") from None
    return distributed


def _identity(db: Database) -> tuple:
    """What tells two copies of a database apart without reading it (from its header)."""
    return len(db), db.total_residues, db.longest, tuple(db.composition.tolist())


@dataclass(frozen=True)
class _Spec:
    """What a worker needs besides a shard's range and the queries (small, hashable)."""

    path: str
    identity: tuple
    scoring: Scoring
    mode: int
    device: str
    partition: str


# ---- on the workers ----------------------------------------------------------------------------

#: path -> (identity, the database open in this worker process)
_OPEN: dict[str, tuple[tuple, Database]] = {}
#: one scan at a time per worker process: each already uses all of the process's cores
#: (Numba) or its GPU
_SCAN = threading.Lock()


def _database(spec: _Spec, fresh: bool = False) -> Database:
    """The database of ``spec`` opened in this process (reopened when ``fresh``)."""
    held = _OPEN.get(spec.path)
    if fresh or held is None or held[0] != spec.identity:
        db = Database.open(spec.path, verify=False)
        if _identity(db) != spec.identity:
            raise InputError(f"file {spec.path}: not the database the client opened "
                             "(its contents differ on this worker)")
        _OPEN[spec.path] = held = (spec.identity, db)
    return held[1]


@functools.lru_cache(maxsize=4)
def _scanner(spec: _Spec, start: int, stop: int):
    """The scan engine of this worker's device over one shard (a GPU keeps it resident). A
    worker scans on one GPU, its first visible one: a cluster's unit is the worker, and
    dask-cuda starts one per GPU with that GPU first in ``CUDA_VISIBLE_DEVICES``."""
    db = _database(spec)
    device = choose(spec.device)
    shard = db.slice(start, stop)
    scoring = spec.scoring
    return engines.scanner(Device("gpu", (0,)) if device.gpu else device, shard.residues,
                           shard.offsets, db.codes_for(scoring), scoring.table,
                           scoring.gap_open, scoring.gap_extend, spec.mode,
                           partition=spec.partition)


def _scan(spec: _Spec, start: int, stop: int, queries: list[np.ndarray], k: int,
          thresholds: list[int | None]) -> list[Candidates]:
    """One shard's task: each query's best ``k`` candidates, indices global."""
    with _SCAN:
        found = _scanner(spec, start, stop).top(queries, k, thresholds)
    return [(index + start, score) for index, score in found]


def _scanning() -> bool:
    """Whether this worker process is running a shard's scan (run on each by the client)."""
    return _SCAN.locked()


def _check(spec: _Spec) -> str | None:
    """None when this worker can search ``spec``'s database, else why not (run on each)."""
    try:
        _database(spec, fresh=True)
    except (InputError, OSError) as exc:
        return f"{exc} (a cluster search reads the database at this path on every worker)"
    try:
        choose(spec.device)
    except InputError as exc:
        return str(exc)
    return None


# ---- on the client -----------------------------------------------------------------------------

def database_path(db: Database) -> str:
    """The absolute path the workers open ``db`` at; InputError for an in-memory database."""
    if db.path is None:
        raise InputError("a cluster search reads the database from a .wdb folder on a "
                         "shared file system: build one with wavedp makedb")
    return os.path.abspath(db.path)


class ClusterScanner:
    """Scans a ``.wdb`` database in shards on the workers of a Dask ``client``, each on its
    ``device`` (a name the worker resolves), its GPU launches cut by ``partition``; the
    contract of ``wavedp.engines.protocol.Scanner`` (indices global)."""

    def __init__(self, client: Any, db: Database, scoring: Scoring, mode: int, device: str,
                 partition: str = "auto", shards: int | None = None) -> None:
        self.client = client
        self.spec = _Spec(database_path(db), _identity(db), scoring, int(mode), device,
                          partition)
        problems = client.run(_check, self.spec)
        if not problems:
            raise InputError(f"the Dask cluster at {client.scheduler.address} has no workers")
        for address, problem in sorted(problems.items()):
            if problem is not None:
                raise InputError(f"worker {address}: {problem}")
        threads = sum(client.nthreads().values())
        parts = shards if shards is not None else max(1, SHARDS_PER_THREAD * threads)
        self.ranges = shard_ranges(db.offsets, parts)
        self.residues = [int(db.offsets[b]) - int(db.offsets[a]) for a, b in self.ranges]

    def top(self, queries: list[np.ndarray], k: int, thresholds: Thresholds,
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores at or above its
        threshold; ``progress(cells)`` as shards finish. A round the cluster stops running
        is submitted again (:data:`STALL_RETRIES` times), then a DeviceError."""
        wait = _distributed().wait
        call = uuid.uuid4().hex
        thresholds = list(thresholds_of(thresholds))  # the workers get plain numbers
        cells = sum(q.size for q in queries)
        parts: list[list[Candidates]] = [[] for _ in self.ranges]
        pending: dict[Any, int] = {}
        attempt, idle = 0, 0

        def submit(shards: list[int]) -> None:
            for n in shards:
                start, stop = self.ranges[n]
                future = self.client.submit(_scan, self.spec, start, stop, queries, k,
                                            thresholds, key=f"wavedp-scan-{call}-{attempt}-{n}")
                pending[future] = n

        try:
            submit(list(range(len(self.ranges))))
            while pending:
                try:
                    done = wait(list(pending), timeout=STALL_CHECK,
                                return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    done = ()
                for future in done:
                    n = pending.pop(future)
                    parts[n] = future.result()
                    if progress is not None:
                        progress(cells * self.residues[n])
                idle = 0 if done or not self._idle(pending) else idle + 1
                if idle < STALL_CHECKS:
                    continue
                shards = sorted(pending.values())
                if attempt == STALL_RETRIES:
                    raise DeviceError(
                        f"the Dask cluster at {self.client.scheduler.address} ran none of "
                        f"{len(shards)} shard task(s) for {STALL_CHECKS * STALL_CHECK:g} s, "
                        f"{attempt + 1} times (the first: sequences {self.ranges[shards[0]][0]} to "
                        f"{self.ranges[shards[0]][1] - 1})")
                self.client.cancel(list(pending))
                pending.clear()
                attempt, idle = attempt + 1, 0
                submit(shards)
        except BaseException:
            self.client.cancel(list(pending))
            raise
        return [merge([(*part[j], PLUS) for part in parts], k)[:2]
                for j in range(len(queries))]

    def _idle(self, pending: dict) -> bool:
        """True when no worker runs a scan and the scheduler has given the workers no task
        other than this round's ``pending`` ones (a busy shared cluster is not stalled)."""
        try:
            if any(self.client.run(_scanning).values()):
                return False
            ours = {future.key for future in pending}
            return all(key in ours for keys in self.client.processing().values()
                       for key in keys)
        except (OSError, TimeoutError, KeyError):  # a worker came or went: not a stall
            return False


def connect(scheduler: str | None = None, cluster: str | None = None,
            workers: int | None = None, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A ``dask.distributed.Client``: of the scheduler at ``scheduler`` (``tcp://host:8786``),
    or of a new ``cluster="local"`` one (one worker per GPU with dask-cuda, else ``workers``
    processes). :func:`close` closes it, and the cluster it started."""
    distributed = _distributed()
    if (scheduler is None) == (cluster is None):
        raise InputError("give either a scheduler address or cluster='local'")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    if scheduler is not None:
        if workers is not None:
            raise InputError("workers applies to cluster='local' only, not to a scheduler")
        try:
            return distributed.Client(scheduler, timeout=timeout)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot connect to the Dask scheduler at {scheduler}: "
                             f"{exc}") from None
    if cluster != "local":
        raise InputError(f"cluster must be 'local' (or give a scheduler address), "
                         f"got {cluster!r}")
    if gpu_status()[0]:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            pass
        else:
            return _start_local(lambda: _client_of(
                distributed, LocalCUDACluster(n_workers=workers, **_QUIET)))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    if workers is None:  # Dask's split: a process per core up to 4, then about sqrt(cores)
        workers = cores if cores <= 4 else round(cores ** 0.5)
    threads = max(1, cores // workers)
    return _start_local(lambda: _client_of(distributed, distributed.LocalCluster(
        n_workers=workers, threads_per_worker=threads, processes=True,
        env={"NUMBA_NUM_THREADS": str(threads)}, **_QUIET)))


def _start_local(start: Callable[[], Any]) -> Any:
    """``start()`` (a client of a new local cluster), tried again (:data:`LOCAL_START_ATTEMPTS`
    in all) where Dask's own start-up asserts fail because its event loop was slow to come up."""
    failure: AssertionError | None = None
    for _ in range(LOCAL_START_ATTEMPTS):
        try:
            return start()
        except AssertionError as exc:
            failure = exc
    raise InputError(f"cannot start a local Dask cluster: its event loop did not come up in "
                     f"{LOCAL_START_ATTEMPTS} attempts ({failure!r})")


def _client_of(distributed, cluster: Any) -> Any:
    """A client of a cluster just started here (closed if that fails), whose workers ignore
    Ctrl-C: at a terminal it reaches them too, and this process closes them."""

    class IgnoreInterrupts(distributed.WorkerPlugin):
        def setup(self, worker) -> None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    client = None
    try:
        client = distributed.Client(cluster)
        client.register_plugin(IgnoreInterrupts(), name="wavedp-ignore-interrupts")
        return client
    except BaseException:
        if client is not None:
            client.close()
        cluster.close()
        raise


def close(client: Any) -> None:
    """Close a client of :func:`connect`, then the local cluster it started (if any)."""
    try:
        client.close()
    finally:
        if client.cluster is not None:
            client.cluster.close()
