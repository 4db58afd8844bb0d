"""Several GPUs of one machine (``devices=``): the spreading and the checks run everywhere;
the GPU parts run two shards on one GPU where only one is present, and on two GPUs where two
are, and must equal one GPU's results exactly."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import PROTEIN, cpu_scanner, random_seq, related

import wavedp
import wavedp.cli as cli_module
from wavedp import device as _device
from wavedp.db.database import Database
from wavedp.engines.common import LOCAL
from wavedp.engines.cuda import gpus
from wavedp.errors import InputError

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def _gpu() -> bool:
    return _device.gpu_status()[0]


def _two_gpus() -> bool:
    return _device.gpu_count() >= 2


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_spread_covers_every_index_once_and_balances(parts):
    rng = np.random.default_rng(parts)
    costs = rng.integers(1, 10_000, 200) ** 2
    groups = gpus.spread(costs, parts)
    assert len(groups) == parts
    assert sorted(np.concatenate(groups).tolist()) == list(range(200))
    assert all(g.size and (np.diff(g) > 0).all() for g in groups)
    loads = [int(costs[g].sum()) for g in groups]
    assert max(loads) - min(loads) <= int(costs.max())  # greedy, largest first
    assert gpus.spread(np.array([5]), 4)[0].tolist() == [0]
    assert gpus.spread(np.zeros(0), 2) == []


@pytest.mark.parametrize("devices, message", [
    ("a,b", "comma-separated GPU indices"), ("0,,1", "comma-separated GPU indices"),
    ([], "non-empty list"), ([-1], "non-empty list"), ([True], "non-empty list"),
    ([0, 0], "lists a GPU twice"), (3.5, "list of GPU indices"),
])
def test_device_lists_that_are_not_lists_of_indices(devices, message):
    with pytest.raises(InputError, match=message):
        _device.check_devices(devices)


def test_an_index_past_the_visible_gpus_is_named():
    count = _device.gpu_count()
    with pytest.raises(InputError, match=f"GPU device index {count + 3} does not exist: "
                                         f"{count} visible"):
        _device.check_devices(f"{count + 3}")


def test_devices_on_the_cpu_engine_is_an_input_error():
    with pytest.raises(InputError, match="devices applies to the GPU engine only"):
        wavedp.search(["ACDE"], ["ACDEF"], PROT, device="cpu", devices=[0])
    with pytest.raises(InputError, match="devices applies to the GPU engine only"):
        wavedp.align_all(["ACDE"], ["ACDEF"], PROT, device="cpu", devices="0")


@pytest.mark.parametrize("command", ["search", "align"])
def test_cli_devices_errors_are_one_line(tmp_path, command):
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_text(">q\nACDEFGHIK\n")
    t.write_text(">t\nACDEFGHIKL\n")
    out = tmp_path / "out.txt"
    for devices, device, message in (("x", "gpu" if _gpu() else "cpu", None),
                                      ("0", "cpu", "devices applies to the GPU engine only")):
        result = CliRunner().invoke(cli_module.cli, [command, str(q), str(t), "--device", device,
                                                     "--devices", devices, "-o", str(out)])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert lines[-1].startswith("wavedp: error:") and "Traceback" not in result.output
        assert message is None or message in lines[-1]
        assert not out.exists()


@pytest.mark.gpu
def test_cli_device_index_that_does_not_exist(tmp_path):
    q = tmp_path / "q.fa"
    q.write_text(">q\nACDEFGHIK\n")
    result = CliRunner().invoke(cli_module.cli, ["search", str(q), str(q), "--device", "gpu",
                                                 "--devices", "0,99"])
    assert result.exit_code == 2
    assert "GPU device index 99 does not exist" in result.output


def _data(seed: int, count: int = 400):
    rng = np.random.default_rng(seed)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in (1, 40, 150, 333, 700)]
    texts = []
    for k in range(count):
        n = int(rng.integers(0, 500)) if k % 9 else int(rng.integers(0, 3))
        texts.append(related(rng, queries[k % 5], PROTEIN, 0.3)[:max(n, 1)] if k % 4 == 0
                     else random_seq(rng, PROTEIN, n))
    texts.append(texts[8])  # a tie
    return queries, texts


@pytest.mark.gpu
@pytest.mark.parametrize("shards", [2, 3])
def test_shards_on_one_gpu_equal_one_scanner(shards):
    """Several shards, each in its own thread and stream (all on GPU 0 here), merge to the
    single scanner's candidates: the same indices, scores and order."""
    queries, texts = _data(shards)
    db = Database.from_sequences(texts, alphabet="protein")
    codes = [PROT.encode(q) for q in queries]
    lut = db.codes_for(PROT)
    many = gpus.GpuScanner(db.residues, db.offsets, lut, PROT.table, PROT.gap_open,
                           PROT.gap_extend, LOCAL, (0,) * shards)
    assert len(many.scanners) == shards
    for k in (0, 1, 5):
        thresholds = [None, 20, None, 0, 30]
        want = cpu_scanner(db, lut, PROT, LOCAL).top(codes, k, thresholds)
        got = many.top(codes, k, thresholds)
        for (wi, ws), (gi, gs) in zip(want, got, strict=True):
            assert wi.tolist() == gi.tolist() and ws.tolist() == gs.tolist()


@pytest.mark.gpu
def test_pairs_spread_over_two_threads_equal_one_call(monkeypatch):
    monkeypatch.setattr(gpus, "SPREAD_CELLS", 0)
    twice = _device.Device("gpu", (0, 0))  # two threads, each with its own stream, on GPU 0
    queries, texts = _data(7, 60)
    one = wavedp.align_all(queries, texts, PROT, device="cpu")
    two = wavedp.align_all(queries, texts, PROT, device=twice)
    assert one == two
    hits = wavedp.search(queries, texts, PROT, top=5, fraction=0.5, device=twice)
    assert hits == wavedp.search(queries, texts, PROT, top=5, fraction=0.5, device="cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs")
@pytest.mark.parametrize("fraction", [None, 0.6])
def test_two_gpus_equal_one(monkeypatch, fraction):
    monkeypatch.setattr(gpus, "SPREAD_CELLS", 0)
    queries, texts = _data(11, 3000)
    one = wavedp.search(queries, texts, PROT, top=20, fraction=fraction, device="gpu",
                        devices=[0])
    both = wavedp.search(queries, texts, PROT, top=20, fraction=fraction, device="gpu",
                         devices=[0, 1])
    assert one == both == wavedp.search(queries, texts, PROT, top=20, fraction=fraction,
                                        device="gpu")  # default: every visible GPU
    pairs = wavedp.align_all(queries, texts[:300], PROT, device="gpu", devices="1,0")
    assert pairs == wavedp.align_all(queries, texts[:300], PROT, device="gpu", devices=[1])


@pytest.mark.gpu
@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs")
@pytest.mark.parametrize("fmt", ["blast6", "sam", "json"])
def test_cli_output_is_byte_identical_on_two_gpus(tmp_path, fmt):
    queries, texts = _data(13, 2000)
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_text("".join(f">q{k}\n{s}\n" for k, s in enumerate(queries)))
    t.write_text("".join(f">t{k}\n{s}\n" for k, s in enumerate(texts)))
    outputs = []
    for devices in ("0", "0,1"):
        out = tmp_path / f"{devices}.{fmt}"
        result = CliRunner().invoke(cli_module.cli, [
            "search", str(q), str(t), "--matrix", "BLOSUM62", "--gap-open", "11",
            "--gap-extend", "1", "--top", "0", "--fraction", "0.7", "--format", fmt,
            "--device", "gpu", "--devices", devices, "-o", str(out)])
        assert result.exit_code == 0, result.output
        # SAM's @PG line holds the command line, which names the devices
        outputs.append(b"".join(line for line in out.read_bytes().splitlines(keepends=True)
                                if not line.startswith(b"@PG")))
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000
