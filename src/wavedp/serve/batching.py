"""Requests that arrive together searched together: a bounded queue and one thread that takes
the oldest request and every one queued behind it of the same key (database, scoring, mode,
cutoffs: see ``service.Job``) and runs them as one search, at once: a request to an idle
server is searched alone, those that came during a search are the next. Requests of other
keys wait their turn in arrival order; one whose client left is dropped unsearched. A full
queue refuses at once (the app answers 429 with ``Retry-After``)."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque

from .service import Job, Limits, Service

#: requests waiting at most (beyond them: 429)
QUEUE = 64


class Full(Exception):
    """The queue holds QUEUE requests: come back later."""


class Batcher:
    """Runs ``service``'s jobs in batches on a thread of its own (started here, a daemon);
    at most ``size`` requests wait, queued or held for a later batch."""

    def __init__(self, service: Service, size: int = QUEUE) -> None:
        self.service, self.size = service, size
        # told each batch's queries and its search's seconds (the metrics)
        self.searched = lambda queries, seconds: None
        self._queue: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._held: deque[Job] = deque()  # taken from the queue, of another key than a batch
        self._waiting = 0  # submitted, not yet in a batch
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="wavedp-batches", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> Job:
        """``job`` queued (its answer comes on ``job.future``); Full where ``size`` wait."""
        with self._lock:
            if self._waiting >= self.size:
                raise Full
            self._waiting += 1
        self._queue.put(job)
        return job

    @property
    def waiting(self) -> int:
        """Requests queued or held, not yet searched."""
        return self._waiting

    def _loop(self) -> None:
        while True:
            first = self._held.popleft() if self._held else self._queue.get()
            batch: list[Job] = [first]
            others: list[Job] = []
            limits = self.service.limits
            held, self._held = self._held, deque()
            for job in [*held, *self._queued()]:  # those held before, then those queued
                self._take(job, first, batch, others, limits)
            self._held.extend(others)
            with self._lock:
                self._waiting -= len(batch)
            started = time.perf_counter()
            try:
                self.service.run(batch)
            except BaseException as exc:  # noqa: BLE001 - every job left unanswered learns it
                for job in batch:
                    if not job.future.done():
                        job.future.set_exception(exc)
            searched = [job for job in batch if not job.future.cancelled()]
            if searched:  # those whose clients left were dropped unsearched
                self.searched(sum(len(job.records) for job in searched),
                              time.perf_counter() - started)

    def _queued(self) -> list[Job]:
        """The requests queued now, taken."""
        jobs = []
        while True:
            try:
                jobs.append(self._queue.get_nowait())
            except queue.Empty:
                return jobs

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
