"""makedb's FASTA parser: one piece of whole records (``seqio.fasta_chunks``) in one compiled
pass that releases the GIL, so pieces parse on every core. A module of its own: importing it
imports Numba (about 0.2 s), which only the commands that parse need."""

from __future__ import annotations

import numpy as np
from numba import njit

from .engines.cpu.compile import SECONDS, notice

#: :func:`parse_piece`'s status: a header without an id, a control byte, text before the
#: first header line
NO_ID, CONTROL_BYTE, NO_HEADER = 1, 2, 3


@njit(cache=True, nogil=True)
def parse_piece(buf: np.ndarray, lut: np.ndarray, id_end: np.ndarray, control: np.ndarray):
    """(codes, lengths, ids, letters, status, where) of a piece: status 0, or NO_ID (where:
    the record's index), CONTROL_BYTE (where: its offset) or NO_HEADER."""
    n = buf.size
    codes = np.empty(n, np.uint8)
    ids = np.empty(n + 1, np.uint8)
    heads = 1
    for i in range(n):  # an upper bound of the records: every '>'
        heads += buf[i] == 62
    lengths = np.empty(heads, np.int64)
    letters = np.zeros(256, np.int64)
    nc = 0
    ni = 0
    records = 0
    if n and buf[0] != 62:  # '>'
        return codes[:0], lengths[:0], ids[:0], letters, NO_HEADER, 0
    i = 0
    while i < n:
        j = i + 1  # the header line: its id, then the rest
        while j < n and not id_end[buf[j]]:
            if control[buf[j]]:
                return codes[:0], lengths[:0], ids[:0], letters, CONTROL_BYTE, j
            ids[ni] = buf[j]
            ni += 1
            j += 1
        if j == i + 1:
            return codes[:0], lengths[:0], ids[:0], letters, NO_ID, records
        ids[ni] = 10
        ni += 1
        while j < n and buf[j] != 10:
            if control[buf[j]]:
                return codes[:0], lengths[:0], ids[:0], letters, CONTROL_BYTE, j
            j += 1
        j += 1
        start = nc
        while j < n:  # the sequence lines, up to the next line starting with '>'
            b = buf[j]
            if b == 10 or b == 13:
                j += 1
                continue
            if b == 62 and buf[j - 1] == 10:
                break
            if control[b]:
                return codes[:0], lengths[:0], ids[:0], letters, CONTROL_BYTE, j
            letters[b] += 1
            codes[nc] = lut[b]
            nc += 1
            j += 1
        lengths[records] = nc - start
        records += 1
        i = j
    return codes[:nc], lengths[:records], ids[:ni].copy(), letters, 0, 0


def announce() -> bool:
    """Say once, on stderr, that the parser compiles (a machine's first makedb); whether it
    did."""
    return notice([(parse_piece, None, SECONDS["fasta"])])
