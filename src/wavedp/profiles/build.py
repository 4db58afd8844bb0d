"""A profile built from a query's hits: the next round's PSSM of an iterative search.

The method is PSI-BLAST's (Altschul et al. 1997, Nucleic Acids Res. 25:3389), written out:

1. **Query-anchored alignment.** Each included hit's exact alignment places its residues on
   the query's positions (a gap where the hit skips a query position; the hit's own
   insertions are left out); the query is a row itself.
2. **Sequence weights** (Henikoff and Henikoff 1994, J. Mol. Biol. 243:574), position-based:
   at a column with r distinct residues, a row holding a residue that n rows hold gains
   1 / (r n); a row's weight is its gains summed over the columns, the weights normalised
   to 1. Near copies share a weight; a lone relative keeps its own.
3. **Observed frequencies** f(i, a): the weights of the rows holding a at column i over the
   weights of the rows holding any residue there.
4. **Pseudocounts** from the substitution matrix: g(i, a) = sum_b f(i, b) q(a, b) / p(b),
   q the matrix's target frequencies (``p_a p_b exp(lambda s_ab)`` scaled to the background's
   margins) and p Robinson and Robinson's background; mixed as
   Q(i, a) = (alpha f + beta g) / (alpha + beta), alpha the alignment's mean number of
   distinct residues a column less one (its independent observations), beta = BETA.
5. **Scores** s(i, a) = round(ln(Q(i, a) / p(a)) / lambda): the matrix's own units (its
   ungapped lambda), so the gaps keep their meaning. With the query alone, alpha is 0 and
   the profile is the matrix's row of each query letter (to the rounding of its targets).

PSI-BLAST sets alpha per column block and purges rows 94% identical to the query; here the
weights take care of redundancy and alpha is the alignment's. jackhmmer and HH-suite mix
with Dirichlet priors or an N_eff-dependent weight; the substitution-matrix mixing is
chosen for its continuity with the matrix scores the first round searched with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..alignment import Alignment
from ..errors import InputError
from ..scoring import Scoring
from .pssm import LETTERS, Profile

#: PSI-BLAST's pseudocount weight (beta, Altschul et al. 1997)
BETA = 10.0


def columns(query: str, hits: Sequence[Alignment], scoring: Scoring) -> np.ndarray:
    """The query-anchored alignment: int16 rows (the query, then each hit) x query
    positions, each the residue's index in :data:`LETTERS`, -1 for a gap or a letter outside
    them, -2 where the hit does not reach. Each hit needs its CIGAR and its target text."""
    index = np.full(256, -1, np.int16)
    for k, letter in enumerate(LETTERS):
        index[ord(letter)] = index[ord(letter.lower())] = k
    if not hits and not query:
        raise InputError("a profile needs a query")
    m = len(query)
    rows = np.full((len(hits) + 1, m), -2, np.int16)
    rows[0] = index[np.frombuffer(query.encode("ascii"), np.uint8)]
    for r, hit in enumerate(hits, 1):
        if hit.cigar is None or hit.target is None or hit.query_start is None:
            raise InputError(f"hit {hit.target_id!r}: a profile is built from alignments "
                             "(CIGAR and target), not scores only")
        target = index[np.frombuffer(hit.target.encode("ascii"), np.uint8)]
        for length, op, i, j in hit.placed_ops():  # D: residues outside the query's frame
            if op in "=XM":
                rows[r, i:i + length] = target[j:j + length]
            elif op == "I":  # query positions against a gap
                rows[r, i:i + length] = -1
    return rows


def counts(rows: np.ndarray) -> np.ndarray:
    """Each query position's count of each letter among ``rows`` (positions x letters)."""
    r, i = np.nonzero(rows >= 0)
    found = np.bincount(i * len(LETTERS) + rows[r, i], minlength=rows.shape[1] * len(LETTERS))
    return found.reshape(rows.shape[1], len(LETTERS))


def weights(rows: np.ndarray) -> np.ndarray:
    """Henikoff and Henikoff's position-based weight of each row (summing to 1): each
    position gives a row holding letter a ``1 / (distinct letters x rows holding a)``."""
    r, i = np.nonzero(rows >= 0)
    n = counts(rows)
    distinct = np.count_nonzero(n, axis=1)
    share = 1.0 / (distinct[i] * n[i, rows[r, i]])
    out = np.bincount(r, weights=share, minlength=rows.shape[0])
    total = out.sum()
    return out / total if total > 0 else np.full(rows.shape[0], 1.0 / rows.shape[0])


def build(query: str, hits: Sequence[Alignment], scoring: Scoring, *,
          id: str = "profile", beta: float = BETA) -> Profile:
    """The profile of ``query`` from its included ``hits`` (their alignments), see the
    module's docstring; with PSI-BLAST's ASCII extras (weighted observed percentages,
    information per position, the weight of the observations against the pseudocounts)."""
    from ..stats.composition import Composition

    composition = Composition.of(scoring)  # the 20 amino acids (an InputError otherwise)
    held = composition.letters.tolist()
    pos = [held.index(scoring.alphabet.index(c)) for c in LETTERS]  # LETTERS' order
    p = composition.background[pos]
    q = composition.targets[np.ix_(pos, pos)]
    lam = composition.lambda_background
    rows = columns(query, hits, scoring)
    w = weights(rows)
    r, i = np.nonzero(rows >= 0)
    f = np.zeros((rows.shape[1], len(LETTERS)))
    np.add.at(f, (i, rows[r, i]), w[r])
    mass = f.sum(axis=1, keepdims=True)
    f = np.divide(f, mass, out=np.zeros_like(f), where=mass > 0)
    distinct = np.count_nonzero(counts(rows), axis=1)
    alpha = max(float(distinct[distinct > 0].mean()) - 1.0, 0.0) if (distinct > 0).any() \
        else 0.0
    g = f @ (q / p[None, :]).T  # g(i, a) = sum_b f(i, b) q(a, b) / p(b)
    mixed = (alpha * f + beta * g) / (alpha + beta)
    odds = np.log(np.maximum(mixed, 1e-300) / p[None, :]) / lam
    scores = np.floor(odds + 0.5).astype(np.int64)
    info = np.sum(mixed * np.log2(np.maximum(mixed, 1e-300) / p[None, :]), axis=1)
    percent = np.floor(f * 100.0 + 1e-9).astype(np.int64)
    weight = np.full(len(query), alpha / (alpha + beta))
    return Profile(query, scores, percent, info, weight, id=id)

