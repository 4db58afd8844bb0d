"""The CPU engine against the reference oracle, parasail and Biopython."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import (
    MODE_NAMES,
    as_raw,
    check_traceback_against_score_only,
    oracle,
    problems,
    random_seq,
    related,
    rescore,
)
from hypothesis import given, settings

import wavedp
from wavedp.engines import cpu
from wavedp.engines.common import MODES, empty_pair
from wavedp.engines.cpu import rows


@settings(max_examples=400, deadline=None)
@given(problems())
def test_cpu_matches_reference_with_traceback(problem):
    query, target, scoring, mode = problem
    aln = wavedp.align(query, target, scoring, mode=mode, device="cpu")
    assert as_raw(aln) == oracle(query, target, scoring, mode, True)
    assert rescore(aln, scoring) == aln.score


@settings(max_examples=300, deadline=None)
@given(problems(max_len=60))
def test_cpu_matches_reference_score_only(problem):
    query, target, scoring, mode = problem
    aln = wavedp.align(query, target, scoring, mode=mode, traceback=False, device="cpu")
    ref = oracle(query, target, scoring, mode, False)
    assert (aln.score, aln.query_end, aln.target_end) == (ref[0], ref[2], ref[4])
    assert aln.cigar is None
    if mode == "global":
        assert (aln.query_start, aln.target_start) == (0, 0)
    else:
        assert aln.query_start is None and aln.target_start is None


@pytest.mark.parametrize("interval", [1, 2, 3, 5, 8])
def test_checkpoint_bands_give_the_full_matrix_alignment(interval):
    """Linear-space traceback (any checkpoint spacing) equals the full-matrix traceback."""
    rng = np.random.default_rng(interval)
    for mode in MODES.values():
        for _ in range(20):
            ext = int(rng.integers(0, 4))
            scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=int(rng.integers(ext, 7)),
                                     gap_extend=ext)
            a = random_seq(rng, "ACGT", int(rng.integers(0, 40)))
            b = related(rng, a, "ACGT", 0.3)
            q, t = scoring.encode(a), scoring.encode(b)
            runs = []
            for k in (max(len(a), 1), interval):
                ops = np.empty(len(a) + len(b), np.uint8)
                r = rows.align_trace(q, t, scoring.table, scoring.gap_open,
                                     scoring.gap_extend, mode, k, ops)
                runs.append((r[:5], ops[: r[5]].tobytes()))
            assert runs[0] == runs[1]


def test_align_all_is_query_major_and_matches_align():
    rng = np.random.default_rng(7)
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    queries = [random_seq(rng, "ACGT", n) for n in (0, 5, 120, 300)]
    targets = [related(rng, queries[2], "ACGT"), random_seq(rng, "ACGT", 90), ""]
    for mode in MODE_NAMES:
        for traceback in (True, False):
            many = wavedp.align_all(queries, targets, scoring, mode=mode, traceback=traceback,
                                    device="cpu")
            assert len(many) == len(queries) * len(targets)
            k = 0
            for q in queries:
                for t in targets:
                    one = wavedp.align(q, t, scoring, mode=mode, traceback=traceback,
                                       device="cpu")
                    assert many[k] == replace(one, query_id=many[k].query_id,
                                              target_id=many[k].target_id)
                    k += 1


def test_sequence_types_and_ids():
    from Bio.Seq import Seq
    from Bio.SeqRecord import SeqRecord

    scoring = wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1)
    rec = SeqRecord(Seq("ACGTAC"), id="r1")
    a = wavedp.align(rec, b"acgtac", scoring)
    b = wavedp.align(Seq("ACGTAC"), "ACGUAC", scoring)
    assert a.query_id == "r1" and a.score == 6 and a.cigar == "6="
    assert b.score == 6 and b.cigar == "6="


def test_many_sequences_encoded_at_once_name_the_first_bad_record():
    """Prepared encodes every sequence in one pass: each one's codes equal its own encoding
    (empty ones included, non-ASCII letters refused), and a bad letter names its record and
    position within it."""
    from wavedp.api import Prepared
    from wavedp.errors import InputError

    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    seqs = ["ACDEF", "", "W", b"mkv", "ACDEFGHIKLMNPQRSTVWY"]
    prepared = Prepared(seqs, scoring, "query")
    assert prepared.ids == ["query1", "query2", "query3", "query4", "query5"]
    for codes, seq in zip(prepared.codes, seqs, strict=True):
        assert np.array_equal(codes, scoring.encode(seq))
    with pytest.raises(InputError, match=r"^record 'query3', position 2: invalid character '1'"):
        Prepared(["ACD", "", "A1Z", "B2"], scoring, "query")
    with pytest.raises(InputError, match=r"^record 'query2', position 3: invalid character 'é'"):
        Prepared(["AC", "ACé"], scoring, "query")
    assert Prepared([], scoring, "target").codes == []


def test_textbook_cases():
    dna = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    a = wavedp.align("ACGTACGTAC", "ACGTACGTAC", dna)
    assert (a.score, a.cigar, a.query_start, a.query_end) == (20, "10=", 0, 10)
    # one mismatch inside a match run
    a = wavedp.align("AAAAAGAAAAA", "AAAAACAAAAA", dna)
    assert (a.score, a.cigar) == (17, "5=1X5=")
    # a 2-residue gap costs open + extend = 7
    a = wavedp.align("ACGTACGTTTACGTACGT", "ACGTACGTACGTACGT", dna, mode="global")
    assert a.score == 32 - 7 and a.cigar.count("I") == 1
    # global of empty vs n: all gaps
    a = wavedp.align("", "ACGT", dna, mode="global")
    assert (a.score, a.cigar) == (-(5 + 3 * 2), "4D")
    a = wavedp.align("ACG", "", dna, mode="global")
    assert (a.score, a.cigar) == (-(5 + 2 * 2), "3I")
    # local with nothing similar: empty alignment
    a = wavedp.align("AAAA", "CCCC", dna)
    assert (a.score, a.cigar, a.query_start, a.query_end, a.target_end) == (0, "", 0, 0, 0)
    # semiglobal: a contained query pays no end gaps
    a = wavedp.align("CGTA", "TTTTCGTATTTT", dna, mode="semiglobal")
    assert (a.score, a.target_start, a.target_end, a.cigar) == (8, 4, 8, "4=")
    # BLOSUM62 textbook pair
    p = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    a = wavedp.align("HEAGAWGHEE", "PAWHEAE", p, mode="global")
    assert a.score == rescore(a, p)


def test_ambiguity_codes_and_protein_aliases():
    dna = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    # N (and IUPAC codes) score as mismatch against everything, N included
    a = wavedp.align("ACNNGT", "ACNNGT", dna, mode="global")
    assert a.score == 4 * 2 - 2 * 3
    assert wavedp.align("ACRYGT", "ACNNGT", dna, mode="global").score == a.score
    p = wavedp.Scoring(matrix="BLOSUM62")
    x = wavedp.align("ACDUOJ", "acdxxx", p, mode="global")
    assert x.score == sum(int(p.table[p.alphabet.index(c), p.alphabet.index(c2)])
                          for c, c2 in zip("ACDXXX", "ACDXXX", strict=True))


def test_long_pair_linear_memory_traceback():
    """A pair big enough to use checkpoint bands gives an alignment that rescores exactly."""
    rng = np.random.default_rng(3)
    a = random_seq(rng, "ACGT", 9000)
    b = related(rng, a, "ACGT", 0.2)
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    assert len(a) * len(b) > rows.FULL_MATRIX_CELLS
    check_traceback_against_score_only(a, b, scoring, "cpu")


def test_replaced_equals_dataclasses_replace():
    """alignment.replaced: the same Alignment as dataclasses.replace (fields, equality, hash,
    repr), the original unchanged; an unknown field is a TypeError, as replace's is."""
    from wavedp.alignment import replaced

    aln = wavedp.align("HEAGAWGHEE", "PAWHEAE", wavedp.Scoring(matrix="BLOSUM62", gap_open=11,
                                                               gap_extend=1))
    changes = {"evalue": 1.5e-3, "bitscore": 21.4, "strand": "-"}
    got, want = replaced(aln, **changes), replace(aln, **changes)
    assert type(got) is type(want) and got == want and hash(got) == hash(want)
    assert repr(got) == repr(want) and got.query == want.query and got.rows() == want.rows()
    assert aln.evalue is None and aln.strand is None
    with pytest.raises(TypeError, match="no field 'evalues'"):
        replaced(aln, evalues=1.0)


def test_built_equals_alignments_made_one_by_one():
    """alignment.built: the Alignments ``Alignment(...)`` makes (fields in the same order,
    equality, hash, repr), the collector left as it was; every field given once."""
    import gc

    from wavedp.alignment import FIELDS, built

    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    made = [wavedp.align("HEAGAWGHEE", t, scoring) for t in ("PAWHEAE", "AWGHE", "W")]
    same = {"mode": "local", "strand": None}
    columns = {f: [getattr(a, f) for a in made] for f in FIELDS if f not in same}
    got = built(columns, **same)
    assert got == made and [hash(a) for a in got] == [hash(a) for a in made]
    assert [list(vars(a).items()) for a in got] == [list(vars(a).items()) for a in made]
    assert [repr(a) for a in got] == [repr(a) for a in made] and gc.isenabled()
    with pytest.raises(TypeError, match="strand"):
        built(columns, mode="local")
    with pytest.raises(ValueError, match="one length"):
        built({**columns, "score": [1]}, **same)


@pytest.mark.parametrize("mode", sorted(MODES.values()))
@pytest.mark.parametrize("traceback", [False, True])
@pytest.mark.parametrize("m,n", [(0, 0), (0, 5), (3, 0)])
def test_an_empty_pair_is_the_boundary_in_every_engine(mode, traceback, m, n):
    """``empty_pair`` (what the GPU engine returns for a pair with nothing to sweep) is the
    CPU engine's result, field for field."""
    q, t = np.ones(m, np.uint8), np.full(n, 2, np.uint8)
    sub = np.eye(4, dtype=np.int32) * 5 - 1
    want = cpu.align_pairs([q], [t], np.zeros((1, 2), np.int64), sub, 11, 2, mode, traceback)[0]
    got = empty_pair(m, n, mode, 11, 2, traceback)
    assert got[:5] == tuple(want[:5])
    assert (got[5] is None) == (want[5] is None)
    if traceback:
        assert bytes(got[5]) == bytes(want[5])
