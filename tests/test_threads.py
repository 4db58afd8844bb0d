"""``threads=`` and ``--threads``: 1 runs every CPU kernel in the calling thread, any count
gives the same results as the default (every core)."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest
from click.testing import CliRunner

import wavedp
from wavedp.cli import cli
from wavedp.engines.cpu import threads as pool_threads
from wavedp.threads import limited

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
Q, T = str(EXAMPLES / "query.fa"), str(EXAMPLES / "target.fa")
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def test_limited_sets_and_restores_numbas_threads():
    before = numba.get_num_threads()
    with limited(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with limited(None):
        assert numba.get_num_threads() == before


@pytest.fixture
def no_pool(monkeypatch):
    """Fail if any kernel is sent to a pool thread."""
    def refuse(threads):
        raise AssertionError(f"a pool of {threads} threads was asked for")

    monkeypatch.setattr(pool_threads, "_pool", refuse)


def _workload():
    rng = np.random.default_rng(2)
    letters = list("ACDEFGHIKLMNPQRSTVWY")
    queries = ["".join(rng.choice(letters, 150)) for _ in range(3)]
    texts = ["".join(rng.choice(letters, int(n))) for n in rng.integers(50, 300, 400)]
    return queries, texts


def test_one_thread_is_the_calling_thread_and_the_same_results(no_pool, monkeypatch):
    queries, texts = _workload()
    one = {
        "search": wavedp.search(queries, texts, PROT, device="cpu", threads=1),
        "align_all": wavedp.align_all(queries, texts[:20], PROT, device="cpu", threads=1),
        "scores": wavedp.scores(queries, texts, PROT, device="cpu", threads=1),
    }
    monkeypatch.undo()  # every core again
    every = {
        "search": wavedp.search(queries, texts, PROT, device="cpu"),
        "align_all": wavedp.align_all(queries, texts[:20], PROT, device="cpu"),
        "scores": wavedp.scores(queries, texts, PROT, device="cpu"),
    }
    assert one["search"] == every["search"] and one["align_all"] == every["align_all"]
    assert np.array_equal(one["scores"], every["scores"])


COMMANDS = (["search", Q, T], ["align", Q, T, "--format", "blast6"], ["scores", Q, T])


def test_the_command_lines_one_thread(no_pool, tmp_path):
    runner = CliRunner()
    for args in COMMANDS:
        one = runner.invoke(cli, [*args, "--device", "cpu", "--threads", "1"])
        assert one.exit_code == 0 and one.stdout, one.output
    db = tmp_path / "t.wdb"
    assert runner.invoke(cli, ["makedb", T, "-o", str(db), "--threads", "1"]).exit_code == 0
    assert runner.invoke(cli, ["search", Q, str(db), "--device", "cpu", "--threads",
                               "1"]).stdout == runner.invoke(
        cli, ["search", Q, T, "--device", "cpu", "--threads", "1"]).stdout


def test_the_command_lines_outputs_do_not_depend_on_threads():
    runner = CliRunner()
    for args in COMMANDS:
        outputs = {runner.invoke(cli, [*args, "--device", "cpu", *extra]).stdout
                   for extra in ([], ["--threads", "1"], ["--threads", "2"])}
        assert len(outputs) == 1 and outputs != {""}


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_bad_thread_counts_are_one_line(value):
    got = CliRunner().invoke(cli, ["search", Q, T, "--threads", value])
    assert got.exit_code == 2 and got.stderr.count("\n") == 1 and "--threads" in got.stderr


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_bad_threads_in_python(value):
    with pytest.raises(wavedp.InputError, match="threads must be a positive integer"):
        wavedp.search(["MKV"], ["MKV"], PROT, device="cpu", threads=value)
