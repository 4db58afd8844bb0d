"""Sequences held as one encoded array with offsets: what the pair engines read, and what a
FASTA reader or a ``.wdb`` database gives without a Python object per record."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import encoded, record_text, sequences
from ..engines.spans import Spans
from ..errors import InputError
from ..scoring import Scoring


@dataclass(frozen=True, eq=False)
class Sequences:
    """``codes`` (uint8, the scoring's codes of every record one after another), ``offsets``
    (int64, n + 1: record k is ``codes[offsets[k]:offsets[k + 1]]``), ``ids`` (n strings) and
    ``letters`` (uint8 ASCII, the records' letters as given, on the same offsets; None: the
    codes' letters stand in)."""

    codes: np.ndarray
    offsets: np.ndarray
    ids: Sequence[str]
    letters: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @functools.cached_property
    def spans(self) -> Spans:
        """The records' lengths read off the offsets (the array made only where asked for)."""
        return Spans(self.offsets)

    @property
    def lengths(self) -> np.ndarray:
        """Each record's length (int64; made once, read-only)."""
        return self.spans.array()

    @property
    def extremes(self) -> tuple[int, int]:
        """The shortest record's length and the longest's (0, 0 where there is none)."""
        return self.spans.extremes()

    def text(self, k: int, alphabet: str) -> str:
        """Record k's letters (``alphabet``: the letter of each code, where ``letters`` is
        None)."""
        a, b = int(self.offsets[k]), int(self.offsets[k + 1])
        if self.letters is not None:
            return self.letters[a:b].tobytes().decode("ascii")
        return np.frombuffer(alphabet.encode("ascii"), np.uint8)[self.codes[a:b]].tobytes() \
            .decode("ascii")

    def record(self, k: int) -> np.ndarray:
        """Record k's codes (a view)."""
        return self.codes[int(self.offsets[k]):int(self.offsets[k + 1])]

    @classmethod
    def encode(cls, texts: Sequence[str] | Sequence[bytes], ids: Sequence[str],
               scoring: Scoring, what: str = "sequence", path: str | None = None) -> Sequences:
        """``texts`` encoded by ``scoring`` at once; an InputError names the first record
        holding a letter the scoring does not take (and ``path`` where given)."""
        strings = all(type(t) is str for t in texts)
        if strings:  # one join, one encoding
            raw = "".join(texts).encode("ascii", "replace")
        else:
            raw = b"".join(t.encode("ascii", "replace") if isinstance(t, str) else bytes(t)
                           for t in texts)
        letters = np.frombuffer(raw, np.uint8)
        offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=offsets[1:])
        codes = encoded(letters, offsets, ids, scoring, what, path,
                        texts if strings else None)  # type: ignore[arg-type]
        return cls(codes, offsets, ids, letters)

    @classmethod
    def from_letters(cls, letters: np.ndarray, lengths: np.ndarray,
                     ids: Sequence[str] | None, scoring: Scoring, what: str = "sequence",
                     path: str | None = None) -> Sequences:
        """Records given as their ASCII letters one after another (``lengths`` each; ids
        None: ``what`` and a number)."""
        offsets = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = Numbered(what, len(lengths)) if ids is None else ids
        codes = encoded(letters, offsets, ids, scoring, what, path)
        return cls(codes, offsets, ids, letters)


def as_sequences(seqs: Any, scoring: Scoring, what: str) -> Sequences:
    """``seqs`` as Sequences: itself, or strings, bytes, Bio.Seq or SeqRecords encoded once
    (ids: the records' own, else ``what`` and a number)."""
    if isinstance(seqs, Sequences):
        if seqs.codes.dtype != np.uint8 or seqs.offsets.dtype != np.int64:
            raise InputError(f"{what}: Sequences need uint8 codes and int64 offsets")
        return seqs
    items = list(sequences(seqs, "queries" if what == "query" else what + "s"))
    if all(type(x) is str for x in items):  # plain strings: named by number, on demand
        return Sequences.encode(items, Numbered(what, len(items)), scoring, what)
    texts, ids = [], []
    for k, seq in enumerate(items):
        text, rid = record_text(seq)
        texts.append(text)
        ids.append(rid if rid is not None else f"{what}{k + 1}")
    return Sequences.encode(texts, ids, scoring, what)


class Numbered(Sequence[str]):
    """The ids ``what1``, ``what2``, ... of ``size`` records, each made when asked for."""

    def __init__(self, what: str, size: int) -> None:
        self.what, self.size = what, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [f"{self.what}{j + 1}" for j in range(*k.indices(self.size))]
        if not -self.size <= k < self.size:
            raise IndexError(k)
        return f"{self.what}{k % self.size + 1}"


class Joined(Sequence[str]):
    """Ids held as UTF-8 text, each followed by a newline (``blob``), as a FASTA scanner
    gives them: split into strings only when one is asked for; the batch writers read the
    text itself."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self.size = blob.count(b"\n")
        self._ids: list[str] | None = None

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k):
        if self._ids is None:
            self._ids = self.blob.decode("utf-8").split("\n")[:-1]
        return self._ids[k]
