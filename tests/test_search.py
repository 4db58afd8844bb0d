"""wavedp.search equals align_all ranked by docs/design.md's order, and ssearch36's and blastp's
figures (CPU engine; tests/test_search_gpu.py holds the GPU engine to the same results)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import DNA, MODE_NAMES, PROTEIN, fresh, random_seq, related, rescore
from hypothesis import given, settings
from hypothesis import strategies as st

import wavedp
from wavedp.dbsearch import hitlist
from wavedp.dbsearch.strands import reverse_complement

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
QUERIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "allqueries.fasta"


def _expected(queries, texts, scoring, mode, top, min_score, strands=("+",)):
    """Ranked (score, index, strand) lists from align_all, by docs/design.md's order: no hit
    of an empty query or database sequence, nor (local mode) of score 0."""
    out = []
    for q in queries:
        rows = []
        for s in strands:
            qq = q if s == "+" else reverse_complement(q, scoring.encode(q))[0]
            for t, aln in enumerate(wavedp.align_all([qq], texts, scoring, mode=mode,
                                                     traceback=False, device="cpu")):
                if not q or not texts[t] or (mode == "local" and aln.score <= 0):
                    continue
                if min_score is None or aln.score >= min_score:
                    rows.append((-aln.score, t, s))
        rows.sort()
        out.append(rows[:top] if top else rows)
    return out


def _database(rng, letters, count, seed_from):
    texts = [random_seq(rng, letters, int(rng.integers(0, 60))) for _ in range(count)]
    texts[1] = ""
    texts[2] = letters[0]
    texts[4] = related(rng, seed_from, letters, 0.2)
    texts.append(texts[4])  # a duplicate: tied scores rank by index
    return texts


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(MODE_NAMES),
       top=st.sampled_from([0, 1, 3, 10]), dna=st.booleans(),
       min_score=st.sampled_from([None, 0, 5]))
def test_search_equals_ranked_align_all(seed, mode, top, dna, min_score):
    rng = np.random.default_rng(seed)
    letters, scoring = (DNA, DNA_SCORING) if dna else (PROTEIN, PROT)
    queries = [random_seq(rng, letters, int(n)) for n in rng.integers(1, 50, 3)]
    texts = _database(rng, letters, 30, queries[0])
    strands = ("+", "-") if dna else ("+",)
    hits = wavedp.search(queries, texts, scoring, top=top, evalue=None, min_score=min_score,
                         mode=mode, traceback=True, device="cpu", stats="blast")
    expected = _expected(queries, texts, scoring, mode, top, min_score, strands)
    for q, got, want in zip(queries, hits, expected, strict=True):
        ids = {f"target{k + 1}": k for k in range(len(texts))}
        assert [(-h.score, ids[h.target_id], h.strand or "+") for h in got] == want
        for h in got:  # each hit is wavedp.align on its pair
            qq = q if h.strand != "-" else reverse_complement(q, scoring.encode(q))[0]
            aln = wavedp.align(qq, texts[ids[h.target_id]], scoring, mode=mode, device="cpu")
            assert (h.score, h.cigar, h.query_start, h.query_end, h.target_start,
                    h.target_end) == (aln.score, aln.cigar, aln.query_start, aln.query_end,
                                      aln.target_start, aln.target_end)
            assert rescore(h, scoring) == h.score


def test_score_only_hits_carry_end_cells():
    rng = np.random.default_rng(3)
    q = random_seq(rng, PROTEIN, 80)
    texts = [related(rng, q, PROTEIN, 0.1), random_seq(rng, PROTEIN, 90)]
    hit = wavedp.search([q], texts, PROT, top=1, traceback=False, device="cpu")[0][0]
    aln = wavedp.align(q, texts[0], PROT, traceback=False, device="cpu")
    assert (hit.score, hit.query_end, hit.target_end, hit.cigar) == \
        (aln.score, aln.query_end, aln.target_end, None)
    assert hit.evalue is not None and hit.bitscore is not None and hit.strand is None


@pytest.mark.parametrize("dna", [False, True])
@pytest.mark.parametrize("stats", ["none", "blast"])
def test_every_score_only_hit_takes_its_end_cell_from_the_scan(dna, stats, monkeypatch):
    rng = np.random.default_rng(21 + dna)
    letters, scoring = (DNA, DNA_SCORING) if dna else (PROTEIN, PROT)
    queries = [random_seq(rng, letters, int(n)) for n in (1, 40, 90, 200)]
    texts = _database(rng, letters, 150, queries[2]) + [""]  # an empty one has no hits
    kwargs = {"traceback": False, "evalue": None, "stats": stats, "device": "cpu"}
    with pytest.warns(wavedp.errors.EmptyWarning):  # every hit: the pairwise engine
        aligned = wavedp.search(queries, texts, scoring, top=10**6, **kwargs)

    def no_engine(*args, **kw):
        raise AssertionError("every score-only local hit is known from the scan")

    monkeypatch.setattr(hitlist, "pair_results", no_engine)
    with pytest.warns(wavedp.errors.EmptyWarning):
        scanned = wavedp.search(queries, texts, scoring, top=0, **kwargs)
    assert scanned == aligned and sum(map(len, scanned)) > 300
    for got, want in zip(scanned, aligned, strict=True):  # all fields, not only compared ones
        assert [vars(h) for h in got] == [vars(h) for h in want]


def test_every_hit_over_several_scan_chunks_equals_one_chunk(monkeypatch):
    """The CPU scan's chunks (CPU_CHUNK residues each) merge their every-hit candidates and
    end cells into the ranking one chunk gives."""
    from wavedp.engines.cpu import scan

    rng = np.random.default_rng(31)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in (30, 120)]
    texts = _database(rng, PROTEIN, 200, queries[1])
    kwargs = {"top": 0, "traceback": False, "evalue": None, "stats": "none", "device": "cpu"}
    whole = wavedp.search(queries, texts, PROT, **kwargs)
    monkeypatch.setattr(scan, "CPU_CHUNK", 1500)  # about 30 sequences a chunk
    assert wavedp.search(queries, texts, PROT, **kwargs) == whole and all(whole)


def test_minus_strand_hit_aligns_the_reverse_complement():
    rng = np.random.default_rng(4)
    q = random_seq(rng, DNA, 60)
    rc = reverse_complement(q, DNA_SCORING.encode(q))[0]
    texts = [random_seq(rng, DNA, 40), random_seq(rng, DNA, 30) + rc + random_seq(rng, DNA, 30)]
    best = wavedp.search([q], texts, DNA_SCORING, top=1, device="cpu")[0][0]
    assert (best.strand, best.target_id, best.score) == ("-", "target2", 120)
    assert best.query == rc
    plus = wavedp.search([q], texts, DNA_SCORING, top=1, strand="plus", device="cpu")[0]
    assert all(h.strand == "+" for h in plus)


def test_evalue_filter_and_errors():
    rng = np.random.default_rng(5)
    q = random_seq(rng, PROTEIN, 100)
    texts = [related(rng, q, PROTEIN, 0.2)] + [random_seq(rng, PROTEIN, 100)
                                               for _ in range(40)]
    for stats in ("blast", "fitted"):
        hits = wavedp.search([q], texts, PROT, top=0, evalue=1e-3, device="cpu",
                             stats=stats)[0]
        assert [h.target_id for h in hits] == ["target1"]
        assert all(h.evalue <= 1e-3 for h in hits)
        everything = wavedp.search([q], texts, PROT, top=0, evalue=None, device="cpu",
                                   stats=stats)[0]
        assert len(everything) == len(texts)
    with pytest.raises(wavedp.InputError, match="global mode"):
        wavedp.search([q], texts, PROT, mode="global", evalue=1.0, device="cpu",
                      stats="blast")
    globals_ = wavedp.search([q], texts, PROT, mode="global", device="cpu", stats="blast")[0]
    assert all(h.evalue is None for h in globals_)  # the default cutoff needs statistics
    # fitted statistics: 41 sequences are too few to fit, and global mode has no table
    with pytest.warns(wavedp.errors.StatisticsWarning, match="too few subjects"):
        globals_ = wavedp.search([q], texts, PROT, mode="global", device="cpu")[0]
    assert globals_ and all(h.evalue is None for h in globals_)
    with pytest.raises(wavedp.InputError, match="stats 'none' gives no E-values"):
        wavedp.search([q], texts, PROT, evalue=1.0, device="cpu", stats="none")
    with pytest.raises(wavedp.InputError, match="stats must be one of"):
        wavedp.search([q], texts, PROT, device="cpu", stats="ssearch")
    with pytest.raises(wavedp.InputError, match="top"):
        wavedp.search([q], texts, PROT, top=-1, device="cpu")
    with pytest.raises(wavedp.InputError, match="position 3"):
        wavedp.search(["AC1"], texts, PROT, device="cpu")
    with pytest.raises(wavedp.InputError, match="DNA"):
        wavedp.search(["ACGT"], wavedp.Database.from_sequences(["ACD"]), DNA_SCORING)


def test_saturating_pairs_equal_32_bit_scores():
    w = "W" * 3000
    texts = [w, "ACDEFG" * 10, w[:2800] + "P" * 100]
    hits = wavedp.search([w], texts, PROT, top=0, evalue=None, traceback=False, device="cpu")
    exact = wavedp.align_all([w], texts, PROT, traceback=False, device="cpu")
    assert [h.score for h in hits[0]] == sorted((a.score for a in exact), reverse=True)
    assert hits[0][0].score == 33000


def _ssearch(query: Path, library: Path) -> dict[str, int]:
    out = subprocess.run(["ssearch36", "-m", "10", "-f", "-10", "-g", "-1", "-s", "BL62",
                          "-d", "0", "-b", "10000", "-E", "1e9", "-q", str(query),
                          str(library)], capture_output=True, text=True, check=True).stdout
    table = out.split("The best scores are:", 1)[1]
    scores = {}
    for line in table.splitlines()[1:]:
        m = re.match(r"(\S+)\s.*\(\s*\d+\)\s+(-?\d+)\s", line)
        if not m:
            break
        scores[m.group(1)] = int(m.group(2))
    return scores


@pytest.mark.skipif(shutil.which("ssearch36") is None, reason="ssearch36 (fasta3) absent")
@pytest.mark.skipif(not QUERIES.exists(), reason="shared/data/allqueries.fasta absent")
def test_scores_equal_ssearch36(tmp_path):
    from wavedp.seqio import read_records

    records = read_records(QUERIES)
    rng = np.random.default_rng(8)
    library = []
    for k, (_, seq) in enumerate(records[:8]):
        library.append((f"hom{k}", related(rng, seq[:300], PROTEIN, 0.3)))
        library.append((f"rnd{k}", random_seq(rng, PROTEIN, int(rng.integers(20, 400)))))
    lib = tmp_path / "lib.fa"
    lib.write_text("".join(f">{i}\n{s}\n" for i, s in library))
    for rid, seq in records[:4]:
        qf = tmp_path / "q.fa"
        qf.write_text(f">{rid.split('|')[0]}\n{seq}\n")
        want = _ssearch(qf, lib)
        hits = wavedp.search(str(qf), str(lib), PROT, top=0, evalue=None, traceback=False,
                             device="cpu")[0]
        got = {h.target_id: h.score for h in hits}
        assert want and all(got[t] == s for t, s in want.items()), (rid, want)


@pytest.mark.skipif(shutil.which("blastp") is None, reason="blastp (ncbi-blast+) absent")
@pytest.mark.skipif(not QUERIES.exists(), reason="shared/data/allqueries.fasta absent")
def test_evalues_and_bitscores_equal_blastp(tmp_path):
    from wavedp.seqio import read_records

    records = read_records(QUERIES)
    rng = np.random.default_rng(12)
    query = records[3][1]
    library = [(f"s{k}", related(rng, query, PROTEIN, rate)) for k, rate in
               enumerate((0.1, 0.3, 0.5, 0.6))]
    library += [(f"r{k}", random_seq(rng, PROTEIN, 300)) for k in range(20)]
    lib = tmp_path / "lib.fa"
    lib.write_text("".join(f">{i}\n{s}\n" for i, s in library))
    qf = tmp_path / "q.fa"
    qf.write_text(f">q\n{query}\n")
    n = sum(len(s) for _, s in library)
    subprocess.run(["makeblastdb", "-in", str(lib), "-dbtype", "prot", "-out",
                    str(tmp_path / "db")], check=True, capture_output=True)
    out = subprocess.run(["blastp", "-query", str(qf), "-db", str(tmp_path / "db"),
                          "-gapopen", "10", "-gapextend", "1", "-comp_based_stats", "0",
                          "-seg", "no", "-searchsp", str(len(query) * n), "-max_hsps", "1",
                          "-outfmt", "6 sseqid score evalue bitscore"],
                         capture_output=True, text=True, check=True).stdout
    hits = {h.target_id: h for h in wavedp.search(str(qf), str(lib), PROT, top=0,
                                                   evalue=None, device="cpu",
                                                   stats="blast")[0]}
    compared = 0
    for line in out.splitlines():
        sid, score, evalue, bits = line.split("\t")
        h = hits[sid]
        if h.score != int(score):
            continue  # blastp's heuristic found another score: not comparable
        compared += 1
        assert h.format("blast6").split("\t")[10:] == [evalue.strip(), bits.strip()]
    assert compared >= 3


@pytest.mark.parametrize("dna", [False, True])
def test_fraction_expands_each_reported_pair_into_its_hits(dna):
    """search(fraction=x): every reported pair's local_hits, ranked by score (stable:
    database index, strand, discovery order), E-values and filters on every alignment."""
    from test_hits import _repeats

    rng = np.random.default_rng(31 + dna)
    letters, scoring = (DNA, DNA_SCORING) if dna else (PROTEIN, PROT)
    query, first = _repeats(rng, letters, 160)
    texts = [first, random_seq(rng, letters, 90), related(rng, query, letters, 0.3), ""]
    strands = ("+", "-") if dna else ("+",)
    for top, fraction, min_score in ((0, 0.3, None), (2, 0.5, None), (0, 0.2, 25)):
        got = wavedp.search([query], texts, scoring, top=top, evalue=None,
                            min_score=min_score, fraction=fraction, device="cpu",
                            stats="blast")[0]
        pairs = _expected([query], texts, scoring, "local", top, min_score, strands)[0]
        want = []
        for score, t, s in pairs:
            qq = query if s == "+" else reverse_complement(query, scoring.encode(query))[0]
            hits = wavedp.local_hits(qq, texts[t], scoring, fraction=fraction, device="cpu")
            assert (hits[0].score if hits else 0) == -score  # no hit where the best is 0
            want += [(h.score, t, s, h.cigar, h.query_start, h.target_start) for h in hits
                     if min_score is None or h.score >= min_score]
        want.sort(key=lambda w: -w[0])
        ids = {f"target{k + 1}": k for k in range(len(texts))}
        assert [(h.score, ids[h.target_id], h.strand or "+", h.cigar, h.query_start,
                 h.target_start) for h in got] == want
        assert len(got) > len(pairs)  # the repeats give pairs several hits
        assert all((h.evalue is None) == dna for h in got)  # no table for this DNA scoring
        assert all(rescore(h, scoring) == h.score for h in got)
    if dna:
        return
    cut = wavedp.search([query], texts, scoring, top=0, evalue=1e-3, fraction=0.1,
                        device="cpu", stats="blast")[0]
    assert cut and all(h.evalue <= 1e-3 for h in cut)


def test_fraction_errors():
    for kwargs, needle in (({"fraction": 0}, "fraction must be"),
                           ({"fraction": 1.5}, "fraction must be"),
                           ({"fraction": 0.5, "mode": "global", "evalue": None}, "local mode"),
                           ({"fraction": 0.5, "traceback": False}, "score-only")):
        with pytest.raises(wavedp.InputError, match=needle):
            wavedp.search(["ACDE"], ["ACDE"], PROT, device="cpu", **kwargs)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_searcher_searches_again_as_search_does(device):
    """A Searcher keeps one scanner for every search (on the GPU the database stays
    resident), and each search equals wavedp.search's."""
    rng = np.random.default_rng(11)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in (40, 90, 7)]
    texts = _database(rng, PROTEIN, 60, queries[0])
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    searcher = wavedp.Searcher(texts, scoring, device=device)
    scanner = searcher.scanner
    for top, traceback in ((5, True), (0, False), (3, True)):
        want = wavedp.search(queries, texts, scoring, top=top, evalue=None, traceback=traceback,
                             device=device)
        assert searcher.search(queries, top=top, evalue=None, traceback=traceback) == want
    assert searcher.scanner is scanner
    with pytest.raises(wavedp.InputError, match="top must be"):
        searcher.search(queries, top=-1)


def test_the_search_function_and_its_package_have_names_of_their_own():
    """``wavedp.search`` is the function before and after the package (``wavedp.dbsearch``)
    is imported, and the table helpers are public names too; no module class is swapped."""
    code = ("import types, wavedp; f = wavedp.search; import wavedp.dbsearch.api; "
            "import wavedp.dbsearch as package; "
            "assert wavedp.search is f and callable(f) and f.__module__ == 'wavedp.dbsearch.api'; "
            "assert isinstance(package, types.ModuleType) and package.search is f; "
            "assert type(wavedp) is types.ModuleType; "
            "assert wavedp.iter_search is package.iter_search; "
            "assert wavedp.to_frame.__module__ == 'wavedp.dbsearch.tables'; print('ok')")
    got = fresh(["-c", code], capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout == "ok\n", got.stderr
