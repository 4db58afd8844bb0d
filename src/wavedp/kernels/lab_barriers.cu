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

// Two-level barriers through thread block clusters (Hopper and later), for
// benchmarks/cluster_barrier.py: the blocks of a cluster of CS meet first (``hw``: the
// cluster's hardware barrier, which cannot time out; ``mb``: the others arrive remotely at an
// mbarrier in the leader's shared memory, the leader polling it with bounded waits), then
// each cluster's leader arrives at one global counter (red.release) that every block polls
// (acquire). Kernels launched normally with their compile-time cluster size (clusters are
// co-scheduled); before compute capability 9.0 they only report ERR_NO_GRID.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define WAVEDP_CLUSTERS 1
#define CLUSTER_DIMS(CS) __cluster_dims__(CS, 1, 1)
#else
#define CLUSTER_DIMS(CS)
#endif

#ifdef WAVEDP_CLUSTERS
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// every thread
template <int CS>
__device__ __forceinline__ bool hw_cluster_sync(GridBarrier& b) {
    const unsigned goal = ++b.epoch;
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    bool ok = true;
    if (threadIdx.x == 0) {
        unsigned* counter = b.w + BAR_COUNT;
        if (cluster_rank() == 0) bar_red_release(counter, 1u);
        ok = bar_wait(counter, goal * (gridDim.x / CS), b);
    }
    return __syncthreads_and(ok);
}

__device__ __forceinline__ bool mb_done(unsigned local, unsigned parity) {
    unsigned done;
    asm volatile(
        "{ .reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(local), "r"(parity) : "memory");
    return done != 0;
}

// every thread; mb: the block's mbarrier (the leader's is the one used)
template <int CS>
__device__ __forceinline__ bool mb_cluster_sync(GridBarrier& b, unsigned long long* mb) {
    __syncthreads();
    const unsigned goal = ++b.epoch;
    bool ok = true;
    if (threadIdx.x == 0) {
        const unsigned local = (unsigned)__cvta_generic_to_shared(mb);
        const unsigned rank = cluster_rank();
        if (rank != 0) {
            unsigned remote;
            asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(local));
            asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
                         ::"r"(remote) : "memory");
        } else if (CS > 1) {
            unsigned polls = 0;
            unsigned long long start = 0;
            while (!mb_done(local, (goal - 1) & 1)) {
                if (!bar_spin(b, polls, start)) {
                    ok = false;
                    break;
                }
            }
        }
        unsigned* counter = b.w + BAR_COUNT;
        if (ok && rank == 0) bar_red_release(counter, 1u);
        ok = ok && bar_wait(counter, goal * (gridDim.x / CS), b);
    }
    return __syncthreads_and(ok);
}
#endif

// KIND 0: the cluster's hardware barrier first (hw_cluster_sync); 1: the leader's mbarrier
// (mb_cluster_sync)
template <int KIND, int CS>
__global__ void CLUSTER_DIMS(CS) cluster_rounds(float* a, const float* b, int rounds,
                                                unsigned* bar, unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
#ifdef WAVEDP_CLUSTERS
    __shared__ unsigned long long mb;
    if (KIND == 1) {
        if (threadIdx.x == 0) {
            const unsigned local = (unsigned)__cvta_generic_to_shared(&mb);
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
                         ::"r"(local), "r"(CS > 1 ? CS - 1 : 1) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
        asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    }
    for (int r = 0; r < rounds; ++r) {
        mean_round(a, b);
        if (!(KIND == 0 ? hw_cluster_sync<CS>(sync) : mb_cluster_sync<CS>(sync, &mb))) return;
    }
#else
    if (threadIdx.x == 0) atomicOr(sync.w + BAR_ERROR, ERR_NO_GRID);
#endif
}
