"""The direction bits of many_pairs16's DIRS sweep and trace_dirs' walk (kernels/many_pairs.cu),
on the CPU: the flags each cell's nibble holds, computed as the sweep computes them (its F
chain included), walked as trace_dirs walks them (local zero from the score carried along the
path), give the CPU engine's alignments; their layout's words a pair; the sweep's step in
machine code (no GPU needed: NVRTC and nvdisasm)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pair_texts, sass_step

import wavedp

NEG = -(1 << 30)
SCORINGS = {
    "dna": wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
    "reads": wavedp.Scoring(match=1, mismatch=-4, gap_open=7, gap_extend=1),
    "protein": wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    "ties": wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1),
    "flat": wavedp.Scoring(match=1, mismatch=-1, gap_open=3, gap_extend=3),
}
MODES = ("local", "global", "semiglobal")


def nibbles(q, t, sub, go: int, ge: int, mode: int) -> np.ndarray:
    """Each cell's nibble as many_pairs16<..., true, ...> makes it: bit 0, F beats X; bit 1,
    X beats the diagonal; bit 2, E extends; bit 3, F extends (signs of the sweep's
    differences). Down a lane's 8 rows F runs from X - go of the row above (max(F - ge, X - go)
    equals max(F - ge, H - go) where go >= ge), from H - go at a lane's first row."""
    m, n = len(q), len(t)

    def edge(k: int) -> int:
        return -(go + (k - 1) * ge) if mode == 1 and k > 0 else 0

    H = np.zeros((m + 1, n + 1), np.int64)
    E = np.full((m + 1, n + 1), NEG, np.int64)
    F = np.full((m + 1, n + 1), NEG, np.int64)
    X = np.zeros((m + 1, n + 1), np.int64)
    H[:, 0] = [edge(i) for i in range(m + 1)]
    H[0, :] = [edge(j) for j in range(n + 1)]
    nib = np.zeros((m + 1, n + 1), np.int64)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            hg_left, hg_up = H[i, j - 1] - go, H[i - 1, j] - go
            e = max(E[i, j - 1] - ge, hg_left)
            dg = H[i - 1, j - 1] + sub[q[i - 1], t[j - 1]]
            x = max(dg, e, 0) if mode == 0 else max(dg, e)
            f = max(F[i - 1, j] - ge, hg_up if (i - 1) % 8 == 0 else X[i - 1, j] - go)
            h = max(x, f)
            nib[i, j] = ((x - go) - (h - go) < 0) | (dg - x < 0) << 1 | (hg_left - e < 0) << 2 \
                | (hg_up - f < 0) << 3
            H[i, j], E[i, j], F[i, j], X[i, j] = h, e, f, x
    return nib


def walk(q, t, sub, go: int, ge: int, mode: int, nib, score: int, i: int, j: int):
    """trace_dirs' walk from end cell (i, j): (query start, end, target start, end, CIGAR)."""
    ops: list[str] = []
    h, state, qe, te = score, 0, i, j
    empty = stopped = mode == 0 and score == 0
    while not stopped and i > 0 and j > 0:
        d = int(nib[i, j])
        if state == 0:
            if mode == 0 and h == 0:
                stopped = True
            elif d & 1:
                state = 2
            elif d & 2:
                state = 1
            else:
                ops.append("=" if q[i - 1] == t[j - 1] else "X")
                h -= sub[q[i - 1], t[j - 1]]
                i, j = i - 1, j - 1
        else:
            ops.append("D" if state == 1 else "I")
            i, j = (i, j - 1) if state == 1 else (i - 1, j)
            extends = d & (4 if state == 1 else 8)
            h += ge if extends else go
            state = state if extends else 0
    if mode == 1 and not stopped:
        ops += ["D"] * j + ["I"] * i
        i = j = 0
    if empty:
        i = j = 0
    runs, k = [], len(ops) - 1
    while k >= 0:
        start = k
        while k >= 0 and ops[k] == ops[start]:
            k -= 1
        runs.append(f"{start - k}{ops[start]}")
    return i, qe, j, te, "".join(runs)


@pytest.mark.parametrize("kind", sorted(SCORINGS))
@pytest.mark.parametrize("mode", MODES)
def test_the_walk_over_the_sweeps_bits_is_the_cpus(kind, mode):
    scoring = SCORINGS[kind]
    rng = np.random.default_rng(len(kind) + MODES.index(mode))
    sizes = [(int(a), int(b)) for a, b in zip(rng.integers(1, 30, 10), rng.integers(1, 30, 10),
                                              strict=True)] + [(17, 9)]
    texts = "protein" if kind == "protein" else "ties" if kind in ("ties", "flat") else "dna"
    queries, targets = pair_texts(texts, sizes, seed=5)
    sub = np.asarray(scoring.table, np.int64)
    code = MODES.index(mode)
    for a, b in zip(queries, targets, strict=True):
        if not a or not b:
            continue
        want = wavedp.align(a, b, scoring, mode=mode, device="cpu")
        q, t = scoring.encode(a), scoring.encode(b)
        nib = nibbles(q, t, sub, scoring.gap_open, scoring.gap_extend, code)
        got = walk(q, t, sub, scoring.gap_open, scoring.gap_extend, code, nib, want.score,
                   want.query_end, want.target_end)
        assert got == (want.query_start, want.query_end, want.target_start, want.target_end,
                       want.cigar), (a, b)


def test_direction_words_are_the_borders_bottoms():
    """A pair's direction words: a word a strip and step, as the saved borders' bottoms."""
    from wavedp.engines.cuda import many_pairs as mp

    rng = np.random.default_rng(3)
    m, n = rng.integers(1, 3000, 500), rng.integers(1, 3000, 500)
    for g in mp.GROUPS:
        t = g * mp.ROWS
        passes, runs = -(-m // t), (n + g + mp.RUN - 2) // mp.RUN
        want = (passes * runs * mp.RUN * g + 7) // 8 * 8
        np.testing.assert_array_equal(mp.dir_units(m.copy(), n.copy(), g), want)
        columns = (n // mp.CKPT) * t * passes
        assert (mp.saved_units(m.copy(), n.copy(), g) == (want + columns + 7) // 8 * 8).all()
    assert int(mp.dir_units(150, 300, 8)) * 4 == 29568  # 2/3 of the borders' 43,392 bytes


def _step(expression: str):
    return sass_step("many_pairs.cu", expression)


def test_the_direction_step_in_machine_code():
    """Four steps a loop (RUN): per step and row, a word's four differences and the diagonal
    (VIADD.16x2 on the FMA pipe, beside X - go), per step 16 sign spreads and 14 bit selects,
    and two 16-byte stores per four steps (a lane's words of each pair); no local memory."""
    loop = _step("many_pairs16<0, 8, 8, true, false>")  # the table's (protein)
    base = _step("many_pairs16<0, 8, 8, false, false>")
    steps = loop.count("VIADDMNMX") // 32
    assert steps == 4 and base.count("VIADDMNMX") == 32 * steps
    assert loop.opcodes["VIADD.16x2"] == base.opcodes["VIADD.16x2"] + 40 * steps
    assert loop.opcodes["STG.E.128"] == 2 and not loop.count("LDL") and not loop.count("STL")
    assert loop.count("LOP3") <= base.count("LOP3") + 14 * steps
    assert loop.size <= base.size + 80 * steps, (loop.opcodes, base.opcodes)


@pytest.mark.parametrize("save", ["false", "true"])
def test_the_profile_step_in_machine_code(save):
    """PROF: a row's scores come from one load of each pair's profile for two rows at an
    immediate offset, against two loads a row from the table at computed addresses."""
    prof = _step(f"many_pairs16<0, 8, 8, {save}, true>")
    table = _step(f"many_pairs16<0, 8, 8, {save}, false>")
    assert prof.count("LDS") == 8 * 4 and table.count("LDS") == 16 * 4
    assert prof.size <= table.size - 16 * 4, (prof.opcodes, table.opcodes)
    assert not prof.count("LDL") and not prof.count("STL")
