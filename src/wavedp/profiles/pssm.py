"""A position-specific scoring matrix (PSSM) for a query, and PSI-BLAST's ASCII PSSM format
(``psiblast -out_ascii_pssm``) read and written byte for byte.

A profile scores query position i against residue c with its own integer ``scores[i, c]``
instead of the substitution matrix's ``sub[q[i], c]``. The engines take it as a
substitution table whose rows are the query's positions (:meth:`Profile.table`), the query
encoded as the position numbers 0 .. m - 1: every engine that indexes ``sub[q[i], t[j]]``
scores the profile exactly, with the same recurrence and tie rules.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

import numpy as np

from .. import partfiles
from ..alignment import column_positions
from ..engines.common import SCORE_LIMIT
from ..errors import InputError
from ..scoring import Scoring

#: PSI-BLAST's columns, in its order (the twenty amino acids)
LETTERS = "ARNDCQEGHILKMFPSTWYV"
#: the line PSI-BLAST writes above the columns' letters
DESCRIPTION = ("Last position-specific scoring matrix computed, weighted observed percentages "
               "rounded down, information per position, and relative weight of gapless real "
               "matches to pseudocounts")
_WIDTH = len(LETTERS)


@dataclass(frozen=True, eq=False)
class Profile:
    """A query's PSSM: ``query`` (its m letters), ``scores`` (m x 20 integers, columns in
    PSI-BLAST's order :data:`LETTERS`). The rest is what PSI-BLAST's ASCII file also holds,
    kept so a file read is written back unchanged: ``percent`` (m x 20 weighted observed
    percentages), ``info`` (information per position), ``weight`` (relative weight of
    gapless real matches to pseudocounts), ``preamble`` (the file's lines above the letters)
    and ``footer`` (its K and lambda table); None where there are none."""

    query: str
    scores: np.ndarray
    percent: np.ndarray | None = None
    info: np.ndarray | None = None
    weight: np.ndarray | None = None
    preamble: str = "\n" + DESCRIPTION
    footer: str = ""
    id: str = field(default="profile")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        scores = np.asarray(self.scores)
        m = len(self.query)
        if scores.ndim != 2 or scores.shape[1] != _WIDTH:
            raise InputError(f"profile {self.id}: scores must be m x {_WIDTH} (columns "
                             f"{LETTERS}), got shape {scores.shape}")
        if scores.shape[0] != m:
            raise InputError(f"profile {self.id}: {scores.shape[0]} positions for a query of "
                             f"{m} letters")
        if not m:
            raise InputError(f"profile {self.id}: no positions")
        if scores.dtype.kind == "f" and not np.all(scores == np.round(scores)):
            raise InputError(f"profile {self.id}: scores must be integers")
        if scores.dtype.kind not in "iuf" or np.abs(scores).max() >= SCORE_LIMIT:
            raise InputError(f"profile {self.id}: scores must be integers within "
                             f"+-{SCORE_LIMIT}")
        set_(self, "scores", scores.astype(np.int32))
        for name, shape in (("percent", (m, _WIDTH)), ("info", (m,)), ("weight", (m,))):
            value = getattr(self, name)
            if value is not None:
                value = np.asarray(value)
                if value.shape != shape:
                    raise InputError(f"profile {self.id}: {name} must have shape {shape}, "
                                     f"got {value.shape}")
                set_(self, name, value)

    def __len__(self) -> int:
        return len(self.query)

    @classmethod
    def from_matrix(cls, query: str, scoring: Scoring, id: str = "profile") -> Profile:
        """The profile the substitution matrix gives ``query``: each position scores as its
        letter does (a search with it equals the plain search)."""
        codes = scoring.encode(query, what="query")
        columns = _columns(scoring)
        if (columns < 0).any():
            raise InputError(f"the {scoring.matrix} matrix lacks letters of {LETTERS}")
        return cls(query, scoring.table[codes][:, columns], id=id)

    def table(self, scoring: Scoring) -> np.ndarray:
        """The engines' substitution table for this profile (m x the scoring's letters,
        int32): row i scores query position i. The twenty letters take the profile's
        scores; the matrix's other letters (B, Z, X, * in BLOSUM62) the matrix's own score
        against the query's letter at i, which a profile does not give."""
        if scoring.is_dna:
            raise InputError("a profile scores proteins: give a protein scoring matrix")
        codes = scoring.encode(self.query, what="profile query", record=self.id)
        table = np.array(scoring.table[codes], dtype=np.int32)
        columns = _columns(scoring)
        have = columns >= 0
        table[:, columns[have]] = self.scores[:, np.flatnonzero(have)]
        return table

    def codes(self) -> np.ndarray:
        """The query as the engines take it with :meth:`table`: its position numbers."""
        return np.arange(len(self.query), dtype=np.int32)

    def text(self) -> str:
        """The profile in PSI-BLAST's ASCII PSSM format."""
        head = " " * 9 + "".join(f"{c:>4}" for c in LETTERS)
        if self.percent is not None:
            head += "".join(f"{c:>4}" for c in LETTERS)
        lines = [self.preamble, head]
        for i, letter in enumerate(self.query):
            row = f"{i + 1:5d} {letter}  " + "".join(f"{v:4d}" for v in self.scores[i])
            if self.percent is not None:
                row += " " + "".join(f"{v:4d}" for v in self.percent[i])
            if self.info is not None and self.weight is not None:
                row += f"{self.info[i]:6.2f}{self.weight[i]:5.2f}"
            lines.append(row)
        return "\n".join(lines) + "\n" + self.footer

    def write(self, path: str | os.PathLike) -> None:
        """:meth:`text` into ``path``, replaced whole (a temporary file beside it renamed
        onto it)."""
        path = os.fspath(path)
        fd, part = partfiles.make(os.path.dirname(os.path.abspath(path)), os.path.basename(path))
        try:
            assert fd is not None
            with os.fdopen(fd, "w", encoding="ascii", newline="\n") as fh:
                fh.write(self.text())
            os.replace(part, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(part)
            raise

    @classmethod
    def read(cls, path: str | os.PathLike) -> Profile:
        """A profile from PSI-BLAST's ASCII PSSM file (an InputError naming the file and
        line where it is not one)."""
        path = os.fspath(path)
        try:
            with open(path, encoding="ascii", newline="") as fh:
                text = fh.read()
        except UnicodeDecodeError:
            raise InputError(f"file {path}: not an ASCII PSSM (bytes beyond ASCII)") from None
        except OSError as exc:
            raise InputError(f"file {path}: {exc.strerror or exc}") from None
        return parse(text, path)


def parse(text: str, source: str = "the profile") -> Profile:
    """A profile from the text of an ASCII PSSM (``source`` names it in errors)."""
    lines = text.replace("\r\n", "\n").split("\n")
    head = next((k for k, line in enumerate(lines) if line.split()[:1] == ["A"]), None)
    if head is None:
        raise InputError(f"file {source}: not an ASCII PSSM (no line of the column letters "
                         f"{' '.join(LETTERS)})")
    letters = lines[head].split()
    if letters not in (list(LETTERS), list(LETTERS) * 2):
        missing = [c for c in LETTERS if c not in letters]
        why = f"lack {', '.join(missing)}" if missing else "are in another order"
        raise InputError(f"file {source}, line {head + 1}: the column letters {why} "
                         f"(PSI-BLAST's: {' '.join(LETTERS)})")
    wide = len(letters) == 2 * _WIDTH
    query, scores, percent, info, weight = [], [], [], [], []
    k = head + 1
    while k < len(lines) and lines[k].strip():
        fields = lines[k].split()
        where = f"file {source}, line {k + 1}"
        expected = 2 + _WIDTH + (_WIDTH + 2 if wide else 0)
        if len(fields) not in (2 + _WIDTH, expected):
            raise InputError(f"{where}: {len(fields) - 2} values after the position and "
                             f"letter, expected {expected - 2}")
        if fields[0] != str(len(query) + 1):
            raise InputError(f"{where}: position {fields[0]!r}, expected {len(query) + 1}")
        if len(fields[1]) != 1 or not fields[1].isalpha():
            raise InputError(f"{where}: {fields[1]!r} is not a residue letter")
        query.append(fields[1])
        scores.append(_ints(fields[2:2 + _WIDTH], where))
        if len(fields) == expected and wide:
            percent.append(_ints(fields[2 + _WIDTH:2 + 2 * _WIDTH], where))
            info.append(_float(fields[-2], where))
            weight.append(_float(fields[-1], where))
        k += 1
    if not query:
        raise InputError(f"file {source}, line {head + 2}: no positions below the letters")
    full = wide and len(percent) == len(query)
    return Profile("".join(query), np.array(scores, np.int64),
                   np.array(percent, np.int64) if full else None,
                   np.array(info) if full else None, np.array(weight) if full else None,
                   "\n".join(lines[:head]), "\n".join(lines[k:]),
                   id=os.path.basename(source))


def _ints(fields: list[str], where: str) -> list[int]:
    try:
        return [int(v) for v in fields]
    except ValueError:
        bad = next(v for v in fields if not v.lstrip("-").isdigit())
        raise InputError(f"{where}: {bad!r} is not an integer") from None


def _float(value: str, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise InputError(f"{where}: {value!r} is not a number") from None


def _columns(scoring: Scoring) -> np.ndarray:
    """Each of :data:`LETTERS`' index among the scoring's letters (-1: absent)."""
    return np.array([scoring.alphabet.find(c) for c in LETTERS], np.int64)


_EQ, _X = ord("="), ord("X")


def letter_ops(ops: np.ndarray, query: np.ndarray, target: np.ndarray, query_start: int,
               target_start: int) -> np.ndarray:
    """An engine's per-column ops (uint8 letters of the CIGAR) for a profile's query,
    whose codes were positions: each aligned column ``=`` where the query's letter (codes
    ``query``, the scoring's) equals the target's, else ``X``."""
    ops = np.asarray(ops, np.uint8)
    aligned = (ops == _EQ) | (ops == _X)
    qpos, tpos = column_positions(ops, query_start, target_start)
    same = query[qpos[aligned]] == target[tpos[aligned]]
    out = ops.copy()
    out[aligned] = np.where(same, _EQ, _X)
    return out
