"""engines.cuda.nibbles: residues packed two letters a byte on the host and unpacked on the
GPU are the letters themselves; engines.cuda.writes' parallel kernel writes a chunk as the
writers' threads do; DNA pairs sent either way, in many chunks whose letters start at odd
offsets, align as when sent one letter a byte and as on the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pair_texts

import wavedp
from wavedp.engines.cuda import nibbles, pair_chunks, transfer, writes


def _packed_reference(letters: np.ndarray) -> np.ndarray:
    padded = np.zeros(2 * nibbles.packed_size(letters.size), np.uint8)
    padded[:letters.size] = letters
    return padded[0::2] | padded[1::2] << 4


@pytest.mark.parametrize("size", [0, 1, 2, 3, 8, 9, 1001, (1 << 23) + 3])
@pytest.mark.parametrize("pieces", [1, 3])
def test_pack_is_two_letters_a_byte(size, pieces, monkeypatch):
    """Letter k in the low (k even) or high nibble of byte k // 2, on any number of threads,
    nothing written past the packed bytes."""
    monkeypatch.setattr(transfer, "THREADS", pieces)
    letters = np.random.default_rng(size).integers(0, nibbles.LETTERS, size, dtype=np.uint8)
    out = np.full(nibbles.packed_size(size) + 1, 0xAB, np.uint8)
    transfer.host_work([nibbles.packer(out[:-1], letters)])
    np.testing.assert_array_equal(out[:-1], _packed_reference(letters))
    assert out[-1] == 0xAB


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("pieces", [1, 3, 16])
def test_parallel_write_is_the_writers(packed, pieces, monkeypatch):
    """A chunk's four arrays (odd sizes; the sides read off read-only int64 offsets, as a
    Sequences' may be, into int32) as the writers' threads write them, nothing written past
    a view; a small write is left to them (False, nothing written)."""
    if not writes._ready():
        pytest.skip("Numba's threading layer is not one for two threads at once")
    rng = np.random.default_rng(pieces)
    sources = [rng.integers(0, nibbles.LETTERS, size, dtype=np.uint8) for size in (1001, 4099)]
    sources += [np.cumsum(rng.integers(0, 300, 38, dtype=np.int64)) for _ in range(2)]
    for side in sources[2:]:
        side.flags.writeable = False
    size = nibbles.packed_size if packed else int
    shapes = [(np.uint8, size(s.size)) for s in sources[:2]] + [(np.int32, 37)] * 2

    def views():
        return [np.full(n + 1, 0x5A, dtype)[:n] for dtype, n in shapes]

    want, got = views(), views()
    transfer.host_work(pair_chunks.jobs(want, sources, packed, spans=True))
    np.testing.assert_array_equal(want[3], np.diff(sources[3]))
    assert not writes.write(got, sources, packed, pieces)  # under LEAST a piece
    assert all((v == 0x5A).all() for v in got)
    monkeypatch.setattr(writes, "LEAST", 1)
    assert writes.write(got, sources, packed, pieces)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.base[-1] == 0x5A


def test_alphabets_that_fit():
    """DNA's codes (and any alphabet of 16) pack; a protein alphabet's do not."""
    assert nibbles.fits(5) and nibbles.fits(16)
    assert not nibbles.fits(17) and not nibbles.fits(24)


@pytest.mark.gpu
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 15, 16, 17, 4097, (1 << 20) + 5])
def test_gpu_unpack_is_the_letters(size):
    import cupy

    letters = np.random.default_rng(size).integers(0, nibbles.LETTERS, size, dtype=np.uint8)
    packed = np.empty(nibbles.packed_size(size), np.uint8)
    transfer.host_work([nibbles.packer(packed, letters)])
    got = nibbles.unpack(cupy.asarray(packed), size).get()
    np.testing.assert_array_equal(got, letters)


@pytest.mark.gpu
@pytest.mark.parametrize("traceback", [True, False])
@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_gpu_dna_pairs_in_odd_chunks(mode, traceback, monkeypatch):
    """Many chunks, most starting at an odd letter: packed or not, by the writers' threads or
    the parallel kernel (where it serves: packed, or score-only), the CPU's batch."""
    from wavedp.engines.cuda import many_pairs, pair_chunks

    ready, four, calls = writes._ready(), writes._four, []  # probed before it is counted

    def counted(*args):
        calls.append(args[-1])
        return four(*args)

    monkeypatch.setattr(writes, "_four", counted)
    rng = np.random.default_rng(29)
    # no empty sequence: the pairs go one-to-one (an empty one sends them by index)
    sizes = [(int(m), int(n)) for m, n in zip(rng.integers(1, 200, 300),
                                              rng.integers(1, 330, 300), strict=True)]
    queries, targets = pair_texts("dna", sizes, seed=31)
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    want = wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                              device="cpu")
    monkeypatch.setattr(pair_chunks, "LEAST_PAIRS", 7)
    monkeypatch.setattr(pair_chunks, "LEAST_CHUNKS", 40)
    for nibbled, least in ((True, writes.LEAST), (False, writes.LEAST), (True, 1), (False, 1)):
        monkeypatch.setattr(many_pairs, "NIBBLES", nibbled)
        monkeypatch.setattr(writes, "LEAST", least)  # 1: every chunk where it serves
        calls.clear()
        got = wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                                 device="gpu")
        assert bool(calls) == (least == 1 and (nibbled or not traceback) and ready)
        for name in ("score", "query_start", "query_end", "target_start", "target_end"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), name)
        if traceback:
            np.testing.assert_array_equal(got.cigar_offsets, want.cigar_offsets)
            np.testing.assert_array_equal(got.cigar_runs, want.cigar_runs)
