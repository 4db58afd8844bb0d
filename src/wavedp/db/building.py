"""Building a ``.wdb`` folder record by record through the record reader, which names what
and where for bad input (``database.py`` describes the layout; ``makedb.py`` is the fast
path, which leaves to this builder what its parser does not take), and the encoding helpers
of in-memory databases."""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence

import numpy as np

from ..alphabets import guess
from ..errors import InputError
from ..scoring import INVALID, dna_table, matrix_table
from ..seqio import iter_records
from . import read_progress
from .files import (
    ALPHABETS,
    PROTEIN_LETTERS,
    STREAMED,
    make_header,
)
from .order import write_order

#: the builder encodes and writes once this many residues or records are pending
BATCH_RESIDUES = 1 << 20
BATCH_RECORDS = 1 << 14
_INT32_MAX = int(np.iinfo(np.int32).max)


def lut_of(alphabet: str) -> np.ndarray:
    return dna_table() if alphabet == "dna" else matrix_table(PROTEIN_LETTERS)


def check_alphabet(alphabet: str, auto: bool = False) -> str:
    if alphabet not in ALPHABETS and not (auto and alphabet == "auto"):
        raise InputError(f"alphabet must be {'auto, ' if auto else ''}'protein' or 'dna', got "
                         f"{alphabet!r}")
    return alphabet


def guess_alphabet(texts: Sequence[str]) -> str:
    """``dna`` when every letter of ``texts`` is a DNA letter (A, C, G, T, U, N or an IUPAC
    ambiguity code) and at least DNA_BASES of them are A, C, G, T or U; else ``protein``."""
    return guess("".join(texts).encode("latin-1", "replace"))


def label(alphabet: str) -> str:
    return "DNA" if alphabet == "dna" else "protein"


def encode_texts(texts: list[str], ids: Sequence[str], lut: np.ndarray, alphabet: str,
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
            f"{texts[k][offset]!r} for the {label(alphabet)} alphabet"
        )
    too_long = np.flatnonzero(lengths > _INT32_MAX)
    if too_long.size:
        k = int(too_long[0])
        raise InputError(f"{where}record {ids[k]!r}: {int(lengths[k])} residues, more than "
                         f"a database sequence may hold ({_INT32_MAX})")
    return codes, lengths


def composition_of(codes: np.ndarray, size: int = 256) -> np.ndarray:
    """int64 count of each code value (bincount in slices: it widens its input to intp)."""
    counts = np.zeros(size, dtype=np.int64)
    step = 1 << 16
    for start in range(0, codes.size, step):
        counts += np.bincount(codes[start:start + step], minlength=size)[:size]
    return counts


class Sink:
    """A data file being written: bytes appended, counted and checksummed as they go."""

    def __init__(self, path: str) -> None:
        self.fh = open(path, "wb")  # closed by Builder.close
        self.crc = 0
        self.size = 0

    def write(self, array: np.ndarray | bytes) -> None:
        data = array if isinstance(array, bytes) else np.ascontiguousarray(array).view(np.uint8)
        self.fh.write(data)
        self.crc = zlib.crc32(data, self.crc)
        self.size += len(data)


class Builder:
    """Appends records to the data files of a database folder in batches (bounded memory)."""

    def __init__(self, folder: str, source: str, alphabet: str) -> None:
        """``alphabet`` ``auto``: :func:`guess_alphabet` on the first batch decides it."""
        self.folder, self.source, self.alphabet = folder, source, alphabet
        self.guessed = alphabet == "auto"
        self.lut = None if self.guessed else lut_of(alphabet)
        self.sinks: dict[str, Sink] = {}
        for name in STREAMED:
            self.sinks[name] = Sink(os.path.join(folder, name))
        self.texts: list[str] = []
        self.ids: list[str] = []
        self.titles: list[str] = []
        self.pending = 0
        self.count = self.residues = self.id_bytes = self.title_bytes = self.longest = 0
        self.empty = 0
        self.composition = np.zeros(256, dtype=np.int64)
        for name in ("offsets.i64", "id_offsets.i64", "title_offsets.i64"):
            self.sinks[name].write(np.zeros(1, dtype="<i8"))

    def add(self, rid: str, text: str, title: str) -> bool:
        """Queue one record (``title``: its header line after the id and one space or tab);
        True when a batch was written."""
        self.texts.append(text)
        self.ids.append(rid)
        self.titles.append(title)
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
            self.lut = lut_of(self.alphabet)
        try:
            codes, lengths = encode_texts(self.texts, self.ids, self.lut, self.alphabet,
                                     f"file {self.source}, ")
        except InputError as exc:
            if not self.guessed:
                raise
            other = "protein" if self.alphabet == "dna" else "dna"
            raise InputError(f"{exc} (the first records looked like {label(self.alphabet)}: "
                             f"give the alphabet, --alphabet {other})") from None
        self.sinks["residues.u8"].write(codes)
        self.sinks["offsets.i64"].write((self.residues + np.cumsum(lengths)).astype("<i8"))
        self.sinks["lengths.i32"].write(lengths.astype("<i4"))
        self.id_bytes = self._lines("ids.txt", "id_offsets.i64", _joined(self.ids),
                                    self.id_bytes)
        self.title_bytes = self._lines("titles.txt", "title_offsets.i64",
                                       _joined(self.titles), self.title_bytes)
        self.composition += composition_of(codes)
        self.count += len(self.texts)
        self.residues += int(codes.size)
        self.longest = max(self.longest, int(lengths.max()))
        self.empty += int(np.count_nonzero(lengths == 0))
        self.texts, self.ids, self.titles, self.pending = [], [], [], 0

    def _lines(self, name: str, offsets: str, lines: bytes, before: int) -> int:
        """``lines`` (each ending in a newline) appended to ``name``, their ends to
        ``offsets``; the bytes written so far."""
        self.sinks[name].write(lines)
        ends = before + 1 + np.flatnonzero(np.frombuffer(lines, np.uint8) == ord("\n"))
        self.sinks[offsets].write(ends.astype("<i8"))
        return int(ends[-1])

    def close(self) -> None:
        for sink in self.sinks.values():
            sink.fh.close()

    def header(self) -> dict:
        """The database's header (``files.make_header``), once its files are closed: the
        order written now."""
        files = {name: (s.size, s.crc) for name, s in self.sinks.items()}
        return make_header(self.alphabet, self.count, self.residues, self.longest,
                           self.composition[:len(ALPHABETS[self.alphabet])].tolist(),
                           self.source, {**files, **write_order(self.folder, self.count)},
                           id_bytes=self.id_bytes, title_bytes=self.title_bytes)


def _joined(texts: list[str]) -> bytes:
    """``texts`` a line each, as the data files hold them."""
    return "".join(text + "\n" for text in texts).encode("utf-8", "surrogateescape")


def write_fasta(folder: str, source: str, alphabet: str, progress: bool) -> Builder:
    """Encode ``source`` into the data files of ``folder`` record by record, through the
    record reader (``seqio.iter_records``: its messages name what and where): the builder of
    what makedb's parser leaves (``makedb.py``)."""
    builder = Builder(folder, source, alphabet)
    try:
        with read_progress.progress(source, progress) as update:
            for rid, text, title in iter_records(source, titles=True):
                if builder.add(rid, text, title):
                    update()
            builder.flush()
            update()
    finally:
        builder.close()
    return builder
