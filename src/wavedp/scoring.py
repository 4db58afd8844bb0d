"""Scoring schemes, alphabets and sequence encoding (done once, above the engines)."""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass, field

import numpy as np

from .alphabets import DNA_LETTERS, INVALID, dna_codes, letter_codes
from .engines.common import SCORE_LIMIT
from .errors import InputError


def dna_table() -> np.ndarray:
    """The 256-entry code table of DNA letters (ACGT, U as T, IUPAC ambiguity codes as N;
    INVALID elsewhere)."""
    return np.frombuffer(dna_codes(), dtype=np.uint8).copy()


def matrix_table(alphabet: str) -> np.ndarray:
    """The 256-entry code table of a substitution matrix's ``alphabet`` (either case; U, O
    and J as X where the matrix has X; INVALID elsewhere)."""
    return np.frombuffer(letter_codes(alphabet), dtype=np.uint8).copy()


def _load_matrix(name: str) -> tuple[str, np.ndarray]:
    """(alphabet, integer table) of Biopython's matrix ``name`` (any case); an InputError for
    an unknown one, or one wavedp cannot use (scores not integers, letters not single).
    A plain integer file is read straight from Biopython's data folder (importing
    ``Bio.Align`` costs 0.1-0.15 s of a command's start-up); anything else goes through
    Biopython's reader."""
    folder = _matrix_folder()
    if folder is not None:
        names = {n.upper(): n for n in os.listdir(folder) if n != "README.txt"}
        key = names.get(name.upper())
        found = None if key is None else _read_plain(os.path.join(folder, key))
        if found is not None and np.abs(found[1]).max() < SCORE_LIMIT:
            return found
    key = {n.upper(): n for n in _matrices().load()}.get(name.upper())
    if key is None and os.path.isfile(name):
        return _matrix_file(name)
    if key is None:
        raise InputError(f"unknown substitution matrix {name!r} (neither a matrix Biopython "
                         f"ships nor a file); the matrices wavedp takes: "
                         f"{', '.join(usable_matrices())}")
    found = _usable(key)
    if isinstance(found, str):
        raise InputError(f"matrix {key!r} {found}; the matrices wavedp takes: "
                         f"{', '.join(usable_matrices())}")
    return found


def _matrix_file(path: str) -> tuple[str, np.ndarray]:
    """(alphabet, int32 table) of the matrix file ``path`` (NCBI's format, as BLAST's
    ``-matrix`` and Biopython's reader take it); an InputError naming the file otherwise."""
    found = _read_plain(path)
    if found is None:
        try:
            matrix = _matrices().read(path)
        except Exception as exc:  # noqa: BLE001 - Biopython's reader raises many kinds
            why = " ".join(str(exc).split())
            raise InputError(f"file {path}: not a substitution matrix in NCBI's format"
                             + (f" ({why})" if why else "")) from None
        found = _usable_matrix(matrix)
    if isinstance(found, str):
        raise InputError(f"file {path}: the matrix {found}")
    alphabet, table = found
    if table.shape != (len(alphabet), len(alphabet)) or not table.size:
        raise InputError(f"file {path}: the matrix is not square over its letters")
    if np.abs(table).max() >= SCORE_LIMIT:
        raise InputError(f"file {path}: the matrix has scores beyond +-{SCORE_LIMIT}")
    return alphabet, table


def _usable(key: str) -> tuple[str, np.ndarray] | str:
    """Biopython's matrix ``key`` as (alphabet, int32 table), or why wavedp cannot use it."""
    return _usable_matrix(_matrices().load(key))


def _usable_matrix(matrix) -> tuple[str, np.ndarray] | str:
    """A Biopython matrix as (alphabet, int32 table), or why wavedp cannot use it."""
    alphabet = matrix.alphabet
    if not isinstance(alphabet, str) or any(len(a) != 1 for a in alphabet):
        return "is not over single letters"
    values = np.asarray(matrix, dtype=np.float64)
    if not np.all(values == np.round(values)):
        return "has non-integer scores (wavedp scores are integers)"
    if np.abs(values).max() >= SCORE_LIMIT:
        return f"has scores beyond +-{SCORE_LIMIT}"
    return alphabet, values.astype(np.int32)


def _known(name: str) -> bool:
    """Whether ``name`` (any case) is a matrix Biopython ships."""
    return name.upper() in {n.upper() for n in _matrices().load()}


@functools.cache
def usable_matrices() -> tuple[str, ...]:
    """The names of Biopython's substitution matrices that wavedp takes (integer scores over
    single letters)."""
    return tuple(n for n in _matrices().load() if not isinstance(_usable(n), str))


def _matrix_folder() -> str | None:
    """Biopython's folder of substitution matrix files, found without importing it."""
    spec = importlib.util.find_spec("Bio")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(spec.submodule_search_locations[0], "Align",
                          "substitution_matrices", "data")
    return folder if os.path.isdir(folder) else None


def _read_plain(path: str) -> tuple[str, np.ndarray] | None:
    """(alphabet, int32 table) of a matrix file that is plainly square: ``#`` comments, a
    header of single letters, then one row per letter in the header's order, each that
    letter and integer scores; None for any other file (Biopython's reader takes those)."""
    try:
        with open(path, encoding="ascii") as fh:
            lines = [line.split() for line in fh if line.strip() and not line.startswith("#")]
    except (OSError, UnicodeDecodeError):
        return None
    if not lines:
        return None
    header, rows = lines[0], lines[1:]
    if (any(len(a) != 1 for a in header) or len(set(header)) != len(header)
            or [r[0] for r in rows] != header
            or any(len(r) != len(header) + 1 for r in rows)):
        return None
    try:
        table = np.array([[int(v) for v in r[1:]] for r in rows], np.int64)
    except ValueError:
        return None
    return "".join(header), table.astype(np.int32)


def _matrices():
    """Biopython's ``substitution_matrices`` (imported when a matrix is first asked for: it
    costs 0.3 s of start-up)."""
    from Bio.Align import substitution_matrices

    return substitution_matrices


def _nonnegative_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value!r}")
    return _int(name, value)


def _int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if not -SCORE_LIMIT < value < SCORE_LIMIT:
        raise InputError(f"{name} must be between -{SCORE_LIMIT} and {SCORE_LIMIT} "
                         f"(the engines' int32 score range), got {value}")
    return int(value)


@dataclass(frozen=True)
class Scoring:
    """Substitution scores and affine gap penalties.

    ``Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)`` for protein (any integer matrix
    Biopython ships) or ``Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)`` for DNA.
    A gap of length k costs ``gap_open + (k-1)*gap_extend`` (BLAST's 11/1 is 12/1 here);
    ``gap_open >= gap_extend >= 0`` is required.
    """

    matrix: str | None = None
    gap_open: int = 11
    gap_extend: int = 1
    match: int | None = None
    mismatch: int | None = None
    alphabet: str = field(init=False)
    table: np.ndarray = field(init=False, repr=False, compare=False)
    lut: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "gap_open", _nonnegative_int("gap_open", self.gap_open))
        set_(self, "gap_extend", _nonnegative_int("gap_extend", self.gap_extend))
        if self.gap_open < self.gap_extend:
            raise InputError(
                f"gap_open ({self.gap_open}) must be >= gap_extend ({self.gap_extend}): with a "
                "cheaper open a gap run is priced as adjacent opened gaps and no CIGAR states "
                "its score"
            )
        dna = self.match is not None or self.mismatch is not None
        if dna:
            if self.matrix is not None:
                raise InputError("give either a matrix or match/mismatch scores, not both")
            if self.match is None or self.mismatch is None:
                raise InputError("DNA scoring needs both match and mismatch")
            match, mismatch = _int("match", self.match), _int("mismatch", self.mismatch)
            set_(self, "match", match)
            set_(self, "mismatch", mismatch)
            table = np.full((5, 5), mismatch, dtype=np.int32)
            table[np.arange(4), np.arange(4)] = match
            set_(self, "alphabet", DNA_LETTERS)
            set_(self, "lut", dna_table())
        else:
            name = "BLOSUM62" if self.matrix is None else os.fspath(self.matrix)
            alphabet, table = _load_matrix(name)
            set_(self, "matrix", name if os.path.isfile(name) and not _known(name)
                 else name.upper())
            set_(self, "alphabet", alphabet)
            set_(self, "lut", matrix_table(alphabet))
        table.setflags(write=False)
        set_(self, "table", table)

    @property
    def is_dna(self) -> bool:
        """True for match/mismatch DNA scoring."""
        return self.match is not None

    def encode(self, seq: str | bytes, *, what: str = "sequence", record: str | None = None,
               path: str | None = None) -> np.ndarray:
        """Encode a sequence into uint8 codes; an invalid character raises InputError."""
        raw = seq.encode("ascii", "replace") if isinstance(seq, str) else bytes(seq)
        codes = self.lut[np.frombuffer(raw, dtype=np.uint8)]
        bad = np.flatnonzero(codes == INVALID)
        if bad.size:
            pos = int(bad[0])
            char = seq[pos] if isinstance(seq, str) else chr(raw[pos])
            where = ", ".join(
                part for part in (
                    f"file {path}" if path else None,
                    f"record {record!r}" if record is not None else what,
                    f"position {pos + 1}",
                ) if part
            )
            kind = "DNA" if self.is_dna else f"{self.matrix}"
            raise InputError(f"{where}: invalid character {char!r} for the {kind} alphabet")
        return codes

    def max_abs(self) -> int:
        """Largest magnitude any single alignment column can contribute."""
        return max(int(np.abs(self.table).max()), self.gap_open, self.gap_extend)

    def check_range(self, m: int, n: int) -> None:
        """Raise InputError when scores of an m x n problem could leave the int32 range."""
        bound = (m + n) * self.max_abs() + self.gap_open
        if bound >= SCORE_LIMIT:
            raise InputError(
                f"a {m} x {n} alignment with these scores could reach |score| {bound}, "
                f"beyond the engines' int32 range (limit {SCORE_LIMIT})"
            )
