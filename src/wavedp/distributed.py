"""Searching a ``.wdb`` database across a Dask cluster (``wavedp.search(..., client=...)``).

The database is cut into shards of about equal residues; one task per shard opens the
database on its worker (memory-mapped from a shared file system, once per worker process),
scans the shard with that worker's engine (``search.scan.scanner_for``) and returns each
query's best candidates with global indices; the client merges them in DESIGN.md's order.
Only the path, the shard's range, the encoded queries and the scoring travel to the
workers. Tasks are deterministic: Dask reruns those of a worker that dies.
"""

from __future__ import annotations

import functools
import operator
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import device as _device
from .errors import InputError
from .scoring import Scoring
from .search.database import Database, _composition
from .search.ranking import PLUS, merge
from .search.scan import Candidates, scanner_for

#: seconds ``connect`` waits for a scheduler
CONNECT_TIMEOUT = 10.0
#: shards per worker thread when not told otherwise (a straggler holds up less of the work)
SHARDS_PER_THREAD = 2


def _distributed():
    try:
        import distributed
    except ImportError:
        raise InputError("a Dask cluster needs dask.distributed: "
                         "pip install 'wavedp[cluster]'") from None
    return distributed


def shard_ranges(offsets: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Consecutive half-open sequence ranges ``(start, stop)`` covering every sequence, each
    non-empty and of about ``total / parts`` residues (``min(parts, n)`` ranges)."""
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise InputError(f"parts must be a positive integer, got {parts!r}")
    n = len(offsets) - 1
    if n < 1:
        raise InputError("a database needs at least one sequence to shard (got none)")
    parts = min(int(parts), n)
    total = int(offsets[-1])
    bounds = [0]
    for j in range(1, parts):
        target = total * j // parts
        cut = int(np.searchsorted(offsets, target, side="left"))  # offsets[cut] >= target
        if cut > 0 and target - int(offsets[cut - 1]) < int(offsets[cut]) - target:
            cut -= 1
        bounds.append(min(max(cut, bounds[-1] + 1), n - (parts - j)))
    bounds.append(n)
    return list(zip(bounds[:-1], bounds[1:], strict=True))


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


class _Slice(Sequence[str]):
    """Entries ``start:stop`` of a sequence, read on access."""

    def __init__(self, items: Sequence[str], start: int, stop: int) -> None:
        self._items, self._start, self._stop = items, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = operator.index(k)
        k = k + len(self) if k < 0 else k
        if not 0 <= k < len(self):
            raise IndexError(f"shard index {k} out of range (0..{len(self) - 1})")
        return self._items[self._start + k]


def _shard(db: Database, start: int, stop: int) -> Database:
    """Sequences ``start:stop`` of ``db`` as a database of their own (views, no copies)."""
    lo, hi = int(db.offsets[start]), int(db.offsets[stop])
    residues, lengths = db.residues[lo:hi], db.lengths[start:stop]
    return Database(path=None, alphabet=db.alphabet, letters=db.letters, residues=residues,
                    offsets=np.asarray(db.offsets[start:stop + 1]) - lo, lengths=lengths,
                    ids=_Slice(db.ids, start, stop),
                    composition=_composition(residues, len(db.letters)),
                    longest=int(lengths.max()))


@functools.lru_cache(maxsize=4)
def _scanner(spec: _Spec, start: int, stop: int):
    """The scan engine of this worker's device over one shard (a GPU keeps it resident)."""
    db = _database(spec)
    return scanner_for(_device.resolve(spec.device), _shard(db, start, stop),
                       db.codes_for(spec.scoring), spec.scoring, spec.mode)


def _scan(spec: _Spec, start: int, stop: int, queries: list[np.ndarray], k: int,
          thresholds: list[int | None]) -> list[Candidates]:
    """One shard's task: each query's best ``k`` candidates, indices global."""
    with _SCAN:
        found = _scanner(spec, start, stop).top(queries, k, thresholds)
    return [(index + start, score) for index, score in found]


def _check(spec: _Spec) -> str | None:
    """None when this worker can search ``spec``'s database, else why not (run on each)."""
    try:
        _database(spec, fresh=True)
    except (InputError, OSError) as exc:
        return f"{exc} (a cluster search reads the database at this path on every worker)"
    try:
        _device.resolve(spec.device)
    except InputError as exc:
        return str(exc)
    return None


# ---- on the client -----------------------------------------------------------------------------

class ClusterScanner:
    """Scans a ``.wdb`` database in shards on the workers of a Dask ``client``; the same
    contract as ``search.scan.CpuScanner`` (indices global, DESIGN.md's order)."""

    def __init__(self, client: Any, db: Database, scoring: Scoring, mode: int, device: str,
                 shards: int | None = None) -> None:
        if db.path is None:
            raise InputError("a cluster search reads the database from a .wdb folder on a "
                             "shared file system: build one with wavedp makedb")
        self.client = client
        self.spec = _Spec(os.path.abspath(db.path), _identity(db), scoring, int(mode), device)
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

    def top(self, queries: list[np.ndarray], k: int, thresholds: list[int | None],
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores at or above its
        threshold; ``progress(cells)`` as shards finish."""
        as_completed = _distributed().as_completed
        call = uuid.uuid4().hex
        futures = {
            self.client.submit(_scan, self.spec, start, stop, queries, k, thresholds,
                               key=f"wavedp-scan-{call}-{n}"): n
            for n, (start, stop) in enumerate(self.ranges)
        }
        cells = sum(q.size for q in queries)
        parts: list[list[Candidates]] = [[] for _ in self.ranges]
        try:
            for future in as_completed(futures):
                n = futures[future]
                parts[n] = future.result()
                if progress is not None:
                    progress(cells * self.residues[n])
        except BaseException:
            self.client.cancel(list(futures))
            raise
        return [merge([(*part[j], PLUS) for part in parts], k)[:2]
                for j in range(len(queries))]


def connect(scheduler: str | None = None, cluster: str | None = None,
            workers: int | None = None, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A ``dask.distributed.Client``: of the scheduler at ``scheduler`` (``tcp://host:8786``),
    or of a new ``cluster="local"`` one (one worker per GPU with dask-cuda, else ``workers``
    processes). Close a started cluster with ``client.cluster.close()`` after the client."""
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
    if _device.gpu_status()[0]:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            pass
        else:
            return distributed.Client(LocalCUDACluster(n_workers=workers))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    if workers is None:  # Dask's split: a process per core up to 4, then about sqrt(cores)
        workers = cores if cores <= 4 else round(cores ** 0.5)
    threads = max(1, cores // workers)
    return distributed.Client(distributed.LocalCluster(
        n_workers=workers, threads_per_worker=threads, processes=True,
        env={"NUMBA_NUM_THREADS": str(threads)}))
