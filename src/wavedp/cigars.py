"""CIGARs as runs in BAM's encoding, ``length << 4 | op`` (uint32): every alignment's runs
one after another with offsets, made from single-letter ops and written as text at once."""

from __future__ import annotations

import numpy as np

#: BAM's CIGAR op letters by code
OPS = "MIDNSHP=XB"
#: the codes of the letters the engines write
EQUAL, DIFF, INSERT, DELETE = 7, 8, 1, 2
_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)  # a run of at least 10**k has k + 1 digits
#: the longest run the encoding holds (28 bits of length)
LONGEST = (1 << 28) - 1
_CODES = np.full(256, 255, np.uint8)
for _code, _letter in enumerate(OPS):
    _CODES[ord(_letter)] = _code


def op_codes() -> np.ndarray:
    """Each byte's BAM op code (255: not an op letter)."""
    return _CODES.copy()


def runs_from_letters(letters: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Single-letter ops (uint8 ASCII, each alignment's ``sizes[k]`` letters one after
    another) as BAM runs and their offsets (int64, n + 1)."""
    sizes = np.asarray(sizes, np.int64)
    offsets = np.zeros(sizes.size + 1, np.int64)
    if not letters.size:
        return np.zeros(0, np.uint32), offsets
    first = np.ones(letters.size, bool)
    first[1:] = letters[1:] != letters[:-1]
    bounds = np.cumsum(sizes)[:-1]
    first[bounds[bounds < letters.size]] = True
    starts = np.flatnonzero(first)
    lengths = np.diff(np.append(starts, letters.size))
    if lengths.max() > LONGEST:
        raise ValueError(f"a CIGAR run of {int(lengths.max()):,} letters: BAM's runs hold "
                         f"{LONGEST:,} at most")
    lengths = lengths.astype(np.uint32)
    codes = _CODES[letters[starts]]
    if (codes == 255).any():
        raise ValueError(f"not a CIGAR op: {chr(int(letters[starts][codes == 255][0]))!r}")
    runs = lengths << 4 | codes.astype(np.uint32)
    np.cumsum(np.bincount(np.searchsorted(np.cumsum(sizes), starts, side="right"),
                          minlength=sizes.size)[:sizes.size], out=offsets[1:])
    return runs, offsets


def cigar_strings(runs: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Each alignment's CIGAR text (``5=1X3=``) from BAM runs, all written at once."""
    n = offsets.size - 1
    if not runs.size:
        return [""] * n
    lengths = (runs >> 4).astype(np.int64)
    letters = np.frombuffer(OPS.encode(), np.uint8)[runs & 15]
    digits = np.searchsorted(_POWERS, lengths, side="right") + 1
    width = digits + 1
    ends = np.cumsum(width)
    out = np.empty(int(ends[-1]), np.uint8)
    out[ends - 1] = letters
    run = np.repeat(np.arange(lengths.size), digits)
    j = np.arange(run.size) - np.repeat(np.cumsum(digits) - digits, digits)  # digit's place
    out[(ends - width)[run] + j] = 48 + lengths[run] // 10 ** (digits[run] - 1 - j) % 10
    text = out.tobytes().decode("ascii")
    bounds = np.append(ends - width, out.size)[offsets]
    return [text[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]
