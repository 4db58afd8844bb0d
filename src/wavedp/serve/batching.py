"""Requests that arrive together searched together: a bounded queue and one thread that takes
the oldest request and every one queued behind it of the same key (database, scoring, mode,
cutoffs: see ``service.Job``) and runs them as one search. After a search of several
requests (clients are busy, and those just answered come back) the next waits up to
``window`` seconds for more; after a search of one, a request goes at once. Requests of
other keys wait their turn in arrival order; one whose client left is dropped unsearched.
A full queue refuses at once (the app answers 429 with ``Retry-After``)."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque

from .service import Job, Limits, Service

#: seconds the first request of a batch waits for others of its key, after a batch of several
WINDOW = 0.005
#: requests waiting at most (beyond them: 429)
QUEUE = 64


class Full(Exception):
    """The queue holds QUEUE requests: come back later."""


class Batcher:
    """Runs ``service``'s jobs in batches on a thread of its own (started here, a daemon)."""

    def __init__(self, service: Service, window: float = WINDOW, size: int = QUEUE) -> None:
        self.service, self.window = service, window
        # told each batch's queries and its search's seconds (the metrics)
        self.searched = lambda queries, seconds: None
        self._queue: queue.Queue[Job] = queue.Queue(size)
        self._held: deque[Job] = deque()  # taken from the queue, of another key than a batch
        self._together = 1  # the requests the last batch held
        self._thread = threading.Thread(target=self._loop, name="wavedp-batches", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> Job:
        """``job`` queued (its answer comes on ``job.future``); Full where the queue is."""
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            raise Full from None
        return job

    @property
    def waiting(self) -> int:
        """Requests queued, not yet searched."""
        return self._queue.qsize() + len(self._held)

    def _next(self, timeout: float | None) -> Job | None:
        if self._held:
            return self._held.popleft()
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _loop(self) -> None:
        while True:
            first = self._next(None)
            if first is None:
                continue
            batch = [first]
            limits = self.service.limits
            deadline = time.monotonic() + (self.window if self._together > 1 else 0.0)
            others: list[Job] = []
            held, self._held = self._held, deque()
            for job in held:  # those held before, in arrival order
                self._take(job, first, batch, others, limits)
            for _ in range(self._queue.qsize()):  # those queued, at once
                if (job := self._next(0)) is not None:
                    self._take(job, first, batch, others, limits)
            while (left := deadline - time.monotonic()) > 0:
                job = self._next(left)
                if job is None:
                    break
                self._take(job, first, batch, others, limits)
            self._held.extend(others)
            self._together = len(batch)
            started = time.perf_counter()
            try:
                self.service.run(batch)
            except BaseException:  # noqa: BLE001 - each job's future holds the error
                pass
            self.searched(sum(len(job.records) for job in batch),
                          time.perf_counter() - started)

    @staticmethod
    def _take(job: Job, first: Job, batch: list[Job], others: list[Job],
              limits: Limits) -> None:
        """``job`` into ``batch`` where it shares ``first``'s key and the batch stays within
        the limits of one request, else kept for a later batch."""
        if job.key == first.key and \
                sum(len(j.records) for j in batch) + len(job.records) <= limits.queries and \
                sum(j.residues for j in batch) + job.residues <= limits.residues:
            batch.append(job)
        else:
            others.append(job)
