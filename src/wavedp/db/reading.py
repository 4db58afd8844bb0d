"""Reading a ``.wdb`` folder: its sealed header, the checks of every file's size and of the
offsets, memory maps, the CRC-32 checksums (``database.py`` describes the layout)."""

from __future__ import annotations

import json
import operator
import os
from abc import abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from typing import overload

import numpy as np

from ..errors import InputError
from ..scoring import INVALID
from .checksum import crc32_buffer
from .files import (
    ALPHABETS,
    DATA,
    FILES,
    FORMAT,
    HEADER,
    VERSION,
    parse_header,
)

#: structural checks read this many bytes at a time
BLOCK = 16 << 20
#: times Database.open reads the header again when a rebuild removed its data meanwhile
REOPEN = 5


def verify_files(files: dict[str, tuple[str, np.ndarray]], header: dict) -> None:
    """Each file's CRC-32 (of its open memory map: a rebuild that removes the file meanwhile
    changes nothing) against the header's (an InputError naming the first that differs)."""
    for name, (file, array) in files.items():
        if f"{crc32_buffer(array):08x}" != header["files"][name]["crc32"]:
            raise fail(file, "checksum mismatch (the database is corrupt; rebuild it)")


def verify_files_into(future: Future, files: dict[str, tuple[str, np.ndarray]],
                 header: dict) -> None:
    """:func:`verify_files` on a thread, its outcome into ``future``."""
    try:
        verify_files(files, header)
    except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
        future.set_exception(exc)
    else:
        future.set_result(None)


class LazyIds(Sequence[str]):
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


class Window(LazyIds):
    """Entries ``start:stop`` of a sequence of ids, read on access (no copy)."""

    def __init__(self, items: Sequence[str], start: int, stop: int) -> None:
        if isinstance(items, Window):  # a window of a window reads the original
            items, start, stop = items._items, items._start + start, items._start + stop
        self._items, self._start, self._stop = items, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def _get(self, k: int) -> str:
        return self._items[self._start + k]


class Ids(LazyIds):
    """The ids (or titles) of a mapped database, each followed by a newline, decoded on
    access."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _get(self, k: int) -> str:
        start, stop = int(self._offsets[k]), int(self._offsets[k + 1]) - 1
        return self._blob[start:stop].tobytes().decode("utf-8", "surrogateescape")


def fail(path: str, reason: str) -> InputError:
    return InputError(f"file {path}: {reason}")


class Gone(Exception):
    """A data file of the header's data folder is missing (``path``)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def read_header(folder: str) -> dict:
    if not os.path.isdir(folder):
        what = "no such folder" if not os.path.lexists(folder) else "not a folder"
        raise fail(folder, f"not a wavedp database ({what})")
    path = os.path.join(folder, HEADER)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise fail(folder, f"not a wavedp database ({HEADER} is missing)") from None
    except OSError as exc:
        raise fail(path, f"cannot read it: {exc.strerror or exc}") from None
    try:
        plain = json.loads(raw)
    except ValueError as exc:
        raise fail(path, f"damaged database header ({exc})") from None
    if not isinstance(plain, dict) or plain.get("format") != FORMAT:
        raise fail(path, f"not a wavedp database header (format is not {FORMAT!r})")
    if plain.get("version") != VERSION:
        raise fail(path, f"database format version {plain.get('version')!r} is not "
                          f"supported (this wavedp reads version {VERSION}); rebuild it "
                          "with wavedp makedb")
    try:
        header = parse_header(raw)
    except ValueError as exc:
        raise fail(path, f"damaged database header ({exc})") from None
    check_fields(path, header)
    return header


def check_fields(path: str, header: dict) -> None:
    counts = ("sequences", "residues", "longest", "id_bytes", "title_bytes")
    for key in counts:
        value = header.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise fail(path, f"damaged database header ({key!r} is {value!r})")
    alphabet, letters = header.get("alphabet"), header.get("letters")
    if alphabet not in ALPHABETS:
        raise fail(path, f"damaged database header (alphabet {alphabet!r})")
    if (not isinstance(letters, str) or not 0 < len(letters) < INVALID
            or len(set(letters)) != len(letters) or not letters.isascii()):
        raise fail(path, f"damaged database header (letters {letters!r})")
    composition = header.get("composition")
    if (not isinstance(composition, list) or len(composition) != len(letters)
            or not all(isinstance(c, int) and c >= 0 for c in composition)
            or sum(composition) != header["residues"]):
        raise fail(path, "damaged database header (composition does not match the counts)")
    data = header.get("data")
    if not isinstance(data, str) or not data.startswith(DATA) or os.sep in data or (
            os.altsep and os.altsep in data) or data in (os.curdir, os.pardir):
        raise fail(path, f"damaged database header (data folder {data!r})")
    files = header.get("files")
    if not isinstance(files, dict) or any(
            not isinstance(files.get(name), dict) or not isinstance(files[name].get("crc32"), str)
            for name in FILES):
        raise fail(path, "damaged database header (file list)")
    if header["sequences"] == 0:
        raise fail(path, "the database holds no sequences")


def expected_sizes(header: dict) -> dict[str, int]:
    n = header["sequences"]
    return {
        "residues.u8": header["residues"],
        "offsets.i64": 8 * (n + 1),
        "lengths.i32": 4 * n,
        "ids.txt": header["id_bytes"],
        "id_offsets.i64": 8 * (n + 1),
        "titles.txt": header["title_bytes"],
        "title_offsets.i64": 8 * (n + 1),
        "order.i32": 4 * n,
        "runs.i64": _runs_bytes(header),
    }


def _runs_bytes(header: dict) -> int:
    """The size of the length runs' file: as the sealed header lists it, a whole number of
    (length, count) pairs, at most one per sequence (else 0: refused as damaged)."""
    size = header["files"]["runs.i64"].get("bytes")
    if isinstance(size, bool) or not isinstance(size, int) or size % 16 or not (
            16 <= size <= 16 * header["sequences"]):
        return -1
    return size


def map_array(path: str, dtype: str, count: int) -> np.ndarray:
    if count == 0:
        empty = np.zeros(0, dtype=dtype)
        empty.setflags(write=False)
        return empty
    return np.memmap(path, dtype=dtype, mode="r", shape=(count,))


def check_offsets(path: str, offsets: np.ndarray, end: int, lengths: np.ndarray | None,
                   minimum: int) -> int:
    """Offsets start at 0, end at ``end``, step by ``lengths`` (or >= ``minimum``); the max step."""
    if int(offsets[0]) != 0 or int(offsets[-1]) != end:
        raise fail(path, f"damaged offsets (they run from {int(offsets[0])} to "
                          f"{int(offsets[-1])}, expected 0 to {end})")
    step = BLOCK // 8
    widest = 0
    for start in range(0, len(offsets) - 1, step):
        block = np.asarray(offsets[start:start + step + 1])
        diff = np.diff(block)
        if lengths is not None:
            if not np.array_equal(diff, lengths[start:start + step]):
                raise fail(path, "damaged offsets (they disagree with the lengths)")
        if diff.size and int(diff.min()) < minimum:
            raise fail(path, "damaged offsets (not increasing)")
        widest = max(widest, int(diff.max()) if diff.size else 0)
    return widest
