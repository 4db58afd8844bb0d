"""The direction bits of many_pairs16's sweep and trace_dirs' walk (kernels/many_pairs16.cu,
kernels/pairs_trace.cu), on the CPU: the flags each cell's nibble holds, computed as the sweep
computes them (its F chain included), walked as trace_dirs walks them (local zero from the
score carried along the path), give the CPU engine's alignments, the pairs as given or
exchanged (SWAP); their layout's words a pair; the sweep's step and the walk's loads in
machine code (no GPU needed: NVRTC and nvdisasm)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import need_sass_tools, pair_texts, sass_step

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


def nibbles(q, t, sub, go: int, ge: int, mode: int, swap: bool = False):
    """Each cell's nibble as many_pairs16<..., true, ...> makes it: bit 0, F beats X; bit 1,
    X beats the diagonal; bit 2, E extends; bit 3, F extends (signs of the sweep's
    differences); ``swap`` (SWAP, the pair exchanged): bit 0, X beats F; bit 1, H beats the
    diagonal. Down a lane's 8 rows F runs from X - go of the row above (max(F - ge, X - go)
    equals max(F - ge, H - go) where go >= ge), from H - go at a lane's first row. With H."""
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
            low = (f - x < 0) | ((dg - go) - (h - go) < 0) << 1 if swap else \
                ((x - go) - (h - go) < 0) | (dg - x < 0) << 1
            nib[i, j] = low | (hg_left - e < 0) << 2 | (hg_up - f < 0) << 3
            H[i, j], E[i, j], F[i, j], X[i, j] = h, e, f, x
    return nib, H


def end_cell(H: np.ndarray, mode: int, swap: bool = False) -> tuple[int, int, int]:
    """The end cell (score, i, j) of docs/design.md's rule (a larger score, then a smaller
    row, then a smaller column), or ``swap``'s (then a smaller column, then a smaller row)."""
    m, n = H.shape[0] - 1, H.shape[1] - 1
    if mode == 1:
        return int(H[m, n]), m, n
    if mode == 0:
        cells = [(i, j) for i in range(1, m + 1) for j in range(1, n + 1)]
    else:
        cells = [(m, j) for j in range(n + 1)] + [(i, n) for i in range(m)]
    v, i, j = max((int(H[i, j]), *((-j, -i) if swap else (-i, -j))) for i, j in cells)
    i, j = (-j, -i) if swap else (-i, -j)
    return (0, 0, 0) if mode == 0 and v <= 0 else (v, i, j)


def walk(q, t, sub, go: int, ge: int, mode: int, nib, score: int, i: int, j: int,
         swap: bool = False):
    """trace_dirs' walk from end cell (i, j): (query start, end, target start, end, CIGAR);
    ``swap``: at H the diagonal, then F, then E (SWAP's nibbles), and the result exchanged
    back (I for D, the query's coordinates for the target's)."""
    ops: list[str] = []
    h, state, qe, te = score, 0, i, j
    empty = stopped = mode == 0 and score == 0
    while not stopped and i > 0 and j > 0:
        d = int(nib[i, j])
        if state == 0:
            if mode == 0 and h == 0:
                stopped = True
            elif swap and d & 2:
                state = 1 if d & 1 else 2
            elif not swap and d & 3:
                state = 2 if d & 1 else 1
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
    result = (i, qe, j, te, "".join(runs))
    return exchanged(result) if swap else result


def exchanged(result: tuple) -> tuple:
    """A walk's result with the query and target exchanged (their coordinates, I and D)."""
    qs, qe, ts, te, cigar = result
    return ts, te, qs, qe, cigar.translate(str.maketrans("ID", "DI"))


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
        expected = (want.query_start, want.query_end, want.target_start, want.target_end,
                    want.cigar)
        q, t = scoring.encode(a), scoring.encode(b)
        nib, H = nibbles(q, t, sub, scoring.gap_open, scoring.gap_extend, code)
        assert end_cell(H, code) == (want.score, want.query_end, want.target_end), (a, b)
        got = walk(q, t, sub, scoring.gap_open, scoring.gap_extend, code, nib, want.score,
                   want.query_end, want.target_end)
        assert got == expected, (a, b)
        # SWAP: the target's letters down the rows, the table transposed, the exchanged rules
        nib, H = nibbles(t, q, sub.T, scoring.gap_open, scoring.gap_extend, code, swap=True)
        score, i, j = end_cell(H, code, swap=True)
        assert (score, j, i) == (want.score, want.query_end, want.target_end), (a, b)
        got = walk(t, q, sub.T, scoring.gap_open, scoring.gap_extend, code, nib, score, i, j,
                   swap=True)
        assert got == expected, (a, b)


@pytest.mark.parametrize("swap", [False, True])
def test_the_walks_rules_discriminate(swap):
    """Each orientation's rules (the flags, the preferences at H, the end cell's order) on
    the other orientation's sweep give other alignments: the test above can fail."""
    scoring = SCORINGS["ties"]
    rng = np.random.default_rng(9)  # two letters: ties everywhere
    queries, targets = (["".join(rng.choice(list("AC"), int(k))) for k in rng.integers(5, 30, 60)]
                        for _ in range(2))
    sub = np.asarray(scoring.table, np.int64)
    go, ge = scoring.gap_open, scoring.gap_extend
    wrong = 0
    for a, b in zip(queries, targets, strict=True):
        want = wavedp.align(a, b, scoring, mode="local", device="cpu")
        q, t = scoring.encode(a), scoring.encode(b)
        if swap:  # the exchanged sweep with the unexchanged rules
            nib, H = nibbles(t, q, sub.T, go, ge, 0)
            got = exchanged(walk(t, q, sub.T, go, ge, 0, nib, *end_cell(H, 0)))
        else:  # the unexchanged sweep with the exchanged rules
            nib, H = nibbles(q, t, sub, go, ge, 0, swap=True)
            got = exchanged(walk(q, t, sub, go, ge, 0, nib, *end_cell(H, 0, swap=True),
                                 swap=True))
        wrong += got != (want.query_start, want.query_end, want.target_start, want.target_end,
                         want.cigar)
    assert wrong >= 4, wrong  # 8 of 60 each way


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
    return sass_step("many_pairs16.cu", expression)


def test_the_direction_step_in_machine_code():
    """Four steps a loop (RUN): per step and row, a word's four differences and the diagonal
    (VIADD.16x2 on the FMA pipe, beside X - go), per step 16 sign spreads and 14 bit selects,
    and two 16-byte stores per four steps (a lane's words of each pair); no local memory."""
    loop = _step("many_pairs16<0, 8, 8, true, false, false>")  # the table's (protein)
    base = _step("many_pairs16<0, 8, 8, false, false, false>")
    steps = loop.count("VIADDMNMX") // 32
    assert steps == 4 and base.count("VIADDMNMX") == 32 * steps
    assert loop.opcodes["VIADD.16x2"] == base.opcodes["VIADD.16x2"] + 40 * steps
    assert loop.opcodes["STG.E.128"] == 2 and not loop.count("LDL") and not loop.count("STL")
    assert loop.count("LOP3") <= base.count("LOP3") + 14 * steps
    assert loop.size <= base.size + 80 * steps, (loop.opcodes, base.opcodes)


@pytest.mark.parametrize("save", ["false", "true"])
def test_the_profile_step_in_machine_code(save):
    """PROF: four rows' scores come from one load of each pair's profile at an immediate
    offset (a byte a row, sign-extended by a permute), against two loads a row from the
    table at computed addresses."""
    prof = _step(f"many_pairs16<0, 8, 8, {save}, true, false>")
    table = _step(f"many_pairs16<0, 8, 8, {save}, false, false>")
    assert prof.count("LDS") == 4 * 4 and table.count("LDS") == 16 * 4
    assert prof.size <= table.size - 16 * 4, (prof.opcodes, table.opcodes)
    assert not prof.count("LDL") and not prof.count("STL")


@pytest.mark.parametrize("save", ["false", "true"])
def test_the_exchanged_step_in_machine_code(save):
    """SWAP: with SAVE, a row's flags one add more (the diagonal - go against H - go); the
    local key's update (against the best's X alone) a few instructions more a step."""
    swap = _step(f"many_pairs16<0, 8, 8, {save}, true, true>")
    plain = _step(f"many_pairs16<0, 8, 8, {save}, true, false>")
    extra = 8 * 4 if save == "true" else 0
    assert swap.opcodes["VIADD.16x2"] == plain.opcodes["VIADD.16x2"] + extra
    assert swap.size <= plain.size + extra + 7 * 4, (swap.opcodes, plain.opcodes)
    assert not swap.count("LDL") and not swap.count("STL")


@pytest.mark.parametrize("swap", ["false", "true"])
def test_the_tall_step_in_machine_code(swap):
    """TALL (16 rows a lane, score-only): a step's shuffles and bookkeeping over twice the
    cells, at most 6 instructions a cell against 7.5 with 8 rows, no local memory."""
    tall = _step(f"many_pairs16<0, 4, 16, false, true, {swap}>")
    eight = _step(f"many_pairs16<0, 8, 8, false, true, {swap}>")
    assert tall.count("VIADDMNMX") == 64 * 4 and eight.count("VIADDMNMX") == 32 * 4
    assert tall.size / (4 * 32) <= 6.0 and eight.size / (4 * 16) <= 7.5, (tall.size, eight.size)
    assert not tall.count("LDL") and not tall.count("STL")


@pytest.mark.parametrize("save", ["false", "true"])
def test_the_semiglobal_step_in_machine_code(save):
    """Semiglobal's ends (row m by a tree of byte permutes, column n by each pair's best row
    and one take): no local memory, with direction bits too (24 bytes spilled when row m was
    two trees of selects and column n a take a row), and row m's seven permutes a step (a
    tree of three levels)."""
    from wavedp.lab import sass

    need_sass_tools()

    def run(mode: int):  # the smallest loop of four steps (its branches make inner ones)
        code = sass.disassemble(sass.cubin("many_pairs16.cu",
                                           f"many_pairs16<{mode}, 8, 8, {save}, true, true>"))
        return min((loop for loop in sass.loops(code) if loop.count("VIADDMNMX") == 4 * 32),
                   key=lambda loop: loop.size)
    semi, glob = run(2), run(1)
    assert not semi.count("LDL") and not semi.count("STL")
    assert semi.count("PRMT") >= glob.count("PRMT") + 7 * 4, (semi.opcodes, glob.opcodes)
