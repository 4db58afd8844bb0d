"""Pure-Python reference engine: the test oracle (full matrices, tiny inputs only).

It spells out docs/design.md's recurrence, end-cell choice and traceback preferences literally.
"""

from __future__ import annotations

from .common import GLOBAL, LOCAL, NEG

RawResult = tuple[int, int, int, int, int, str | None]


def _matrices(q, t, sub, gap_open: int, gap_extend: int, mode: int):
    m, n = len(q), len(t)
    H = [[0] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]
    F = [[NEG] * (n + 1) for _ in range(m + 1)]
    if mode == GLOBAL:
        for j in range(1, n + 1):
            H[0][j] = -(gap_open + (j - 1) * gap_extend)
        for i in range(1, m + 1):
            H[i][0] = -(gap_open + (i - 1) * gap_extend)
    zero = 0 if mode == LOCAL else None
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(E[i][j - 1] - gap_extend, H[i][j - 1] - gap_open)
            F[i][j] = max(F[i - 1][j] - gap_extend, H[i - 1][j] - gap_open)
            h = max(H[i - 1][j - 1] + int(sub[q[i - 1]][t[j - 1]]), E[i][j], F[i][j])
            H[i][j] = h if zero is None else max(zero, h)
    return H, E, F


def _end_cell(H, m: int, n: int, mode: int) -> tuple[int, int]:
    if mode == GLOBAL:
        return m, n
    if mode == LOCAL:
        cells = ((i, j) for i in range(m + 1) for j in range(n + 1))
    else:
        cells = sorted({(m, j) for j in range(n + 1)} | {(i, n) for i in range(m + 1)})
    best, end = None, (0, 0)
    for i, j in cells:
        if best is None or H[i][j] > best:
            best, end = H[i][j], (i, j)
    return end


def align(q, t, sub, gap_open: int, gap_extend: int, mode: int, traceback: bool) -> RawResult:
    """Return (score, query_start, query_end, target_start, target_end, ops or None).

    Starts are -1 when traceback is False (unknown); ops is the per-column op string.
    """
    m, n = len(q), len(t)
    H, E, F = _matrices(q, t, sub, gap_open, gap_extend, mode)
    ei, ej = _end_cell(H, m, n, mode)
    score = H[ei][ej]
    if mode == LOCAL and score == 0:
        return 0, 0, 0, 0, 0, ("" if traceback else None)
    if not traceback:
        return score, -1, ei, -1, ej, None
    ops: list[str] = []
    i, j, state = ei, ej, "H"
    while True:
        if mode == GLOBAL and (i == 0 or j == 0):
            ops.extend("D" * j + "I" * i)
            i = j = 0
            break
        if i == 0 or j == 0:
            break
        if state == "H":
            if mode == LOCAL and H[i][j] == 0:
                break
            s = int(sub[q[i - 1]][t[j - 1]])
            if H[i][j] == H[i - 1][j - 1] + s:
                ops.append("=" if q[i - 1] == t[j - 1] else "X")
                i, j = i - 1, j - 1
            elif H[i][j] == E[i][j]:
                state = "E"
            else:
                state = "F"
        elif state == "E":
            if E[i][j] == H[i][j - 1] - gap_open:
                state = "H"
            ops.append("D")
            j -= 1
        else:
            if F[i][j] == H[i - 1][j] - gap_open:
                state = "H"
            ops.append("I")
            i -= 1
    return score, i, ei, j, ej, "".join(reversed(ops))
