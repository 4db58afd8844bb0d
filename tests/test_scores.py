"""wavedp.scores: every entry equals wavedp.align's score (every mode, protein and DNA, empty
sequences), all-vs-all, the memory check, and the .npy/.tsv writer; GPU tests marked gpu."""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from helpers import DNA, MODE_NAMES, PROTEIN, random_seq, related

import wavedp
from wavedp import InputError
from wavedp.score_matrix import memory_needed, prepared, save, scores, write_tsv

MODULE = importlib.import_module("wavedp.score_matrix")
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)


def _sets(seed: int, dna: bool) -> tuple[list[str], list[str], wavedp.Scoring]:
    """Random and related queries and targets, empty ones among them."""
    rng = np.random.default_rng(seed)
    letters, scoring = (DNA + "N", DNA_SCORING) if dna else (PROTEIN, PROT)
    queries = [random_seq(rng, letters, int(n)) for n in rng.integers(1, 70, 7)]
    queries[2] = ""
    targets = [related(rng, q, letters, 0.3) for q in queries[:4]]
    targets += [random_seq(rng, letters, int(n)) for n in rng.integers(1, 90, 5)] + ["", "A"]
    return queries, targets, scoring


def _expected(queries: list[str], targets: list[str], scoring: wavedp.Scoring, mode: str,
              device: str = "cpu") -> np.ndarray:
    return np.array([[a.score for a in wavedp.align_all([q], targets, scoring, mode=mode,
                                                        traceback=False, device=device)]
                     for q in queries], np.int32).reshape(len(queries), len(targets))


@pytest.mark.parametrize("dna", [False, True])
@pytest.mark.parametrize("mode", MODE_NAMES)
def test_every_entry_equals_align_on_the_cpu(mode, dna):
    queries, targets, scoring = _sets(10 + dna, dna)
    got = scores(queries, targets, scoring, mode=mode, device="cpu")
    assert got.dtype == np.int32 and got.shape == (len(queries), len(targets))
    assert np.array_equal(got, _expected(queries, targets, scoring, mode))
    for k in (0, 5):  # spot checks against align itself
        for j in (0, 4, len(targets) - 2):
            assert got[k, j] == wavedp.align(queries[k], targets[j], scoring, mode=mode,
                                             device="cpu").score


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_empty_sequences_follow_the_boundary_rule(mode):
    got = scores(["", "MKV", ""], ["", "WWKKL", "A"], PROT, mode=mode, device="cpu")
    assert np.array_equal(got, _expected(["", "MKV", ""], ["", "WWKKL", "A"], PROT, mode))
    if mode == "global":
        assert got[0].tolist() == [0, -(11 + 4), -11]


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_all_vs_all_is_the_queries_against_themselves(mode):
    queries, _, scoring = _sets(3, False)
    got = scores(queries, None, scoring, mode=mode, device="cpu")
    assert np.array_equal(got, scores(queries, queries, scoring, mode=mode, device="cpu"))
    assert np.array_equal(got, scores(queries, None, scoring, mode=mode, device="cpu",
                                      all_vs_all=True))
    assert np.array_equal(got, _expected(queries, queries, scoring, mode))
    if mode == "local":  # a symmetric matrix scores a pair the same both ways
        assert np.array_equal(got, got.T)


def test_inputs_fasta_paths_records_and_batches(tmp_path, monkeypatch):
    queries, targets, scoring = _sets(4, False)
    qf, tf = tmp_path / "q.fa", tmp_path / "t.fasta"
    qf.write_text("".join(f">q{k}\n{s}\n" for k, s in enumerate(queries)))
    tf.write_text("".join(f">t{k}\n{s}\n" for k, s in enumerate(targets)))
    want = scores(queries, targets, scoring, device="cpu")
    assert np.array_equal(scores(str(qf), tf, scoring, device="cpu"), want)
    records = [SeqRecord(Seq(s), id=f"r{k}") for k, s in enumerate(queries)]
    assert np.array_equal(scores(records, [s.encode() for s in targets], scoring,
                                 device="cpu"), want)
    monkeypatch.setattr(MODULE, "BATCH_BYTES", 1)  # one query a batch
    assert np.array_equal(scores(queries, targets, scoring, device="cpu"), want)
    assert prepared(str(qf), scoring, "query").ids == [f"q{k}" for k in range(len(queries))]
    assert prepared(records, scoring, "query").ids == [f"r{k}" for k in range(len(queries))]
    assert prepared(["MKV", "WW"], scoring, "target").ids == ["target1", "target2"]


def test_a_database_on_either_side(tmp_path):
    """A .wdb folder (or a Database) scores as the FASTA it was made from, by the API and by
    the command; a database of the other alphabet is one clear line."""
    from click.testing import CliRunner

    from wavedp.cli import cli

    queries, targets, scoring = _sets(4, False)
    tf = tmp_path / "t.fa"
    tf.write_text("".join(f">t{k}\n{s}\n" for k, s in enumerate(targets)))
    wdb = tmp_path / "t.wdb"
    wavedp.Database.build(tf, wdb, progress=False, alphabet="protein")
    want = scores(queries, str(tf), scoring, device="cpu")
    assert np.array_equal(scores(queries, str(wdb), scoring, device="cpu"), want)
    assert np.array_equal(scores(str(wdb), queries, scoring, device="cpu"), want.T)
    assert np.array_equal(scores(queries, wavedp.Database.open(wdb), scoring, device="cpu"),
                          want)
    assert prepared(str(wdb), scoring, "target").ids == [f"t{k}" for k in range(len(targets))]
    qf = tmp_path / "q.fa"
    qf.write_text("".join(f">q{k}\n{s}\n" for k, s in enumerate(queries)))
    runner = CliRunner()
    by_db = runner.invoke(cli, ["scores", str(qf), str(wdb), "--device", "cpu"])
    by_fasta = runner.invoke(cli, ["scores", str(qf), str(tf), "--device", "cpu"])
    assert by_db.exit_code == 0 and by_db.output == by_fasta.output
    with pytest.raises(InputError, match="protein database cannot be searched with DNA"):
        scores(["ACGT"], str(wdb), wavedp.Scoring(match=1, mismatch=-1), device="cpu")


def test_no_queries_or_no_targets():
    assert scores([], ["MKV"], PROT, device="cpu").shape == (0, 1)
    assert scores(["MKV"], [], PROT, device="cpu").shape == (1, 0)
    assert scores([], None, PROT, device="cpu").shape == (0, 0)


def test_the_memory_check_names_the_need(monkeypatch):
    monkeypatch.setattr(MODULE, "host_memory", lambda: 1 << 20)
    need = memory_needed([3] * 300, [4] * 1000)
    assert need > 300 * 1000 * 4
    with pytest.raises(InputError, match=r"300 x 1000 score matrix needs about .* MiB"):
        scores(["MKV"] * 300, ["MKVL"] * 1000, PROT, device="cpu")
    assert scores(["MKV"], ["MKVL"], PROT, device="cpu").shape == (1, 1)  # fits


def test_a_real_machine_reports_its_memory():
    assert MODULE.host_memory() > 1 << 26


def test_input_errors():
    with pytest.raises(InputError, match="wrap a single sequence"):
        scores("MKV", ["MKV"], PROT, device="cpu")
    with pytest.raises(InputError, match="mode"):
        scores(["MKV"], ["MKV"], PROT, mode="banded", device="cpu")
    with pytest.raises(InputError, match="no targets"):
        scores(["MKV"], ["MKV"], PROT, device="cpu", all_vs_all=True)
    with pytest.raises(InputError, match="position 2"):
        scores(["M1V"], ["MKV"], PROT, device="cpu")
    with pytest.raises(InputError, match="Scoring"):
        scores(["MKV"], ["MKV"], "BLOSUM62", device="cpu")  # type: ignore[arg-type]
    huge = wavedp.Scoring(match=1 << 20, mismatch=-1, gap_open=1, gap_extend=1)
    with pytest.raises(InputError, match="int32"):
        scores(["A" * 300], ["A" * 300], huge, device="cpu")


def test_save_npy_and_tsv(tmp_path):
    matrix = scores(["MKV", "WWK"], ["MKVL", "", "KW"], PROT, device="cpu")
    save(matrix, tmp_path / "m.npy")
    loaded = np.load(tmp_path / "m.npy")
    assert loaded.dtype == np.int32 and np.array_equal(loaded, matrix)
    save(matrix, tmp_path / "m.tsv", ["a", "b"], ["x", "y", "z"])
    lines = (tmp_path / "m.tsv").read_text().splitlines()
    assert lines[0] == "\tx\ty\tz"
    assert [line.split("\t") for line in lines[1:]] == [
        [rid, *map(str, row)] for rid, row in zip("ab", matrix.tolist(), strict=True)]
    save(matrix, tmp_path / "d.tsv")
    assert (tmp_path / "d.tsv").read_text().splitlines()[0] == "\ttarget1\ttarget2\ttarget3"
    buffer = io.StringIO()
    write_tsv(matrix[:1, :1], buffer, ["q"], ["t"])
    assert buffer.getvalue() == f"\tt\nq\t{matrix[0, 0]}\n"
    with pytest.raises(InputError, match=r"\.npy or \.tsv"):
        save(matrix, tmp_path / "m.csv")
    with pytest.raises(InputError, match="ids"):
        save(matrix, tmp_path / "m.tsv", ["a"], ["x", "y", "z"])
    with pytest.raises(InputError, match="tab"):
        save(matrix, tmp_path / "m.tsv", ["a\tb", "c"], ["x", "y", "z"])
    with pytest.raises(InputError, match="2-D integer"):
        save(np.zeros(3), tmp_path / "m.npy")
    with pytest.raises(InputError, match="cannot write"):
        save(matrix, tmp_path / "missing" / "m.npy")


# ---- the same on the GPU --------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dna", [False, True])
@pytest.mark.parametrize("mode", MODE_NAMES)
def test_every_entry_equals_align_on_the_gpu(mode, dna):
    queries, targets, scoring = _sets(20 + dna, dna)
    got = scores(queries, targets, scoring, mode=mode, device="gpu")
    assert got.dtype == np.int32
    assert np.array_equal(got, _expected(queries, targets, scoring, mode, device="gpu"))
    assert np.array_equal(got, scores(queries, targets, scoring, mode=mode, device="cpu"))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODE_NAMES)
def test_gpu_all_vs_all_and_empty_sequences(mode):
    queries, _, scoring = _sets(6, False)
    queries += ["", "W"]
    got = scores(queries, None, scoring, mode=mode, device="gpu")
    assert np.array_equal(got, _expected(queries, queries, scoring, mode))
    if mode == "local":
        assert np.array_equal(got, got.T)


@pytest.mark.gpu
def test_gpu_equals_cpu_on_a_larger_set():
    rng = np.random.default_rng(7)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in rng.integers(1, 400, 40)]
    targets = [random_seq(rng, PROTEIN, int(n)) for n in rng.integers(1, 600, 700)]
    for mode in MODE_NAMES:
        assert np.array_equal(scores(queries, targets, PROT, mode=mode, device="gpu"),
                              scores(queries, targets, PROT, mode=mode, device="cpu"))
