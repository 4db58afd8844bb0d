"""Empirical statistics: E-values fitted to a search's own scores, in every mode.

Pearson (1998, J Mol Biol 276:71) showed that the scores of one query against a database,
most of whose sequences are unrelated to it, estimate their own significance: fitted against
the logarithm of the subject's length, the unrelated bulk gives a location and a scale, and a
score's E-value is the number of database sequences expected to score as well by chance. This
is how ``ssearch36``, ``ggsearch36`` and ``glsearch36`` give E-values for any scoring and any
alignment mode. wavedp's fit is its own:

- **Model.** For a subject of length n (x = ln n) the score is ``u(x) + sigma(x) Z`` with Z
  of the log-gamma family ``Z = -ln G``, G ~ Gamma(k, 1), whose upper tail is
  ``P(Z > z) = P(k, e^-z)`` (the regularised incomplete gamma function). k = 1 is the
  Gumbel (extreme-value) distribution of Karlin-Altschul local scores; larger k has a
  lighter skew and tends to the normal.
- **Length.** local: ``u = a + b x`` and a constant sigma (Karlin and Altschul's
  ``u = ln(K m n) / lambda``, the slope left free as FASTA does), k = 1; semiglobal: u and
  ln sigma linear in x, k = 1; global: u and ln sigma linear splines in x (knots at quantiles
  of x and at the query's length, where the forced end gap changes side; u also linear in n,
  a gap extension per residue of length difference; sigma held constant beyond the 2 % and
  98 % length quantiles). Global scores of subjects of similar length to the query skew
  little (0.2-0.3: k = 8), while a subject at least twice shorter or longer than the query
  is aligned at its best placement inside the other, a maximum over placements with a heavy
  (Gumbel-like) tail: those are fitted apart with k = 2 (``SHAPE``, ``FAR``).
- **Outliers.** Related sequences (true hits) must not pull the fit. A robust start
  (least squares, then three rounds dropping residuals beyond median + 3 MAD), then maximum
  likelihood, repeated until the sets are stable: scores whose upper tail probability under
  the current fit is below ``trim`` (1 %) are left out, and in their place the likelihood
  counts the number of unrelated scores expected above the cut (``trim / (1 - trim)`` per
  kept score, censored above it): however many true hits were cut, the tail is neither
  inflated by them nor thinned by their absence (a truncated likelihood would be exact but
  is unbounded). Scores in the lowest ``censor`` (2 %) count only as being below their cut
  (the lower tail, where short subjects pile up at small scores, does not bend the fit).
  High scores planted in 20 % of the subjects move lambda by less than 3 % (the tests).
- **Too little data.** Fewer than ``min_subjects`` scores (after the cut) or scores that do not
  vary give no fit: :func:`fit_or_reason` says why, :func:`fit` returns None, and the caller
  prints NA or falls back to the tables.

E-values: ``E = count * P(S >= s | n)``, count the database's sequences (Pearson's E()),
with a continuity correction of half the score lattice (integer scores: ``s - 1/2``).
A search of a large database may fit a sample of the scores (``sample``) and evaluate only
its candidates; the fit's cost is O(sample) per query. The likelihood, its gradient, the
maximisation and the rounds of censoring are compiled (``likelihood.py``, nogil: a search
fits its queries on every core), over the sample's distinct lengths (:class:`Layout`)
wherever only the length matters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import InputError

MODES = ("local", "global", "semiglobal")
#: fewer scores than this (after the cut) give no fit
MIN_SUBJECTS = 200
#: scores with an upper tail probability below TRIM are left out of the fit (replaced by the
#: expected number of unrelated scores above the cut)
TRIM = 0.01
#: the lowest CENSOR of the scores count only as being below their cut
CENSOR = 0.02
#: a database larger than this is fitted on an evenly spaced sample of this many scores
SAMPLE = 10_000
#: the shape k of each mode (1 = Gumbel; larger k is closer to normal). Global scores of
#: random sequences of similar lengths skew about 0.2-0.3 (k near 16 describes their bulk),
#: but their far tail is heavier than the bulk's fit predicts: with one k for all lengths,
#: k = 8 gave 0.5 and 2.0 false hits per query at E <= 1 (random proteins and DNA, held-out
#: scores), k = 16 and the profile-likelihood choice 1.3-3.6
SHAPE = {"local": 1.0, "semiglobal": 1.0, "global": 8.0}
#: global mode: subjects at least FAR times shorter or longer than the query are fitted apart,
#: with shape FAR_SHAPE (their best global alignment is a best placement: Gumbel-like)
FAR = 2.0
FAR_SHAPE = 2.0


def kernels():
    """``likelihood.py``, the fit's compiled kernels, imported on first use (it imports
    Numba: 0.2 s of every command's start-up otherwise)."""
    from . import likelihood

    return likelihood


# ---- the log-gamma family (compiled in likelihood.py) -----------------------------------------

def _log_upper(k: float, z: np.ndarray) -> np.ndarray:
    """ln P(Z > z) of each element, for Z = -ln G, G ~ Gamma(k, 1): ln P(k, e^-z)."""
    return kernels().log_uppers(float(k), np.asarray(z, dtype=np.float64))


def _digamma(k: float) -> float:
    shift = 0.0
    while k < 8.0:
        shift -= 1.0 / k
        k += 1.0
    k2 = 1.0 / (k * k)
    return shift + math.log(k) - 0.5 / k - k2 * (1 / 12 - k2 * (1 / 120 - k2 / 252))


def _trigamma(k: float) -> float:
    shift = 0.0
    while k < 8.0:
        shift += 1.0 / (k * k)
        k += 1.0
    k2 = 1.0 / (k * k)
    return shift + 1.0 / k + 0.5 * k2 + (k2 / k) * (1 / 6 - k2 * (1 / 30 - k2 / 42))


def _upper_quantile(k: float, p: float) -> float:
    """z with P(Z > z) = p."""
    return kernels().upper_quantile(float(k), float(p))


# ---- the fitted model ------------------------------------------------------------------------

@dataclass(frozen=True)
class Basis:
    """The regressors of location or log-scale on x = ln(subject length): 1, x - x0 (scaled),
    hinges ``max(0, x - knot)`` (a linear spline), optionally the length itself (``linear``:
    global scores change by a gap extension per residue of length difference), with x held
    inside ``bounds`` (the fit's data: no extrapolation beyond them)."""

    center: float
    spread: float
    slope: bool
    knots: tuple[float, ...] = ()
    linear: bool = False
    bounds: tuple[float, float] = (-math.inf, math.inf)

    def matrix(self, x: np.ndarray) -> np.ndarray:
        x = np.clip(x, *self.bounds)
        cols = [np.ones_like(x)]
        if self.slope:
            cols.append((x - self.center) / self.spread)
        if self.linear:
            cols.append(np.exp(x - self.center))
        cols += [np.maximum(x - t, 0.0) / self.spread for t in self.knots]
        return np.stack(cols, axis=1)


@dataclass(frozen=True)
class Piece:
    """The model of the subjects whose ln(length) lies in [lower, upper): location and
    log-scale on their bases, and the family's shape."""

    lower: float
    upper: float
    shape: float
    location_basis: Basis
    scale_basis: Basis
    location_coef: np.ndarray = field(repr=False)
    scale_coef: np.ndarray = field(repr=False)

    def params(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(u, sigma) at x = ln(length)."""
        u = self.location_basis.matrix(x) @ self.location_coef
        return u, np.exp(self.scale_basis.matrix(x) @ self.scale_coef)


@dataclass(frozen=True)
class Fit:
    """One query's fitted score distribution: ``evalue(score, subject_length)``.

    ``count`` is the number of database sequences an E-value counts (all the scores, or the
    search's database size), ``used`` the scores in the fit, ``trimmed`` and ``censored``
    those left out at the top and counted as below their cut at the bottom. ``pieces``: one
    model per range of subject lengths (one in local and semiglobal mode; in global mode up
    to three: subjects much shorter than the query, about as long, much longer). ``lambda_``
    is 1/sigma and ``K`` Karlin and Altschul's K implied at the median subject length (local
    mode; None elsewhere), for reports; the E-values use the whole model."""

    mode: str
    count: int
    used: int
    trimmed: int
    censored: int
    pieces: tuple[Piece, ...]
    query_length: int | None
    reference_length: float
    lambda_: float = 0.0
    K: float | None = None

    @property
    def shape(self) -> float:
        """The family's shape k at the median subject length."""
        return self._piece_of(np.array([math.log(self.reference_length)]))[0].shape

    def _piece_of(self, x: np.ndarray) -> list[Piece]:
        return [p for p in self.pieces if p.lower <= x[0] < p.upper] or [self.pieces[0]]

    def _each(self, lengths: np.ndarray):
        """(piece, selection) over the flattened lengths."""
        x = np.log(np.maximum(np.asarray(lengths, dtype=np.float64), 1.0)).ravel()
        for p in self.pieces:
            sel = (x >= p.lower) & (x < p.upper)
            if sel.any():
                yield p, sel, x[sel]

    def _params(self, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.asarray(lengths, dtype=np.float64)
        u = np.empty(n.size)
        sigma = np.empty(n.size)
        for p, sel, x in self._each(n):
            u[sel], sigma[sel] = p.params(x)
        return u.reshape(n.shape), sigma.reshape(n.shape)

    def location(self, lengths: np.ndarray) -> np.ndarray:
        """u(n), the location of the unrelated scores of subjects of these lengths."""
        return self._params(lengths)[0]

    def scale(self, lengths: np.ndarray) -> np.ndarray:
        """sigma(n), their scale (1/lambda in local mode)."""
        return self._params(lengths)[1]

    def log_pvalue(self, scores: np.ndarray, lengths: np.ndarray,
                   spacing: float | np.ndarray = 1.0) -> np.ndarray:
        """ln P(S >= s | n) of one unrelated subject of length n (``spacing``: the score
        lattice, 1 for integer scores, 0 for continuous ones)."""
        s = np.asarray(scores, dtype=np.float64) - 0.5 * np.asarray(spacing, dtype=np.float64)
        n = np.asarray(lengths, dtype=np.float64)
        s, n = np.broadcast_arrays(s, n)
        flat = s.ravel()
        out = np.empty(flat.size)
        for p, sel, x in self._each(n):
            u, sigma = p.params(x)
            out[sel] = _log_upper(p.shape, (flat[sel] - u) / sigma)
        return np.minimum(out, 0.0).reshape(s.shape)

    def evalue(self, scores: np.ndarray, lengths: np.ndarray,
               spacing: float | np.ndarray = 1.0) -> np.ndarray:
        """``count * P(S >= s | n)``: the database sequences expected to score at least s
        against the query by chance, for subjects of these lengths."""
        return self.count * np.exp(self.log_pvalue(scores, lengths, spacing))

    def values(self, scores: np.ndarray, lengths: np.ndarray,
               spacing: float | np.ndarray = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`evalue`, the bit score ``log2(m n / P(S >= s | n))``) from one evaluation
        of the tail: in local mode Karlin and Altschul's ``(lambda S - ln K) / ln 2`` under
        the fitted lambda and K (m: the query's length, or 1 when the fit was not told it)."""
        log_p = self.log_pvalue(scores, lengths, spacing)
        m = float(self.query_length or 1)
        n = np.maximum(np.asarray(lengths, dtype=np.float64), 1.0)
        return self.count * np.exp(log_p), (np.log(m * n) - log_p) / math.log(2.0)

    def threshold(self, evalue: float, lengths: np.ndarray,
                  spacing: float = 1.0) -> np.ndarray:
        """The smallest score with an E-value of at most ``evalue`` for each length (the
        floor a scanner may use: a subject below every length's floor cannot be reported)."""
        p_value = min(max(evalue / self.count, 1e-300), 1.0)
        n = np.asarray(lengths, dtype=np.float64)
        out = np.full(n.size, -np.inf)
        for p, sel, x in self._each(n):
            if p_value < 1.0:
                u, sigma = p.params(x)
                out[sel] = u + sigma * _upper_quantile(p.shape, p_value) + 0.5 * spacing
        return out.reshape(n.shape)


# ---- fitting ---------------------------------------------------------------------------------

def _bases(mode: str, x: np.ndarray, query_length: int | None
           ) -> tuple[Basis, Basis]:
    if not x.size:  # no subject to fit (a database of empty records): a constant
        return Basis(0.0, 1.0, False), Basis(0.0, 1.0, False)
    center = float(np.median(x))
    spread = float(np.std(x)) or 1.0
    slope = spread > 1e-3 and np.ptp(x) > 0.05
    spread = spread if slope else 1.0
    if mode == "local":
        return Basis(center, spread, slope), Basis(center, spread, False)
    if mode == "semiglobal" or not slope:
        return Basis(center, spread, slope), Basis(center, spread, slope)
    lo, hi = np.quantile(x, [0.02, 0.98])
    inner = max(0, min(8, x.size // 150))
    knots = list(np.quantile(x, np.linspace(0, 1, inner + 2)[1:-1]))
    if query_length:
        knots.append(math.log(query_length))
    knots = tuple(sorted({round(float(t), 6) for t in knots if lo < t < hi}))
    # the scale is held constant beyond the 2 % and 98 % length quantiles: the extreme
    # lengths, a few scores each, would otherwise extrapolate it (short subjects' global
    # scores are mostly their end gap, with a small spread)
    return (Basis(center, spread, True, knots, linear=True, bounds=(x.min(), x.max())),
            Basis(center, spread, True, knots, bounds=(lo, hi)))


def _robust_start(s: np.ndarray, group: np.ndarray, gbl: np.ndarray, gbs: np.ndarray,
                  k: float) -> np.ndarray:
    """The first theta: least squares of the location, three rounds without residuals beyond
    median + 3 MAD, then the moments of the kept residuals as the family's location and
    scale (:func:`likelihood.robust_start`)."""
    return kernels().robust_start(s, group, gbl, gbs.shape[1], _digamma(k), _trigamma(k))


def _fit_shape(k: float, s: np.ndarray, group: np.ndarray, gbl: np.ndarray, gbs: np.ndarray,
               trim: float, censor: float, *, rounds: int = 20
               ) -> tuple[np.ndarray, float, tuple]:
    """Maximum likelihood for one shape k, the cut sets recomputed until they are stable:
    (theta, minus log-likelihood, the last design: kept, observed, cut_low, cut_high).
    Score j's subject has the length of group ``group[j]``, whose regressors are row
    ``group[j]`` of ``gbl`` (location) and ``gbs`` (log-scale)."""
    theta = _robust_start(s, group, gbl, gbs, k)
    theta, value, *design = kernels().fit_shape(
        float(k), s, group, gbl, gbs, float(trim), _upper_quantile(k, trim),
        _upper_quantile(k, 1.0 - censor), np.ascontiguousarray(theta, dtype=np.float64),
        rounds)
    return theta, value, tuple(design)


def _pieces(mode: str, x: np.ndarray, query_length: int | None, need: int
            ) -> list[tuple[float, float, float]]:
    """(lower, upper, shape) of each length range fitted apart. Global mode: subjects at
    least FAR times shorter or longer than the query, whose best global alignment is the
    best placement of the shorter sequence in the longer (a maximum over placements: k =
    2, close to Gumbel), and those of similar length (k = 8); a range with fewer than
    ``need`` // 5 subjects (at least 30) joins its neighbour and takes its shape."""
    k = SHAPE[mode]
    if mode != "global" or not query_length:
        return [(-math.inf, math.inf, k)]
    mid = math.log(query_length)
    edges = [-math.inf, mid - math.log(FAR), mid + math.log(FAR), math.inf]
    ranges = [[edges[i], edges[i + 1], shape]
              for i, shape in enumerate((FAR_SHAPE, k, FAR_SHAPE))]
    counts = [int(np.sum((x >= lo) & (x < hi))) for lo, hi, _ in ranges]
    small = max(need // 5, 30)
    while len(ranges) > 1 and min(counts) < small:
        i = int(np.argmin(counts))
        j = i + 1 if i == 0 else i - 1 if i == len(ranges) - 1 else \
            (i - 1 if counts[i - 1] >= counts[i + 1] else i + 1)
        lo, hi = min(ranges[i][0], ranges[j][0]), max(ranges[i][1], ranges[j][1])
        shape = ranges[j][2]
        keep = min(i, j)
        ranges[keep] = [lo, hi, shape]
        counts[keep] = counts[i] + counts[j]
        del ranges[max(i, j)], counts[max(i, j)]
    return [tuple(r) for r in ranges]


@dataclass(frozen=True)
class Part:
    """One piece of a layout: the subjects of ln(length) in [lower, upper) (``select``), the
    family's shape there, the bases, and the subjects' length groups (``group[j]``: the row
    of ``gbl`` and ``gbs``, the bases at that length)."""

    lower: float
    upper: float
    shape: float
    select: np.ndarray = field(repr=False)
    location_basis: Basis
    scale_basis: Basis
    group: np.ndarray = field(repr=False)
    gbl: np.ndarray = field(repr=False)
    gbs: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class Layout:
    """What a fit needs of its subjects' lengths alone (the same for every query fitted on
    one sample, except in global mode, whose pieces depend on the query's length)."""

    mode: str
    size: int
    parts: tuple[Part, ...]
    reference_length: float  # the median length (for lambda and K in reports)

    @classmethod
    def of(cls, lengths: np.ndarray, mode: str, query_length: int | None = None,
           need: int = MIN_SUBJECTS) -> Layout:
        """The layout of subjects of these ``lengths`` (all positive)."""
        x = np.log(np.asarray(lengths, dtype=np.float64))
        parts = []
        for lower, upper, k in _pieces(mode, x, query_length, need):
            select = np.flatnonzero((x >= lower) & (x < upper))
            xs = x[select]
            location_basis, scale_basis = _bases(mode, xs, query_length)
            values, group = np.unique(xs, return_inverse=True)
            parts.append(Part(lower, upper, k, select, location_basis, scale_basis,
                              group.astype(np.int64).ravel(), location_basis.matrix(values),
                              scale_basis.matrix(values)))
        return cls(mode, int(x.size), tuple(parts),
                   float(np.exp(np.median(x))) if x.size else 1.0)


def fit_or_reason(scores: np.ndarray, lengths: np.ndarray, mode: str = "local", *,
                  query_length: int | None = None, count: int | None = None,
                  min_subjects: int = MIN_SUBJECTS, trim: float = TRIM,
                  censor: float = CENSOR, sample: int | None = SAMPLE,
                  layout: Layout | None = None) -> tuple[Fit | None, str]:
    """(the fit of one query's ``scores`` against subjects of ``lengths``, ""), or
    (None, why not). See the module's notes for the model.

    ``scores``: every database sequence's score against this query (integers or the
    composition-adjusted effective scores), or a sample of them; ``count``: the number of
    sequences E-values count (default: ``len(scores)``); ``query_length`` splits global
    mode's lengths and gives bit scores; ``sample``: fit at most this many evenly spaced
    scores (None: all); ``layout``: the :class:`Layout` of these lengths (a sample fitted
    for many queries), built here when None or not of these scores (some were not finite or
    had no length)."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not 0 < trim < 0.5 or not 0 <= censor < 0.5:
        raise InputError(f"trim must be in (0, 0.5) and censor in [0, 0.5), got {trim}, "
                         f"{censor}")
    s = np.asarray(scores, dtype=np.float64).ravel()
    n = np.asarray(lengths, dtype=np.float64).ravel()
    if s.size != n.size:
        raise InputError(f"{s.size} scores for {n.size} subject lengths")
    total = int(count) if count is not None else s.size
    good = np.isfinite(s) & (n > 0)
    s, n = s[good], n[good]
    if sample is not None and s.size > sample:
        pick = np.round(np.linspace(0, s.size - 1, int(sample))).astype(np.int64)
        s, n = s[pick], n[pick]
    need = max(int(min_subjects), 10)
    if s.size < need:
        return None, (f"too few subjects for an empirical fit: {s.size} scored, at least "
                      f"{need} needed")
    if np.ptp(s) == 0:
        return None, "the scores do not vary: no distribution to fit"
    if layout is None or layout.size != s.size or layout.mode != mode:
        layout = Layout.of(n, mode, query_length, need)
    pieces, used, censored = [], 0, 0
    for part in layout.parts:
        ss = s[part.select]
        k = part.shape
        theta, value, (kept, observed, _, _) = _fit_shape(k, ss, part.group, part.gbl,
                                                          part.gbs, trim, censor)
        if not np.isfinite(value) or not np.all(np.isfinite(theta)):
            return None, "the empirical fit did not converge"
        p = part.gbl.shape[1]
        pieces.append(Piece(part.lower, part.upper, k, part.location_basis, part.scale_basis,
                            theta[:p], theta[p:]))
        used += int(kept.sum())
        censored += int(kept.sum() - observed.sum())
    if used < need:
        return None, (f"too few unrelated subjects for an empirical fit: {used} after "
                      f"leaving out the high scores, at least {need} needed")
    ref = layout.reference_length
    fit = Fit(mode=mode, count=total, used=used, trimmed=int(s.size - used),
              censored=censored, pieces=tuple(pieces), query_length=query_length,
              reference_length=ref)
    u, sigma = fit.location(np.array([ref]))[0], fit.scale(np.array([ref]))[0]
    lam = 1.0 / sigma
    kk = None
    if mode == "local" and fit.shape == 1.0:
        log_k = lam * u - math.log(float(query_length or 1) * ref)
        kk = math.exp(log_k) if log_k < 700 else None  # K is for reports; None past a float
    return replace(fit, lambda_=lam, K=kk), ""


def fit(scores: np.ndarray, lengths: np.ndarray, mode: str = "local", **options: object
        ) -> Fit | None:
    """:func:`fit_or_reason` without the reason: the Fit, or None where no fit is possible
    (the caller then prints NA or uses the tables)."""
    return fit_or_reason(scores, lengths, mode, **options)[0]
