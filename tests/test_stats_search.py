"""The search under each ``stats``: ranking by E-value, the best ``top`` found exactly
through rounds of alignment and rescoring, scores unchanged by the statistics, E-values in
every mode, ``blast`` as before, ``mask``."""

from __future__ import annotations

import numpy as np
import pytest

import wavedp
from wavedp.errors import StatisticsWarning
from wavedp.stats import karlin_altschul as statistics
from wavedp.stats.significance import STATS

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _library(rng, letters: str, count: int, planted: list[str]) -> list[str]:
    texts = ["".join(rng.choice(list(letters), int(rng.integers(60, 400))))
             for _ in range(count)]
    for k, seed in enumerate(planted):  # relatives: 25% of positions redrawn
        s = np.array(list(seed))
        hit = rng.random(s.size) < 0.25
        s[hit] = rng.choice(list(letters), int(hit.sum()))
        texts[7 * k + 3] = "".join(s)
    return texts


@pytest.fixture(scope="module")
def protein():
    rng = np.random.default_rng(11)
    queries = ["".join(rng.choice(list(AMINO), n)) for n in (120, 250)]
    # a biased query: E/K-rich, the kind composition statistics are for
    queries.append("".join(rng.choice(list("EKEKEKAL" + AMINO), 200)))
    return queries, _library(rng, AMINO, 600, queries * 3)


def _key(h):
    return (h.evalue, -h.score)


@pytest.mark.parametrize("stats", ["fitted", "empirical", "composition"])
def test_hits_rank_by_evalue_and_top_is_exact(protein, stats):
    queries, texts = protein
    full = wavedp.search(queries, texts, PROT, top=0, evalue=None, device="cpu", stats=stats)
    for top in (1, 3, 10):
        cut = wavedp.search(queries, texts, PROT, top=top, evalue=None, device="cpu",
                            stats=stats)
        for got, every in zip(cut, full, strict=True):
            assert [_key(h) for h in every] == sorted(_key(h) for h in every)
            # top=0 aligns and rescores every candidate: the best ``top`` by final E-value
            assert [(h.target_id, h.evalue) for h in got] == \
                [(h.target_id, h.evalue) for h in every[:top]]


def test_top_counts_pairs_exactly_with_fraction(protein):
    """With ``fraction`` a pair may have several alignments and ``top`` counts pairs: the
    best ``top`` pairs by final E-value are those of every candidate aligned."""
    queries, texts = protein
    kwargs = dict(evalue=None, device="cpu", fraction=0.5)
    full = wavedp.search(queries, texts, PROT, top=0, **kwargs)
    for top in (1, 3):
        cut = wavedp.search(queries, texts, PROT, top=top, **kwargs)
        for got, every in zip(cut, full, strict=True):
            pairs = list(dict.fromkeys((h.target_id, h.strand) for h in every))[:top]
            assert [(h.target_id, h.evalue, h.score) for h in got] == \
                [(h.target_id, h.evalue, h.score) for h in every
                 if (h.target_id, h.strand) in pairs]


def test_statistics_never_change_scores(protein):
    queries, texts = protein
    plain = wavedp.search(queries, texts, PROT, top=0, evalue=None, device="cpu",
                          stats="none")
    for stats in STATS:
        hits = wavedp.search(queries, texts, PROT, top=0, evalue=None, device="cpu",
                             stats=stats)
        for a, b in zip(hits, plain, strict=True):
            assert sorted((h.target_id, h.score, h.cigar) for h in a) == \
                sorted((h.target_id, h.score, h.cigar) for h in b)
            if stats == "none":
                assert all(h.evalue is None and h.bitscore is None for h in a)
                assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)
            else:
                assert all(h.evalue is not None for h in a)


def test_the_evalue_cutoff_loses_no_hit(protein):
    """The scan's threshold comes from the fit: a cut search keeps exactly the hits of the
    uncut one at or below the cutoff (one past the database's size: every hit)."""
    queries, texts = protein
    for stats in ("fitted", "empirical", "composition"):
        every = wavedp.search(queries, texts, PROT, top=0, evalue=None, device="cpu",
                              stats=stats)
        for cutoff in (1.0, 1e6):
            cut = wavedp.search(queries, texts, PROT, top=0, evalue=cutoff, device="cpu",
                                stats=stats)
            for a, b in zip(cut, every, strict=True):
                assert [(h.target_id, h.evalue) for h in a] == \
                    [(h.target_id, h.evalue) for h in b if h.evalue <= cutoff]


def test_relatives_are_significant_and_random_pairs_are_not(protein):
    queries, texts = protein
    hits = wavedp.search(queries[:2], texts, PROT, top=0, evalue=1e-3, device="cpu")
    for k, found in enumerate(hits):
        planted = {f"target{7 * j + 4}" for j in range(len(texts)) if j % 3 == k}
        assert {h.target_id for h in found} <= planted | set()
        assert len(found) >= 2


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_every_mode_and_dna_get_evalues(mode):
    rng = np.random.default_rng(3)
    for scoring, letters in ((PROT, AMINO), (DNA, "ACGT")):
        queries = ["".join(rng.choice(list(letters), 150))]
        texts = _library(rng, letters, 400, queries)
        hits = wavedp.search(queries, texts, scoring, top=5, mode=mode, device="cpu")[0]
        assert hits and all(h.evalue is not None and h.bitscore is not None for h in hits)
        assert hits[0].target_id == "target4" and hits[0].evalue < 1e-3


def test_no_fit_and_no_table_is_na_said_once():
    rng = np.random.default_rng(4)
    texts = ["".join(rng.choice(list(AMINO), 100)) for _ in range(50)]
    with pytest.warns(StatisticsWarning, match="too few subjects") as caught:
        hits = wavedp.search([texts[0], texts[1]], texts, PROT, mode="global", device="cpu")
    assert len([w for w in caught if w.category is StatisticsWarning]) == 1
    assert all(h.evalue is None for q in hits for h in q)


def test_reasons_that_differ_by_a_count_are_said_once(monkeypatch):
    """Queries whose fits fail for one reason with different counts (unrelated subjects
    left after each one's relatives): one warning, not one a count."""
    from wavedp.stats import empirical

    counts = iter(range(150, 190))

    def failing(*args, **kwargs):
        return None, (f"too few unrelated subjects for an empirical fit: {next(counts)} after "
                      "leaving out the high scores, at least 200 needed")

    monkeypatch.setattr(empirical, "fit_or_reason", failing)
    rng = np.random.default_rng(8)
    queries = ["".join(rng.choice(list(AMINO), 150)) for _ in range(3)]
    texts = ["".join(rng.choice(list(AMINO), 150)) for _ in range(300)]
    with pytest.warns(StatisticsWarning, match="too few unrelated subjects") as caught:
        wavedp.search(queries, texts, PROT, mode="global", device="cpu")
    assert len([w for w in caught if w.category is StatisticsWarning]) == 1


def test_blast_statistics_are_the_tables():
    rng = np.random.default_rng(5)
    texts = ["".join(rng.choice(list(AMINO), 120)) for _ in range(300)]
    hits = wavedp.search([texts[9]], texts, PROT, top=5, device="cpu", stats="blast")[0]
    table = statistics.parameters(PROT)
    n = sum(map(len, texts))
    for h in hits:
        assert h.evalue == table.evalue(h.score, 120, n)
        assert h.bitscore == table.bitscore(h.score)


def test_mask_scores_low_complexity_as_x():
    pytest.importorskip("pytantan")
    query = "MKV" + "Q" * 40 + "ACDEFGHIKLMNPQRSTVWY"
    texts = ["Q" * 60, "ACDEFGHIKLMNPQRSTVWY" * 2]
    plain = wavedp.search([query], texts, PROT, top=0, evalue=None, device="cpu")[0]
    masked = wavedp.search([query], texts, PROT, top=0, evalue=None, device="cpu",
                           mask=True)[0]
    best = {h.target_id: h.score for h in plain}
    got = {h.target_id: h.score for h in masked}
    assert best["target1"] >= 200 and got["target1"] < 10  # the Q run scores as X now
    assert got["target2"] >= best["target2"] - 6  # the complex part is left as it was
    # composition statistics already doubt the Q run unmasked: its E-value is far above
    # the complex hit's, though its score is higher
    e = {h.target_id: h.evalue for h in plain}
    assert e["target1"] > 1e6 * e["target2"]


@pytest.mark.gpu
def test_statistics_are_the_same_on_the_gpu(protein):
    """The GPU scans the sample and the database; the statistics are computed from the same
    exact scores: every hit, E-value and bit score equal, bit for bit."""
    queries, texts = protein
    for stats in STATS:
        cpu = wavedp.search(queries, texts, PROT, top=0, device="cpu", stats=stats)
        gpu = wavedp.search(queries, texts, PROT, top=0, device="gpu", stats=stats)
        assert [[(h.target_id, h.score, h.cigar, h.evalue, h.bitscore) for h in q]
                for q in gpu] == [[(h.target_id, h.score, h.cigar, h.evalue, h.bitscore)
                                   for h in q] for q in cpu]


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("stats", ["fitted", "empirical"])
def test_a_database_the_sample_holds_whole_is_scanned_once(protein, mode, stats,
                                                           monkeypatch):
    """A database no larger than the fit's sample: each query's scores against the sample
    are its scan's, so the hits are those of a second scan, on both strands, with empty
    sequences (scoring 0 locally) and a database the sample holds only in part."""
    from wavedp.dbsearch import fitted

    queries, texts = protein
    rng = np.random.default_rng(8)
    dna_q = ["".join(rng.choice(list("ACGT"), 120))]
    dna_t = _library(rng, "ACGT", 300, dna_q)
    cases = [(queries, [*texts[:200], "", *texts[200:]], PROT), (dna_q, dna_t, DNA)]
    kept = fitted._whole_sample
    for qs, ts, scoring in cases:
        took: list[bool] = []
        monkeypatch.setattr(fitted, "_whole_sample",
                            lambda *a, took=took: took.append(kept(*a)) or took[-1])
        once = wavedp.search(qs, ts, scoring, top=0, evalue=None, mode=mode, device="cpu",
                             stats=stats)
        assert took and all(took) == (mode == "local" or "" not in ts)
        monkeypatch.setattr(fitted, "_whole_sample", lambda *a: False)
        twice = wavedp.search(qs, ts, scoring, top=0, evalue=None, mode=mode, device="cpu",
                              stats=stats)
        monkeypatch.setattr(fitted, "_whole_sample", kept)
        for a, b in zip(once, twice, strict=True):
            assert [(h.target_id, h.score, h.evalue, h.strand, h.cigar) for h in a] == \
                [(h.target_id, h.score, h.evalue, h.strand, h.cigar) for h in b]
        assert any(once)


def test_the_reverse_null_caps_a_reversed_look_alike():
    """A coiled-coil-like query against a relative and the relative's reverse (a heptad
    read backwards is still a heptad): the fitted statistics' reverse null leaves the
    relative significant and the reversed one not; the fit alone (``empirical``) calls both
    significant. Scores are unchanged."""
    rng = np.random.default_rng(5)
    heptads = "".join(rng.choice(["LKELEKR", "IEELKRK", "LEEIRKE"], 30))
    query = heptads
    relative = np.array(list(query))
    redrawn = rng.random(relative.size) < 0.3
    relative[redrawn] = rng.choice(list(AMINO), int(redrawn.sum()))
    relative = "".join(relative)
    texts = ["".join(rng.choice(list(AMINO), int(rng.integers(60, 400)))) for _ in range(500)]
    texts[10], texts[20] = relative, relative[::-1]
    ids = [f"s{k}" for k in range(len(texts))]
    found = {}
    for stats in ("fitted", "empirical"):
        db = wavedp.Database.from_sequences(texts, ids=ids, alphabet="protein")
        hits = wavedp.search([query], db, PROT, stats=stats, top=0, evalue=None)[0]
        found[stats] = {h.target_id: h for h in hits}
    fitted, fit_alone = found["fitted"], found["empirical"]
    assert fitted["s10"].evalue < 1e-10 and fit_alone["s20"].evalue < 1e-3
    assert fitted["s20"].evalue > 0.1
    assert fitted["s20"].score == fit_alone["s20"].score
