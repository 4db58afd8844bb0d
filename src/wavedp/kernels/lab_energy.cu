// The lab's energy micro-benchmarks (Ranasinghe 2014, chapter 5): each kernel does mostly one
// kind of operation, long enough for NVML's energy counter, so that the energy of one
// operation comes out of a fit over runs of different intensity (wavedp/lab/energy.py).
// Every thread runs CHAINS independent dependency chains (so a full grid issues at the
// GPU's rate and one warp per multiprocessor far below it); the chains' values are data the
// compiler cannot fold, and each kernel writes its result only when it equals `key` (a value
// it practically never takes), so no operation can be dropped.
#include "common.cuh"

#define CHAINS 4
#define UNROLL 16
// most threads per block of energy_shared, and the slots of each thread's ring
#define SHARED_THREADS 256
#define RING 16
// slots of each thread's ring of 16-byte words in energy_shared16 (32 KB at 256 threads)
#define RING16 8
// 16-byte loads in flight per thread of energy_stream
#define STREAM_UNROLL 4

__device__ __forceinline__ void keep(unsigned v, unsigned key, unsigned* out) {
    if (v == key) out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// integer adds: Fibonacci steps a += b, b += a (2 CHAINS UNROLL adds per iteration)
extern "C" __global__ void energy_add(unsigned* out, unsigned key, int iters) {
    unsigned a[CHAINS], b[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) {
        a[c] = threadIdx.x + c;
        b[c] = blockIdx.x ^ (key + c);
    }
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) {
                a[c] += b[c];
                b[c] += a[c];
            }
        }
    }
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s ^= a[c] ^ b[c];
    keep(s, key, out);
}

// integer maxes, as the alignment kernels use them: add_max (Hopper's fused add-max, DPX) in
// Fibonacci steps with a floor, a = max(a + b, floor), b = max(b + a, floor) (floor > 0: the
// values never stop changing; 2 CHAINS UNROLL per iteration). PACKED: the two 16-bit halves
// form, __viaddmax_s16x2, as the search's packed scan uses it, with floor % 16 in both halves
// and starts below 256, so each half climbs about 20 Fibonacci steps before it wraps and
// falls to the floor: its bits toggle about as often per instruction as the 32-bit chains'
// (a large floor pins 16-bit chains to it, and their energy halves: H100, 2026-11).
template <bool PACKED>
__device__ __forceinline__ unsigned fused_add_max(unsigned a, unsigned b, unsigned floor) {
    if (PACKED) return __viaddmax_s16x2(a, b, floor);
    return (unsigned)add_max((int)a, (int)b, (int)floor);
}

template <bool PACKED>
__device__ __forceinline__ void max_chains(unsigned* out, unsigned key, int iters, int floor) {
    const unsigned f = PACKED ? ((unsigned)floor % 16u) * 0x10001u : (unsigned)floor;
    const unsigned spread = PACKED ? 0x00ff00ffu : 0xffffffffu;  // starts below 256 a half
    const unsigned mix = PACKED ? 0x10003u : 1u;                  // both halves differ
    unsigned a[CHAINS], b[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) {
        a[c] = f + ((threadIdx.x + c) * mix & spread);
        b[c] = f + ((blockIdx.x ^ (key + c)) & spread);
    }
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) {
                a[c] = fused_add_max<PACKED>(a[c], b[c], f);
                b[c] = fused_add_max<PACKED>(b[c], a[c], f);
            }
        }
    }
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s ^= a[c] ^ b[c];
    keep(s, key, out);
}

extern "C" __global__ void energy_max(unsigned* out, unsigned key, int iters, int floor) {
    max_chains<false>(out, key, iters, floor);
}

extern "C" __global__ void energy_max16(unsigned* out, unsigned key, int iters, int floor) {
    max_chains<true>(out, key, iters, floor);
}

// shared-memory loads: each chain walks a cycle through RING slots of the thread's own bank
// (no conflicts), one dependent 32-bit load per step (CHAINS UNROLL per iteration); a slot
// holds the byte offset of the next in its low 16 bits and pseudo-random high bits (the data
// toggles as real data does), masked off (a volatile load: all 32 bits are read)
extern "C" __global__ void __launch_bounds__(SHARED_THREADS) energy_shared(unsigned* out,
                                                                           unsigned key,
                                                                           int iters) {
    __shared__ unsigned ring[RING * SHARED_THREADS];
    const unsigned t = threadIdx.x, n = blockDim.x;
    for (unsigned k = 0; k < RING; ++k) {
        const unsigned next = (5 * k + 3) % RING;  // a full cycle over the RING slots
        ring[k * n + t] = (next * n + t) * 4 | ((k * n + t + key) * 2654435761u) << 16;
    }
    __syncthreads();
    const char* base = reinterpret_cast<const char*>(ring);
    unsigned p[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) p[c] = (c * RING / CHAINS * n + t) * 4;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c)
                p[c] = *reinterpret_cast<const volatile unsigned*>(base + p[c]) & 0xffffu;
        }
    }
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s ^= p[c];
    keep(s, key, out);
}

// 16-byte shared-memory loads (LDS.128, as the search's scan reads its profile): each chain
// walks a cycle through RING16 16-byte slots of the thread's own (consecutive threads read
// consecutive slots: a warp's load is four conflict-free wavefronts), one dependent load per
// step; a slot's four words are pseudo-random and XOR to the byte offset of the next slot in
// their low 16 bits, so every word is used (two LOP3 per load)
extern "C" __global__ void __launch_bounds__(SHARED_THREADS) energy_shared16(unsigned* out,
                                                                             unsigned key,
                                                                             int iters) {
    __shared__ uint4 ring16[RING16 * SHARED_THREADS];
    const unsigned t = threadIdx.x, n = blockDim.x;
    for (unsigned k = 0; k < RING16; ++k) {
        const unsigned next = (3 * k + 1) % RING16;  // a full cycle over the RING16 slots
        const unsigned r = (k * n + t + key) * 2654435761u;
        uint4 v = make_uint4(0u, r, r * 2246822519u, r * 3266489917u);
        v.x = ((next * n + t) * 16 ^ v.y ^ v.z ^ v.w) & 0xffffu | r << 16;
        ring16[k * n + t] = v;
    }
    __syncthreads();
    const char* base = reinterpret_cast<const char*>(ring16);
    unsigned p[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) p[c] = (c * RING16 / CHAINS * n + t) * 16;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) {
                const uint4 v = *reinterpret_cast<const uint4*>(base + p[c]);
                p[c] = (v.x ^ v.y ^ v.z ^ v.w) & 0xffffu;
            }
        }
    }
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s ^= p[c];
    keep(s, key, out);
}

// global-memory loads: `passes` sweeps over x (n 16-byte words, n a multiple of the grid's
// threads times STREAM_UNROLL), cached in L2 only (ld.global.cg), folded into one word. An
// x larger than L2 streams from DRAM; one well inside L2 is served by it.
extern "C" __global__ void energy_stream(const uint4* __restrict__ x, long long n, int passes,
                                         unsigned* out, unsigned key) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (int p = 0; p < passes; ++p) {
        for (long long i = first; i < n; i += STREAM_UNROLL * stride) {
            uint4 v[STREAM_UNROLL];
#pragma unroll
            for (int u = 0; u < STREAM_UNROLL; ++u) v[u] = __ldcg(x + i + u * stride);
#pragma unroll
            for (int u = 0; u < STREAM_UNROLL; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    keep(acc, key, out);
}
