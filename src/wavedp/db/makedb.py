"""makedb's parallel builder: a plain FASTA file encoded into a ``.wdb`` folder by one process
per core, forked before NumPy is imported (its import is a third of CUDASW++4.0's whole
makedb on the H100 host). The file is cut into ranges of whole records; each worker parses its
ranges with the interpreter's byte operations (split, translate, join: C loops), says how
many records, residues and id bytes each holds, and, once told where the range's records
go (the counts of the ranges before it, which this process sums in file order), writes
them into the data files at their place and returns their checksums. The letters of each
written range are counted here, on threads, by NumPy's byte counter (its import starts on a
thread once the workers are forked and runs while they parse: 24 passes of ``bytes.count``
took three quarters of a worker's time on the H100 host).
The result is byte for byte the database :meth:`Database.build`'s record reader writes;
whatever that reader would have to say something about (a control byte, a letter outside
the alphabet, a header without an id, a non-ASCII id, an over-long record), gzip, FASTQ and
standard input are left to it. Also here: makedb's progress line or bar."""

from __future__ import annotations

import contextlib
import gc
import math
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
import zlib
from array import array
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import accumulate, pairwise

from ..alphabets import INVALID, dna_codes, guess, letter_codes
from ..errors import InputError
from ..seqio import NOT_CONTROL, fasta_chunks
from ..threads import cores
from .checksum import crc32_combine
from .files import ALPHABETS, PROTEIN_LETTERS, STREAMED, finish, make_header, making
from .read_progress import progress

#: a worker's range of the file at most (about four times this is held per worker at once;
#: a record longer than the range is a range alone)
RANGE = 16 << 20
#: the smallest range (a small file is parsed by fewer workers)
MIN_RANGE = 1 << 20
#: the processes below which a file is parsed on threads by default (:meth:`Database.build`'s
#: NumPy parser: 7 ms of a core per MB, against 25 ms here, but NumPy's import first and no
#: more than MAKEDB_THREADS threads at once)
FEWEST = 8
#: makedb's parsing threads at most, where the file is parsed on threads: the parser's NumPy
#: passes release the GIL, but each piece takes it between them; on the 16-core H100 host
#: the pieces of a Swiss-Prot-sized FASTA parsed in 0.48 s on 4 threads, 0.44 s on 8 and
#: 0.70 s on 16 (the build: 0.58, 0.61 and 0.65 s)
MAKEDB_THREADS = 6
#: the longest record a database holds (lengths are int32)
LONGEST = 2**31 - 1
_INVALID = bytes([INVALID])
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
    #: writing (``benchmarks/makedb_stages.py``); empty from threads
    stages: tuple = field(default=(), compare=False, repr=False)
    #: seconds from the last range written to every range's letters counted
    counting: float = field(default=0.0, compare=False, repr=False)

    @classmethod
    def of(cls, db) -> Built:
        """What the :class:`Database` ``db`` holds."""
        return cls(len(db), db.total_residues, int((db.lengths == 0).sum()), db.alphabet)


@dataclass
class _Range:
    """One range's records parsed: their codes, lengths, ids and titles (each followed by a
    newline)."""

    codes: bytes
    lengths: list[int]
    ids: bytes
    id_lengths: list[int]
    titles: bytes
    title_lengths: list[int]


def _parse(data: bytes, table: bytes | None) -> _Range | None:
    """The whole records of ``data`` (it starts at a header line, or is empty): the residues
    translated by ``table`` (None: kept as they are), line ends dropped; None where the
    record reader must read them (it says what is wrong: text before the first header, a
    control byte, a header without an id, a non-ASCII id, a letter outside the table; or
    it reads line ends of a carriage return alone)."""
    if not data:
        return _Range(b"", [], b"", [], b"", [])
    if data[0] != 62 or data.translate(None, NOT_CONTROL):
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):  # a CR alone ends lines
        return None
    ids: list[bytes] = []
    titles: list[bytes] = []
    seqs: list[bytes] = []
    for record in data[1:].split(b"\n>"):
        head, _, body = record.partition(b"\n")
        if not head or head[0] in b" \t\r":  # a header without an id
            return None
        rid = head.split(None, 1)[0]
        ids.append(rid)
        # the title: after the id and one space or tab, a CRLF's carriage return dropped
        title = head[len(rid) + 1:] if head[len(rid):len(rid) + 1] in (b" ", b"\t") else b""
        titles.append(title[:-1] if title.endswith(b"\r") else title)
        seqs.append(body.translate(table, b"\n\r"))
    codes = b"".join(seqs)
    names = b"\n".join(ids) + b"\n"
    lengths = list(map(len, seqs))
    if not names.isascii() or (table is not None and _INVALID in codes) \
            or max(lengths) > LONGEST:
        return None
    return _Range(codes, lengths, names, [len(n) + 1 for n in ids], b"\n".join(titles) + b"\n",
                  [len(t) + 1 for t in titles])


class _Slow(Exception):
    """A range the record reader must read (or a worker that could not run): nothing is
    kept, :meth:`Database.build` reads the file."""


@dataclass(frozen=True)
class _Plan:
    """How a file is cut: ``ranges`` of about ``step`` bytes of its ``size`` bytes (read
    through ``fd``), parsed by ``workers`` processes with the code ``table`` of an alphabet of
    ``letters`` letters."""

    fd: int
    size: int
    step: int
    ranges: int
    workers: int
    table: bytes
    letters: int

    def bounds(self, k: int) -> tuple[int, int]:
        """Range ``k``'s bytes: from the first header line at or after its start to the
        next range's."""
        start = _boundary(self.fd, k * self.step, self.size)
        stop = self.size if k == self.ranges - 1 else \
            _boundary(self.fd, (k + 1) * self.step, self.size)
        return start, max(start, stop)


def build(source: str | os.PathLike, out: str | os.PathLike, alphabet: str = "auto",
          workers: int | None = None, show: bool = True) -> Built | None:
    """Build the ``.wdb`` folder ``out`` from the FASTA file ``source`` on ``workers``
    processes (None: one per core), as :meth:`Database.build` does; ``show``: progress on
    stderr. None, with nothing written, where the file is left to the record reader (see
    the module's text), there are fewer than FEWEST workers (threads parse faster), or this
    process cannot fork safely (no ``fork``; other threads running: a child of a threaded
    process may inherit a lock never released)."""
    source, out = os.fspath(source), os.fspath(out)
    if (alphabet not in ("auto", *ALPHABETS) or source == "-" or not hasattr(os, "fork")
            or threading.active_count() > 1 or not os.path.isfile(source)):
        return None
    try:
        fd = os.open(source, os.O_RDONLY)
    except OSError:  # the record reader names the problem
        return None
    try:
        size = os.fstat(fd).st_size
        if os.pread(fd, 2, 0) == b"\x1f\x8b":  # gzip
            return None
        if alphabet == "auto":  # the threaded path's first piece decides, as it does there
            try:
                with contextlib.closing(fasta_chunks(source, checked=False)) as pieces:
                    parsed = _parse(bytes(next(pieces)[0]), None)
            except InputError:  # FASTQ, no record, ...: the record reader says so
                return None
            if parsed is None:
                return None
            alphabet = guess(parsed.codes)
        letters = ALPHABETS[alphabet]
        table = dna_codes() if alphabet == "dna" else letter_codes(PROTEIN_LETTERS)
        workers = workers or cores()
        if workers < FEWEST:
            return None
        step = max(MIN_RANGE, min(RANGE, math.ceil(size / workers)))
        ranges = max(1, math.ceil(size / step))
        plan = _Plan(fd, size, step, ranges, min(workers, ranges), table, len(letters))
        try:
            with making(source, out) as tmp:
                totals = _run(plan, tmp, out, show, source)
                if totals.sequences == 0:  # the record reader says there are none
                    raise _Slow
                finish(tmp, out, totals.header(alphabet, source, tmp))
        except _Slow:
            return None
        return Built(totals.sequences, totals.residues, totals.empty, alphabet,
                     tuple(totals.stages), totals.counting)
    finally:
        os.close(fd)


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
        self.counting = 0.0
        start = zlib.crc32(bytes(8))  # the offsets files begin with a zero
        self.files = {name: [start, 8] if name.endswith(".i64") else [0, 0]
                      for name in STREAMED}

    def add(self, done: dict) -> None:
        """Range after range, in file order: what a worker said when it was done."""
        for name, (crc, size) in done["files"].items():
            entry = self.files[name]
            entry[0] = crc32_combine(entry[0], crc, size)
            entry[1] += size
        self.longest = max(self.longest, done["longest"])
        self.empty += done["empty"]
        self.stages.append(done["stages"])

    def count(self, counted: list[Future]) -> None:
        """The letters of every range, counted on threads (:func:`_letters`), summed."""
        start = time.perf_counter()
        for future in counted:
            self.composition = [a + b for a, b in
                                zip(self.composition, future.result(), strict=True)]
        self.counting = time.perf_counter() - start

    def header(self, alphabet: str, source: str, folder: str) -> dict:
        """The database's header (``files.make_header``, as :meth:`Database.build` writes
        it), the order written into ``folder`` now (NumPy is imported here, once the
        workers are done)."""
        from .order import write_order  # lazy: see above

        files = {name: (size, crc) for name, (crc, size) in self.files.items()}
        return make_header(alphabet, self.sequences, self.residues, self.longest,
                           self.composition, source,
                           {**files, **write_order(folder, self.sequences)},
                           id_bytes=self.id_bytes, title_bytes=self.title_bytes)


def _run(plan: _Plan, tmp: str, out: str, show: bool, source: str) -> _Totals:
    """The workers started on ``plan``'s ranges, each range given its place once the
    ranges before it are counted; their results summed, the letters of each range counted
    here once it is written. :class:`_Slow` where a range is the record reader's or a
    worker could not start or ended early."""
    files = {name: os.open(os.path.join(tmp, name), os.O_WRONLY | os.O_CREAT, 0o666)
             for name in STREAMED}
    residues = os.open(os.path.join(tmp, "residues.u8"), os.O_RDONLY)
    totals = _Totals(plan.letters)
    children: list[_Child] = []
    read = 0
    pool = None
    try:
        for name in ("offsets.i64", "id_offsets.i64", "title_offsets.i64"):
            _pwrite(files[name], bytes(8), 0)
        children = _fork(plan.workers, lambda w, up, down: _work(plan, files, w, up, down))
        # threads only now, after the forks: NumPy's import starts while the workers parse
        pool = ThreadPoolExecutor(min(plan.workers, cores()),
                                  thread_name_prefix="wavedp-makedb-count")
        pool.submit(_counter)
        places: dict[int, tuple[int, int, int]] = {}  # each range's counts, until placed
        spans: dict[int, tuple[int, int]] = {}  # each placed range's residues
        done: dict[int, dict] = {}
        counted: list[Future] = []
        placed = summed = 0
        waiting = {child.up: child for child in children}
        with progress(source, show, done=lambda: read) as update:
            while summed < plan.ranges:
                if not waiting:
                    raise _Slow  # a worker ended early
                for up in select.select(list(waiting), [], [])[0]:
                    try:
                        message = _receive(up)
                    except EOFError:
                        del waiting[up]
                        continue
                    kind, k = message[0], message[1]
                    if kind == "slow":
                        raise _Slow
                    if kind == "failed":
                        raise InputError(f"cannot write database {out}: {message[2]}")
                    if kind == "counted":
                        places[k] = message[2]
                    else:
                        done[k] = message[2]
                        read += done[k]["bytes"]
                        counted.append(pool.submit(_letters, residues, *spans.pop(k),
                                                   plan.letters))
                        update()
                while placed in places:  # give each counted range its place, in order
                    records, size, id_bytes, title_bytes = places.pop(placed)
                    _send(children[placed % plan.workers].down,
                          (totals.sequences, totals.residues, totals.id_bytes,
                           totals.title_bytes))
                    spans[placed] = (totals.residues, size)
                    totals.sequences += records
                    totals.residues += size
                    totals.id_bytes += id_bytes
                    totals.title_bytes += title_bytes
                    placed += 1
                while summed in done:
                    totals.add(done.pop(summed))
                    summed += 1
        totals.count(counted)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        for fd in (*files.values(), residues):
            os.close(fd)
        _end(children)
    return totals


def _counter() -> Callable:
    """NumPy's byte counter (``fasta_parser.byte_counts``: a sort, which releases the GIL),
    imported on first use: a task of the counting threads."""
    from ..fasta_parser import byte_counts  # lazy: NumPy, imported while the workers parse

    return byte_counts


def _letters(fd: int, position: int, size: int, letters: int) -> list[int]:
    """How many residues of each code the ``size`` bytes of the residues file ``fd`` from
    ``position`` hold (codes below ``letters``): a task of the counting threads."""
    count = _counter()
    step = 1 << 22  # the counter sorts a copy: kept small
    totals = [0] * letters
    for at in range(position, position + size, step):
        data = _pread(fd, min(step, position + size - at), at)
        found = count(memoryview(data).cast("B")).tolist()
        totals = [a + b for a, b in zip(totals, found, strict=False)]
    return totals


@dataclass(frozen=True)
class _Child:
    """A worker process: its ``pid``, the pipe it writes to (``up``) and the one it reads
    from (``down``)."""

    pid: int
    up: int
    down: int


#: the signals a worker leaves to their default (it ends at once); blocked while it forks
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def _fork(count: int, work: Callable[[int, int, int], None]) -> list[_Child]:
    """``count`` worker processes, worker w running ``work(w, up, down)`` and ending with
    ``os._exit``; stop signals are blocked while they fork, so that none runs this
    process's handlers (and its ``finally`` blocks) in a child. :class:`_Slow` where the
    system refuses a process or a pipe (those started are ended)."""
    children: list[_Child] = []
    gc.freeze()  # this process's objects out of the workers' collections (their pages shared)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        for w in range(count):
            up_read, up_write = os.pipe()
            down_read, down_write = os.pipe()
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
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
    except OSError:
        _end(children)
        raise _Slow from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        gc.unfreeze()
    return children


def _end(children: list[_Child]) -> None:
    """The workers stopped (where still running) and waited for; their pipes closed."""
    for child in children:
        with contextlib.suppress(OSError):
            os.close(child.up)
        with contextlib.suppress(OSError):
            os.close(child.down)
        with contextlib.suppress(OSError):
            os.kill(child.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(child.pid, 0)


def _work(plan: _Plan, files: dict[str, int], w: int, up: int, down: int) -> None:
    """Worker ``w``: ranges w, w + workers, ... parsed, counted, placed and written. The
    collector stays off: the parse makes no cycles, and a collection would touch (and so
    copy) every page of objects the worker shares with its parent."""
    gc.disable()
    for k in range(w, plan.ranges, plan.workers):
        times = [time.perf_counter()]
        start, stop = plan.bounds(k)
        data = _pread(plan.fd, stop - start, start)
        times.append(time.perf_counter())
        parsed = _parse(data.lstrip() if k == 0 else data, plan.table)
        del data
        times.append(time.perf_counter())
        if parsed is None:
            _send(up, ("slow", k))
            return
        _send(up, ("counted", k, (len(parsed.lengths), len(parsed.codes), len(parsed.ids),
                                  len(parsed.titles))))
        place = _receive(down)
        times.append(time.perf_counter())
        written = {}
        try:
            for name, position, blob in _pieces(parsed, *place):
                _pwrite(files[name], blob, position)
                written[name] = (zlib.crc32(blob), len(blob))
        except OSError as exc:  # disk full, quota
            _send(up, ("failed", k, exc.strerror or str(exc)))
            return
        times.append(time.perf_counter())
        _send(up, ("done", k, {
            "files": written,
            "longest": max(parsed.lengths, default=0),
            "empty": parsed.lengths.count(0),
            "bytes": stop - start,
            "stages": tuple(b - a for a, b in pairwise(times)),
        }))


def _pieces(parsed: _Range, records: int, residues: int, id_bytes: int, title_bytes: int
            ) -> list[tuple[str, int, bytes]]:
    """(file, position, bytes) of a range whose records follow ``records`` records of
    ``residues`` residues, ``id_bytes`` id bytes and ``title_bytes`` title bytes."""
    offsets = array("q", accumulate(parsed.lengths, initial=residues))
    id_offsets = array("q", accumulate(parsed.id_lengths, initial=id_bytes))
    title_offsets = array("q", accumulate(parsed.title_lengths, initial=title_bytes))
    lengths = array("i", parsed.lengths)
    if sys.byteorder == "big":  # the files are little-endian
        for numbers in (offsets, id_offsets, title_offsets, lengths):
            numbers.byteswap()
    return [("residues.u8", residues, parsed.codes),
            ("offsets.i64", 8 * (records + 1), offsets.tobytes()[8:]),
            ("lengths.i32", 4 * records, lengths.tobytes()),
            ("ids.txt", id_bytes, parsed.ids),
            ("id_offsets.i64", 8 * (records + 1), id_offsets.tobytes()[8:]),
            ("titles.txt", title_bytes, parsed.titles),
            ("title_offsets.i64", 8 * (records + 1), title_offsets.tobytes()[8:])]


#: :func:`_boundary` reads this much at a time
_WINDOW = 1 << 16


def _boundary(fd: int, at: int, size: int) -> int:
    """The start of the first header line at or after byte ``at`` (``size``: none)."""
    if at <= 0:
        return 0
    position = at - 1  # the line end before it
    while position < size - 1:
        window = os.pread(fd, _WINDOW, position)
        found = window.find(b"\n>")
        if found >= 0:
            return position + found + 1
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


def _pwrite(fd: int, data: bytes, position: int) -> None:
    view = memoryview(data)
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
