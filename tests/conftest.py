"""Test-wide hooks: tests marked ``gpu`` skip unless CuPy imports and a CUDA device answers."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    from wavedp.device import gpu_status

    available, why = gpu_status()
    if available:
        return
    skip = pytest.mark.skip(reason=f"needs CuPy and a CUDA device: {why}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _no_compile_notice():
    """The once-per-process compile notice would add a stderr line to whichever test compiles
    first (tests compare stderr line by line); tests/test_compile.py checks it on its own."""
    from wavedp.engines.cpu import compile as jit

    jit.quiet()


@pytest.fixture
def poison(monkeypatch):
    """The multipass engine's output buffers poisoned (``multipass.POISON``)."""
    from wavedp.engines.cuda import multipass

    monkeypatch.setattr(multipass, "POISON", True)
