"""``wavedp info``: the version, the backends and the devices found."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

import click
import numpy as np

from ..device import choose, gpu_status
from ..version import __version__


def _cupy_version() -> str | None:
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "cupy" or name.startswith("cupy-cuda"):
            return f"{dist.metadata['Name']} {dist.version}"
    return None


@click.command()
def info() -> None:
    """Print the version, the backends and the GPU devices found."""
    import numba  # lazy: Numba costs 0.15 s of every command's start-up

    ok, why = gpu_status()
    cupy = _cupy_version()
    lines = [
        f"wavedp {__version__}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"numpy: {np.__version__}",
        f"numba: {numba.__version__} (CPU engine: {numba.config.NUMBA_NUM_THREADS} threads, "
        f"{os.cpu_count()} CPUs)",
        f"cupy: {cupy or 'not installed'}" + ("" if ok else f"; not usable: {why}"),
        f"gpu: {why}" if ok else "gpu: none",
        f"device auto: {choose('auto').kind}",
    ]
    click.echo("\n".join(lines))
