"""Every CUDA kernel compiles with NVRTC for sm_80 and sm_90 (no GPU needed)."""

import pytest

from wavedp.engines.cuda.module import KERNELS, compile_all


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernels_compile(arch):
    sizes = compile_all(arch)
    assert set(sizes) == set(KERNELS)
    assert all(size > 0 for size in sizes.values())


def test_gpu_without_device_is_a_clear_error(monkeypatch):
    import wavedp
    from wavedp import device

    monkeypatch.setattr(device, "gpu_status", lambda: (False, "no CUDA device"))
    with pytest.raises(wavedp.InputError, match="no GPU"):
        wavedp.align("ACGT", "ACGT", wavedp.Scoring(match=1, mismatch=-1, gap_open=1,
                                                      gap_extend=1), device="gpu")
    assert device.resolve("auto") == "cpu"
