"""Hostile input, case by case: outputs that must not be destroyed, answers that must not be
wrong, failures that must be one line. Each test names the case of ``docs/design.md``'s
"Errors" and "Outputs" it holds."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import assert_user_error, db_data, fresh, fresh_env, invoke

import wavedp

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_bytes((EXAMPLES / "query.fa").read_bytes())
    t.write_bytes((EXAMPLES / "target.fa").read_bytes())
    return q, t


def search(q, t, *args):
    return invoke("search", q, t, "--device", "cpu", *args)


def expected(q, t) -> str:
    result = search(q, t)
    assert result.exit_code == 0 and result.stdout
    return result.stdout


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


# ---- 1. -o replaces nothing that is not a regular file ------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_output_to_a_device_writes_in_place(tmp_path, pair):
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    assert search(*pair, "-o", null).exit_code == 0
    assert stat.S_ISCHR(null.stat().st_mode)  # still the device, not a file
    assert leftovers(tmp_path) == []


def test_output_through_a_symlink_replaces_its_target(tmp_path, pair):
    real, link = tmp_path / "real.tsv", tmp_path / "link.tsv"
    real.write_text("old\n")
    link.symlink_to(real)
    assert search(*pair, "-o", link).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == expected(*pair)


def test_output_to_a_fifo_streams_to_its_reader(tmp_path, pair):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = search(*pair, "-o", fifo)
    reader.join(30)
    assert result.exit_code == 0 and stat.S_ISFIFO(fifo.stat().st_mode)
    assert got == [expected(*pair).encode()]
    assert leftovers(tmp_path) == []


def test_output_to_a_full_device_is_one_line(pair):
    assert_user_error(search(*pair, "-o", "/dev/full"), "/dev/full", "No space left")


# ---- 2. an output that is an input is refused before any work ---------------------------

@pytest.mark.parametrize("which", ["query", "database"])
def test_output_equal_to_an_input_is_refused(tmp_path, pair, which):
    q, t = pair
    before = digest(q), digest(t)
    assert_user_error(search(q, t, "-o", q if which == "query" else t), "would overwrite the input")
    assert (digest(q), digest(t)) == before


def test_output_inside_the_database_read_is_refused(tmp_path, pair):
    q, t = pair
    wdb = tmp_path / "t.wdb"
    assert invoke("makedb", t, "-o", wdb).exit_code == 0
    residues = db_data(wdb) / "residues.u8"
    before = digest(residues)
    assert_user_error(search(q, wdb, "-o", residues), "would overwrite the input")
    assert digest(residues) == before
    assert search(q, wdb).exit_code == 0  # the database is intact


def test_fold_output_equal_to_its_input_is_refused(tmp_path):
    rna = tmp_path / "rna.fa"
    rna.write_text(">r\nGGGAAAUCC\n")
    before = digest(rna)
    assert_user_error(invoke("fold", rna, "--device", "cpu", "-o", rna),
                      "would overwrite the input")
    assert digest(rna) == before


def test_output_with_a_symlink_to_an_input_is_refused(tmp_path, pair):
    q, t = pair
    link = tmp_path / "link.fa"
    link.symlink_to(q)
    before = digest(q)
    assert_user_error(search(q, t, "-o", link), "would overwrite the input")
    assert digest(q) == before


# ---- 3. SIGTERM and SIGHUP remove the temporary file; a dead process's is cleaned ---------

def _slow_search(tmp_path: Path) -> tuple[Path, Path]:
    """A search of a few seconds on the CPU (many queries against many subjects)."""
    rng = __import__("numpy").random.default_rng(3)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    q, t = tmp_path / "many_q.fa", tmp_path / "many_t.fa"
    q.write_text("".join(f">q{k}\n{''.join(rng.choice(list(letters), 400))}\n"
                         for k in range(200)))
    t.write_text("".join(f">t{k}\n{''.join(rng.choice(list(letters), 400))}\n"
                         for k in range(2000)))
    return q, t


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stopped_search_leaves_no_temporary_file(tmp_path, signum):
    q, t = _slow_search(tmp_path)
    out = tmp_path / "out.tsv"
    proc = subprocess.Popen([sys.executable, "-m", "wavedp.cli", "search", str(q), str(t),
                             "--device", "cpu", "-o", str(out)], env=fresh_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until the output's temporary file exists: the search runs
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    said = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    lines = err.decode().splitlines()
    assert lines[-1] == f"wavedp: error: {said}" and all(x.strip() for x in lines), err
    assert leftovers(tmp_path) == [] and not out.exists()


def test_a_stopped_search_of_standard_input_removes_its_copy(tmp_path):
    """Standard input is read into a temporary copy; a stopped command (which ends without
    the exit handlers) removes it too."""
    q, t = _slow_search(tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    out = tmp_path / "out.tsv"
    proc = subprocess.Popen([sys.executable, "-m", "wavedp.cli", "search", "-", str(t),
                             "--device", "cpu", "-o", str(out)], env=fresh_env(TMPDIR=str(temp)),
                            stdin=q.open("rb"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    assert [p.name.startswith("wavedp-stdin-") for p in temp.iterdir()] == [True]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert list(temp.iterdir()) == [] and leftovers(tmp_path) == []


def test_a_stop_swallowed_on_the_way_still_stops(tmp_path, pair, monkeypatch):
    """A signal's exception raised inside a native callback (Numba's compiler calls back into
    Python) is swallowed there: the command still stops, and puts no output in place."""
    from wavedp.cli import search as search_cli
    from wavedp.stops import Stopped

    def swallowing(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Stopped:
            pass  # as a ctypes callback does
        yield from real(*args, **kwargs)

    real = search_cli.Searcher.iter_search
    monkeypatch.setattr(search_cli.Searcher, "iter_search", swallowing)
    out = tmp_path / "out.tsv"
    got = invoke("search", *pair, "--device", "cpu", "-o", out)
    assert got.exit_code == 128 + signal.SIGTERM
    assert got.stderr.strip() == "wavedp: error: stopped by SIGTERM"
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_dead_process_temporary_file_is_removed_by_the_next_run(tmp_path, pair):
    out = tmp_path / "out.tsv"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.tsv.{dead.pid}.x1y2.part"
    stale.write_text("half an output")
    mine = tmp_path / f".out.tsv.{os.getpid()}.zz.part"  # a live process's: kept
    mine.write_text("in progress")
    assert search(*pair, "-o", out).exit_code == 0
    assert not stale.exists() and mine.exists()
    mine.unlink()


# ---- 4. an empty sequence is no hit; no E-value of 0 from a score of 0 --------------------

def test_an_empty_query_has_no_hits(tmp_path, pair):
    q, t = pair
    empty = tmp_path / "e.fa"
    empty.write_text(">e\n\n>f\nMKTAYIAKQRQISFVKSHFSRQ\n")
    result = search(empty, t, "--evalue", "1e6")
    assert result.exit_code == 0
    assert all(not line.startswith("e\t") for line in result.stdout.splitlines())
    assert result.stderr.count("wavedp: warning:") == 1 and "'e'" in result.stderr
    with pytest.warns(wavedp.errors.EmptyWarning):
        hits = wavedp.search(["", "MKTAYIAKQR"], [t.read_text().split()[1]], PROT,
                             evalue=None, device="cpu")
    assert hits[0] == []


def test_no_hit_has_an_evalue_of_zero_from_a_score_of_zero():
    with pytest.warns(wavedp.errors.EmptyWarning):
        hits = wavedp.search(["MKT", "W"], ["", "MKT", "PPPP"], PROT, top=0, evalue=1e9,
                             device="cpu")
    for h in (h for q in hits for h in q):
        assert h.score > 0 and h.evalue > 0


# ---- 5. control bytes are input errors naming record and position -------------------------

def test_a_nul_byte_is_an_input_error(tmp_path):
    fa = tmp_path / "nul.fa"
    fa.write_bytes(b">a\nMKT\x00AYI\n>b\nACDEFG\n")
    assert_user_error(invoke("align", fa, fa, "--device", "cpu"), "record 'a'", "position 4",
                      "0x00")
    assert_user_error(invoke("makedb", fa, "-o", tmp_path / "n.wdb"), "record 'a'", "position 4")
    assert not (tmp_path / "n.wdb").exists()


# ---- 6. a bare string is not a list of sequences ------------------------------------------

def test_align_all_refuses_a_bare_string():
    with pytest.raises(wavedp.InputError, match="list of sequences"):
        wavedp.align_all("MKT", "MKT", PROT)


# ---- 7. tracebacks become one line ---------------------------------------------------------

@pytest.mark.parametrize("args", [["--match", "1099511627776", "--mismatch", "-1"],
                                  ["--gap-open", "1099511627776"]])
def test_huge_scores_are_one_line(pair, args):
    assert_user_error(invoke("align", *pair, "--device", "cpu", *args), "int32 score range")


def test_evalue_inf_keeps_every_hit(pair):
    result = search(*pair, "--evalue", "inf", "--top", "0")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) > 4


@pytest.mark.parametrize("call", [
    lambda: wavedp.Scoring(match=2**40, mismatch=-1),
    lambda: wavedp.search(None, ["ACD"], PROT, device="cpu"),
    lambda: wavedp.search(["ACD"], None, PROT, device="cpu"),
    lambda: wavedp.matrix_chain(None),
    lambda: wavedp.align("ACD", "ACD", PROT, traceback="no"),
    lambda: wavedp.search(["ACD"], ["ACDE"], PROT, device="cpu", traceback="no"),
    lambda: wavedp.search(["ACD"], ["ACDE"], PROT, device="cpu", mask="yes"),
])
def test_python_api_misuse_is_an_input_error(call):
    with pytest.raises(wavedp.InputError):
        call()


def test_nussinov_of_none_is_not_the_text_none():
    with pytest.raises(wavedp.InputError, match="RNA sequence must be str"):
        wavedp.nussinov(None)


def test_a_closed_stdout_pipe_ends_quietly(pair):
    q, t = pair
    proc = subprocess.Popen([sys.executable, "-m", "wavedp.cli", "search", str(q), str(t),
                             "--device", "cpu", "--top", "0", "--evalue", "inf"],
                            env=fresh_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and b"Traceback" not in err and b"error" not in err


def test_a_full_stdout_is_one_line(pair):
    with open("/dev/full", "w") as full:
        done = fresh(["-m", "wavedp.cli", "search", str(pair[0]), str(pair[1]), "--device",
                      "cpu"], stdout=full, stderr=subprocess.PIPE, timeout=300)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "No space left" in lines[0]


# ---- 8. the same rule everywhere, and messages that say what is wrong ----------------------

def test_no_command_creates_a_missing_folder(tmp_path, pair):
    q, t = pair
    assert_user_error(search(q, t, "-o", tmp_path / "no" / "out.tsv"), "does not exist")
    assert_user_error(search(q, t, "-o", tmp_path / "no" / "out.tsv", "--resume"), "does not exist")
    assert_user_error(invoke("makedb", t, "-o", tmp_path / "no" / "t.wdb"), "does not exist")
    assert not (tmp_path / "no").exists()


def test_sam_with_duplicate_database_ids_is_refused(tmp_path, pair):
    q, _ = pair
    db = tmp_path / "dup.fa"
    db.write_text(">a\nMKTAYIAKQR\n>a\nMKTAYIAKQQ\n")
    assert_user_error(search(q, db, "--format", "sam"), "'a'", "unique")
    assert search(q, db, "--format", "blast6").exit_code == 0


@pytest.mark.parametrize("pairs", [False, True])
def test_sam_of_align_with_duplicate_target_ids_is_refused(tmp_path, pairs):
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_text(">q1\nMKTAYIAKQR\n>q2\nMKTAYIAKQQ\n")
    t.write_text(">a x\nMKTAYIAKQR\n>a y\nMKTAYIAKQQ\n")
    out = tmp_path / "out.sam"
    extra = ["--pairs"] if pairs else []
    assert_user_error(invoke("align", q, t, *extra, "--device", "cpu", "--format", "sam", "-o",
                             out), "'a'", "unique", str(t))
    assert not out.exists()
    assert invoke("align", q, t, *extra, "--device", "cpu").exit_code == 0


def test_strand_on_a_protein_search_is_refused(pair):
    assert_user_error(search(*pair, "--strand", "plus"), "DNA")


def test_makedb_guesses_dna(tmp_path):
    fa = tmp_path / "dna.fa"
    fa.write_text(">d1\nACGTACGTNNACGTAGCTAGCT\n>d2\nACGGGTTAACCA\n")
    result = invoke("makedb", fa, "-o", tmp_path / "d.wdb")
    assert result.exit_code == 0 and "(dna, guessed)" in result.stderr
    assert wavedp.Database.open(tmp_path / "d.wdb").alphabet == "dna"


def test_the_matrices_offered_are_the_matrices_taken():
    with pytest.raises(wavedp.InputError) as info:
        wavedp.Scoring(matrix="NOSUCH")
    offered = str(info.value).split("takes: ")[1].split(", ")
    for name in offered:
        wavedp.Scoring(matrix=name)  # each one loads
    for refused in ("GONNET1992", "BENNER22", "GENETIC", "SCHNEIDER"):
        assert refused not in offered


def test_messages_name_what_is_wrong(tmp_path, pair):
    q, t = pair
    assert_user_error(search(q, t, "-o", "/proc/version"), "/proc/version", "temporary file")
    assert_user_error(invoke("align", q, t, "--device", "cpu", "--strategy", "bogus"),
                      "strategy must be one of")
    assert_user_error(invoke("chain", tmp_path / "nothere.txt"), "no such file")
    dna = tmp_path / "d.wdb"
    (tmp_path / "d.fa").write_text(">d\nACGTACGT\n")
    assert invoke("makedb", tmp_path / "d.fa", "-o", dna).exit_code == 0
    line = assert_user_error(search(tmp_path / "d.fa", dna, "--matrix", "NUC.4.4"),
                             "matrix scoring")
    assert "protein scoring" not in line


def test_no_nvidia_driver_is_said_plainly(monkeypatch):
    from wavedp import device

    class NoDriver:
        class cuda:  # noqa: N801 - cupy's shape
            class runtime:  # noqa: N801
                @staticmethod
                def getDeviceCount():
                    raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is "
                                       "insufficient for CUDA runtime version")

                @staticmethod
                def driverGetVersion():
                    return 0

    monkeypatch.setitem(sys.modules, "cupy", NoDriver)
    device._probe.cache_clear()
    try:
        assert device.gpu_status() == (False, "no NVIDIA driver on this machine")
    finally:
        device._probe.cache_clear()


def test_starting_the_gpus_early_changes_no_choice():
    """``start_gpus`` (a command's GPUs started while it reads its inputs) leaves every
    decision to ``choose``: the same device as without it, bad device lists still refused
    there, and nothing started for the CPU."""
    from wavedp import device

    before = threading.active_count()
    device.start_gpus("cpu")
    assert threading.active_count() == before
    device.start_gpus("auto", "0,nine")  # a bad list: the thread swallows, choose refuses
    device.start_gpus("auto")
    for thread in threading.enumerate():
        if thread.name == "wavedp-gpu-start":
            thread.join(30)
    assert device.choose("auto").kind == ("gpu" if device.gpu_status()[0] else "cpu")
    with pytest.raises(wavedp.InputError, match="comma-separated"):
        device.choose("auto", "0,nine") if device.gpu_status()[0] else device.check_devices(
            "0,nine")


def test_after_a_stop_a_teardown_error_prints_nothing():
    """What a stop signal interrupts may fail again as it is torn down (an object of
    Numba's compiler left half made raised in its ``__del__``, printing a traceback after
    the stop's line): after a stop, those errors are dropped."""
    code = ("import os, signal, sys, time\n"
            "from wavedp.stops import Stopped, stop_on_signals\n"
            "class HalfMade:\n"
            "    def __del__(self):\n"
            "        raise AttributeError('half made')\n"
            "try:\n"
            "    with stop_on_signals():\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n"
            "        time.sleep(5)\n"
            "except Stopped:\n"
            "    print('stopped')\n"
            "thing = HalfMade()\n"
            "del thing\n")
    done = fresh(["-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "stopped"
    assert "half made" not in done.stderr


def test_database_of_empty_records_warns_once(tmp_path, recwarn):
    """Only the empty-sequence warning: no NumPy warning from fitting no subject."""
    import warnings

    import wavedp

    path = tmp_path / "empty.fa"
    path.write_text(">a\n>b\n>c\n")
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        hits = wavedp.search(["MKVWACDEFGHIKLMNPQRST"], str(path), scoring, device="cpu")
    assert [list(h) for h in hits] == [[]]


def test_cpu_traceback_memory_refused_before_work(monkeypatch):
    """A traceback that cannot fit is one InputError before any kernel runs (a MemoryError
    and its traceback after the forward pass before); score-only needs no such memory."""
    import numpy as np

    import wavedp
    from wavedp.engines import cpu
    from wavedp.engines.cpu import budget

    scoring = wavedp.Scoring(match=1, mismatch=-2, gap_open=3, gap_extend=1)
    rng = np.random.default_rng(1)
    query = "".join(rng.choice(list("ACGT"), 300))
    target = "".join(rng.choice(list("ACGT"), 200_000))
    monkeypatch.setattr(budget, "available", lambda: 20 << 20)
    ran = []
    monkeypatch.setattr(cpu, "spread", lambda *args: ran.append(args))
    with pytest.raises(wavedp.InputError, match="needs .* GiB .* available"):
        wavedp.align(query, target, scoring, device="cpu")
    with pytest.raises(wavedp.InputError, match="--score-only"):
        wavedp.align_pairs([query], [target], scoring, device="cpu")
    assert ran == []
    wavedp.align(query, target, scoring, device="cpu", traceback=False)
    assert ran


def test_a_search_refuses_a_traceback_that_cannot_fit_before_its_scan(monkeypatch):
    """A CPU search whose hit against the database's longest sequence could not be traced
    back is refused before the scan (it was refused after scanning: 30 s on a genome)."""
    import numpy as np

    import wavedp
    from wavedp.engines.cpu import budget
    from wavedp.engines.cpu import scan as cpu_scan

    scoring = wavedp.Scoring(match=1, mismatch=-2, gap_open=3, gap_extend=1)
    rng = np.random.default_rng(2)
    query = "".join(rng.choice(list("ACGT"), 300))
    genome = ["".join(rng.choice(list("ACGT"), 200_000)), query]
    monkeypatch.setattr(budget, "available", lambda: 20 << 20)
    scanned, real_top = [], cpu_scan.CpuScanner.top
    monkeypatch.setattr(cpu_scan.CpuScanner, "top", lambda *args: scanned.append(args))
    with pytest.raises(wavedp.InputError, match="needs .* GiB .* available"):
        wavedp.search([query], genome, scoring, device="cpu", stats="none")
    assert scanned == []
    monkeypatch.setattr(cpu_scan.CpuScanner, "top", real_top)
    hits = wavedp.search([query], genome, scoring, device="cpu", stats="none",
                         traceback=False, top=1)[0]
    assert hits[0].target_id == "target2"  # score-only needs no such memory


def test_undecodable_header_and_duplicate_ids_named(tmp_path):
    """A byte that is not UTF-8 is named by line, column and record; SAM's duplicate ids by
    the database file given (not '(in memory)')."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    latin = tmp_path / "latin.fa"
    latin.write_bytes(b">a\nMKV\n>caf\xe9 b\nMKVW\n")
    got = invoke("search", latin, examples / "target.fa", "--device", "cpu")
    assert got.exit_code == 2
    assert "byte 0xe9 at line 3, column 5, in record" in got.stderr
    dup = tmp_path / "dup.fa"
    dup.write_text(">a\nMKVWACDEFG\n>a\nMKVWACDEFG\n")
    got = invoke("search", examples / "query.fa", dup, "--format", "sam", "--device", "cpu")
    assert got.exit_code == 2 and f"database {dup}: the id 'a'" in got.stderr


def test_a_signal_swallowed_by_a_native_callback_still_stops(monkeypatch):
    """Ctrl-C or SIGTERM that lands in a Numba compile (a ctypes callback swallows the
    exception raised there) is remembered: the command stops before its output is put in
    place, SIGINT as KeyboardInterrupt (exit 130), SIGTERM as Stopped."""
    import ctypes

    from wavedp import stops

    callback = ctypes.CFUNCTYPE(None)
    for signum, raised in ((signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, stops.Stopped)):
        with pytest.raises(raised):
            with stops.stop_on_signals():
                callback(lambda s=signum: signal.raise_signal(s))()  # swallowed in there
                assert stops._pending == [signum]  # remembered


def test_a_swallowed_stop_takes_effect_at_the_next_kernel():
    """A stop swallowed while a kernel compiled does not wait for the command's end: the CPU
    pool's next kernel does not start (a search under load had run on for a minute), and the
    next command starts clean."""
    import ctypes

    import numpy as np

    from wavedp import stops
    from wavedp.engines.cpu import threads

    ran = []

    def kernel(first, step, out):
        ran.append(first)

    callback = ctypes.CFUNCTYPE(None)
    with pytest.raises(stops.Stopped):
        with stops.stop_on_signals():
            callback(lambda: signal.raise_signal(signal.SIGTERM))()  # swallowed in there
            threads.spread(kernel, 4, np.zeros(4))
    assert ran == [] and stops._pending == []
    threads.spread(kernel, 2, np.zeros(2))
    assert sorted(ran) == list(range(min(2, threads.numba.get_num_threads())))
