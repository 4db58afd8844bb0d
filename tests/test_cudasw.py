"""The energy lab's same-board anchor: CUDASW++4.0's peak benchmark run as a subprocess (a
stand-in script here; the real one runs on the device)."""

import contextlib
import os
import stat
import sys

import pytest

from wavedp import energy
from wavedp.errors import DeviceError, InputError
from wavedp.lab import cudasw

ALIGN = """#!{python}
import os, sys
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "argv.txt"), "w").write(
    "\\n".join(sys.argv[1:]))
assert open(sys.argv[sys.argv.index("--query") + 1]).read().startswith(">q0\\n")
print("Processing query 0 ... Done. Scan time: 1.0 s, 4000 GCUPS")
print("Total time: {seconds} s, {gcups} GCUPS")
sys.exit({status})
"""


def fake_align(folder, seconds="4.5", gcups="4950.25", status=0) -> str:
    path = folder / "align"
    path.write_text(ALIGN.format(python=sys.executable, seconds=seconds, gcups=gcups,
                                 status=status))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def power(monkeypatch):
    """energy.measure without NVML: 150 W for 2 s, 500 W for the 4.5 s scan, 150 W for 1 s."""
    @contextlib.contextmanager
    def measure(device=None, interval=energy.SAMPLE_S):
        m = energy.Measurement((0,))
        yield m
        m.samples = [(k * 0.01, 500.0 if 2.0 <= k * 0.01 < 6.5 else 150.0)
                     for k in range(750)]
        m.seconds, m.joules = 7.5, 2_550.0

    monkeypatch.setattr(cudasw.energy, "measure", measure)


def test_the_total_line_is_parsed():
    text = "Done. Scan time: 1 s, 2 GCUPS\nTotal time: 8.62966 s, 4954.32 GCUPS\n"
    assert cudasw.parse_total(text) == (8.62966, 4954.32)
    assert cudasw.parse_total("Total time: 1e+01 s, 5e3 GCUPS") == (10.0, 5000.0)
    assert cudasw.parse_total("Processing query 0 ... Done.") is None


def test_the_scan_is_the_busiest_stretch():
    samples = [(k * 0.01, 500.0 if 200 <= k < 650 else 150.0) for k in range(750)]
    assert energy.busiest_watts(samples, 4.5) == pytest.approx(500.0, rel=0.01)
    assert energy.busiest_watts(samples, 2.0) == 500.0
    assert energy.busiest_watts(samples, 100.0) == pytest.approx(sum(w for _, w in samples) / 750)
    assert energy.busiest_watts([], 1.0) != energy.busiest_watts([], 1.0)  # nan


def test_a_run_is_an_anchor_row(tmp_path, power):
    notes = []
    row = cudasw.run(fake_align(tmp_path), ["MKV", "ACDEF"], 256, 1 << 20, notes.append)
    assert row["kind"] == "anchor" and row["length"] == 256 and row["queries"] == 2
    assert row["sequences"] == 4096 and row["seconds"] == 4.5
    assert row["cells"] == pytest.approx(4950.25e9 * 4.5)
    assert row["watts"] == pytest.approx(500.0, rel=0.01)
    assert row["joules"] == pytest.approx(row["watts"] * 4.5)
    assert row["process_seconds"] == 7.5 and row["process_joules"] == 2_550.0
    argv = (tmp_path / "argv.txt").read_text().splitlines()
    assert argv[argv.index("--pseudodb") + 1:] == ["4096", "256"]
    assert argv[argv.index("--singlePassType") + 1] == "DPXs16"
    assert "--uploadFull" in argv and argv[argv.index("--mat") + 1] == "blosum62"
    assert len(notes) == 1 and notes[0].startswith("energy: CUDASW++4.0, length 256: 4,950 GCUPS, ")


def test_a_failed_run_says_why(tmp_path, power):
    with pytest.raises(DeviceError, match=r"failed at length 128 \(exit status 3\): Total"):
        cudasw.run(fake_align(tmp_path, status=3), ["MKV"], 128, 1 << 20, print)
    bad = tmp_path / "bad"
    bad.mkdir()
    path = fake_align(bad)
    text = open(path).read().replace("Total time", "Totals")
    open(path, "w").write(text)
    with pytest.raises(DeviceError, match="exit status 0"):
        cudasw.run(path, ["MKV"], 128, 1 << 20, print)


def test_the_path_is_checked(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        cudasw.check(str(tmp_path / "align"))
    plain = tmp_path / "align"
    plain.write_text("")
    os.chmod(plain, 0o644)
    if os.geteuid() != 0:  # root may execute anything
        with pytest.raises(InputError, match="not executable"):
            cudasw.check(str(plain))
    cudasw.check(fake_align(tmp_path))
