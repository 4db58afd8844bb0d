"""The empirical fit's compiled core (``empirical.py`` holds the model): the log-gamma
family's tails, the censored negative log-likelihood with its gradient, BFGS, the robust
start and the rounds of censoring, as Numba kernels that release the GIL, so the fits of a
batch's queries run on every core at once.

The family: ``Z = -ln G``, G ~ Gamma(k, 1), upper tail ``P(Z > z) = P(k, e^-z)`` (the
regularised lower incomplete gamma function); k = 1 is the Gumbel distribution. Every
kernel works on plain arrays (no SciPy: the small linear algebra is written out).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engines.cpu.compile import SECONDS, cold, notice

#: the clip of standardised scores (beyond it every tail is 0 or 1 in float64)
Z_LOW, Z_HIGH = -50.0, 700.0
TINY = 1e-300


@njit(cache=True, nogil=True)
def log_gammas(k: float, x: float) -> tuple[float, float]:
    """(ln P(k, x), ln Q(k, x)), the regularised lower and upper incomplete gamma functions:
    below x = k + 1 the power series ``P = x^k e^-x / Gamma(k+1) sum_n x^n / ((k+1)..(k+n))``,
    above it the continued fraction of Q (modified Lentz); each function's complement is
    taken where it is not small."""
    if x < k + 1.0:
        total = 1.0
        term = 1.0
        for n in range(1, 1000):
            term *= x / (k + n)
            total += term
            if term <= 1e-16 * total:
                break
        lp = k * math.log(max(x, TINY)) - x - math.lgamma(k + 1.0) + math.log(total)
        return lp, math.log(max(-math.expm1(lp), TINY))
    b = x + 1.0 - k
    c = 1.0 / TINY
    d = 1.0 / b
    h = d
    for n in range(1, 1000):
        a = -n * (n - k)
        b += 2.0
        d = a * d + b
        if abs(d) < TINY:
            d = TINY
        c = b + a / c
        if abs(c) < TINY:
            c = TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= 1e-15:
            break
    lq = k * math.log(x) - x - math.lgamma(k) + math.log(h)
    return math.log(max(-math.expm1(lq), TINY)), lq


@njit(cache=True, nogil=True)
def log_upper(k: float, z: float) -> float:
    """ln P(Z > z)."""
    x = math.exp(-min(max(z, Z_LOW), Z_HIGH))
    if k == 1.0:
        return math.log(-math.expm1(-x))
    return log_gammas(k, x)[0]


@njit(cache=True, nogil=True)
def log_lower(k: float, z: float) -> float:
    """ln P(Z <= z)."""
    x = math.exp(-min(max(z, Z_LOW), Z_HIGH))
    if k == 1.0:
        return -x
    return log_gammas(k, x)[1]


@njit(cache=True, nogil=True)
def log_density(k: float, z: float, lgamma_k: float) -> float:
    """ln of Z's density, ``-k z - e^-z - ln Gamma(k)``."""
    z = min(max(z, Z_LOW), Z_HIGH)
    return -k * z - math.exp(-z) - lgamma_k


@njit(cache=True, nogil=True)
def log_uppers(k: float, z: np.ndarray) -> np.ndarray:
    """:func:`log_upper` of each element."""
    out = np.empty(z.size)
    flat = z.ravel()
    for i in range(flat.size):
        out[i] = log_upper(k, flat[i])
    return out.reshape(z.shape)


@njit(cache=True, nogil=True)
def log_gammas_of(k: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`log_gammas` of each element."""
    flat = x.ravel()
    p = np.empty(flat.size)
    q = np.empty(flat.size)
    for i in range(flat.size):
        p[i], q[i] = log_gammas(k, flat[i])
    return p.reshape(x.shape), q.reshape(x.shape)


@njit(cache=True, nogil=True)
def upper_quantile(k: float, p: float) -> float:
    """z with P(Z > z) = p."""
    if k == 1.0:
        return -math.log(-math.log1p(-p))
    lo, hi = Z_LOW, Z_HIGH
    target = math.log(p)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if log_upper(k, mid) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True, nogil=True)
def _params(theta: np.ndarray, gbl: np.ndarray, gbs: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, ln sigma, sigma) of each length group."""
    p = gbl.shape[1]
    q = gbs.shape[1]
    groups = gbl.shape[0]
    u = np.empty(groups)
    log_sigma = np.empty(groups)
    sigma = np.empty(groups)
    for g in range(groups):
        total = 0.0
        for i in range(p):
            total += gbl[g, i] * theta[i]
        u[g] = total
        total = 0.0
        for i in range(q):
            total += gbs[g, i] * theta[p + i]
        log_sigma[g] = min(max(total, -30.0), 30.0)
        sigma[g] = math.exp(log_sigma[g])
    return u, log_sigma, sigma


@njit(cache=True, nogil=True)
def negative_loglik(theta: np.ndarray, k: float, s: np.ndarray, group: np.ndarray,
                    state: np.ndarray, cut: np.ndarray, gbl: np.ndarray, gbs: np.ndarray,
                    gcut_high: np.ndarray, gweight: np.ndarray, grad: np.ndarray) -> float:
    """Minus the log-likelihood; its gradient goes to ``grad``.

    Subjects come in length groups (``group[j]``; row g of ``gbl`` and ``gbs``: the
    regressors of location and log-scale at that length). Score j is observed (``state``
    0: its density), censored below ``cut[j]`` (-1: its lower probability) or above it
    (+1: its upper probability). Group g adds ``gweight[g]`` unrelated scores censored above
    ``gcut_high[g]``: the scores a fit leaves out at the top, replaced by the number an
    unrelated sample has there. +inf where a value overflows."""
    p = gbl.shape[1]
    q = gbs.shape[1]
    groups = gbl.shape[0]
    lgk = math.lgamma(k)
    gumbel = k == 1.0
    u, log_sigma, sigma = _params(theta, gbl, gbs)
    g_u = np.zeros(groups)  # d loglik / d u of each group
    g_ls = np.zeros(groups)  # d loglik / d ln sigma
    total = 0.0
    for g in range(groups):
        w = gweight[g]
        if w > 0:
            zt = (gcut_high[g] - u[g]) / sigma[g]
            if gumbel:
                et = math.exp(-min(max(zt, Z_LOW), Z_HIGH))
                em = math.expm1(-et)
                log_s = math.log(-em)
                slope = et * (1.0 + em) / em  # -f / S
            else:
                log_s = log_upper(k, zt)
                slope = -math.exp(min(log_density(k, zt, lgk) - log_s, 700.0))
            total += w * log_s
            g_u[g] -= w * slope / sigma[g]
            g_ls[g] -= w * slope * zt
    for j in range(s.size):
        g = group[j]
        side = state[j]
        if side == 0:
            z = min(max((s[j] - u[g]) / sigma[g], Z_LOW), Z_HIGH)
            e = math.exp(-z)
            total += -k * z - e - lgk - log_sigma[g]
            dz = e - k  # d ln f / dz
            g_u[g] -= dz / sigma[g]
            g_ls[g] -= dz * z + 1.0
        else:
            zc = (cut[j] - u[g]) / sigma[g]
            if gumbel and side < 0:
                e = math.exp(-min(max(zc, Z_LOW), Z_HIGH))
                total -= e
                slope = e  # f / F
            else:
                log_p = log_lower(k, zc) if side < 0 else log_upper(k, zc)
                total += log_p
                # d ln F / dz = f / F below, d ln S / dz = -f / S above
                slope = side * -math.exp(min(log_density(k, zc, lgk) - log_p, 700.0))
            g_u[g] -= slope / sigma[g]
            g_ls[g] -= slope * zc
    grad[:] = 0.0
    for g in range(groups):
        for i in range(p):
            grad[i] -= gbl[g, i] * g_u[g]
        for i in range(q):
            grad[p + i] -= gbs[g, i] * g_ls[g]
    if not math.isfinite(total):
        return math.inf
    for i in range(p + q):
        if not math.isfinite(grad[i]):
            return math.inf
    return -total


@njit(cache=True, nogil=True)
def _dot(a: np.ndarray, b: np.ndarray) -> float:
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


@njit(cache=True, nogil=True)
def _max_abs(a: np.ndarray) -> float:
    best = 0.0
    for i in range(a.size):
        best = max(best, abs(a[i]))
    return best


@njit(cache=True, nogil=True)
def minimise(theta: np.ndarray, k: float, s: np.ndarray, group: np.ndarray,
             state: np.ndarray, cut: np.ndarray, gbl: np.ndarray, gbs: np.ndarray,
             gcut_high: np.ndarray, gweight: np.ndarray, inverse_hessian: np.ndarray,
             iterations: int = 200) -> tuple[np.ndarray, float]:
    """BFGS on :func:`negative_loglik` with a backtracking (Armijo) line search. The inverse
    Hessian is updated in place: an empty one (all zeros) starts as a short gradient step
    and then at the scale that step measures; one from a previous minimisation of a
    similar function (the previous round of censoring) goes on from where it was. Returns
    (theta, value)."""
    m = theta.size
    theta = theta.copy()
    grad = np.empty(m)
    new_grad = np.empty(m)
    value = negative_loglik(theta, k, s, group, state, cut, gbl, gbs, gcut_high, gweight,
                            grad)
    if not math.isfinite(value):
        return theta, value
    h = inverse_hessian
    first = _max_abs(h.ravel()) == 0.0
    if first:
        _scaled_identity(h, 1.0 / max(_max_abs(grad), 1.0))
    direction = np.empty(m)
    trial = np.empty(m)
    ds = np.empty(m)
    dg = np.empty(m)
    hy = np.empty(m)
    for _ in range(iterations):
        for i in range(m):
            direction[i] = -_dot(h[i], grad)
        slope = _dot(grad, direction)
        if slope >= 0:  # not a descent direction: restart from the gradient
            _scaled_identity(h, 1.0)
            for i in range(m):
                direction[i] = -grad[i]
            slope = _dot(grad, direction)
        new_value = _line_search(theta, direction, value, slope, k, s, group, state, cut,
                                 gbl, gbs, gcut_high, gweight, trial, new_grad)
        if not math.isfinite(new_value):
            return theta, value
        for i in range(m):
            ds[i] = trial[i] - theta[i]
            dg[i] = new_grad[i] - grad[i]
            theta[i] = trial[i]
            grad[i] = new_grad[i]
        improvement = value - new_value
        value = new_value
        sy = _dot(ds, dg)
        if sy > 1e-12:
            if first:
                _scaled_identity(h, sy / _dot(dg, dg))
                first = False
            rho = 1.0 / sy
            # H' = (I - rho s y^T) H (I - rho y s^T) + rho s s^T, H symmetric
            for i in range(m):
                hy[i] = _dot(h[i], dg)
            yhy = _dot(dg, hy)
            for i in range(m):
                for j in range(m):
                    h[i, j] += -rho * (ds[i] * hy[j] + hy[i] * ds[j]) \
                        + (rho * rho * yhy + rho) * ds[i] * ds[j]
        if _max_abs(grad) < 1e-6 or _max_abs(ds) < 1e-9 \
                or improvement < 1e-13 * max(1.0, abs(value)):
            break
    return theta, value


@njit(cache=True, nogil=True)
def _scaled_identity(h: np.ndarray, scale: float) -> None:
    for i in range(h.shape[0]):
        for j in range(h.shape[1]):
            h[i, j] = scale if i == j else 0.0


@njit(cache=True, nogil=True)
def _line_search(theta: np.ndarray, direction: np.ndarray, value: float, slope: float,
                 k: float, s: np.ndarray, group: np.ndarray, state: np.ndarray,
                 cut: np.ndarray, gbl: np.ndarray, gbs: np.ndarray, gcut_high: np.ndarray,
                 gweight: np.ndarray, trial: np.ndarray, grad: np.ndarray) -> float:
    """Backtracking (Armijo): the first of steps 1, 1/2, 1/4, ... along ``direction`` that
    decreases the value enough; ``trial`` and ``grad`` get its point and gradient. +inf
    when none above 1e-12 does."""
    step = 1.0
    while step >= 1e-12:
        for i in range(theta.size):
            trial[i] = theta[i] + step * direction[i]
        new_value = negative_loglik(trial, k, s, group, state, cut, gbl, gbs, gcut_high,
                                    gweight, grad)
        if math.isfinite(new_value) and new_value <= value + 1e-4 * step * slope:
            return new_value
        step *= 0.5
    return math.inf


@njit(cache=True, nogil=True)
def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with a x = b (Gaussian elimination with partial pivoting; a small system)."""
    n = b.size
    a = a.copy()
    x = b.copy()
    for c in range(n):
        pivot = c
        for r in range(c + 1, n):
            if abs(a[r, c]) > abs(a[pivot, c]):
                pivot = r
        if pivot != c:
            for j in range(n):
                a[c, j], a[pivot, j] = a[pivot, j], a[c, j]
            x[c], x[pivot] = x[pivot], x[c]
        if a[c, c] == 0.0:
            continue
        for r in range(c + 1, n):
            f = a[r, c] / a[c, c]
            if f != 0.0:
                for j in range(c, n):
                    a[r, j] -= f * a[c, j]
                x[r] -= f * x[c]
    for c in range(n - 1, -1, -1):
        total = x[c]
        for j in range(c + 1, n):
            total -= a[c, j] * x[j]
        x[c] = total / a[c, c] if a[c, c] != 0.0 else 0.0
    return x


@njit(cache=True, nogil=True)
def _select(a: np.ndarray, k: int) -> float:
    """The k-th smallest of ``a`` (0-based), reordering ``a`` (quickselect, Hoare's
    partition around the middle element)."""
    lo, hi = 0, a.size - 1
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            break
    return a[k]


@njit(cache=True, nogil=True)
def _median(a: np.ndarray) -> float:
    """The median of ``a`` (reordered)."""
    n = a.size
    upper = _select(a, n // 2)
    if n % 2:
        return upper
    lower = a[0]
    for i in range(1, n // 2):  # the largest of the lower half
        lower = max(lower, a[i])
    return 0.5 * (lower + upper)


@njit(cache=True, nogil=True)
def robust_start(s: np.ndarray, group: np.ndarray, gbl: np.ndarray, scale_columns: int,
                 digamma_k: float, trigamma_k: float) -> np.ndarray:
    """The first theta: least squares of the location, three rounds without residuals
    beyond median + 3 MAD, then the moments of the kept residuals as the family's location
    (E[Z] = -digamma(k)) and scale (Var Z = trigamma(k)); the log-scale's slopes start at 0."""
    n = s.size
    p = gbl.shape[1]
    keep = np.ones(n, dtype=np.bool_)
    coef = np.zeros(p)
    r = np.empty(n)
    scratch = np.empty(n)
    for _ in range(4):
        gram = np.zeros((p, p))
        rhs = np.zeros(p)
        for j in range(n):
            if keep[j]:
                g = group[j]
                for a in range(p):
                    rhs[a] += gbl[g, a] * s[j]
                    for b in range(p):
                        gram[a, b] += gbl[g, a] * gbl[g, b]
        trace = 0.0
        for a in range(p):
            trace += gram[a, a]
        for a in range(p):
            gram[a, a] += 1e-9 * trace
        coef = _solve(gram, rhs)
        kept = 0
        for j in range(n):
            r[j] = s[j] - _dot(gbl[group[j]], coef)
            if keep[j]:
                scratch[kept] = r[j]
                kept += 1
        med = _median(scratch[:kept])
        for j in range(kept):
            scratch[j] = abs(scratch[j] - med)
        mad = 1.4826 * _median(scratch[:kept])
        if mad == 0.0:
            mad = 1.0
        for j in range(n):
            keep[j] = r[j] <= med + 3.0 * mad
    total = 0.0
    kept = 0
    for j in range(n):
        if keep[j]:
            total += r[j]
            kept += 1
    mean = total / max(kept, 1)
    total = 0.0
    for j in range(n):
        if keep[j]:
            total += (r[j] - mean) ** 2
    sd = math.sqrt(total / max(kept, 1))
    if sd == 0.0:
        sd = 1.0
    sigma = sd / math.sqrt(trigamma_k)
    theta = np.zeros(p + scale_columns)
    for a in range(p):
        theta[a] = coef[a]
    theta[0] += mean + digamma_k * sigma
    theta[p] = math.log(sigma)
    return theta


@njit(cache=True, nogil=True)
def fit_shape(k: float, s: np.ndarray, group: np.ndarray, gbl: np.ndarray, gbs: np.ndarray,
              trim: float, z_high: float, z_low: float, theta: np.ndarray, rounds: int = 20
              ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Maximum likelihood for one shape k, the censoring recomputed until it is stable (at
    most 1 in 1,000 scores, and 3 at least, changed sides): scores above ``z_high`` of the
    current fit are cut (replaced by ``trim / (1 - trim)`` unrelated scores per kept score,
    censored above their cut), those below ``z_low`` count as below it. Returns (theta,
    minus log-likelihood, kept, observed, cut_low, cut_high), the cuts of each score."""
    n = s.size
    groups = gbl.shape[0]
    above = trim / (1.0 - trim)
    value = math.inf
    kept = np.zeros(n, dtype=np.bool_)
    observed = np.zeros(n, dtype=np.bool_)
    low = np.empty(groups)
    high = np.empty(groups)
    have = False
    h = np.zeros((theta.size, theta.size))
    for _ in range(rounds):
        u, _, sigma = _params(theta, gbl, gbs)
        new_kept = np.empty(n, dtype=np.bool_)
        new_observed = np.empty(n, dtype=np.bool_)
        for j in range(n):
            g = group[j]
            z = (s[j] - u[g]) / sigma[g]
            new_kept[j] = z <= z_high
            new_observed[j] = new_kept[j] and z >= z_low
        if have:
            changed = 0
            for j in range(n):
                changed += (new_kept[j] != kept[j]) + (new_observed[j] != observed[j])
            if changed <= max(3, n // 1000):
                break
        kept, observed, have = new_kept, new_observed, True
        for g in range(groups):
            low[g] = u[g] + sigma[g] * z_low
            high[g] = u[g] + sigma[g] * z_high
        idx = np.flatnonzero(kept)
        state = np.empty(idx.size, dtype=np.int8)
        cut = np.empty(idx.size)
        weight = np.zeros(groups)
        for i in range(idx.size):
            g = group[idx[i]]
            state[i] = 0 if observed[idx[i]] else -1
            cut[i] = low[g]
            weight[g] += above
        theta, value = minimise(theta, k, s[idx], group[idx], state, cut, gbl, gbs, high,
                                weight, h)
    return theta, value, kept, observed, low[group], high[group]


def announce() -> bool:
    """Say once, on stderr, that the fit's kernels compile (a machine's first fit); whether
    it did."""
    return notice([(fit_shape, None, SECONDS["fit"])])


def compiled() -> bool:
    """Whether the fit's kernels are compiled or cached (no compilation on the next call)."""
    return not cold(fit_shape, None)
