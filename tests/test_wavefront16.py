"""The int16 wavefront kernel (stripes of 32 rows) against the int32 one and the reference.

``rows.align_whole`` runs at the width of its table: int16 where ``wavefront.fits16`` says
every value fits. Small random tables and penalties 0..8 in any order give many ties;
DNA and BLOSUM62 scorings, gap open = extend, lengths 1..330 straddle the 32-row stripes;
values at the edge of the bound stay exact; pairs past it go to int32 (``align_cat``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_wavefront import cases

import wavedp
from wavedp.engines import cpu, reference
from wavedp.engines.cpu import align_cat, concat, rows, wavefront
from wavedp.engines.cpu.small import SMALL_CELLS


def whole(q, t, table, gap_open, gap_extend, mode):
    ops = np.empty(q.size + t.size, np.uint8)
    r = rows.align_whole(q, t, table, gap_open, gap_extend, mode, ops)
    return (*r[:5], ops[: r[5]][::-1].tobytes().decode())


def both(q, t, table, gap_open, gap_extend, mode):
    """The int32 and int16 kernels' results (the table fits: asserted)."""
    assert wavefront.fits16(q.size, t.size, table, gap_open, gap_extend, mode)
    return (whole(q, t, table.astype(np.int32), gap_open, gap_extend, mode),
            whole(q, t, table.astype(np.int16), gap_open, gap_extend, mode))


@settings(max_examples=400, deadline=None)
@given(cases(max_len=100))
def test_int16_equals_int32_and_the_reference(case):
    q, t, table, gap_open, gap_extend, mode = case
    wide, narrow = both(q, t, table, gap_open, gap_extend, mode)
    assert narrow == wide == reference.align(q, t, table, gap_open, gap_extend, mode, True)


SCORINGS = {"dna": (np.where(np.eye(4, dtype=bool), 1, -4), 7, 1),
            "dna_open_is_extend": (np.where(np.eye(4, dtype=bool), 2, -3), 2, 2),
            "blosum62": (wavedp.Scoring(matrix="BLOSUM62").table, 11, 1),
            "blosum62_open_is_extend": (wavedp.Scoring(matrix="BLOSUM62").table, 4, 4)}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(SCORINGS)), st.integers(1, 330), st.integers(1, 330),
       st.sampled_from([0, 1, 2]), st.integers(0, 2**32 - 1), st.floats(0, 0.5))
def test_real_scorings_long_pairs(name, m, n, mode, seed, mutation):
    """Related pairs (a mutated copy with an indel), lengths across several stripes."""
    table, gap_open, gap_extend = SCORINGS[name]
    rng = np.random.default_rng(seed)
    size = table.shape[0] if name.startswith("dna") else 20
    q = rng.integers(0, size, m).astype(np.uint8)
    t = np.resize(q, n).copy()
    hit = rng.random(n) < mutation
    t[hit] = rng.integers(0, size, int(hit.sum()))
    cut = int(rng.integers(0, n))
    t = np.concatenate([t[:cut], t[cut + int(rng.integers(0, 9)):]])[:n]
    t = t if t.size else q[:1].copy()
    wide, narrow = both(q, t, table, gap_open, gap_extend, mode)
    assert narrow == wide
    if m * n <= 120 * 120:  # the reference is pure Python
        assert narrow == reference.align(q, t, table, gap_open, gap_extend, mode, True)


def test_values_at_the_edge_of_the_bound_stay_exact():
    """A local score just under 2^15 and a global all-mismatch path near -2^14 (fits16
    says yes to both): the int16 kernel gives the int32 kernel's alignment."""
    table = np.where(np.eye(4, dtype=bool), 127, -1)
    q = np.arange(256, dtype=np.uint8) % 4
    assert 127 * 256 + 127 < 1 << 15
    wide, narrow = both(q, q.copy(), table, 3, 1, 0)
    assert narrow == wide and narrow[0] == 127 * 256
    table = np.where(np.eye(4, dtype=bool), 1, -8)
    q, t = np.zeros(40, np.uint8), np.ones(1450, np.uint8)  # H[0][n] = -14510
    gap_open, gap_extend = 20, 10
    assert 3 * gap_open + gap_extend * 1491 + 8 < 1 << 14
    for mode in (1, 2):
        wide, narrow = both(q, t, table, gap_open, gap_extend, mode)
        assert narrow == wide


def test_bound_refuses_what_could_overflow():
    table = np.where(np.eye(4, dtype=bool), 127, -1)
    fits = wavefront.fits16(np.array([256, 258, 300]), np.array([256, 258, 10]), table, 3, 1, 0)
    assert fits.tolist() == [True, False, True]
    assert not wavefront.fits16(800, 900, np.where(np.eye(4, dtype=bool), 1, -8), 20, 10, 1)
    assert wavefront.fits16(800, 900, np.where(np.eye(4, dtype=bool), 1, -8), 20, 10, 0)
    assert not wavefront.fits16(10, 1 << 15, np.eye(4, dtype=np.int32), 1, 1, 0)  # steps


def test_align_cat_routes_pairs_by_the_bound(monkeypatch):
    """A batch over SMALL_CELLS (the SIMD kernels): pairs that fit int16 and pairs that do
    not (a local score over 2^15, a pair of 16 rows or fewer) give the same results with
    the int16 kernel on and off, and the reference's on a sample."""
    rng = np.random.default_rng(3)
    table = np.where(np.eye(4, dtype=bool), 200, -50).astype(np.int32)
    qs, ts = [], []
    for k in range(60):
        m = [5, 16, 17, 40, 700][k % 5]
        q = rng.integers(0, 4, m).astype(np.uint8)
        t = q.copy() if k % 3 == 0 else rng.integers(0, 4, int(rng.integers(1, 1000)))
        qs.append(q)
        ts.append(np.asarray(t, np.uint8))
    pairs = np.stack([np.arange(60), np.arange(60)], axis=1)
    lengths = np.array([[q.size, t.size] for q, t in zip(qs, ts, strict=True)])
    assert int(lengths.prod(axis=1).sum()) > SMALL_CELLS
    fit = wavefront.fits16(lengths[:, 0], lengths[:, 1], table, 9, 2, 0)
    assert fit.any() and not fit.all()
    qcat, qoff = concat(qs)
    tcat, toff = concat(ts)
    got = {}
    for on in (True, False):
        monkeypatch.setattr(cpu, "WHOLE16", on)
        out, ops, opoff = align_cat(qcat, qoff, tcat, toff, pairs, table, 9, 2, mode=0,
                                    traceback=True)
        got[on] = [(*out[p, :5].tolist(), ops[opoff[p]:opoff[p] + out[p, 5]][::-1].tobytes())
                   for p in range(60)]
    assert got[True] == got[False]
    for p in np.flatnonzero(lengths.prod(axis=1) < 20_000)[::3].tolist():
        ref = reference.align(qs[p], ts[p], table, 9, 2, 0, True)
        assert got[True][p] == (*ref[:5], ref[5].encode())


@settings(max_examples=100, deadline=None)
@given(cases(max_len=40))
def test_fits16_is_a_true_bound(case):
    """Wherever fits16 holds, no H the reference computes leaves its range."""
    q, t, table, gap_open, gap_extend, mode = case
    assume(q.size and t.size)
    H, E, F = reference._matrices(q, t, table, gap_open, gap_extend, mode)
    top = max(int(table.max()), 0)
    low = min(int(table.min()), 0)
    assert max(max(row) for row in H) <= top * min(q.size, t.size)
    floor = (-(gap_open + gap_extend) + low if mode == 0
             else -(3 * gap_open + gap_extend * (q.size + t.size + 1)) + low)
    assert min(min(row) for row in H) - gap_open - gap_extend >= floor - gap_extend
