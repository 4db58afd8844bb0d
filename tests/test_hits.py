"""wavedp.local_hits: Waterman-Eggert non-intersecting local alignments (docs/design.md).

The oracle is a literal reference below (full matrices, a forbidden set). lalign36 (fasta3)
implements the same definition with Huang and Miller's SIM (``lsim4.c``), which differs in
three ways, so the random-pair checks are tie-aware:

- it never reports a hit scoring below gap_open (SIM adds a candidate only when its score is
  at least FASTA's -(f + g), which is wavedp's gap_open);
- it opens no gap from a cell whose diagonal value is negative or forbidden, so an insertion
  right after a deletion (or the reverse) is missed there: DNA +1/-5 with gaps 1/1 finds
  ``4=1I2D2=1D1=1D5=`` (score 7, as ssearch36 does) where lalign36's best is 6; the random
  pairs below use scorings where such steps never pay (2 gap_extend >= -mismatch);
- among co-optimal alignments it picks other paths (SIM's start-point classes and its
  Hirschberg traceback), so the pairs it forbids, and hence later hits, can differ.

On real pairs the scores are equal for the first 10 hits; on random pairs lalign36's hits are
checked to be Waterman-Eggert hits of its own choices (each scores the best of the recurrence
with its predecessors' pairs forbidden), and ours equal its scores until the paths first
differ, that hit included.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import DNA, PROTEIN, as_raw, problems, random_seq, related, rescore
from hypothesis import given, settings
from hypothesis import strategies as st

import wavedp
from wavedp.engines.common import NEG
from wavedp.engines.cpu import waterman_eggert as engine

QUERIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "allqueries.fasta"
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
needs_lalign = pytest.mark.skipif(shutil.which("lalign36") is None,
                                  reason="lalign36 (fasta3) absent")


def _matrices(q, t, sub, gap_open, gap_extend, forbidden):
    """H, E, F and the diagonal candidate D (None where forbidden), docs/design.md's local mode."""
    m, n = len(q), len(t)
    H = [[0] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]
    F = [[NEG] * (n + 1) for _ in range(m + 1)]
    D = [[None] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(E[i][j - 1] - gap_extend, H[i][j - 1] - gap_open)
            F[i][j] = max(F[i - 1][j] - gap_extend, H[i - 1][j] - gap_open)
            if (i, j) not in forbidden:
                D[i][j] = H[i - 1][j - 1] + int(sub[q[i - 1]][t[j - 1]])
            H[i][j] = max(0, E[i][j], F[i][j], NEG if D[i][j] is None else D[i][j])
    return H, E, F, D


def _best(H):
    """The end cell: maximum H, ties to the smallest i, then the smallest j."""
    best, end = 0, (0, 0)
    for i, row in enumerate(H):
        for j, h in enumerate(row):
            if h > best:
                best, end = h, (i, j)
    return best, end


def reference_hits(q, t, sub, gap_open, gap_extend, fraction=1.0, limit=None,
                   forbidden=()):
    """docs/design.md's hits, literally: (score, qs, qe, ts, te, ops) while the score is > 0 and
    >= fraction times the first, at most ``limit``."""
    forbidden = set(forbidden)
    hits = []
    while limit is None or len(hits) < limit:
        H, E, F, D = _matrices(q, t, sub, gap_open, gap_extend, forbidden)
        score, (i, j) = _best(H)
        if score <= 0 or (hits and score < fraction * hits[0][0]):
            break
        ei, ej, state, ops, pairs = i, j, "H", [], set()
        while i > 0 and j > 0:
            if state == "H":
                if H[i][j] == 0:
                    break
                if H[i][j] == D[i][j]:
                    ops.append("=" if q[i - 1] == t[j - 1] else "X")
                    pairs.add((i, j))
                    i, j = i - 1, j - 1
                else:
                    state = "E" if H[i][j] == E[i][j] else "F"
            elif state == "E":
                state = "H" if E[i][j] == H[i][j - 1] - gap_open else "E"
                ops.append("D")
                j -= 1
            else:
                state = "H" if F[i][j] == H[i - 1][j] - gap_open else "F"
                ops.append("I")
                i -= 1
        hits.append((score, i, ei, j, ej, "".join(reversed(ops))))
        forbidden |= pairs
    return hits


def paired(aln: wavedp.Alignment) -> set[tuple[int, int]]:
    """The (i, j) cells (1-based) an alignment pairs with = or X."""
    i, j, cells = aln.query_start, aln.target_start, set()
    for length, op in aln.ops():
        for _ in range(length):
            if op in "=X":
                i, j = i + 1, j + 1
                cells.add((i, j))
            elif op == "I":
                i += 1
            else:
                j += 1
    return cells


def check_hits(hits, query, target, scoring, fraction, limit):
    """Invariants of any result: ranked, above the cutoff, rescoreable, non-intersecting, the
    first equal to ``align``."""
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 and s >= fraction * scores[0] for s in scores)
    assert limit is None or len(hits) <= limit
    assert all(rescore(h, scoring) == h.score for h in hits)
    seen: set[tuple[int, int]] = set()
    for h in hits:
        cells = paired(h)
        assert not cells & seen
        seen |= cells
    first = wavedp.align(query, target, scoring, mode="local", device="cpu")
    if hits:
        assert hits[0] == first
    else:
        assert first.score == 0


def both_paths(query, target, scoring, **kw):
    """local_hits on the full-matrix path and on the linear-memory path (budget 0)."""
    full = wavedp.local_hits(query, target, scoring, device="cpu", **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "FULL_MATRIX_BYTES", 0)
        linear = wavedp.local_hits(query, target, scoring, device="cpu", **kw)
    assert linear == full
    return full


@settings(max_examples=200, deadline=None)
@given(problems(max_len=40), st.floats(0.05, 1.0), st.one_of(st.none(), st.integers(1, 8)))
def test_hits_equal_reference(problem, fraction, limit):
    query, target, scoring, _ = problem
    hits = both_paths(query, target, scoring, fraction=fraction, limit=limit)
    want = reference_hits(scoring.encode(query), scoring.encode(target), scoring.table,
                          scoring.gap_open, scoring.gap_extend, fraction, limit)
    assert [as_raw(h) for h in hits] == want
    check_hits(hits, query, target, scoring, fraction, limit)


def _repeats(rng, letters, n):
    """A pair sharing several mutated copies of two motifs: many strong, crossing hits."""
    a, b = random_seq(rng, letters, n // 4), random_seq(rng, letters, n // 5)
    q = a + random_seq(rng, letters, 7) + b + related(rng, a, letters, 0.2)
    t = related(rng, b, letters, 0.2) + a + random_seq(rng, letters, 9) + related(rng, a, letters)
    return q, t


@pytest.mark.parametrize("seed", range(4))
def test_long_pairs_cross_bands(seed):
    """Pairs longer than a full-matrix band (64 rows) and several linear-path bands."""
    rng = np.random.default_rng(seed)
    dna = seed % 2 == 0
    scoring = (wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2) if dna
               else wavedp.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1))
    query, target = _repeats(rng, DNA if dna else PROTEIN, 150)
    hits = both_paths(query, target, scoring, fraction=0.1, limit=8)
    want = reference_hits(scoring.encode(query), scoring.encode(target), scoring.table,
                          scoring.gap_open, scoring.gap_extend, 0.1, 8)
    assert [as_raw(h) for h in hits] == want
    check_hits(hits, query, target, scoring, 0.1, 8)


def test_recomputation_passes_an_unchanged_checkpoint():
    """A hit whose removal leaves the bottom row of its first band unchanged (ties) while it
    pairs cells further down: the next band must still be recomputed (16-row bands here)."""
    scoring = wavedp.Scoring(match=2, mismatch=-1, gap_open=3, gap_extend=1)
    query, target = "AAACACAAAACCAAAAACAAC", "CAAAAAACCCCAACAACCCCACAAAAAACACACCCCACAACAC"
    assert engine.band_rows(len(query), len(target), 0) == (16, False)
    hits = both_paths(query, target, scoring, fraction=1e-9, limit=15)
    want = reference_hits(scoring.encode(query), scoring.encode(target), scoring.table,
                          scoring.gap_open, scoring.gap_extend, 1e-9, 15)
    assert [as_raw(h) for h in hits] == want


def test_linear_memory_path_equals_full_matrix():
    rng = np.random.default_rng(11)
    query, target = _repeats(rng, PROTEIN, 900)
    hits = both_paths(query, target, PROT, fraction=1e-9, limit=30)
    assert len(hits) == 30
    check_hits(hits, query, target, PROT, 1e-9, 30)
    assert engine.band_rows(len(query), len(target), 0)[1] is False


def test_many_pairs_come_back_in_their_order():
    """The engine takes a call's pairs largest first over the cores; each pair's hits come
    back at its own place, as one pair at a time finds them."""
    rng = np.random.default_rng(3)
    seqs = [random_seq(rng, PROTEIN, int(n)) for n in rng.integers(5, 120, 12)]
    codes = [PROT.encode(s) for s in seqs]
    pairs = rng.integers(0, len(seqs), (40, 2))
    found = engine.hits(codes, codes, pairs, PROT.table, PROT.gap_open, PROT.gap_extend, 0.3,
                        4)
    assert len(found) == len(pairs)
    for (i, j), got in zip(pairs.tolist(), found, strict=True):
        want = engine.pair_hits(codes[i], codes[j], PROT.table, PROT.gap_open,
                                PROT.gap_extend, 0.3, 4)
        assert [h[:5] for h in got] == [h[:5] for h in want]
        assert all(np.array_equal(a[5], b[5]) for a, b in zip(got, want, strict=True))


def test_fraction_and_limit():
    rng = np.random.default_rng(5)
    query, target = _repeats(rng, PROTEIN, 200)
    every = wavedp.local_hits(query, target, PROT, fraction=1e-9, device="cpu")
    for fraction in (1.0, 0.5, 0.2):
        hits = wavedp.local_hits(query, target, PROT, fraction=fraction, device="cpu")
        assert hits == [h for h in every if h.score >= fraction * every[0].score]
    assert all(h.score == every[0].score
               for h in wavedp.local_hits(query, target, PROT, fraction=1, device="cpu"))
    assert wavedp.local_hits(query, target, PROT, fraction=1e-9, limit=3) == every[:3]
    assert wavedp.local_hits("", target, PROT) == []
    assert wavedp.local_hits("WWW", "PPP", PROT) == []  # best score 0: no hit
    from wavedp.dbsearch import local_hits

    assert local_hits is wavedp.local_hits


@pytest.mark.parametrize("fraction", [0, -0.5, 1.5, float("nan"), True, "0.5", None])
def test_bad_fraction(fraction):
    with pytest.raises(wavedp.InputError, match=r"^fraction must be a number in \(0, 1\]") as e:
        wavedp.local_hits("ACD", "ACD", PROT, fraction=fraction)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("kwargs", [{"limit": 0}, {"limit": 2.5}, {"limit": True},
                                    {"device": "tpu"}])
def test_bad_arguments(kwargs):
    with pytest.raises(wavedp.InputError):
        wavedp.local_hits("ACD", "ACD", PROT, **kwargs)


def test_bad_scoring():
    with pytest.raises(wavedp.InputError, match="Scoring"):
        wavedp.local_hits("ACD", "ACD", "BLOSUM62")


def lalign(query: str, target: str, args: list[str], workdir: Path) -> list[tuple]:
    """lalign36's first 10 hits: (score, frozenset of the (i, j) it pairs), from its
    ``-m 9C`` table (an0 .. aln_code; its CIGAR's D consumes the query, I the target)."""
    (workdir / "q.fa").write_text(f">q\n{query}\n")
    (workdir / "t.fa").write_text(f">t\n{target}\n")
    out = subprocess.run(["lalign36", *args, "-K", "10", "-E", "1e9", "-m", "9C", "q.fa",
                          "t.fa"], cwd=workdir, capture_output=True, text=True,
                         check=True).stdout
    table = out.split("The best", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    hits = []
    for line in table:
        cols = line.split()
        i, j = int(cols[-12]) - 1, int(cols[-8]) - 1
        cells = set()
        for length, op in re.findall(r"(\d+)([MID])", cols[-1]):
            for _ in range(int(length)):
                if op == "M":
                    i, j = i + 1, j + 1
                    cells.add((i, j))
                elif op == "D":
                    i += 1
                else:
                    j += 1
        hits.append((int(cols[-14]), frozenset(cells)))
    return hits


def lalign_args(scoring: wavedp.Scoring) -> list[str]:
    gaps = ["-f", str(-(scoring.gap_open - scoring.gap_extend)), "-g", str(-scoring.gap_extend)]
    if scoring.is_dna:
        return ["-n", "-3", "-r", f"+{scoring.match}/{scoring.mismatch}", *gaps]
    return ["-s", {"BLOSUM62": "BL62", "BLOSUM50": "BL50"}[scoring.matrix], *gaps]


def ours(query, target, scoring) -> list[tuple]:
    """Our first 10 hits as lalign36 would list them (none below gap_open)."""
    return [(h.score, frozenset(paired(h)))
            for h in wavedp.local_hits(query, target, scoring, fraction=1e-9, limit=10,
                                       device="cpu")
            if h.score >= scoring.gap_open]


@needs_lalign
@pytest.mark.skipif(not QUERIES.exists(), reason="shared/data/allqueries.fasta absent")
@pytest.mark.parametrize("gaps", [(11, 1), (10, 2)])
def test_real_pairs_equal_lalign36(tmp_path, gaps):
    from wavedp.seqio import read_records

    records = [seq for _, seq in read_records(QUERIES)[:6]]
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=gaps[0], gap_extend=gaps[1])
    for query, target in zip(records, records[1:], strict=False):
        want = [score for score, _ in lalign(query, target, lalign_args(scoring), tmp_path)]
        assert len(want) == 10
        assert [score for score, _ in ours(query, target, scoring)] == want


RANDOM_SCORINGS = [wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
                   wavedp.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=2),
                   wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
                   wavedp.Scoring(match=1, mismatch=-2, gap_open=3, gap_extend=1)]


@needs_lalign
@pytest.mark.parametrize("seed", range(16))
def test_random_pairs_agree_with_lalign36(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    scoring = RANDOM_SCORINGS[seed % 4]
    letters = DNA if scoring.is_dna else PROTEIN
    query = random_seq(rng, letters, int(rng.integers(30, 80)))
    target = (related(rng, query, letters, 0.3) if seed % 8 < 4
              else random_seq(rng, letters, int(rng.integers(30, 80))))
    want = lalign(query, target, lalign_args(scoring), tmp_path)
    q, t = scoring.encode(query), scoring.encode(target)
    forbidden: set[tuple[int, int]] = set()
    for score, cells in want:  # each of lalign36's hits is a hit of its own predecessors
        assert not cells & forbidden
        best = reference_hits(q, t, scoring.table, scoring.gap_open, scoring.gap_extend,
                              limit=1, forbidden=forbidden)
        assert best and best[0][0] == score
        forbidden |= cells
    got = ours(query, target, scoring)
    k = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
    if k is None:
        assert [s for s, _ in got] == [s for s, _ in want]
    else:  # the same forbidden cells up to hit k: the same score there
        assert [s for s, _ in got[:k + 1]] == [s for s, _ in want[:k + 1]]
