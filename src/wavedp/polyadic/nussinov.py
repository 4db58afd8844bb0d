"""RNA base-pair maximisation (Nussinov) on the polyadic engine."""

from __future__ import annotations

import numpy as np

from ..device import Device
from ..errors import InputError
from .api import solve
from .problem import Pairs
from .traceback import dotbracket

#: A, C, G, U (T read as U) and N, which pairs with nothing; lowercase is accepted
LETTERS = "ACGUN"
_CODES = np.full(256, -1, np.int8)
for _code, _letters in enumerate(("Aa", "Cc", "Gg", "UuTt", "Nn")):
    for _ch in _letters:
        _CODES[ord(_ch)] = _code


def rna_codes(seq, *, record: str | None = None, path: str | None = None) -> np.ndarray:
    """A sequence (str, bytes, Bio.Seq or Bio.SeqRecord) as codes 0..4 = A, C, G, U, N;
    any other letter is an InputError naming the file, record and 1-based position."""
    if hasattr(seq, "seq") and hasattr(seq, "id"):  # Bio.SeqRecord
        record = str(seq.id) if record is None else record
        seq = seq.seq
    if not isinstance(seq, (str, bytes, bytearray)) and type(seq).__name__ not in (
            "Seq", "MutableSeq"):
        raise InputError(f"an RNA sequence must be str, bytes, Bio.Seq or Bio.SeqRecord, got "
                         f"{type(seq).__name__}")
    text = seq.decode("latin-1") if isinstance(seq, (bytes, bytearray)) else str(seq)
    raw = np.frombuffer(text.encode("latin-1", "replace"), np.uint8)
    codes = _CODES[raw]
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        where = ", ".join(x for x in (path and f"file {path}", record and f"record {record}")
                          if x) or "sequence"
        pos = int(bad[0])
        raise InputError(f"{where}: invalid RNA letter {text[pos]!r} at position {pos + 1} "
                         f"(expected A, C, G, U, T or N)")
    return codes.astype(np.int32)


def pair_table(gu: bool) -> np.ndarray:
    """1 for Watson-Crick pairs (and GU wobble pairs when ``gu``), -inf otherwise."""
    table = np.full((5, 5), -np.inf)
    allowed = [("A", "U"), ("C", "G")] + ([("G", "U")] if gu else [])
    for x, y in allowed:
        table[LETTERS.index(x), LETTERS.index(y)] = table[LETTERS.index(y), LETTERS.index(x)] = 1
    return table


def fold_codes(codes: np.ndarray, *, min_loop: int = 3, gu: bool = True,
               device: str | Device = "auto", block: int = 64) -> tuple[int, str]:
    """``nussinov`` on codes from ``rna_codes``."""
    if isinstance(min_loop, bool) or not isinstance(min_loop, (int, np.integer)) or min_loop < 0:
        raise InputError(f"min_loop must be a non-negative integer, got {min_loop!r}")
    n = codes.size
    if n == 0:
        return 0, ""
    sol = solve(np.zeros(n, np.int32), opt="max", dtype=np.int32, block=block, device=device,
                pair=Pairs(codes, pair_table(gu), int(min_loop)))
    return int(sol.value), dotbracket(sol.pairs(), n)


def nussinov(seq, min_loop: int = 3, gu: bool = True, *, device: str | Device = "auto",
             block: int = 64) -> tuple[int, str]:
    """The maximum number of nested base pairs (AU, GC, and GU when ``gu``) with at least
    ``min_loop`` unpaired bases in every hairpin, and one optimal structure in dot-bracket
    notation (chosen by the smallest-k rule): ``(pairs, dotbracket)``. T is read as U; N
    pairs with nothing."""
    return fold_codes(rna_codes(seq), min_loop=min_loop, gu=gu, device=device, block=block)
