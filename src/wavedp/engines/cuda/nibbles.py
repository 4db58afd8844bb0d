"""Two letters a byte on their way up: a chunk's residues, codes below LETTERS (DNA's), are
packed as the host writes them into page-locked memory, so the host writes and the link
carries half the bytes; the GPU unpacks them (``kernels/nibbles.cu``) into one letter a byte
before the sweep. Letter k of a packed run is the low (k even) or high nibble of byte k // 2.
"""

from __future__ import annotations

import numpy as np

from .module import function

#: codes a packed letter holds
LETTERS = 16
#: threads of the unpack kernel's blocks
BLOCK = 256


def fits(alphabet: int) -> bool:
    """Whether an alphabet of ``alphabet`` codes (0 .. alphabet - 1) packs two a byte."""
    return alphabet <= LETTERS


def packed_size(letters: int) -> int:
    """Bytes of ``letters`` letters packed."""
    return (letters + 1) // 2


def packer(dst: np.ndarray, src: np.ndarray) -> tuple:
    """``src`` (uint8 codes below LETTERS) packed into ``dst`` (``packed_size(src.size)``
    bytes), as ``transfer.host_work`` takes it: (work(a, b) writing bytes a:b, bytes)."""
    from .writes import pack  # lazy: Numba

    return (lambda a, b: pack(src[2 * a:2 * b], dst[a:b])), packed_size(src.size)


def unpack(packed, letters: int):
    """The ``letters`` letters of ``packed`` (a GPU array) one a byte, a new GPU array, on
    the current stream."""
    import cupy

    out = cupy.empty(max(letters, 1), cupy.uint8)
    words = -(-letters // 8)  # a thread's 8 letters
    if words:
        function("nibbles.cu", "unpack_nibbles")(
            (-(-words // BLOCK),), (BLOCK,), (packed, np.int64(letters), out))
    return out[:letters]
