"""makedb's builder, the one fast path from FASTA to a ``.wdb`` folder: the file is cut into
ranges of whole records, and workers parse each range (``fasta_parser.encode_range``: whole-array
NumPy passes that release the GIL), say how many records, residues, id and title bytes it
holds and, once told where its records go (the counts of the ranges before it, summed here in
file order), write them into the data files at their place and return their checksums.

The workers are processes forked once this process has imported the parser's NumPy (they inherit
it: on the 16-core H200 host each worker importing its own had cost 0.1 s of a 0.7 s build), or
threads of this process where it may not fork (other threads run: a child may inherit a lock
never released) or is asked not to. A plain file's ranges are read by the workers where they
lie; a gzip file is decompressed into a temporary file whose ranges the workers parse as they
are written; standard input is copied first (``seqio.stdin_copy``). Whatever the parser does not
take (a fault to name, FASTQ, a non-ASCII id, an over-long record) goes to the record reader
from the start (``building.write_fasta``): it names what and where, or builds the database
itself (FASTQ, non-ASCII ids). Also here: makedb's progress line or bar."""

from __future__ import annotations

import contextlib
import gc
import importlib
import math
import os
import pickle
import select
import signal
import struct
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise

from ..alphabets import dna_codes, guess, letter_codes
from ..errors import InputError
from ..seqio import STDIN, fasta_chunks, open_bytes, stdin_copy
from ..threads import cores
from .checksum import crc32_combine
from .files import ALPHABETS, PROTEIN_LETTERS, STREAMED, finish, make_header, making
from .read_progress import progress

#: a process's range at most (a few times this is held per process at once; a record
#: longer than the range is a range alone)
RANGE = 16 << 20
#: the smallest range of a process, and a thread's range (memory: a few times this a thread)
MIN_RANGE = 1 << 20
#: the workers from which they are processes (fewer are threads: on the 2-core development
#: machine processes took 0.1-0.2 s longer)
FEWEST = 8
#: makedb's threads at most, where it parses on threads: the parser's passes release the
#: GIL, but each range takes it between them
MAKEDB_THREADS = 6
#: the longest record a database holds (lengths are int32)
LONGEST = 2**31 - 1
_FRAME = struct.Struct("<I")


@dataclass(frozen=True)
class Built:
    """What a build wrote: its ``sequences`` (``empty`` of them without residues), their
    ``residues`` and the ``alphabet``."""

    sequences: int
    residues: int
    empty: int
    alphabet: str
    #: each range's seconds in its worker: reading, parsing, waiting for its place and
    #: writing (``benchmarks/makedb_stages.py``); empty from the record reader
    stages: tuple = field(default=(), compare=False, repr=False)


class _Slow(Exception):
    """A range the record reader must read (or a worker that could not run): nothing is
    kept, the record reader reads the file from the start."""


@dataclass(frozen=True)
class _Plan:
    """Ranges of whole records of the file ``fd`` (``ranges`` yields them, in file order;
    ``streamed``: as a gzip file is decompressed into it), parsed by ``workers`` processes
    (threads where not ``fork``) with the code ``table`` of an alphabet of ``letters``
    letters."""

    fd: int
    ranges: Iterator[tuple[int, int]]
    workers: int
    fork: bool
    table: bytes
    letters: int
    streamed: bool


def build(source: str | os.PathLike, out: str | os.PathLike, alphabet: str = "auto",
          workers: int | None = None, show: bool = True, processes: bool = True) -> Built:
    """Build the ``.wdb`` folder ``out`` from the FASTA or FASTQ file ``source`` (plain or
    gzip; ``-``: standard input) with ``alphabet`` (``auto``: the first piece decides, DNA
    when it holds only DNA letters, mostly bases) on ``workers`` processes (None: one per
    core), or threads (None: every core, at most MAKEDB_THREADS) where they are fewer than
    FEWEST, this process may not fork or ``processes`` is False; ``show``: progress on
    stderr. Written into a temporary
    folder put in place only on success (``files.making``); InputError naming what and where
    for bad input, with nothing written."""
    source, out = os.fspath(source), os.fspath(out)
    path = stdin_copy() if source == STDIN else source
    try:
        with making(source, out) as tmp, _opened(path) as (fd, size, streamed):
            chosen = guess(_first_residues(path)) if alphabet == "auto" else alphabet
            asked, workers = workers, workers or cores()
            fork = processes and workers >= FEWEST and hasattr(os, "fork") \
                and threading.active_count() == 1
            if not fork:
                workers = asked or min(workers, MAKEDB_THREADS)
            step = max(MIN_RANGE, min(RANGE, math.ceil(size / workers))) if fork else MIN_RANGE
            table = dna_codes() if chosen == "dna" else letter_codes(PROTEIN_LETTERS)
            ranges = _streamed(path, fd, step) if streamed else _ranges(fd, size, step)
            plan = _Plan(fd, ranges, max(1, min(workers, math.ceil(size / step))), fork,
                         table, len(ALPHABETS[chosen]), streamed)
            totals = _run(plan, tmp, out, show, source)
            if totals.sequences == 0:  # the record reader says there are none
                raise _Slow
            finish(tmp, out, totals.header(chosen, source, tmp))
            return Built(totals.sequences, totals.residues, totals.empty, chosen,
                         tuple(totals.stages))
    except _Slow:
        pass
    from .building import write_fasta  # lazy: the record reader's builder (NumPy)

    with making(source, out) as tmp:
        builder = write_fasta(tmp, source, alphabet, show)
        if builder.count == 0:
            raise InputError(f"file {source}: no records")
        finish(tmp, out, builder.header())
    return Built(builder.count, builder.residues, builder.empty, builder.alphabet)


@contextlib.contextmanager
def _opened(path: str) -> Iterator[tuple[int, int, bool]]:
    """(descriptor, size, gzip) of ``path``: a gzip file's descriptor is that of an empty
    temporary file its text is written into (:func:`_streamed`). :class:`_Slow` where it
    cannot be read (the record reader names the problem)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        raise _Slow from None
    try:
        size = os.fstat(fd).st_size
        if os.pread(fd, 2, 0) != b"\x1f\x8b":
            yield fd, size, False
            return
        with tempfile.TemporaryFile(prefix="wavedp-makedb-") as text:
            yield text.fileno(), 4 * size, True  # the size: a guess, for the workers' count
    finally:
        os.close(fd)


def _first_residues(path: str) -> bytes:
    """The residues of the first piece of :func:`fasta_chunks` (its records' lines but the
    headers, line ends dropped), which decide the alphabet; :class:`_Slow` where there is
    none (FASTQ, no record, a damaged stream)."""
    try:
        with contextlib.closing(fasta_chunks(path, checked=False)) as pieces:
            piece = bytes(next(pieces)[0])
    except (InputError, StopIteration):
        raise _Slow from None
    text = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # a CR alone ends a line
    return b"".join(record.partition(b"\n")[2] for record in text[1:].split(b"\n>")
                    ).translate(None, b"\n")


def _ranges(fd: int, size: int, step: int) -> Iterator[tuple[int, int]]:
    """The file's ranges of about ``step`` bytes, each from a header line to the next
    range's."""
    start = 0
    while start < size:
        stop = _boundary(fd, start + step, size)
        yield start, stop
        start = stop


def _streamed(path: str, fd: int, step: int) -> Iterator[tuple[int, int]]:
    """The gzip file ``path`` decompressed into the file ``fd``, a block of ``step`` bytes at
    a time: the ranges of whole records written so far, each once it is written (the last
    at the end). :class:`_Slow` where the stream is damaged (the record reader names it)."""
    start = end = 0
    last = b""
    try:
        with open_bytes(path) as fh:
            while block := fh.read(step):
                _pwrite(fd, block, end)
                window = last + block
                end += len(block)
                cut = end - len(window) + max(window.rfind(b"\n>"), window.rfind(b"\r>")) + 1
                if cut > start and cut > end - len(window):
                    yield start, cut
                    start = cut
                last = block[-1:]
    except (OSError, EOFError, zlib.error):
        raise _Slow from None
    if end > start:
        yield start, end


@dataclass
class _Totals:
    """The ranges' counts summed in file order, and each file's size and checksum."""

    letters: int
    sequences: int = 0
    residues: int = 0
    id_bytes: int = 0
    title_bytes: int = 0
    longest: int = 0
    empty: int = 0

    def __post_init__(self) -> None:
        self.composition = [0] * self.letters
        self.stages: list[tuple[float, ...]] = []
        start = zlib.crc32(bytes(8))  # the offsets files begin with a zero
        self.files = {name: [start, 8] if name.endswith(".i64") else [0, 0]
                      for name in STREAMED}

    def place(self, counts: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        """The place of the next range in file order (the counts before it); its
        ``counts`` added."""
        before = (self.sequences, self.residues, self.id_bytes, self.title_bytes)
        self.sequences, self.residues, self.id_bytes, self.title_bytes = (
            a + b for a, b in zip(before, counts, strict=True))
        return before

    def add(self, done: dict) -> None:
        """Range after range, in file order: what a worker said when it was done."""
        for name, (crc, size) in done["files"].items():
            entry = self.files[name]
            entry[0] = crc32_combine(entry[0], crc, size)
            entry[1] += size
        self.longest = max(self.longest, done["longest"])
        self.empty += done["empty"]
        self.composition = [a + b for a, b in
                            zip(self.composition, done["composition"], strict=True)]
        self.stages.append(done["stages"])

    def header(self, alphabet: str, source: str, folder: str) -> dict:
        """The database's header (``files.make_header``), the order written into ``folder``
        now."""
        from .order import write_order  # lazy: NumPy (imported by _run)

        files = {name: (size, crc) for name, (crc, size) in self.files.items()}
        return make_header(alphabet, self.sequences, self.residues, self.longest,
                           self.composition, source,
                           {**files, **write_order(folder, self.sequences)},
                           id_bytes=self.id_bytes, title_bytes=self.title_bytes)


def _run(plan: _Plan, tmp: str, out: str, show: bool, source: str) -> _Totals:
    """The workers started, each given a range at a time, and each range its place once the
    ranges before it are counted; their results summed. :class:`_Slow` where a range is the
    record reader's or a worker could not start or ended early."""
    files = {name: os.open(os.path.join(tmp, name), os.O_WRONLY | os.O_CREAT, 0o666)
             for name in STREAMED}
    totals = _Totals(plan.letters)
    children: list[_Child] = []
    read = 0
    try:
        for name in ("offsets.i64", "id_offsets.i64", "title_offsets.i64"):
            _pwrite(files[name], bytes(8), 0)
        # NumPy, the parser's and the order's, imported once here: forked workers inherit it
        # (OPENBLAS_NUM_THREADS=1 in the command: no BLAS thread to fork beside)
        importlib.import_module("..fasta_parser", __package__)
        importlib.import_module(".order", __package__)
        children = _start(plan.workers, lambda w, up, down: _work(plan, files, w, up, down),
                          plan.fork)
        owners: dict[int, _Child] = {}  # each range's worker, until it is done
        places: dict[int, tuple[int, int, int, int]] = {}  # each range's counts, until placed
        done: dict[int, dict] = {}
        idle = list(reversed(children))
        waiting = {child.up: child for child in children}
        given = placed = summed = 0
        # a gzip file's progress: the offset of its reader (read_progress.ReadPosition)
        with progress(source, show, done=None if plan.streamed else lambda: read) as update:
            while True:
                while idle and (span := next(plan.ranges, None)) is not None:
                    owners[given] = idle.pop()
                    _send(owners[given].down, (given, *span))
                    given += 1
                if summed == given:
                    break
                for up in select.select(list(waiting), [], [])[0]:
                    try:
                        kind, k, said = _receive(up)
                    except EOFError:  # a worker ended early
                        raise _Slow from None
                    if kind == "slow":
                        raise _Slow
                    if kind == "failed":
                        raise InputError(f"cannot write database {out}: {said}")
                    if kind == "counted":
                        places[k] = said
                    else:
                        done[k] = said
                        read += said["bytes"]
                        idle.append(owners.pop(k))
                        update()
                while placed in places:  # give each counted range its place, in order
                    _send(owners[placed].down, totals.place(places.pop(placed)))
                    placed += 1
                while summed in done:
                    totals.add(done.pop(summed))
                    summed += 1
    finally:
        for fd in files.values():
            os.close(fd)
        _end(children)
    return totals


@dataclass(frozen=True)
class _Child:
    """A worker (a process's id, or a thread): the pipe it writes to (``up``) and the one
    it reads from (``down``)."""

    worker: int | threading.Thread
    up: int
    down: int


#: the signals a worker leaves to their default (it ends at once); blocked while it forks
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def _start(count: int, work: Callable[[int, int, int], None], fork: bool) -> list[_Child]:
    """``count`` workers, worker w running ``work(w, up, down)``: processes (``fork``) ending
    with ``os._exit``, else threads; stop signals are blocked while processes fork, so
    that none runs this process's handlers (and its ``finally`` blocks) in a child.
    :class:`_Slow` where the system refuses a process, a thread or a pipe (those started
    are ended)."""
    children: list[_Child] = []
    if fork:
        gc.freeze()  # this process's objects out of the workers' collections (pages shared)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        for w in range(count):
            up_read, up_write = os.pipe()
            down_read, down_write = os.pipe()
            if not fork:
                thread = threading.Thread(target=_in_thread, name=f"wavedp-makedb-{w}",
                                          args=(work, w, up_write, down_read), daemon=True)
                thread.start()
                children.append(_Child(thread, up_read, down_write))
                continue
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    gc.disable()  # a collection would copy every page shared with the parent
                    for s in _STOPS:
                        signal.signal(s, signal.SIG_DFL)
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                    for child in children:  # the parent's ends: EOF reaches a worker if it dies
                        os.close(child.up)
                        os.close(child.down)
                    os.close(up_read)
                    os.close(down_write)
                    work(w, up_write, down_read)
                    status = 0
                finally:
                    os._exit(status)
            os.close(up_write)
            os.close(down_read)
            children.append(_Child(pid, up_read, down_write))
    except (OSError, RuntimeError):
        _end(children)
        raise _Slow from None
    finally:
        if fork:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            gc.unfreeze()
    return children


def _in_thread(work: Callable[[int, int, int], None], w: int, up: int, down: int) -> None:
    """A worker on a thread: it ends where this process closes its pipes."""
    try:
        work(w, up, down)
    except (OSError, EOFError):
        pass
    finally:
        os.close(up)
        os.close(down)


def _end(children: list[_Child]) -> None:
    """The workers stopped (where still running) and waited for; their pipes closed."""
    for child in children:
        with contextlib.suppress(OSError):
            os.close(child.up)
        with contextlib.suppress(OSError):
            os.close(child.down)
        if isinstance(child.worker, threading.Thread):
            child.worker.join()  # it ends at its next message: at most a range's parse on
            continue
        with contextlib.suppress(OSError):
            os.kill(child.worker, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(child.worker, 0)


def _work(plan: _Plan, files: dict[str, int], w: int, up: int, down: int) -> None:
    """Worker ``w``: each range it is given parsed, counted, placed and written."""
    from ..fasta_parser import encode_range  # lazy: NumPy (a forked worker has it)

    while True:
        try:
            k, start, stop = _receive(down)
        except EOFError:  # no more ranges
            return
        times = [time.perf_counter()]
        data = _pread(plan.fd, stop - start, start)
        times.append(time.perf_counter())
        parsed = encode_range(data.lstrip() if k == 0 else data, plan.table, plan.letters,
                              LONGEST)
        del data
        times.append(time.perf_counter())
        if parsed is None:
            _send(up, ("slow", k, None))
            return
        _send(up, ("counted", k, parsed.counts))
        place = _receive(down)
        times.append(time.perf_counter())
        written = {}
        try:
            for name, position, blob in parsed.pieces(*place):
                _pwrite(files[name], blob, position)
                written[name] = (zlib.crc32(blob), memoryview(blob).nbytes)
        except OSError as exc:  # disk full, quota
            _send(up, ("failed", k, exc.strerror or str(exc)))
            return
        times.append(time.perf_counter())
        _send(up, ("done", k, {"files": written, "longest": parsed.longest,
                               "empty": parsed.empty, "composition": parsed.composition,
                               "bytes": stop - start,
                               "stages": tuple(b - a for a, b in pairwise(times))}))


#: :func:`_boundary` reads this much at a time
_WINDOW = 1 << 16


def _boundary(fd: int, at: int, size: int) -> int:
    """The start of the first header line at or after byte ``at`` (``size``: none)."""
    if at <= 0:
        return 0
    position = at - 1  # the line end before it
    while position < size - 1:
        window = os.pread(fd, _WINDOW, position)
        found = [k for k in (window.find(b"\n>"), window.find(b"\r>")) if k >= 0]
        if found:
            return position + min(found) + 1
        position += max(1, len(window) - 1)  # a line end at the window's edge: read again
    return size


def _pread(fd: int, count: int, position: int) -> bytes:
    """``count`` bytes of ``fd`` from ``position`` (reads of more than 2 GB come in parts)."""
    parts = []
    while count > 0:
        part = os.pread(fd, min(count, 1 << 30), position)
        if not part:
            break
        parts.append(part)
        count -= len(part)
        position += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _pwrite(fd: int, data, position: int) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.pwrite(fd, view[:1 << 30], position)
        view = view[written:]
        position += written


def _send(fd: int, message: object) -> None:
    data = pickle.dumps(message)
    data = _FRAME.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _receive(fd: int):
    """The next message on ``fd``; EOFError where the writer ended first."""
    (size,) = _FRAME.unpack(_read(fd, _FRAME.size))
    return pickle.loads(_read(fd, size))


def _read(fd: int, count: int) -> bytes:
    parts = []
    while count:
        part = os.read(fd, count)
        if not part:
            raise EOFError
        parts.append(part)
        count -= len(part)
    return b"".join(parts)
