"""``wavedp.engines.cpu.compile``: a cold Numba cache is told apart from a warm one, and the
compile message comes once a kernel. Tiny kernels compile, into a cache in a temporary folder."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numba
import numpy as np
import pytest
from helpers import fresh

from wavedp.engines.common import LOCAL
from wavedp.engines.cpu import align_pairs, whole_pairs
from wavedp.engines.cpu import compile as jit
from wavedp.engines.cpu.small import small_pairs

KERNEL = '''
from numba import njit


@njit(cache=True)
def kernel(x):
    return x + 1


@njit(cache=True)
def other(x):
    return x + 2
'''


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A module with one cached kernel, its cache in a temporary folder, not yet compiled."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jit, "_said", set())
    monkeypatch.setattr(jit, "_quiet", False)
    monkeypatch.setattr(jit, "_seen", set())
    (tmp_path / "wavedp_tiny_kernel.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("wavedp_tiny_kernel")
    yield module
    sys.modules.pop("wavedp_tiny_kernel", None)


def test_cold_then_warm_in_process_and_on_disk(tiny):
    assert jit.cold(tiny.kernel, (1,))
    assert jit.cold(tiny.kernel, None)
    assert tiny.kernel(1) == 2  # compiles and saves to the cache
    assert not jit.cold(tiny.kernel, (1,))  # loaded in this process
    fresh = importlib.reload(tiny).kernel  # a new dispatcher: only the disk cache knows it
    assert not fresh.overloads
    assert not jit.cold(fresh, (1,))
    assert not jit.cold(fresh, None)
    assert jit.cold(fresh, (1.5,))  # another signature compiles
    assert jit.cold(fresh, (np.zeros(3),))


def test_message_once_and_only_when_cold(tiny):
    said: list[str] = []
    assert jit.notice([(tiny.kernel, (1,), 2.4), (tiny.kernel, (2.0,), 1.0)], said.append)
    assert said == [jit.MESSAGE.format(seconds=3.4)]
    assert said[0] == "wavedp: compiling the CPU kernels for this machine, once (about 3 s)..."
    assert not jit.notice([(tiny.kernel, (3,), 2.0)], said.append)  # still cold: said already
    assert len(said) == 1


def test_warm_cache_says_nothing(tiny):
    tiny.kernel(1)
    fresh = importlib.reload(tiny).kernel
    said: list[str] = []
    assert not jit.notice([(fresh, (1,), 5.0)], said.append)
    assert said == []


def test_a_set_of_kernels_is_looked_at_once(tiny, monkeypatch):
    tiny.kernel(1)
    assert not jit.notice([(tiny.kernel, (1,), 1.0)], pytest.fail)

    def state(kernel, args):
        raise AssertionError("looked at again")

    monkeypatch.setattr(jit, "_state", state)
    assert not jit.notice([(tiny.kernel, (1,), 1.0)], pytest.fail)


def test_quiet_says_nothing(tiny):
    jit.quiet()
    assert not jit.notice([(tiny.kernel, (1,), 2.0)], pytest.fail)
    assert jit.cold(tiny.kernel, (1,))


def test_default_goes_to_stderr(tiny, capsys):
    jit.notice([(tiny.kernel, (1,), 2.0)])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == jit.MESSAGE.format(seconds=2.0) + "\n"


def test_marker_files_stand_in_when_numba_cannot_be_asked(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(jit, "_numba_cold", lambda kernel, sig: None)
    monkeypatch.setattr(jit, "user_cache_dir", lambda name: str(tmp_path / "user"))
    said: list[str] = []
    assert jit.cold(tiny.kernel, (1,))
    assert jit.notice([(tiny.kernel, (1,), 2.0)], said.append)
    assert len(said) == 1
    assert not jit.cold(tiny.kernel, (1,))  # the marker was written
    assert jit.cold(tiny.kernel, (1.5,))


def test_not_a_dispatcher_never_compiles():
    def plain(x):
        return x

    assert not jit.cold(plain, (1,))
    assert not jit.notice([(plain, (1,), 9.0)], lambda line: pytest.fail(line))


def test_engine_kernels_are_warm_once_called(monkeypatch):
    """A small call's traceback runs cell by cell (``small_pairs``), a larger one on the
    SIMD kernels (``whole_pairs``): each is warm once called."""
    from wavedp.engines import cpu

    codes = [np.array([0, 1, 2, 3], np.uint8)]
    sub = np.eye(4, dtype=np.int32)
    align_pairs(codes, codes, np.zeros((1, 2), np.int64), sub, 2, 1, LOCAL, True)
    assert not jit.cold(small_pairs, None)
    monkeypatch.setattr(cpu, "SMALL_CELLS", 0)
    align_pairs(codes, codes, np.zeros((1, 2), np.int64), sub, 2, 1, LOCAL, True)
    assert not jit.cold(whole_pairs, None)


def test_a_kernel_not_said_before_is_said(tiny):
    """A later set of kernels says the message again only for a kernel not said yet."""
    said: list[str] = []
    assert jit.notice([(tiny.kernel, (1,), 2.0)], said.append)
    assert not jit.notice([(tiny.kernel, (2,), 1.0)], said.append)
    assert jit.notice([(tiny.kernel, (3,), 1.0), (tiny.other, (1,), 4.0)], said.append)
    assert said[1] == jit.MESSAGE.format(seconds=4.0)


def fresh_code(code: str) -> subprocess.CompletedProcess:
    """``code`` run in a fresh interpreter that imports this wavedp (stdout and stderr
    captured); an AssertionError with its stderr where it fails."""
    done = fresh(["-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def test_the_command_line_imports_numba_only_when_it_compiles_or_runs_a_kernel():
    """Numba costs about 0.2 s of a start-up: ``wavedp --help`` and the search command's
    modules import it only where a kernel runs (the CPU engines, the fit); makedb's parser
    is NumPy's."""
    code = ("import sys, wavedp.cli, wavedp.dbsearch.fitted, wavedp.db.database, "
            "wavedp.fasta_parser; "
            "assert 'numba' not in sys.modules, 'numba imported'")
    fresh_code(code)


def test_planning_a_gpu_scan_loads_no_numba():
    """The scan's planner (its ticket simulation included) runs without Numba: a fresh
    process's first plan does not wait for Numba's load (1.0-1.2 s on the H100 machine)."""
    code = ("import sys, numpy as np\n"
            "from wavedp.engines.cuda.scan import planner, shapes\n"
            "from wavedp.engines.cuda.scan.model import DEFAULT_GPU\n"
            "rng = np.random.default_rng(3)\n"
            "subjects = np.clip(rng.lognormal(np.log(300), 0.65, 20_000), 8, 35_000)\n"
            "units = np.array([4000, 1500, 700, 300, 120])\n"
            "name, batches, seconds = planner.schedule(\n"
            "    DEFAULT_GPU, 'auto', units, subjects.astype(np.int64), 24, True,\n"
            "    shapes.scan_need(24, 132), 1 << 30, wide=True)\n"
            "assert batches and all(s > 0 for s in seconds)\n"
            "assert 'numba' not in sys.modules, 'numba imported'")
    fresh_code(code)


def test_explaining_gpu_launches_loads_no_numba():
    """``search --explain``'s table of GPU launches imports no Numba (it took 0.3 s of every
    explained GPU command's wall clock); the CPU's predicted scan does."""
    code = ("import sys, time\n"
            "from wavedp.cli.search import _explain\n"
            "from wavedp.trace import LaunchTime, Trace\n"
            "trace = Trace()\n"
            "trace.launch(LaunchTime('static', 1, 10, 0.1, 0.1, 0.1))\n"
            "_explain(trace, time.perf_counter(), True, [5], 50)\n"
            "_explain(Trace(), time.perf_counter(), True, [5], 50)\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n")
    err = fresh_code(code).stderr
    assert "| 1 | static | 1 | 10 |" in err and "its fit's sample holds it whole" in err


def test_preload_walk_loads_numba_and_the_host_walk():
    """``engines.preload_walk``: on its thread, Numba, its code generator (the smallest
    cached kernel loaded) and the traceback walk's module."""
    code = ("import sys\n"
            "from wavedp import engines\n"
            "assert 'numba' not in sys.modules\n"
            "engines.preload_walk().join()\n"
            "from wavedp.engines.cpu import compile\n"
            "assert 'wavedp.engines.cuda.traceback' in sys.modules\n"
            "assert compile._ready.signatures, 'nothing loaded'\n")
    fresh_code(code)


def test_gpu_scores_of_pairs_load_no_numba():
    """The GPU's score-only pairs (a score-only search's hits) import no Numba: a fresh
    command's hits' stage paid Numba's import (0.25-0.4 s on the H100 machine). Traceback
    does: its host walk is a Numba kernel."""
    code = ("import sys\n"
            "import wavedp.engines.cuda.pairs\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n")
    fresh_code(code)
