"""Significance methods (``wavedp.stats.composition``, ``empirical``, ``masking``), each
against an independent computation: lambda roots by bisection in exact-ish arithmetic (and
SciPy's brentq where installed), compositions counted one sequence at a time, adjusted
matrices checked against their defining constraints, empirical fits on scores drawn from a
known extreme-value distribution, incomplete gamma functions against SciPy, tantan's mask on
an obvious repeat."""

from __future__ import annotations

import builtins
import math
import re

import numpy as np
import pytest

import wavedp
from wavedp.db.database import Database
from wavedp.errors import InputError
from wavedp.stats import composition, empirical, masking
from wavedp.stats.karlin_altschul import KarlinAltschul

BLOSUM62 = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
AMINO = "ARNDCQEGHILKMFPSTWYV"


def bisect_lambda(sub: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    """The positive root of sum p_a q_b exp(lambda s_ab) = 1 by plain bisection (100 halvings
    of a bracket found by doubling), summed with math.fsum: independent of the solver."""
    pairs = [(float(p[a] * q[b]), float(sub[a, b])) for a in range(len(p))
             for b in range(len(q)) if p[a] * q[b] > 0]

    def f(lam: float) -> float:
        return math.fsum(w * math.exp(lam * s) for w, s in pairs) - 1.0

    hi = 0.1
    while f(hi) <= 0:
        hi *= 2
    lo = hi / 2 if f(hi / 2) < 0 else 1e-9
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.fixture(scope="module")
def comp() -> composition.Composition:
    return composition.Composition.of(BLOSUM62)


# ---- composition: lambda ---------------------------------------------------------------------

def test_background_lambda_is_blasts(comp):
    # BLAST's ungapped lambda of BLOSUM62 with Robinson-Robinson frequencies: 0.3176
    assert comp.lambda_background == pytest.approx(0.3176, abs=5e-5)
    assert comp.background.sum() == pytest.approx(1.0)
    letters = [BLOSUM62.alphabet[c] for c in comp.letters]
    assert letters == sorted(AMINO, key=BLOSUM62.alphabet.index)


def test_vectorised_lambda_matches_bisection(comp):
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.full(20, 0.7))
    q = rng.dirichlet(np.full(20, 0.4), size=25)
    q[0] = comp.background
    q[1] = np.eye(20)[AMINO.index("W")] * 0.5 + comp.background * 0.5  # W-rich
    got = composition.ungapped_lambda(comp.sub, p, q)
    for j in range(q.shape[0]):
        assert got[j] == pytest.approx(bisect_lambda(comp.sub, p, q[j]), rel=1e-8)


def test_vectorised_lambda_matches_brentq(comp):
    optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(20))
    q = rng.dirichlet(np.ones(20), size=10)
    got = composition.ungapped_lambda(comp.sub, p, q)
    for j in range(10):
        w = np.outer(p, q[j])
        ref = optimize.brentq(lambda lam, w=w: float((w * np.exp(lam * comp.sub)).sum() - 1),
                              1e-6, 5.0, xtol=1e-14)
        assert got[j] == pytest.approx(ref, rel=1e-9)


def test_lambda_without_positive_root(comp):
    values = np.array([-2.0, -1.0, 3.0])
    weights = np.array([[0.1, 0.1, 0.8],    # expected score > 0: no positive root
                        [0.5, 0.5, 0.0],    # no positive score: lambda is infinite
                        [0.6, 0.3, 0.1]])   # an ordinary row
    got = composition.solve_lambda(values, weights)
    assert np.isnan(got[0]) and got[1] == np.inf
    exact = bisect_lambda(np.array([[-2.0, -1.0, 3.0]]), np.array([1.0]),
                          np.array([0.6, 0.3, 0.1]))
    assert got[2] == pytest.approx(exact, rel=1e-9)


def test_ratios_background_biased_and_clipped(comp):
    size = comp.size
    bg_counts = np.zeros(size)
    bg_counts[comp.letters] = comp.background * 10_000
    ke = np.zeros(size)
    ke[BLOSUM62.alphabet.index("K")] = ke[BLOSUM62.alphabet.index("E")] = 500
    ratios = comp.ratios(bg_counts, np.stack([bg_counts, ke, ke * 0]))
    assert ratios[0] == pytest.approx(1.0, abs=1e-6)
    assert ratios[1] < 0.99  # both K/E rich: a smaller lambda, the score shrinks
    assert ratios[2] == pytest.approx(1.0, abs=1e-6)  # an empty subject: pure pseudocounts
    strong = comp.ratios(ke, ke[None] * 10)
    assert strong[0] == pytest.approx(comp.low)  # clipped at 0.5
    free = composition.Composition.of(BLOSUM62, high=2.0)
    w_rich = np.zeros(size)
    w_rich[BLOSUM62.alphabet.index("W")] = 1000  # W against W-poor: lambda grows, ratio > 1
    assert free.ratios(w_rich, bg_counts[None])[0] > 1.0
    assert comp.ratios(w_rich, bg_counts[None])[0] == pytest.approx(1.0)


def test_counts_match_per_sequence_counting():
    texts = ["ACDA", "", "WWWY", "KKKKEEEEX", "A", "", "MMMMMMMMMMMMMMMMMMMMMM"]
    db = Database.from_sequences(texts)
    lut = db.codes_for(BLOSUM62)
    size = len(BLOSUM62.alphabet)
    def want(t: str) -> list[int]:
        return (np.bincount(BLOSUM62.encode(t), minlength=size)[:size] if t
                else np.zeros(size, int)).tolist()

    got = composition.counts(db.residues, db.offsets, size, lut)
    assert [row.tolist() for row in got] == [want(t) for t in texts]
    some = np.array([6, 0, 3, 1, 3])  # a selection, in its order, with a repeat
    got = composition.counts(db.residues, db.offsets, size, lut, some)
    assert [row.tolist() for row in got] == [want(texts[k]) for k in some]


def test_table_evalues_with_ratio(comp):
    ka = KarlinAltschul(lambda_=0.267, K=0.041)
    query = BLOSUM62.encode("MKKLLEEKKAAEEKKLLEEK")
    subjects = np.stack([composition.query_counts(BLOSUM62.encode(t), comp.size)
                         for t in ("MKKEEKKEEKLLAAEE", "WYFPGHCMNQ")])
    e = composition.evalues(np.array([40, 40]), query, subjects, comp, ka, 10_000)
    ratio = comp.ratios(composition.query_counts(query, comp.size), subjects)
    want = 0.041 * 20 * 10_000 * np.exp(-0.267 * ratio * 40)
    assert e == pytest.approx(want)
    assert e[0] > e[1]  # the shared K/E bias costs significance


# ---- composition: adjusted matrices ------------------------------------------------------------

def test_adjusted_matrix_constraints(comp):
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(20))
    q = rng.dirichlet(np.full(20, 0.5), size=4)
    adj = comp.adjusted_matrices(p, q)
    lam = comp.lambda_background
    for j in range(4):
        target = np.outer(p, q[j]) * np.exp(lam * adj[j])
        assert target.sum() == pytest.approx(1.0, abs=1e-9)  # the background's lambda
        assert target.sum(axis=1) == pytest.approx(p, abs=1e-9)  # margins: the compositions
        assert target.sum(axis=0) == pytest.approx(q[j], abs=1e-9)
        # closest to the matrix's targets: Q / P is a product of row and column factors
        ratio = np.log(target / comp.targets)
        assert ratio - ratio[:, :1] - ratio[:1, :] + ratio[0, 0] == pytest.approx(
            np.zeros((20, 20)), abs=1e-7)


def test_pair_counts_and_rescoring(comp):
    q, t = "MKVLAAGWWCKE", "MKVAAGWYCKE"
    aln = wavedp.align(q, t, BLOSUM62)
    counts = composition.pair_counts(BLOSUM62.encode(q), BLOSUM62.encode(t), aln.cigar,
                                     aln.query_start, aln.target_start, comp.size)
    want = np.zeros_like(counts)
    i, j = aln.query_start, aln.target_start
    for n, op in re.findall(r"(\d+)([=XID])", aln.cigar):
        for _ in range(int(n)):
            if op in "=X":
                want[BLOSUM62.alphabet.index(q[i]), BLOSUM62.alphabet.index(t[j])] += 1
            i += op in "=XI"
            j += op in "=XD"
    assert counts.tolist() == want.tolist()
    bg = comp.background
    same = comp.adjusted_scores([aln.score], counts[None], bg, bg[None])
    assert same[0] == pytest.approx(aln.score, abs=1e-6)  # background composition: unchanged
    biased = comp.frequencies(composition.query_counts(BLOSUM62.encode("KE" * 50), comp.size))
    higher = comp.adjusted_scores([aln.score], counts[None], biased, biased[None])
    assert higher[0] > aln.score  # its rare letters' matches are worth more there
    kq, kt = "KEKKEEKEKEKKEKEEKKEK", "KEKKEEKEKKEKEEKKEKEE"
    kaln = wavedp.align(kq, kt, BLOSUM62)
    kcounts = composition.pair_counts(BLOSUM62.encode(kq), BLOSUM62.encode(kt), kaln.cigar,
                                      kaln.query_start, kaln.target_start, comp.size)
    lower = comp.adjusted_scores([kaln.score], kcounts[None], biased, biased[None])
    assert lower[0] < 0.5 * kaln.score  # K-K and E-E matches are cheap between K/E-rich ones
    assert comp.combined([30.0, 30.0], [10.0, 29.0]).tolist() == pytest.approx(
        [10.0 + comp.allowance, 30.0])
    assert comp.allowance == pytest.approx(2 * math.log(2) / comp.lambda_background)


def test_composition_needs_the_amino_acids():
    with pytest.raises(InputError):
        composition.Composition.of(wavedp.Scoring(match=1, mismatch=1, gap_open=2,
                                                  gap_extend=1))  # expected score > 0


# ---- empirical -------------------------------------------------------------------------------

def gumbel_scores(rng: np.random.Generator, count: int, lam: float = 0.27, k: float = 0.04,
                  m: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Continuous local scores of unrelated subjects: Karlin-Altschul's Gumbel with location
    ln(K m n) / lambda, subject lengths log-uniform in 50..1500."""
    n = np.exp(rng.uniform(math.log(50), math.log(1500), count))
    return np.log(k * m * n) / lam + rng.gumbel(size=count) / lam, n


def test_fit_recovers_lambda_and_k():
    s, n = gumbel_scores(np.random.default_rng(1), 5000)
    fit, why = empirical.fit_or_reason(s, n, "local", query_length=300)
    assert why == "" and fit is not None
    assert fit.lambda_ == pytest.approx(0.27, rel=0.03)
    assert fit.K == pytest.approx(0.04, rel=0.25)
    assert fit.shape == 1.0 and fit.count == 5000
    # E-values of fresh unrelated scores are calibrated
    fresh, n2 = gumbel_scores(np.random.default_rng(2), 5000)
    e = fit.evalue(fresh, n2, spacing=0)
    assert 40 <= np.sum(e <= 100) <= 160
    assert np.sum(e <= 10) <= 20
    # bit scores follow Karlin and Altschul's formula under the fitted lambda and K
    ref = fit.reference_length
    u = fit.location(np.array([ref]))[0]
    assert fit.values(u + 20, ref, spacing=0)[1] == pytest.approx(
        (fit.lambda_ * (u + 20) - math.log(fit.K)) / math.log(2), rel=1e-3)


def test_fit_keeps_planted_high_scores_out():
    rng = np.random.default_rng(5)
    s, n = gumbel_scores(rng, 4000)
    clean = empirical.fit(s, n, "local", query_length=300)
    planted = s.copy()
    hits = rng.choice(s.size, 800, replace=False)  # 20 % related subjects, far above
    planted[hits] += rng.uniform(40, 150, hits.size)
    fit = empirical.fit(planted, n, "local", query_length=300)
    assert fit.lambda_ == pytest.approx(clean.lambda_, rel=0.03)
    assert fit.trimmed >= 700
    # the planted scores stay significant, the unrelated ones do not
    e = fit.evalue(planted, n, spacing=0)
    assert np.mean(e[hits] < 0.01) > 0.9
    others = np.setdiff1d(np.arange(s.size), hits)
    assert np.sum(e[others] <= 1) <= 5


def test_fit_too_small_or_flat_database():
    s, n = gumbel_scores(np.random.default_rng(0), 150)
    fit, why = empirical.fit_or_reason(s, n, "local")
    assert fit is None and "too few subjects" in why and "150" in why
    assert empirical.fit(s, n, "local") is None
    assert empirical.fit(s, n, "local", min_subjects=100) is not None
    fit, why = empirical.fit_or_reason(np.full(500, 7.0), np.full(500, 100.0), "local")
    assert fit is None and "do not vary" in why
    with pytest.raises(InputError):
        empirical.fit(s, n, "banded")
    with pytest.raises(InputError):
        empirical.fit(s, n[:-1], "local")


def test_fit_sample_and_threshold():
    s, n = gumbel_scores(np.random.default_rng(9), 30_000)
    fit = empirical.fit(s, n, "local", query_length=300, sample=5000, count=1_000_000)
    assert fit.used <= 5000 and fit.count == 1_000_000
    lengths = np.array([60.0, 300.0, 1200.0])
    floor = fit.threshold(0.01, lengths)
    assert fit.evalue(floor, lengths) == pytest.approx([0.01] * 3, rel=1e-6)
    assert np.all(np.diff(floor) > 0)  # longer subjects need higher scores


def test_every_mode_gets_a_fit():
    rng = np.random.default_rng(4)
    n = np.exp(rng.uniform(math.log(40), math.log(2000), 1500))
    # global scores: an end-gap term that grows with the length difference, a mild skew
    s = -np.abs(n - 300) - 0.2 * np.minimum(n, 300) - np.log(rng.gamma(8.0, size=n.size)) * 6
    fit = empirical.fit(s, n, "global", query_length=300)
    assert fit is not None and fit.mode == "global"
    assert {p.shape for p in fit.pieces} <= {2.0, 8.0}
    e = fit.evalue(s, n, spacing=0)
    assert np.all(np.isfinite(e)) and np.sum(e <= 1) <= 5
    fit = empirical.fit(s, n, "semiglobal", query_length=300)
    assert fit is not None and len(fit.pieces) == 1


def test_log_gamma_tails_match_scipy():
    special = pytest.importorskip("scipy.special")
    x = np.array([1e-6, 0.01, 0.5, 1.0, 3.0, 9.0, 25.0, 60.0, 150.0])
    for k in (1.0, 2.0, 8.0, 30.0):
        log_p, log_q = empirical.kernels().log_gammas_of(k, x)
        assert np.exp(log_p) == pytest.approx(special.gammainc(k, x), rel=1e-9, abs=1e-300)
        assert np.exp(log_q) == pytest.approx(special.gammaincc(k, x), rel=1e-9, abs=1e-300)
        z = -np.log(x)
        assert np.exp(empirical._log_upper(k, z)) == pytest.approx(special.gammainc(k, x),
                                                                   rel=1e-9, abs=1e-300)


def test_log_gamma_k1_is_gumbel():
    z = np.linspace(-2, 12, 15)
    gumbel = -np.expm1(-np.exp(-z))
    assert np.exp(empirical._log_upper(1.0, z)) == pytest.approx(gumbel, rel=1e-12)
    series = np.exp(empirical.kernels().log_gammas_of(1.0, np.exp(-z))[0])
    assert series == pytest.approx(gumbel, rel=1e-10)


# ---- masking ---------------------------------------------------------------------------------

def test_masking_marks_a_repeat_and_scores_it_as_x():
    pytest.importorskip("pytantan")
    text = "MSTNPKPQRKTKRNTNRRPQDVKFPGGGQIVGGVYLLPRR" + "Q" * 30 + "AAGHW*"
    masked = masking.soft_mask([text])[0]
    assert masked.upper() == text.upper()
    assert masked[45:70] == "q" * 25  # the poly-Q run is lowercase
    assert masked[:20] == text[:20]
    (texts,), (codes,) = masking.masked([text], [BLOSUM62.encode(text)], BLOSUM62)
    x = BLOSUM62.alphabet.index("X")
    assert np.all(codes[masking.lowercase(masked)] == x)
    unmasked = ~masking.lowercase(masked)
    assert np.array_equal(codes[unmasked], BLOSUM62.encode(text)[unmasked])
    assert texts == "".join("X" if c.islower() else c for c in masked)
    assert 0 < masking.fraction([masked]) < 1
    dna = masking.soft_mask(["ACGTTGCA" + "CA" * 20 + "GGATCCTTAG"], protein=False)[0]
    assert "cacaca" in dna
    assert masking.mask_code(wavedp.Scoring(match=1, mismatch=-2, gap_open=3,
                                            gap_extend=1)) == "ACGTN".index("N")


def test_masking_without_pytantan_is_an_input_error(monkeypatch):
    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "pytantan":
            raise ImportError("no pytantan here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    assert not masking.available()
    with pytest.raises(InputError, match="pip install pytantan"):
        masking.soft_mask(["ACDEF"])
