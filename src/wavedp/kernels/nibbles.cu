// Residues packed two letters a byte (engines/cuda/nibbles.py): letter k in the low (k even)
// or high nibble of byte k / 2, unpacked into one letter a byte. A thread takes 4 packed bytes
// and writes 8 letters; the last thread of a run of odd or short length writes those it has.
#include "common.cuh"

__global__ void unpack_nibbles(const u8* __restrict__ packed, i64 letters,
                               u8* __restrict__ out) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 first = 8 * w;
    if (first >= letters) return;
    if (first + 8 <= letters) {
        const unsigned v = *reinterpret_cast<const unsigned*>(packed + 4 * w);
        // bytes b0..b3 -> letters lo(b0) hi(b0) lo(b1) hi(b1) ...
        const unsigned lo = v & 0x0f0f0f0fu, hi = (v >> 4) & 0x0f0f0f0fu;
        const unsigned a = __byte_perm(lo, hi, 0x5140), b = __byte_perm(lo, hi, 0x7362);
        *reinterpret_cast<uint2*>(out + first) = make_uint2(a, b);
        return;
    }
    for (i64 k = first; k < letters; ++k)
        out[k] = packed[k >> 1] >> (4 * (k & 1)) & 15;
}
