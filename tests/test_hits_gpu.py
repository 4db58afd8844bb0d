"""The GPU's Waterman-Eggert rounds (``engines/cuda/waterman_eggert.py``) return exactly the CPU
engine's hits (run with ``pytest -m gpu``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from helpers import DNA, PROTEIN, random_seq, related, rescore
from test_hits import _repeats, check_hits

import wavedp
from wavedp.api import Prepared
from wavedp.dbsearch.waterman_eggert import run_hits
from wavedp.device import choose

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("poison")]

QUERIES = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data",
                             Path(__file__).resolve().parents[1] / ".carry")
                 if (p / "allqueries.fasta").exists()), Path("absent")) / "allqueries.fasta"
SCORINGS = {
    "dna": wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
    "protein": wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    "ties": wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1),
    "cheap": wavedp.Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=0),
}
# strips are 128 (R = 4) or 256 (R = 8) rows: pairs inside one strip and across several
SHAPES = [(1, 1), (5, 60), (60, 5), (31, 33), (127, 129), (128, 128), (129, 40), (255, 257),
          (300, 700), (600, 500), (1100, 90)]


def _pairs(name: str, seed: int):
    """Random, related and repeat-rich pairs of every shape, each query against two targets."""
    rng = np.random.default_rng(seed)
    letters = PROTEIN if name == "protein" else DNA
    queries, targets = [], []
    for k, (m, n) in enumerate(SHAPES):
        if name == "ties":
            a = ("ACGT" * m)[:m] if m % 2 else ("AAC" * m)[:m]
            b = ("CA" * n)[:n] if n % 3 else ("ACGT" * n)[1:n + 1]
        elif k % 3 == 2 and m > 60:
            a, b = _repeats(rng, letters, m)
        else:
            a = random_seq(rng, letters, m)
            b = (related(rng, a, letters, 0.2) + random_seq(rng, letters, n))[:n]
        queries.append(a)
        targets.append(b)
    scoring = SCORINGS[name]
    q = Prepared(queries, scoring, "query")
    t = Prepared(targets, scoring, "target")
    k = len(SHAPES)
    pairs = np.array([(i, i) for i in range(k)] + [(i, (i + 3) % k) for i in range(k)],
                     np.int64)
    return q, t, pairs, scoring


@pytest.mark.parametrize("name", list(SCORINGS))
@pytest.mark.parametrize("fraction, limit", [(1e-9, 12), (0.5, None), (1.0, None)])
def test_gpu_hits_equal_cpu(name, fraction, limit):
    q, t, pairs, scoring = _pairs(name, len(name))
    want = run_hits(q, t, pairs, scoring, fraction, limit, choose("cpu"))
    got = run_hits(q, t, pairs, scoring, fraction, limit, choose("gpu"))
    assert got == want
    for (a, b), hits in zip(pairs.tolist(), got, strict=True):
        named = [dataclasses.replace(h, query_id="query1", target_id="target1") for h in hits]
        check_hits(named, q.texts[a], t.texts[b], scoring, fraction, limit)
        assert all(rescore(h, scoring) == h.score for h in hits)


def test_groups_split_by_budget_and_big_pairs_on_the_cpu_path(monkeypatch):
    """Tiny launch budgets (one pair per group) and a per-pair cap that sends the largest
    pairs to the CPU's linear-memory path give the same lists."""
    from wavedp.engines.cuda import batch
    from wavedp.engines.cuda import waterman_eggert as hits

    q, t, pairs, scoring = _pairs("protein", 7)
    want = run_hits(q, t, pairs, scoring, 1e-9, 6, choose("cpu"))
    monkeypatch.setattr(batch, "DIRS_BYTES", 1)
    assert run_hits(q, t, pairs, scoring, 1e-9, 6, choose("gpu")) == want
    monkeypatch.setattr(hits, "HIT_BYTES", 100_000)
    assert run_hits(q, t, pairs, scoring, 1e-9, 6, choose("gpu")) == want


@pytest.mark.skipif(not QUERIES.exists(), reason="shared/data/allqueries.fasta absent")
def test_real_pairs_local_hits_gpu_equal_cpu():
    from wavedp.seqio import read_records

    records = [seq for _, seq in read_records(QUERIES)[:8]]
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    for query, target in zip(records, records[1:], strict=False):
        cpu = wavedp.local_hits(query, target, scoring, fraction=1e-9, limit=10, device="cpu")
        assert wavedp.local_hits(query, target, scoring, fraction=1e-9, limit=10,
                                 device="gpu") == cpu
        assert len(cpu) == 10


def test_empty_and_zero_pairs():
    scoring = SCORINGS["protein"]
    assert wavedp.local_hits("", "ACD", scoring, device="gpu") == []
    assert wavedp.local_hits("WWW", "PPP", scoring, device="gpu") == []
