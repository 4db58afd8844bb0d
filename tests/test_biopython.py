"""Alignment.to_biopython: the same coordinates, counts and rows in Biopython's Alignment."""

from __future__ import annotations

import os

import numpy as np
import pytest
from Bio.Align import substitution_matrices
from helpers import DNA, MODE_NAMES, PROTEIN, fresh, random_seq, related
from hypothesis import given, settings
from hypothesis import strategies as st

import wavedp
from wavedp import Alignment, InputError, scoring
from wavedp.dbsearch.strands import reverse_complement

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)


def _fasta_rows(bio) -> tuple[str, str]:
    """(query row, target row) of Biopython's FASTA text (the target is written first)."""
    lines = format(bio, "fasta").splitlines()
    assert lines[0].startswith(">") and lines[2].startswith(">")
    return lines[3], lines[1]


def _check(aln: Alignment) -> None:
    bio = aln.to_biopython()
    c = aln.counts()
    counts = bio.counts()
    assert (counts.identities, counts.mismatches) == (c["="], c["X"])
    assert counts.gaps == c["I"] + c["D"]
    assert (counts.insertions, counts.deletions) == (c["I"], c["D"])  # query only, target only
    assert _fasta_rows(bio) == aln.rows()
    assert bio.score == aln.score
    assert (bio.target.id, bio.query.id) == (aln.target_id, aln.query_id)
    assert bio.shape == (2, c["length"])
    t, q = bio.coordinates
    assert (t[0], t[-1]) == (aln.target_start, aln.target_end)
    if aln.strand == "-":  # the original query, read backwards
        m = len(aln.query)
        assert (q[0], q[-1]) == (m - aln.query_start, m - aln.query_end)
    else:
        assert (q[0], q[-1]) == (aln.query_start, aln.query_end)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODE_NAMES), st.booleans(), st.integers(0, 2**32 - 1))
def test_coordinates_counts_and_rows_equal_ours(mode, dna, seed):
    rng = np.random.default_rng(seed)
    letters, scoring = (DNA, DNA_SCORING) if dna else (PROTEIN, PROT)
    a = random_seq(rng, letters, int(rng.integers(0, 50)))
    b = random_seq(rng, letters, int(rng.integers(0, 8))) + related(rng, a, letters, 0.25)
    _check(wavedp.align(a, b, scoring, mode=mode, device="cpu"))


def test_a_known_alignment():
    aln = Alignment(score=9, query_start=2, query_end=8, target_start=1, target_end=6,
                    cigar="3=1I1X1=", query_id="q1", target_id="t1", query="GGACGTTAC",
                    target="CACGAACT", query_length=9, target_length=8)
    bio = aln.to_biopython()
    assert bio.coordinates.tolist() == [[1, 4, 4, 6], [2, 5, 6, 8]]
    assert format(bio, "fasta") == ">t1\nACG-AA\n>q1\nACGTTA\n"
    assert "ACG-AA" in str(bio) and "ACGTTA" in str(bio)
    _check(aln)


def test_minus_strand_hit_holds_the_original_query_backwards():
    rng = np.random.default_rng(4)
    query = random_seq(rng, DNA, 80)
    subject = random_seq(rng, DNA, 20) + reverse_complement(
        related(rng, query, DNA, 0.1), np.zeros(0, np.uint8))[0]
    hit = wavedp.search([query], [subject], DNA_SCORING, top=1, strand="minus",
                        device="cpu")[0][0]
    assert hit.strand == "-"
    bio = hit.to_biopython()
    assert str(bio.query.seq) == query  # the query as given, not its reverse complement
    q = bio.coordinates[1]
    assert all(np.diff(q) <= 0)
    # Biopython's coordinates on the original query are BLAST's (1-based qstart..qend)
    qstart, qend = hit.format("blast6").split("\t")[6:8]
    assert (int(q[-1]) + 1, int(q[0])) == (int(qstart), int(qend))
    _check(hit)


def test_empty_alignment_has_no_columns():
    aln = wavedp.align("AAAA", "CCCC", DNA_SCORING, device="cpu")
    assert aln.cigar == "" and aln.score == 0
    bio = aln.to_biopython()
    assert bio.shape == (2, 0) and bio.coordinates.tolist() == [[0], [0]]
    assert _fasta_rows(bio) == ("", "")
    _check(aln)


def test_global_alignment_with_end_gaps():
    aln = wavedp.align("MKVLAAGIC", "AAGICWWWW", PROT, mode="global", device="cpu")
    _check(aln)
    assert aln.to_biopython().coordinates[:, -1].tolist() == [9, 9]


def test_score_only_and_textless_alignments_are_input_errors():
    so = wavedp.align("MKVLA", "MKVLA", PROT, traceback=False, device="cpu")
    with pytest.raises(InputError, match="needs a traceback"):
        so.to_biopython()
    bare = Alignment(score=3, query_start=0, query_end=2, target_start=0, target_end=2,
                     cigar="2=")
    with pytest.raises(InputError, match="texts"):
        bare.to_biopython()


@pytest.mark.parametrize("name", substitution_matrices.load())
def test_matrix_files_read_plainly_equal_biopythons(name):
    """Every matrix wavedp reads straight from Biopython's data folder (to start without
    importing Bio.Align) is the one Biopython reads, letters, scores and dtype; the rest go
    through Biopython (and are refused with its reasons)."""
    plain = scoring._read_plain(os.path.join(scoring._matrix_folder(), name))
    usable = scoring._usable(name)
    if plain is not None:
        assert not isinstance(usable, str)
        assert plain[0] == usable[0]
        assert plain[1].dtype == usable[1].dtype and np.array_equal(plain[1], usable[1])
    else:
        assert isinstance(usable, str)


def test_a_matrix_loads_without_importing_bio_align():
    code = ("import sys, wavedp\n"
            "s = wavedp.Scoring(matrix='blosum62', gap_open=11, gap_extend=1)\n"
            "assert s.table.shape == (24, 24)\n"
            "assert 'Bio.Align' not in sys.modules, 'Bio.Align imported'\n")
    fresh(["-c", code], check=True)


def test_a_matrix_file_in_ncbis_format(tmp_path):
    """--matrix FILE: a matrix file in NCBI's format (Biopython writes it) scores as the
    matrix it holds, through the API and the command; a file that is not one is one line."""
    from click.testing import CliRunner

    from wavedp.cli import cli

    path = tmp_path / "my62.mat"
    path.write_text(str(substitution_matrices.load("BLOSUM62")))
    mine = wavedp.Scoring(matrix=str(path), gap_open=11, gap_extend=1)
    blosum = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    assert mine.matrix == str(path) and mine.alphabet == blosum.alphabet
    assert np.array_equal(mine.table, blosum.table)
    q, t = "MKTAYIAKQRQISFVKSHFSRQ", "MKTAYLAKQRQISFVKSHW"
    assert wavedp.align(q, t, mine).score == wavedp.align(q, t, blosum).score
    fa = tmp_path / "q.fa"
    fa.write_text(f">q\n{q}\n>t\n{t}\n")
    args = ["scores", str(fa), "--device", "cpu"]
    runner = CliRunner()
    assert runner.invoke(cli, [*args, "--matrix", str(path)]).output == \
        runner.invoke(cli, args).output
    bad = runner.invoke(cli, [*args, "--matrix", str(fa)])
    assert bad.exit_code == 2 and "not a substitution matrix" in bad.output
    assert str(fa) in bad.output
