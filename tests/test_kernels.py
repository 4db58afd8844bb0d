"""Every CUDA kernel compiles with NVRTC for sm_80 and sm_90 (no GPU needed)."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from wavedp.engines.cuda.module import KERNELS, compile_cubin


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernels_compile(arch):
    """Every kernel file with all its template instances (NVRTC's log on a failure): the
    files on a thread a core (NVRTC lets go of the interpreter's lock; at most 8 at once,
    for memory), the most instances first, so the longest compiles start first."""
    files = sorted(KERNELS.items(), key=lambda item: -len(item[1]))
    with ThreadPoolExecutor(min(os.cpu_count() or 1, 8)) as pool:
        cubins = list(pool.map(lambda item: compile_cubin(*item, arch), files))
    assert all(cubins)


def test_gpu_without_device_is_a_clear_error(monkeypatch):
    import wavedp
    from wavedp import device

    monkeypatch.setattr(device, "gpu_status", lambda: (False, "no CUDA device"))
    with pytest.raises(wavedp.InputError, match="no GPU"):
        wavedp.align("ACGT", "ACGT", wavedp.Scoring(match=1, mismatch=-1, gap_open=1,
                                                      gap_extend=1), device="gpu")
    assert device.choose("auto") == device.Device("cpu", (), True)


@pytest.mark.parametrize("rpl", [4, 8])
@pytest.mark.parametrize("shape", [(1, 1), (127, 5), (128, 33), (300, 70)])
def test_strip_index_covers_the_kernels_direction_layout(shape, rpl):
    """Every cell of a block has its own byte inside the buffer the kernel fills."""
    from wavedp.engines.cpu.rows import strip_index

    rows, cols = shape
    strip = 32 * rpl
    size = -(-rows // strip) * strip * (cols + 31)
    idx = [strip_index(a, b, cols, rpl) for a in range(rows) for b in range(cols)]
    assert len(set(idx)) == rows * cols and 0 <= min(idx) and max(idx) < size
    # the kernel's formula: strip s, step st = b + lane, lane, row in lane
    a, b = rows - 1, cols - 1
    s, lane = a // strip, a % strip // rpl
    assert strip_index(a, b, cols, rpl) == ((s * (cols + 31) + b + lane) * 32 + lane) * rpl \
        + a % rpl


@pytest.mark.parametrize("m,n,every", [(1, 1, 256), (4096, 4096, 4096), (9000, 5000, 2048),
                                       (5000, 9000, 1024), (100, 9000, 4096)])
def test_checkpoint_blocks_are_disjoint(m, n, every):
    """Every checkpoint the forward sweep writes (column entries 1..every of each block,
    the block's bottom row) has its own int inside its own block."""
    from wavedp.engines.cuda.multipass import Checkpoints

    ck = Checkpoints(m, n, every)
    seen = np.zeros(ck.blocks * ck.block, np.int32)
    for b in range(ck.blocks):
        for k in range(ck.ncols):
            for e in (False, True):
                seen[ck.col(b, k, e):ck.col(b, k, e) + every + 1] += 1
        seen[ck.row(b):ck.row(b) + n + 1] += 1
        seen[ck.row(b, True):ck.row(b, True) + n + 1] += 1
        assert ck.row(b, True) + n + 1 <= (b + 1) * ck.block
    assert seen.max() == 1
    assert ck.nbytes == 4 * seen.size
