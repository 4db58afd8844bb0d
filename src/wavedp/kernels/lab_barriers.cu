// The lab's barrier micro-benchmark and barrier checks (Xiao and Feng, Fig. 11).
// - mean: each round every thread replaces its float by the mean of it and a second float
//   (weak-scaled: one element per thread, so every block has the same work at any grid
//   size); mean_step is one round (the CPU-side strategies launch it once per round),
//   mean_rounds<KIND> runs every round with an in-kernel barrier after each (KIND none: the
//   compute-only run; mean_rounds_spread: wavedp's own barrier). ``stuck`` names a block
//   that leaves at once, never arriving: the others must time out (a test hook; -1 for none).
// - stress: each round every thread reads words that four other blocks wrote in the previous
//   round and counts in *bad each one that does not hold the previous round's number, then
//   writes the current one: a barrier that lets a round see stale data shows up in *bad.
// - bar_probe: the floor a barrier is built from (round trips, fences, one line's queue).
#include "common.cuh"
#include "barriers.cuh"

__device__ __forceinline__ void mean_round(float* a, const float* b) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = 0.5f * (a[i] + b[i]);
}

__global__ void mean_step(float* a, const float* b) { mean_round(a, b); }

template <int KIND>
__device__ __forceinline__ void mean_run(float* a, const float* b, int rounds, int stuck,
                                         unsigned* bar, unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    if ((int)blockIdx.x == stuck) return;
    for (int r = 0; r < rounds; ++r) {
        mean_round(a, b);
        if (!grid_sync<KIND>(sync)) return;
    }
}

template <int KIND>
__global__ void mean_rounds(float* a, const float* b, int rounds, int stuck, unsigned* bar,
                            unsigned long long timeout_ns) {
    mean_run<KIND>(a, b, rounds, stuck, bar, timeout_ns);
}

// buf: two halves of n = gridDim.x * blockDim.x words; round r reads half r % 2 (written in
// round r - 1 with r; zero before round 0) and writes r + 1 into the other half
__device__ __forceinline__ void stress_round(unsigned* buf, int r, int* bad) {
    const unsigned n = gridDim.x * blockDim.x;
    const unsigned* src = buf + (r & 1) * n;
    unsigned* dst = buf + ((r + 1) & 1) * n;
#pragma unroll
    for (unsigned k = 1; k <= 4; ++k) {
        const unsigned block = (blockIdx.x + k * (unsigned)(r + 1)) % gridDim.x;
        const unsigned h = block * blockDim.x + (threadIdx.x * 5u + k) % blockDim.x;
        if (src[h] != (unsigned)r) atomicAdd(bad, 1);
    }
    dst[blockIdx.x * blockDim.x + threadIdx.x] = r + 1;
}

__global__ void stress_step(unsigned* buf, int r, int* bad) { stress_round(buf, r, bad); }

template <int KIND>
__device__ __forceinline__ void stress_run(unsigned* buf, int rounds, int* bad, unsigned* bar,
                                           unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    for (int r = 0; r < rounds; ++r) {
        stress_round(buf, r, bad);
        if (r + 1 < rounds && !grid_sync<KIND>(sync)) return;
    }
}

template <int KIND>
__global__ void stress_rounds(unsigned* buf, int rounds, int* bad, unsigned* bar,
                              unsigned long long timeout_ns) {
    stress_run<KIND>(buf, rounds, bad, bar, timeout_ns);
}

// wavedp's own barriers (barriers.cuh's SYNC_SPREAD): plain names, compiled with the file
// whatever template instances the launchers list (the algorithms' kernels have none of them)
#define TUNED_KERNELS(NAME, KIND)                                                            \
    extern "C" __global__ void mean_rounds_##NAME(float* a, const float* b, int rounds,      \
                                                  int stuck, unsigned* bar,                  \
                                                  unsigned long long timeout_ns) {           \
        mean_run<KIND>(a, b, rounds, stuck, bar, timeout_ns);                                \
    }                                                                                        \
    extern "C" __global__ void stress_rounds_##NAME(unsigned* buf, int rounds, int* bad,     \
                                                    unsigned* bar,                           \
                                                    unsigned long long timeout_ns) {         \
        stress_run<KIND>(buf, rounds, bad, bar, timeout_ns);                                 \
    }
TUNED_KERNELS(spread, SYNC_SPREAD)

// The floor of a barrier (barriers.floor): thread 0 of every block runs ``iters`` operations
// of one kind on word (blockIdx.x % spread) * 32 of w (``spread`` lines of 128 bytes), each
// waiting for the one before (``zero`` is 0: it makes each address depend on the last value
// without the compiler knowing). Kinds:
// 0 poll: ld.relaxed.gpu (an L2 round trip);  1 atomic: atom.add with its return value;
// 2 store + fence: a store, then fence.acq_rel.gpu (a release after writes: the MEMBAR waits
//   for the store's acknowledgement);  3 fence: fence.acq_rel.gpu alone;
// 4 red + poll: red.release.gpu.add, then ld.acquire.gpu of the same word (the simple
//   barrier's arrival and first poll).
extern "C" __global__ void bar_probe(unsigned* w, int kind, int iters, unsigned spread,
                                     unsigned zero) {
    if (threadIdx.x != 0) return;
    unsigned* p = w + (blockIdx.x % spread) * BAR_LINE;
    unsigned v = 0;
    for (int k = 0; k < iters; ++k) {
        unsigned* q = p + (v & zero);
        if (kind == 0) {
            v = bar_load(q);
        } else if (kind == 1) {
            asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;"
                         : "=r"(v) : "l"(q) : "memory");
        } else if (kind == 2) {
            asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(q + 1), "r"(v) : "memory");
            bar_fence();
        } else if (kind == 3) {
            bar_fence();
        } else {
            bar_red_release(q, 1u);
            v = bar_load_acquire(q);
        }
    }
    if (v == 0xffffffffu) w[2] = v;  // keeps v alive
}
