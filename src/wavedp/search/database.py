"""The memory-mapped sequence database (a ``.wdb`` folder made once, searched many times).

Layout of ``NAME.wdb/`` (all integers little-endian, every array a raw file):

- ``header.json``: format name and version, alphabet, letters, counts, the letter
  composition, the data folder's name and every data file's size and CRC-32; its last line
  holds the CRC-32 of the lines before it, so every byte that decides a result is checked;
- ``data-XXXXXXXXXXXXXXXX/``, the data folder the header names:
  - ``residues.u8``: every sequence's codes, concatenated in file order (code k is letter k
    of the header's ``letters``);
  - ``offsets.i64``: n+1 start offsets into ``residues.u8`` (the last one is the residue
    count);
  - ``lengths.i32``: n sequence lengths;
  - ``ids.txt``: the ids, each followed by a newline, as UTF-8;
  - ``id_offsets.i64``: n+1 start offsets into ``ids.txt``.

A rebuild writes a new data folder and then replaces the header in one rename
(``dbfiles.finish``): a reader sees the old database or the new one, never a mix.

Protein residues use one canonical letter set (Biopython's BLOSUM62 alphabet, U/O/J stored as
X) whatever matrix is used later; ``Database.codes_for`` translates them to another matrix.
DNA uses the DNA scoring codes (A C G T N, U as T, IUPAC ambiguity codes as N).
"""

from __future__ import annotations

import functools
import json
import operator
import os
import threading
import zlib
from abc import abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import overload

import numpy as np

from ..alphabets import guess
from ..checksum import crc32_buffer, crc32_file
from ..engines.common import residue_ranges
from ..errors import InputError
from ..fasta_parser import FastaBlock, fasta_block
from ..scoring import INVALID, Scoring, dna_table, matrix_table
from ..seqio import fasta_chunks, iter_records
from ..threads import check as check_threads
from ..threads import cores
from . import makedb
from .dbfiles import (
    ALPHABETS,
    DATA,
    FILES,
    FORMAT,
    HEADER,
    PROTEIN_LETTERS,
    VERSION,
    finish,
    make_header,
    making,
    parse_header,
)
from .makedb import MAKEDB_THREADS

#: structural checks read this many bytes at a time
BLOCK = 16 << 20
#: the builder encodes and writes once this many residues or records are pending
BATCH_RESIDUES = 1 << 20
BATCH_RECORDS = 1 << 14
_INT32_MAX = int(np.iinfo(np.int32).max)
#: times Database.open reads the header again when a rebuild removed its data meanwhile
REOPEN = 5


def _lut(alphabet: str) -> np.ndarray:
    return dna_table() if alphabet == "dna" else matrix_table(PROTEIN_LETTERS)


def _check_alphabet(alphabet: str, auto: bool = False) -> str:
    if alphabet not in ALPHABETS and not (auto and alphabet == "auto"):
        raise InputError(f"alphabet must be {'auto, ' if auto else ''}'protein' or 'dna', got "
                         f"{alphabet!r}")
    return alphabet


def guess_alphabet(texts: Sequence[str]) -> str:
    """``dna`` when every letter of ``texts`` is a DNA letter (A, C, G, T, U, N or an IUPAC
    ambiguity code) and at least DNA_BASES of them are A, C, G, T or U; else ``protein``."""
    return guess("".join(texts).encode("latin-1", "replace"))


def _label(alphabet: str) -> str:
    return "DNA" if alphabet == "dna" else "protein"


def _encode(texts: list[str], ids: Sequence[str], lut: np.ndarray, alphabet: str,
            where: str) -> tuple[np.ndarray, np.ndarray]:
    """(codes of all texts concatenated, int64 lengths); a bad character raises InputError."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    raw = "".join(texts).encode("ascii", "replace")  # one byte per character, '?' if not ASCII
    codes = lut[np.frombuffer(raw, dtype=np.uint8)]
    if codes.size and int(codes.max()) == INVALID:
        pos = int(np.argmax(codes == INVALID))
        ends = np.cumsum(lengths)
        k = int(np.searchsorted(ends, pos, side="right"))
        offset = pos - int(ends[k] - lengths[k])
        raise InputError(
            f"{where}record {ids[k]!r}, position {offset + 1}: invalid character "
            f"{texts[k][offset]!r} for the {_label(alphabet)} alphabet"
        )
    too_long = np.flatnonzero(lengths > _INT32_MAX)
    if too_long.size:
        k = int(too_long[0])
        raise InputError(f"{where}record {ids[k]!r}: {int(lengths[k])} residues, more than "
                         f"a database sequence may hold ({_INT32_MAX})")
    return codes, lengths


def _composition(codes: np.ndarray, size: int = 256) -> np.ndarray:
    """int64 count of each code value (bincount in slices: it widens its input to intp)."""
    counts = np.zeros(size, dtype=np.int64)
    step = 1 << 16
    for start in range(0, codes.size, step):
        counts += np.bincount(codes[start:start + step], minlength=size)[:size]
    return counts


def _crc32_file(path: str) -> str:
    """CRC-32 of a file, on every core (``checksum.crc32_file``), as 8 hex digits."""
    return f"{crc32_file(path):08x}"


class _Sink:
    """A data file being written: bytes appended, counted and checksummed as they go."""

    def __init__(self, path: str) -> None:
        self.fh = open(path, "wb")  # closed by _Builder.close
        self.crc = 0
        self.size = 0

    def write(self, array: np.ndarray | bytes) -> None:
        data = array if isinstance(array, bytes) else np.ascontiguousarray(array).view(np.uint8)
        self.fh.write(data)
        self.crc = zlib.crc32(data, self.crc)
        self.size += len(data)


class _Builder:
    """Appends records to the data files of a database folder in batches (bounded memory)."""

    def __init__(self, folder: str, source: str, alphabet: str) -> None:
        """``alphabet`` ``auto``: :func:`guess_alphabet` on the first batch decides it."""
        self.folder, self.source, self.alphabet = folder, source, alphabet
        self.guessed = alphabet == "auto"
        self.lut = None if self.guessed else _lut(alphabet)
        self.sinks: dict[str, _Sink] = {}
        for name in FILES:
            self.sinks[name] = _Sink(os.path.join(folder, name))
        self.texts: list[str] = []
        self.ids: list[str] = []
        self.pending = 0
        self.count = self.residues = self.id_bytes = self.longest = 0
        self.composition = np.zeros(256, dtype=np.int64)
        self.sinks["offsets.i64"].write(np.zeros(1, dtype="<i8"))
        self.sinks["id_offsets.i64"].write(np.zeros(1, dtype="<i8"))

    def add(self, rid: str, text: str) -> bool:
        """Queue one record; True when a batch was written."""
        self.texts.append(text)
        self.ids.append(rid)
        self.pending += len(text)
        if self.pending >= BATCH_RESIDUES or len(self.texts) >= BATCH_RECORDS:
            self.flush()
            return True
        return False

    def flush(self) -> None:
        if not self.texts:
            return
        if self.lut is None:
            self.alphabet = guess_alphabet(self.texts)
            self.lut = _lut(self.alphabet)
        try:
            codes, lengths = _encode(self.texts, self.ids, self.lut, self.alphabet,
                                     f"file {self.source}, ")
        except InputError as exc:
            if not self.guessed:
                raise
            other = "protein" if self.alphabet == "dna" else "dna"
            raise InputError(f"{exc} (the first records looked like {_label(self.alphabet)}: "
                             f"give the alphabet, --alphabet {other})") from None
        self.sinks["residues.u8"].write(codes)
        self.sinks["offsets.i64"].write((self.residues + np.cumsum(lengths)).astype("<i8"))
        self.sinks["lengths.i32"].write(lengths.astype("<i4"))
        names = [(rid + "\n").encode("utf-8", "surrogateescape") for rid in self.ids]
        self.sinks["ids.txt"].write(b"".join(names))
        name_ends = self.id_bytes + np.cumsum(np.fromiter(map(len, names), dtype=np.int64))
        self.sinks["id_offsets.i64"].write(name_ends.astype("<i8"))
        self.composition += _composition(codes)
        self.count += len(self.texts)
        self.residues += int(codes.size)
        self.id_bytes = int(name_ends[-1])
        self.longest = max(self.longest, int(lengths.max()))
        self.texts, self.ids, self.pending = [], [], 0

    def choose(self, residues: bytes) -> None:
        """Decide the alphabet (``auto``) from the first block's residues (:func:`guess`)."""
        if self.lut is None:
            self.alphabet = guess(residues)
            self.lut = _lut(self.alphabet)

    def add_block(self, block: FastaBlock, codes: np.ndarray, composition: np.ndarray) -> None:
        """Append a block of whole FASTA records and their codes (:func:`_encode_block`)."""
        lengths = block.lengths
        self.sinks["residues.u8"].write(codes)
        self.sinks["offsets.i64"].write((self.residues + np.cumsum(lengths)).astype("<i8"))
        self.sinks["lengths.i32"].write(lengths.astype("<i4"))
        self.sinks["ids.txt"].write(block.ids)
        name_ends = self.id_bytes + 1 + np.flatnonzero(
            np.frombuffer(block.ids, np.uint8) == ord("\n"))
        self.sinks["id_offsets.i64"].write(name_ends.astype("<i8"))
        self.composition += composition
        self.count += int(lengths.size)
        self.residues += int(codes.size)
        self.id_bytes = int(name_ends[-1])
        self.longest = max(self.longest, int(lengths.max()))

    def close(self) -> None:
        for sink in self.sinks.values():
            sink.fh.close()


    def header(self) -> dict:
        """The database's header (``dbfiles.make_header``)."""
        return make_header(self.alphabet, self.count, self.residues, self.longest,
                           self.id_bytes, self.composition[:len(ALPHABETS[self.alphabet])].tolist(),
                           self.source, {name: (s.size, s.crc) for name, s in self.sinks.items()})


class _Slow(Exception):
    """A FASTA block the fast path leaves to the per-record reader."""


def _encode_block(source: str, data: memoryview, lut: np.ndarray
                  ) -> tuple[FastaBlock, np.ndarray, np.ndarray]:
    """A piece of :func:`fasta_chunks` parsed and encoded (:func:`fasta_block`): the block,
    its codes and their composition; :class:`_Slow` where the per-record reader must say
    what is wrong (a control byte, a letter not in the alphabet, a non-ASCII id, an
    over-long record, a header without an id)."""
    try:
        block = fasta_block(source, data, 0, lut)
    except InputError:
        raise _Slow from None
    assert block.letters is not None
    if block.lengths.size and int(block.lengths.max()) > _INT32_MAX:
        raise _Slow
    if block.letters[lut == INVALID].any() or not block.ids.isascii():
        raise _Slow
    composition = np.zeros(256, np.int64)
    np.add.at(composition, lut, block.letters)
    return block, block.residues, composition


def _write(folder: str, source: str, alphabet: str, progress: bool, threads: int,
           fast: bool = True) -> _Builder:
    """Encode ``source`` into the data files of ``folder``: FASTA pieces of whole records
    parsed on ``threads`` threads and written in order (``fast``); FASTQ, a fault, or a piece
    the fast path leaves record by record (from the start: its messages name what and
    where)."""
    builder = _Builder(folder, source, alphabet)
    try:
        with makedb.progress(source, progress) as update:
            if fast:
                try:
                    _write_blocks(builder, source, threads, update)
                    return builder
                except (_Slow, InputError):  # the record reader says what and where
                    pass
            else:
                for rid, text in iter_records(source):
                    if builder.add(rid, text):
                        update()
                builder.flush()
                update()
                return builder
    finally:
        builder.close()
    return _write(folder, source, alphabet, progress, threads, fast=False)


def _write_blocks(builder: _Builder, source: str, threads: int,
                  update: Callable[[], None]) -> None:
    """The fast path of :func:`_write`: this thread reads pieces, ``threads`` threads parse
    them, one more writes them in order (reading, parsing and writing overlap; each releases
    the GIL); at most ``threads`` + 1 pieces in flight (memory bounded by them), the first
    one deciding the alphabet."""
    pieces = fasta_chunks(source, checked=False)  # the parser checks its piece
    window: deque[Future] = deque()  # each piece's write, in file order

    def write(parsed: Future) -> None:
        builder.add_block(*parsed.result())

    with ThreadPoolExecutor(max(threads, 1), thread_name_prefix="wavedp-makedb") as pool, \
            ThreadPoolExecutor(1, thread_name_prefix="wavedp-makedb-write") as writer:
        try:
            for data, _ in pieces:
                if builder.lut is None:
                    try:
                        first = fasta_block(source, data, 0)
                    except InputError:
                        raise _Slow from None
                    builder.choose(first.residues.tobytes())
                    assert builder.lut is not None
                parsed = pool.submit(_encode_block, source, data, builder.lut)
                window.append(writer.submit(write, parsed))
                del data
                while len(window) > threads or (window and window[0].done()):
                    window.popleft().result()
                    update()
            while window:
                window.popleft().result()
                update()
        finally:
            for future in window:
                future.cancel()


def _verify(files: dict[str, tuple[str, np.ndarray]], header: dict) -> None:
    """Each file's CRC-32 (of its open memory map: a rebuild that removes the file meanwhile
    changes nothing) against the header's (an InputError naming the first that differs)."""
    for name, (file, array) in files.items():
        if f"{crc32_buffer(array):08x}" != header["files"][name]["crc32"]:
            raise _fail(file, "checksum mismatch (the database is corrupt; rebuild it)")


def _verify_into(future: Future, files: dict[str, tuple[str, np.ndarray]],
                 header: dict) -> None:
    """:func:`_verify` on a thread, its outcome into ``future``."""
    try:
        _verify(files, header)
    except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
        future.set_exception(exc)
    else:
        future.set_result(None)


class _LazyIds(Sequence[str]):
    """Ids read on access: indexing (negative indices, slices, range errors) over ``_get``."""

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = operator.index(k)
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"database index {k} out of range (0..{n - 1})")
        return self._get(k)

    @abstractmethod
    def _get(self, k: int) -> str:
        """Entry ``k`` (0 <= k < len)."""


class _Window(_LazyIds):
    """Entries ``start:stop`` of a sequence of ids, read on access (no copy)."""

    def __init__(self, items: Sequence[str], start: int, stop: int) -> None:
        if isinstance(items, _Window):  # a window of a window reads the original
            items, start, stop = items._items, items._start + start, items._start + stop
        self._items, self._start, self._stop = items, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def _get(self, k: int) -> str:
        return self._items[self._start + k]


class _Ids(_LazyIds):
    """The ids of a mapped database, decoded on access."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _get(self, k: int) -> str:
        start, stop = int(self._offsets[k]), int(self._offsets[k + 1]) - 1
        return self._blob[start:stop].tobytes().decode("utf-8", "surrogateescape")


def _fail(path: str, reason: str) -> InputError:
    return InputError(f"file {path}: {reason}")


class _Gone(Exception):
    """A data file of the header's data folder is missing (``path``)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _read_header(folder: str) -> dict:
    if not os.path.isdir(folder):
        what = "no such folder" if not os.path.lexists(folder) else "not a folder"
        raise _fail(folder, f"not a wavedp database ({what})")
    path = os.path.join(folder, HEADER)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise _fail(folder, f"not a wavedp database ({HEADER} is missing)") from None
    except OSError as exc:
        raise _fail(path, f"cannot read it: {exc.strerror or exc}") from None
    try:
        plain = json.loads(raw)
    except ValueError as exc:
        raise _fail(path, f"damaged database header ({exc})") from None
    if not isinstance(plain, dict) or plain.get("format") != FORMAT:
        raise _fail(path, f"not a wavedp database header (format is not {FORMAT!r})")
    if plain.get("version") != VERSION:
        raise _fail(path, f"database format version {plain.get('version')!r} is not "
                          f"supported (this wavedp reads version {VERSION}); rebuild it "
                          "with wavedp makedb")
    try:
        header = parse_header(raw)
    except ValueError as exc:
        raise _fail(path, f"damaged database header ({exc})") from None
    _check_fields(path, header)
    return header


def _check_fields(path: str, header: dict) -> None:
    counts = ("sequences", "residues", "longest", "id_bytes")
    for key in counts:
        value = header.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _fail(path, f"damaged database header ({key!r} is {value!r})")
    alphabet, letters = header.get("alphabet"), header.get("letters")
    if alphabet not in ALPHABETS:
        raise _fail(path, f"damaged database header (alphabet {alphabet!r})")
    if (not isinstance(letters, str) or not 0 < len(letters) < INVALID
            or len(set(letters)) != len(letters) or not letters.isascii()):
        raise _fail(path, f"damaged database header (letters {letters!r})")
    composition = header.get("composition")
    if (not isinstance(composition, list) or len(composition) != len(letters)
            or not all(isinstance(c, int) and c >= 0 for c in composition)
            or sum(composition) != header["residues"]):
        raise _fail(path, "damaged database header (composition does not match the counts)")
    data = header.get("data")
    if not isinstance(data, str) or not data.startswith(DATA) or os.sep in data or (
            os.altsep and os.altsep in data) or data in (os.curdir, os.pardir):
        raise _fail(path, f"damaged database header (data folder {data!r})")
    files = header.get("files")
    if not isinstance(files, dict) or any(
            not isinstance(files.get(name), dict) or not isinstance(files[name].get("crc32"), str)
            for name in FILES):
        raise _fail(path, "damaged database header (file list)")
    if header["sequences"] == 0:
        raise _fail(path, "the database holds no sequences")


def _expected_sizes(header: dict) -> dict[str, int]:
    n = header["sequences"]
    return {
        "residues.u8": header["residues"],
        "offsets.i64": 8 * (n + 1),
        "lengths.i32": 4 * n,
        "ids.txt": header["id_bytes"],
        "id_offsets.i64": 8 * (n + 1),
    }


def _map(path: str, dtype: str, count: int) -> np.ndarray:
    if count == 0:
        empty = np.zeros(0, dtype=dtype)
        empty.setflags(write=False)
        return empty
    return np.memmap(path, dtype=dtype, mode="r", shape=(count,))


def _check_offsets(path: str, offsets: np.ndarray, end: int, lengths: np.ndarray | None,
                   minimum: int) -> int:
    """Offsets start at 0, end at ``end``, step by ``lengths`` (or >= ``minimum``); the max step."""
    if int(offsets[0]) != 0 or int(offsets[-1]) != end:
        raise _fail(path, f"damaged offsets (they run from {int(offsets[0])} to "
                          f"{int(offsets[-1])}, expected 0 to {end})")
    step = BLOCK // 8
    widest = 0
    for start in range(0, len(offsets) - 1, step):
        block = np.asarray(offsets[start:start + step + 1])
        diff = np.diff(block)
        if lengths is not None:
            if not np.array_equal(diff, lengths[start:start + step]):
                raise _fail(path, "damaged offsets (they disagree with the lengths)")
        if diff.size and int(diff.min()) < minimum:
            raise _fail(path, "damaged offsets (not increasing)")
        widest = max(widest, int(diff.max()) if diff.size else 0)
    return widest


class Database:
    """Sequences encoded once, in file order: memory-mapped from a ``.wdb`` folder or in memory.

    Sequence k (its *database index*) has codes ``residues[offsets[k]:offsets[k+1]]``.
    """

    def __init__(self, *, path: str | None, alphabet: str, letters: str, residues: np.ndarray,
                 offsets: np.ndarray, lengths: np.ndarray, ids: Sequence[str],
                 composition: np.ndarray | None, longest: int) -> None:
        """``composition`` None: counted from ``residues`` when first asked for."""
        self._path, self._alphabet, self._letters = path, alphabet, letters
        self._residues, self._offsets, self._lengths = residues, offsets, lengths
        self._ids, self._composition, self._longest = ids, composition, longest
        self._letter_bytes = np.frombuffer(letters.encode("ascii"), dtype=np.uint8)
        self._verifying: Future | None = None  # the checksums read in the background

    # ---- making and opening ----------------------------------------------------------------

    @classmethod
    def build(cls, fasta_path: str | os.PathLike, out_path: str | os.PathLike,
              alphabet: str = "auto", progress: bool = True,
              threads: int | None = None, processes: bool = True) -> Database:
        """Encode a FASTA/FASTQ file (plain or gzip) into the ``.wdb`` folder ``out_path``;
        ``alphabet`` ``protein``, ``dna`` or ``auto`` (the first records decide: DNA when they
        hold only DNA letters, mostly bases).

        A plain FASTA file is parsed by one process per core (``threads`` processes where
        given: :func:`makedb.build`) where this process may fork and no record needs the
        record reader's words; else (or ``processes`` False) in pieces of whole records on
        ``threads`` threads (default: every core, at most MAKEDB_THREADS). Memory is bounded
        by the ranges in flight (makedb.RANGE per process, about 1 MB per thread) and the
        longest record. Writes into a temporary folder
        beside ``out_path`` and renames it into place only on success; an existing database
        at ``out_path`` is replaced, anything else there is refused.
        """
        source, out = os.fspath(fasta_path), os.fspath(out_path)
        _check_alphabet(alphabet, auto=True)
        if not processes or makedb.build(source, out, alphabet, check_threads(threads),
                                         progress) is None:
            with making(source, out) as tmp:
                builder = _write(tmp, source, alphabet, progress,
                                 check_threads(threads) or min(cores(), MAKEDB_THREADS))
                if builder.count == 0:
                    raise InputError(f"file {source}: no records")
                finish(tmp, out, builder.header())
        return cls.open(out, verify=False)

    @classmethod
    def open(cls, path: str | os.PathLike, verify: bool | str = True) -> Database:
        """Memory-map a ``.wdb`` folder read-only, after checking it.

        Always checked: the header, every file's presence and size, and the offsets (12 bytes
        read per sequence). ``verify`` also reads every byte to compare CRC-32 checksums
        (on every core: about 0.5 s per GB and core from the page cache, disk speed
        otherwise); without it a corrupt residue goes unnoticed. ``verify="background"``
        reads them on threads of their own while the caller goes on (a search starts its
        device), and :meth:`verified` waits for that check and raises its error: a search
        calls it before its first result.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"a database path must be a str or os.PathLike, got "
                             f"{type(path).__name__}")
        folder = os.fspath(path)
        for _ in range(REOPEN):
            header = _read_header(folder)
            try:
                return cls._mapped(folder, header, verify)
            except _Gone as gone:  # a rebuild replaced it meanwhile: its new header names
                if _read_header(folder)["data"] == header["data"]:  # new data, or not
                    raise _fail(gone.path, "missing from the database") from None
        raise _fail(folder, f"the database was replaced {REOPEN} times while it was being "
                            "opened")

    @classmethod
    def _mapped(cls, folder: str, header: dict, verify: bool | str) -> Database:
        """:meth:`open`'s checks and memory maps of the data folder ``header`` names; _Gone
        where a data file is missing."""
        data = os.path.join(folder, header["data"])
        files = {name: os.path.join(data, name) for name in FILES}
        for name, expected in _expected_sizes(header).items():
            try:
                size = os.path.getsize(files[name])
            except OSError:
                raise _Gone(files[name]) from None
            if size != expected or header["files"][name].get("bytes") != expected:
                raise _fail(files[name], f"{size} bytes where the header says {expected} "
                                         "(truncated or damaged database)")
        n = header["sequences"]
        counts = {"residues.u8": header["residues"], "offsets.i64": n + 1, "lengths.i32": n,
                  "ids.txt": header["id_bytes"], "id_offsets.i64": n + 1}
        try:
            arrays = {name: _map(files[name], FILES[name], counts[name]) for name in FILES}
        except FileNotFoundError as exc:
            raise _Gone(exc.filename or data) from None
        mapped = {name: (files[name], arrays[name]) for name in FILES}
        if verify and verify != "background":
            _verify(mapped, header)
        offsets, lengths = arrays["offsets.i64"], arrays["lengths.i32"]
        longest = _check_offsets(files["offsets.i64"], offsets, header["residues"], lengths, 0)
        if longest != header["longest"]:
            raise _fail(files["lengths.i32"], f"damaged lengths (the longest is {longest}, "
                                              f"the header says {header['longest']})")
        id_offsets = arrays["id_offsets.i64"]
        _check_offsets(files["id_offsets.i64"], id_offsets, header["id_bytes"], None, 2)
        db = cls(path=folder, alphabet=header["alphabet"], letters=header["letters"],
                 residues=arrays["residues.u8"], offsets=offsets, lengths=lengths,
                 ids=_Ids(arrays["ids.txt"], id_offsets),
                 composition=np.asarray(header["composition"], dtype=np.int64),
                 longest=longest)
        if verify == "background":
            db._verifying = Future()
            threading.Thread(target=_verify_into, args=(db._verifying, mapped, header),
                             name="wavedp-verify", daemon=True).start()
        return db

    def verified(self) -> None:
        """Wait for the checksums :meth:`open` reads in the background (if it does); raise
        its InputError when one does not match."""
        if self._verifying is not None:
            self._verifying.result()

    @classmethod
    def from_sequences(cls, texts: list[str], ids: list[str] | None = None,
                       alphabet: str = "protein") -> Database:
        """An in-memory database of ``texts`` (ids default to seq1, seq2, ...); no files."""
        _check_alphabet(alphabet)
        texts = list(texts)
        if not texts:
            raise InputError("a database needs at least one sequence (got none)")
        if any(not isinstance(t, str) for t in texts):
            raise InputError("database sequences must be str")
        ids = [f"seq{k + 1}" for k in range(len(texts))] if ids is None else list(map(str, ids))
        if len(ids) != len(texts):
            raise InputError(f"{len(ids)} ids for {len(texts)} database sequences")
        codes, lengths = _encode(texts, ids, _lut(alphabet), alphabet, "")
        codes.setflags(write=False)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        letters = ALPHABETS[alphabet]
        composition = _composition(codes, len(letters))
        return cls(path=None, alphabet=alphabet, letters=letters, residues=codes,
                   offsets=offsets, lengths=lengths.astype(np.int32), ids=ids,
                   composition=composition, longest=int(lengths.max()))

    # ---- contents ----------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """The ``.wdb`` folder, or None for an in-memory database."""
        return self._path

    @property
    def alphabet(self) -> str:
        """``"protein"`` or ``"dna"``."""
        return self._alphabet

    @property
    def letters(self) -> str:
        """The stored letters: code k is ``letters[k]``."""
        return self._letters

    @property
    def residues(self) -> np.ndarray:
        """uint8 codes of every sequence, concatenated (read-only)."""
        return self._residues

    @property
    def offsets(self) -> np.ndarray:
        """int64 start of each sequence in ``residues``, plus the total (n+1 entries)."""
        return self._offsets

    @property
    def lengths(self) -> np.ndarray:
        """int32 length of each sequence."""
        return self._lengths

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        """The distinct lengths of the non-empty sequences, ascending (computed once)."""
        lengths = np.asarray(self._lengths)
        return np.unique(lengths[lengths > 0])

    @property
    def ids(self) -> Sequence[str]:
        """The sequence ids in database order."""
        return self._ids

    @property
    def composition(self) -> np.ndarray:
        """int64 count of each stored letter over the whole database."""
        if self._composition is None:
            self._composition = _composition(self._residues, len(self._letters))
        return self._composition

    @property
    def total_residues(self) -> int:
        """The number of residues in all sequences."""
        return int(self._offsets[-1])

    @property
    def longest(self) -> int:
        """The length of the longest sequence."""
        return self._longest

    def __len__(self) -> int:
        return len(self._lengths)

    def __repr__(self) -> str:
        where = self._path or "in memory"
        return (f"Database({where!r}, {self._alphabet}, {len(self)} sequences, "
                f"{self.total_residues} residues)")

    def _index(self, k: int) -> int:
        k = operator.index(k)
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"database index {k} out of range (0..{n - 1})")
        return k % n

    def id(self, k: int) -> str:
        """The id of sequence ``k``."""
        return self._ids[self._index(k)]

    def codes(self, k: int) -> np.ndarray:
        """The stored codes of sequence ``k`` (a read-only view)."""
        k = self._index(k)
        return self._residues[int(self._offsets[k]):int(self._offsets[k + 1])]

    def text(self, k: int) -> str:
        """The stored letters of sequence ``k`` (upper case; U/O/J read as X, IUPAC as N)."""
        return self._letter_bytes[self.codes(k)].tobytes().decode("ascii")

    def slice(self, start: int, stop: int) -> Database:
        """Sequences ``start:stop`` (``0 <= start < stop <= len(self)``) as a database of their
        own: views of the residues, lengths and ids (no copy), offsets rebased to 0, the same
        alphabet and letters; ``path`` is None. Its sequence k is sequence ``start + k``."""
        start, stop, n = operator.index(start), operator.index(stop), len(self)
        if not 0 <= start < stop <= n:
            raise InputError(f"database slice {start}:{stop} is empty or out of range "
                             f"(0 <= start < stop <= {n})")
        lo, hi = int(self._offsets[start]), int(self._offsets[stop])
        offsets = np.asarray(self._offsets[start:stop + 1], dtype=np.int64) - lo
        offsets.setflags(write=False)
        lengths = self._lengths[start:stop]
        return Database(path=None, alphabet=self._alphabet, letters=self._letters,
                        residues=self._residues[lo:hi], offsets=offsets, lengths=lengths,
                        ids=_Window(self._ids, start, stop), composition=None,
                        longest=int(np.max(lengths)))

    def chunks(self, max_residues: int) -> Iterator[tuple[int, int]]:
        """Consecutive half-open index ranges ``(start, stop)`` covering the database in order,
        each holding at most ``max_residues`` residues (a longer sequence is a chunk alone)."""
        if isinstance(max_residues, bool) or not isinstance(max_residues, (int, np.integer)) \
                or max_residues < 1:
            raise InputError(f"max_residues must be a positive integer, got {max_residues!r}")
        yield from residue_ranges(self._offsets, int(max_residues))

    def codes_for(self, scoring: Scoring) -> np.ndarray | None:
        """A 256-entry uint8 table from stored codes to ``scoring``'s codes (None if equal).

        InputError when the scoring is of the other alphabet (DNA vs protein) or its matrix
        lacks a letter that occurs in the database.
        """
        where = f"file {self._path}" if self._path else "database (in memory)"
        if scoring.is_dna != (self._alphabet == "dna"):
            what = ("DNA scoring (match/mismatch)" if scoring.is_dna else
                    f"matrix scoring ({scoring.matrix}: matrices score protein databases)")
            fix = "a protein matrix" if self._alphabet == "protein" else "match/mismatch scores"
            raise InputError(f"{where}: a {_label(self._alphabet)} database cannot be searched "
                             f"with {what}; use {fix} or build the database "
                             f"with alphabet={'dna' if scoring.is_dna else 'protein'!r}")
        if self._letters == scoring.alphabet:
            return None
        table = np.full(256, INVALID, dtype=np.uint8)
        missing = []
        for code, letter in enumerate(self._letters):
            table[code] = scoring.lut[ord(letter)]
            if table[code] == INVALID and self.composition[code] > 0:
                missing.append(letter)
        if missing:
            shown = ", ".join(repr(m) for m in missing)
            raise InputError(f"{where}: letter(s) {shown} occur in the database but not in the "
                             f"{scoring.matrix} matrix")
        table.setflags(write=False)
        return table
