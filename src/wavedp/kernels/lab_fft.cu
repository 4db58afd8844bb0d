// The lab's FFT: complex radix-2 decimation in time over the whole grid (Xiao and Feng,
// Fig. 13). Stage 0 copies the input into x in bit-reversed order; stage s = 1..logn does the
// n/2 butterflies of span 2^s in place. Stages depend on each other across the grid: the
// CPU-side strategies launch fft_stage once per stage, fft_stages<KIND> runs them all with an
// in-kernel barrier between stages. tw[k] = exp(-2 pi i k / n), k < n / 2 (computed in
// double precision on the host). Any grid size works: threads stride over the work.
#include "common.cuh"
#include "barriers.cuh"

__device__ __forceinline__ void fft_work(float2* x, const float2* in, const float2* tw, int logn,
                                         int s) {
    const unsigned n = 1u << logn;
    const unsigned stride = gridDim.x * blockDim.x;
    const unsigned first = blockIdx.x * blockDim.x + threadIdx.x;
    if (s == 0) {
        for (unsigned k = first; k < n; k += stride) x[__brev(k) >> (32 - logn)] = in[k];
        return;
    }
    const unsigned half = 1u << (s - 1);
    for (unsigned k = first; k < n / 2; k += stride) {
        const unsigned pos = k & (half - 1);
        const unsigned i = ((k >> (s - 1)) << s) | pos;
        const unsigned j = i + half;
        const float2 w = tw[pos << (logn - s)];
        const float2 u = x[i], b = x[j];
        const float2 v = make_float2(b.x * w.x - b.y * w.y, b.x * w.y + b.y * w.x);
        x[i] = make_float2(u.x + v.x, u.y + v.y);
        x[j] = make_float2(u.x - v.x, u.y - v.y);
    }
}

__global__ void fft_stage(float2* x, const float2* in, const float2* tw, int logn, int s) {
    fft_work(x, in, tw, logn, s);
}

template <int KIND>
__global__ void fft_stages(float2* x, const float2* in, const float2* tw, int logn,
                           unsigned* bar, unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    for (int s = 0; s <= logn; ++s) {
        fft_work(x, in, tw, logn, s);
        if (s < logn && !grid_sync<KIND>(sync)) return;
    }
}
