"""The GPU model a scan plans with: this machine's calibration (``wavedp calibrate``), else
the constants measured on an H100 (``h100.py``)."""

from __future__ import annotations

import functools

from ...calibration import Model, load
from . import h100

#: the constants of an H100, used where no calibration exists
DEFAULT_GPU = Model(kind="gpu", device="default (H100)", version="", calibrated=False,
                    rates=h100.RATES, single=h100.SINGLE, later=h100.LATER,
                    packing=h100.PACKING, later_shared=h100.LATER_SHARED, start=h100.START,
                    launch=h100.LAUNCH, unit=h100.UNIT, profile=h100.PROFILE,
                    subject=h100.SUBJECT, word=h100.WORD, side=h100.SIDE,
                    sms=132)


@functools.cache
def gpu_model() -> Model:
    """This process's GPU model: its calibration, else :data:`DEFAULT_GPU` (loaded once;
    ``gpu_model.cache_clear()`` reads the calibration file again)."""
    return load("gpu") or DEFAULT_GPU
