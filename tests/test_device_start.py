"""The GPUs' start: which GPUs the driver lists before CuPy loads, and their contexts opened
early (``wavedp.device``)."""

from __future__ import annotations

import pytest

import wavedp.device as device_mod
from wavedp.device import gpus_ahead


def test_gpus_ahead_from_the_driver_list(tmp_path, monkeypatch):
    monkeypatch.setattr(device_mod, "DRIVER_GPUS", str(tmp_path / "gpus"))
    assert gpus_ahead() == ()  # no driver: no GPU expected
    for name in ("0000:18:00.0", "0000:2a:00.0"):
        (tmp_path / "gpus" / name).mkdir(parents=True)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpus_ahead() == (0, 1)
    assert gpus_ahead("1") == (1,)
    assert gpus_ahead([0, 1]) == (0, 1)
    assert gpus_ahead("x") == ()  # not valid: choose() reports it
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert gpus_ahead() == (0,)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpus_ahead() == ()


class _FakeDriver:
    """The driver's C calls open_contexts makes, recorded (status 0 each, or ``failing``'s)."""

    def __init__(self, failing: str = "") -> None:
        self.calls: list[str] = []
        self.failing = failing

    def __getattr__(self, name: str):
        def call(*args) -> int:
            self.calls.append(name)
            return 100 if name == self.failing else 0
        return call


def test_open_contexts_starts_the_driver_then_each_context(monkeypatch):
    fake = _FakeDriver()
    monkeypatch.setattr(device_mod, "driver", lambda: fake)
    assert device_mod.open_contexts((0, 1))
    assert fake.calls == ["cuInit"] + ["cuDeviceGet", "cuDevicePrimaryCtxRetain"] * 2
    assert not device_mod.open_contexts(())  # no GPU expected: nothing called
    assert len(fake.calls) == 5
    for failing, calls in (("cuInit", 1), ("cuDeviceGet", 2)):
        fake = _FakeDriver(failing)
        monkeypatch.setattr(device_mod, "driver", lambda fake=fake: fake)
        assert not device_mod.open_contexts((0, 1))  # CuPy meets the failure and says it
        assert len(fake.calls) == calls


def test_open_contexts_without_a_driver(monkeypatch):
    monkeypatch.setattr(device_mod, "DRIVER_LIBRARY", "libwavedp-no-such-driver.so")
    device_mod.driver.cache_clear()
    try:
        assert not device_mod.open_contexts((0,))
    finally:
        device_mod.driver.cache_clear()


@pytest.mark.gpu
def test_cupy_works_in_the_context_opened_first():
    assert device_mod.open_contexts((0,))
    import cupy

    assert int(cupy.arange(10).sum()) == 45

