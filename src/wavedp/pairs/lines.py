"""Lines of text assembled with NumPy, a block at a time: each field a byte matrix, a row
per line padded to the block's widest value, with a mask of the bytes that count; the masked
bytes, row by row, are the lines (the batch writers of ``formats``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import InputError

POWERS = 10 ** np.arange(19, dtype=np.int64)  # 1, 10, ..., 10**18
DIGITS = [(np.arange(1000) // 10 ** d % 10 + 48).astype(np.uint8) for d in range(3)]


class Block:
    """Lines built field by field: each field a byte matrix, a row per line (or one row for
    all), holding 0 where a line has no byte (no text written here holds a NUL)."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.fields: list[np.ndarray] = []

    def add(self, matrix: np.ndarray, rows: np.ndarray | None = None) -> None:
        """A field; ``rows``: the lines that have it (None: all)."""
        if rows is not None and not rows.all():
            if not rows.any():
                return
            matrix = matrix * rows[:, None]
        if matrix.shape[-1]:
            self.fields.append(matrix)

    def text(self, value: bytes, rows: np.ndarray | None = None) -> None:
        """The same bytes on each line (of ``rows``)."""
        last = self.fields[-1] if self.fields else None
        if rows is None and last is not None and last.ndim == 1:
            self.fields[-1] = np.frombuffer(last.tobytes() + value, np.uint8)
        else:
            self.add(np.frombuffer(value, np.uint8), rows)

    def choice(self, which: np.ndarray, yes: bytes, no: bytes) -> None:
        """``yes`` on the lines of ``which``, ``no`` on the others."""
        if which.all() or not which.any():
            self.text(yes if which.all() else no)
            return
        width = max(len(yes), len(no))
        table = np.frombuffer(no.ljust(width, b"\0") + yes.ljust(width, b"\0"), np.uint8)
        self.add(np.take(table.reshape(2, width), which.view(np.uint8), axis=0))

    def number(self, values: np.ndarray, rows: np.ndarray | None = None, width: int = 1,
               before: bytes = b"", after: bytes = b"") -> None:
        """Integers in decimal (at least ``width`` digits, zero-padded) between the texts
        ``before`` and ``after``, on the lines of ``rows``."""
        v = np.asarray(values, np.int64)
        if not v.size:
            return
        negative = v < 0 if int(v.min()) < 0 else None
        if negative is not None:
            v = np.abs(v)
        low, top = int(v.min()), int(v.max())
        places = max(int(np.searchsorted(POWERS, top, side="right")), width)
        at = len(before) + (negative is not None)  # the first digit's column
        matrix = np.empty((v.size, at + places + len(after)), np.uint8)
        matrix[:, :len(before)] = np.frombuffer(before, np.uint8)
        matrix[:, at + places:] = np.frombuffer(after, np.uint8)
        if negative is not None:
            matrix[:, at - 1] = negative * np.uint8(45)  # -
        rest, end = v, at + places
        while end > at:  # three places at a time, each from a table
            part = rest
            if end - at > 3:
                rest, part = np.divmod(rest, 1000)
            for d in range(min(3, end - at)):
                matrix[:, end - 1 - d] = DIGITS[d][part]
            end -= 3
        shown = places - width  # the leading places shown only where the value needs them
        if low < POWERS[places - 1] and shown > 0:
            matrix[:, at:at + shown] *= v[:, None] >= POWERS[places - 1:places - 1 - shown:-1]
        self.add(matrix, rows)

    def array(self, scratch: Scratch) -> np.ndarray:
        """The lines: the bytes other than 0, row by row (uint8)."""
        width = sum(m.shape[-1] for m in self.fields)
        data, mask = scratch.get(self.rows, width)
        at = 0
        for matrix in self.fields:
            end = at + matrix.shape[-1]
            data[:, at:end] = matrix
            at = end
        np.not_equal(data, 0, out=mask)
        return data.ravel()[mask.ravel()]  # faster than the 2-D mask


class Scratch:
    """The byte matrix and mask of a block, kept for the next (fresh memory costs its page
    faults each time)."""

    def __init__(self) -> None:
        self.data = np.empty(0, np.uint8)
        self.mask = np.empty(0, bool)

    def get(self, rows: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        size = rows * width
        if size > self.data.size:
            self.data = np.empty(size, np.uint8)
            self.mask = np.empty(size, bool)
        return self.data[:size].reshape(rows, width), self.mask[:size].reshape(rows, width)


class Strings:
    """Byte strings (record k: ``lengths[k]`` bytes of ``flat`` from ``starts[k]``, in order)
    taken by index as a matrix padded with 0; ``pad``: all padded once (when that costs at
    most a few times their bytes), else taken from ``flat`` at each ``take``."""

    def __init__(self, flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                 matrix: np.ndarray | None = None, pad: bool = True) -> None:
        self.flat, self.starts, self.lengths = flat, starts, lengths
        n, total = lengths.size, int(lengths.sum())
        widest = int(lengths.max()) if n else 0
        self.matrix = matrix
        if matrix is not None:
            pass
        elif n and (lengths == widest).all() and \
                int(starts[-1]) - int(starts[0]) == (n - 1) * widest:  # one after another
            self.matrix = np.ascontiguousarray(  # np.take copies a strided one whole
                flat[int(starts[0]):int(starts[0]) + total].reshape(n, widest))
        elif pad and n * widest <= 4 * total + (1 << 16):
            self.matrix = self._gather(np.arange(n), None)

    @classmethod
    def of(cls, texts: Sequence[str]) -> Strings:
        """``texts`` as UTF-8 (an InputError if one holds a NUL)."""
        joined = ("\n".join(texts) + "\n").encode("utf-8")
        if joined.count(b"\n") != len(texts):  # a text holds a newline
            encoded = [t.encode("utf-8") for t in texts]
            if b"\0" in b"".join(encoded):
                raise InputError("an id holds a NUL character")
            lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
            return cls(np.frombuffer(b"".join(encoded), np.uint8),
                       np.cumsum(lengths) - lengths, lengths)
        return cls.of_lines(joined, len(texts))

    @classmethod
    def of_lines(cls, joined: bytes, count: int) -> Strings:
        """``count`` texts, each followed by a newline in ``joined`` (UTF-8, none holding a
        newline; an InputError if one holds a NUL)."""
        data = np.frombuffer(joined, np.uint8)
        if not data.all():
            raise InputError("an id holds a NUL character")
        ends = np.flatnonzero(data == 10)
        assert ends.size == count
        starts = np.concatenate(([0], ends[:-1] + 1))
        lengths = ends - starts
        widest = int(lengths.max()) if lengths.size else 0
        if lengths.size * widest > 4 * data.size + (1 << 16):
            return cls(data, starts, lengths, pad=False)
        matrix = np.zeros((lengths.size, widest + 1), np.uint8)  # each row: text, newline
        matrix[prefixes(lengths + 1, widest + 1)] = data
        matrix.ravel()[np.arange(lengths.size) * (widest + 1) + lengths] = 0
        return cls(data, starts, lengths, matrix)

    def holding(self, table: np.ndarray) -> np.ndarray:
        """The records holding a byte ``table`` marks (sorted)."""
        at = np.flatnonzero(table[self.flat])
        k = np.searchsorted(self.starts, at, side="right") - 1
        inside = (k >= 0) & (at < self.starts[k] + self.lengths[k])
        return np.unique(k[inside])

    def take(self, index: np.ndarray, lut: np.ndarray | None = None) -> np.ndarray:
        """The strings ``index`` (each byte through ``lut``) padded with 0."""
        if self.matrix is None:
            return self._gather(index, lut)
        matrix = np.take(self.matrix, index, axis=0)  # far faster than self.matrix[index]
        return matrix if lut is None else lut[matrix]

    def _gather(self, index: np.ndarray, lut: np.ndarray | None) -> np.ndarray:
        lengths, starts = self.lengths[index], self.starts[index]
        widest = int(lengths.max()) if lengths.size else 0
        if not widest:
            return np.empty((index.size, 0), np.uint8)
        room = self.flat.size - widest  # the last start of a whole window of ``widest``
        fits = starts <= room
        if fits.all():  # rows copied whole from a sliding window: the next record's bytes
            matrix = sliding_window_view(self.flat, widest)[starts]  # are zeroed below
        else:
            matrix = np.empty((index.size, widest), np.uint8)
            if room >= 0:
                matrix[fits] = sliding_window_view(self.flat, widest)[starts[fits]]
            at = starts[~fits][:, None] + np.arange(widest)
            matrix[~fits] = self.flat[np.minimum(at, self.flat.size - 1)]
        if lut is not None:
            matrix = lut[matrix]
        if int(lengths.min()) < widest:
            matrix *= prefixes(lengths, widest)
        return matrix


def prefixes(lengths: np.ndarray, widest: int) -> np.ndarray:
    """Masks of the first ``lengths[k]`` of ``widest`` bytes (rows of a table, when small)."""
    if widest > 1024 or lengths.size < 4 * widest:
        return np.arange(widest) < lengths[:, None]
    return np.take(np.arange(widest) < np.arange(widest + 1)[:, None], lengths, axis=0)
