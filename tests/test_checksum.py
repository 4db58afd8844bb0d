"""CRC-32 on every core: the same value as zlib over the whole file (memory-mapped, as a
database's files are read), at any split."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

from wavedp.db import checksum


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 3 * 4096, 3 * 4096 + 1, 10 * 4096 - 7])
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_a_file_checksummed_in_pieces_is_zlibs_crc(tmp_path, size, threads):
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    mapped = np.memmap(path, np.uint8, "r") if size else np.zeros(0, np.uint8)
    assert checksum.crc32_buffer(mapped, threads, block=4096) == zlib.crc32(data)


@pytest.mark.parametrize("first,second", [(0, 5), (1, 1), (100, 3), (7, 1000), (5000, 4096)])
def test_combined_crcs_are_the_crc_of_the_concatenation(first, second):
    a, b = os.urandom(first), os.urandom(second)
    assert checksum.crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)
