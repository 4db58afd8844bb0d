"""makedb's FASTA parser: one range of whole records parsed with a few whole-array NumPy passes
(which release the GIL, so ranges parse on every core on threads as in processes), about 8 ms
of a core per MB: no compiled kernel, so makedb does not wait for Numba to load (1.0-1.2 s of
a fresh process on the H100 machine, more than the parsing of a Swiss-Prot-sized file)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .alphabets import INVALID
from .seqio import CONTROL

#: :func:`parse_piece`'s status: a header without an id, a control byte, text before the
#: first header line
NO_ID, CONTROL_BYTE, NO_HEADER = 1, 2, 3

_EMPTY = np.zeros(0, np.uint8)

#: residues translated and counted at once (kept small: the counting sorts a copy)
STEP = 1 << 17


def _spans(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the spans [start, stop) one after another, and each span's size."""
    sizes = stops - starts
    total = int(sizes.sum())
    first = np.cumsum(sizes) - sizes
    return np.arange(total) + np.repeat(starts - first, sizes), sizes


_EDGES = np.arange(257)


def byte_counts(part: np.ndarray) -> np.ndarray:
    """How many of each byte value ``part`` holds (int64 [256]): sorted (a radix sort for
    bytes, which releases the GIL) and cut at each value. ``np.bincount`` is faster on one
    core but holds the GIL: on 16 threads its 0.3 s for a Swiss-Prot-sized file ran one
    piece at a time."""
    return np.diff(np.searchsorted(np.sort(part, kind="stable"), _EDGES))


def _next(found: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """For each of ``at``, the first of ``found`` (ascending) at or after it, else n."""
    return np.append(found, n)[np.searchsorted(found, at)]


def parse_piece(buf: np.ndarray, lut: np.ndarray, id_end: np.ndarray, control: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(codes, lengths, ids, titles, letters, status, where) of a piece (uint8, starting at a
    header line): the residues translated by ``lut`` (line ends and ``\\r`` dropped), each
    record's length, each id (the header's first word, up to a byte of ``id_end``) followed
    by a newline, each title (the rest of the header line after the id and one space or tab,
    a line end's ``\\r`` dropped) followed by a newline, each byte's count among the
    residues; status 0, or NO_ID (where: the record's
    index), CONTROL_BYTE (where: the offset of the first byte of ``control``) or
    NO_HEADER, whichever a reader from the start meets first. ``id_end`` must hold the line
    feed and ``control`` none of tab, line feed and carriage return (as seqio's tables)."""
    assert id_end[10] and not control[[9, 10, 13]].any()
    n = buf.size
    letters = np.zeros(256, np.int64)
    none = (_EMPTY, np.zeros(0, np.int64), _EMPTY, _EMPTY, letters)
    if n == 0:
        return (*none, 0, 0)
    if buf[0] != 62:
        return (*none, NO_HEADER, 0)
    low = np.flatnonzero(buf < 32)  # line ends, tabs, control bytes
    byte = buf[low]
    lines = low[byte == 10]
    crs = low[byte == 13]
    if crs.size:  # a carriage return alone ends a line too
        lone = crs[buf[np.minimum(crs + 1, n - 1)] != 10]
        lines = np.union1d(lines, lone) if lone.size else lines
    gt = np.flatnonzero(buf == 62)
    ends = (buf[gt - 1] == 10) | (buf[gt - 1] == 13)
    heads = gt[(gt == 0) | ends]  # each record's '>' (gt[0] is 0)
    head_end = _next(lines, heads, n)  # each header line's '\n' (n: none)
    header, _ = _spans(heads, np.minimum(head_end + 1, n))
    text = buf[header]
    stops = header[id_end[text]]  # the bytes of header lines that end an id
    id_stop = _next(stops, heads + 1, n)
    bad = low[control[byte]]
    high = np.flatnonzero(control[32:]) + 32  # DEL, in practice
    if high.size and buf.max() >= high[0]:
        bad = np.union1d(bad, np.flatnonzero(control[buf]))
    empty = np.flatnonzero(id_stop == heads + 1)
    if bad.size or empty.size:
        at = int(bad[0]) if bad.size else n
        if empty.size and heads[empty[0]] + 1 <= at:
            return (*none, NO_ID, int(empty[0]))
        return (*none, CONTROL_BYTE, at)
    keep = np.ones(n, np.bool_)
    keep[header] = False
    keep[lines] = False
    keep[crs] = False
    codes = buf[keep]  # the residues, translated in place below
    del keep
    letters = np.zeros(256, np.int64)
    for at in range(0, codes.size, STEP):  # counted and translated in steps: kept small
        part = codes[at:at + STEP]
        letters += byte_counts(part)
        np.take(lut, part, out=part, mode="clip")  # a uint8 is in range
    bounds = np.append(heads[1:], n)  # each record's end
    body = np.minimum(head_end + 1, n)  # and its sequence lines' start
    skipped = np.union1d(lines, crs) if crs.size else lines
    lengths = (bounds - body) - (np.searchsorted(skipped, bounds) - np.searchsorted(skipped, body))
    ids = _lines(buf, heads + 1, id_stop)
    cut = np.minimum(id_stop, n - 1)
    after = (id_stop < n) & ((buf[cut] == 32) | (buf[cut] == 9))  # a space or tab: a title
    last = np.minimum(head_end, n - 1)
    crlf = (head_end < n) & (buf[last] == 10) & (buf[np.maximum(last - 1, 0)] == 13)
    stop = head_end - crlf  # the header line's end, before a CRLF's carriage return
    titles = _lines(buf, np.where(after, np.minimum(id_stop + 1, stop), stop), stop)
    return codes, lengths.astype(np.int64), ids, titles, letters, 0, 0


def _lines(buf: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The spans [start, stop) of ``buf``, each followed by a newline."""
    where, sizes = _spans(starts, stops)
    out = np.empty(where.size + starts.size, np.uint8)
    out[np.arange(where.size) + np.repeat(np.arange(starts.size), sizes)] = buf[where]
    out[np.cumsum(sizes + 1) - 1] = 10
    return out


#: the bytes that end a FASTA id (the first word of a header line)
_ID_END = np.zeros(256, np.bool_)
_ID_END[[ord(" "), ord("\t"), ord("\r"), ord("\n")]] = True
_CONTROL_BYTES = np.zeros(256, np.bool_)
_CONTROL_BYTES[sorted(CONTROL)] = True


@dataclass(frozen=True)
class Encoded:
    """A range of whole records encoded: their ``codes``, ``lengths``, ``ids`` and ``titles``
    (each followed by a newline) and the count of each code (``composition``)."""

    codes: np.ndarray
    lengths: np.ndarray
    ids: np.ndarray
    titles: np.ndarray
    composition: list[int]

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """Its records, residues, id bytes and title bytes."""
        return self.lengths.size, self.codes.size, self.ids.size, self.titles.size

    @property
    def longest(self) -> int:
        return int(self.lengths.max()) if self.lengths.size else 0

    @property
    def empty(self) -> int:
        return int(np.count_nonzero(self.lengths == 0))

    def pieces(self, records: int, residues: int, id_bytes: int, title_bytes: int
               ) -> list[tuple[str, int, np.ndarray]]:
        """(data file, position, its bytes) of a range whose records follow ``records``
        records of ``residues`` residues, ``id_bytes`` id bytes and ``title_bytes`` title
        bytes (the layout of ``db/database.py``)."""
        rows = 8 * (records + 1)
        return [("residues.u8", residues, self.codes),
                ("offsets.i64", rows, (residues + np.cumsum(self.lengths)).astype("<i8")),
                ("lengths.i32", 4 * records, self.lengths.astype("<i4")),
                ("ids.txt", id_bytes, self.ids),
                ("id_offsets.i64", rows, _ends(self.ids, id_bytes)),
                ("titles.txt", title_bytes, self.titles),
                ("title_offsets.i64", rows, _ends(self.titles, title_bytes))]


def _ends(lines: np.ndarray, before: int) -> np.ndarray:
    """Where each newline-ended line of ``lines`` ends, after ``before`` bytes (little-endian
    int64)."""
    return (before + 1 + np.flatnonzero(lines == 10)).astype("<i8")


def encode_range(data: bytes, table: bytes, letters: int, longest: int) -> Encoded | None:
    """The whole records of ``data`` (it starts at a header line, or is empty) parsed by
    :func:`parse_piece`, their residues translated by the code ``table`` of an alphabet of
    ``letters`` letters; None where the record reader must read them (it says what is
    wrong: text before the first header, a control byte, a header without an id, a letter
    outside the table, a record longer than ``longest``; or it reads a non-ASCII id)."""
    lut = np.frombuffer(table, np.uint8)
    codes, lengths, ids, titles, counts, status, _ = parse_piece(
        np.frombuffer(data, np.uint8), lut, _ID_END, _CONTROL_BYTES)
    if status or counts[lut == INVALID].any() or (ids.size and int(ids.max()) > 127) \
            or (lengths.size and int(lengths.max()) > longest):
        return None
    composition = np.zeros(256, np.int64)
    np.add.at(composition, lut, counts)
    return Encoded(codes, lengths, ids, titles, composition[:letters].tolist())
