// In-kernel barriers between the blocks of one grid: the lab's synchronization strategies
// (Xiao and Feng, "Inter-block GPU communication via fast barrier synchronization").
// Include after common.cuh. Every barrier here is only safe on a co-resident grid: the
// launchers check the occupancy API and launch cooperatively (wavedp/lab/sync.py).
//
// - simple:   every block adds one to a counter and spins until it reaches N per barrier
//             passed so far (the paper's goalVal, a generation count that never resets);
// - tree2/3:  a combining tree: blocks arrive at one of m = ceil(sqrt(units)) group counters,
//             the last arrival of each group carries on one level up; every block spins on
//             the top counter until all of the top level's units have arrived;
// - lockfree: Arrayin/Arrayout without atomics: each block writes its generation to its
//             Arrayin slot, block 0's threads watch every slot, then write every Arrayout
//             slot, which each block watches;
// - grid:     cooperative groups' grid.sync() (the anchor; it cannot time out);
// - spread:   wavedp's own, not the papers' (spread_sync): the arrivals spread over
//             SPREAD_LINES counters, each block polls its own, then all of them;
// - none:     no barrier at all (compute-only runs for the time model).
//
// Cost, from the floor `wavedp lab barriers` measures (H100, 2026-11): an L2 round trip is
// about 0.19 us for a poll or an atomic of one block; a MEMBAR (fence.acq_rel.gpu, and every
// release operation: st/red/atom.release) costs 0.37 us even with nothing to drain, 0.49 us
// when 1,056 blocks fence at once; one 128-byte line serves an atomic per 0.74 ns but a poll
// per 0.21 ns, so N atomics on one line queue (1,056 take 0.78 us; spread over 8 or 32
// lines, 0.33 us) while N polls of one line hardly do (0.22 us a poll for 1,056 pollers);
// a warp's poll of 8 or 32 lines at once took 0.2 to 0.5 us longer than of one. Hence:
// - as few MEMBARs as the algorithm allows on the path from the last arrival to the last
//   waiter: waits poll with ld.acquire (an L1 invalidation, no MEMBAR), never a relaxed
//   poll and then a fence;
// - simple arrives with red (fire and forget: the arrival and the first poll travel
//   together); it still counts on one line, the paper's algorithm, so N t_a remains (eq. 6);
// - the tree's waiters poll the top counter itself (the last top-level arrival is a release
//   like every arrival), not a flag written after it: one MEMBAR and one hop fewer;
// - lock-free's Arrayin/Arrayout hold 32 blocks a line; block 0's threads load their slots
//   16 bytes at a time, and block 0 neither writes nor waits for its own slots;
// - a wait reads the clock and the error word only every BAR_CHECK polls, not per poll.
// Ordering: arrivals are release operations, waits acquire (a poll that reads a counter's
// value synchronizes with every release RMW before it), each framed by __syncthreads so every
// thread of a block is covered (cumulativity through the CTA barrier). Every wait is
// bounded: past timeout_ns (%globaltimer) the block sets ERR_TIMEOUT in the error word and
// gives up, and a block seeing the error word set gives up too, so a missing block ends the
// kernel with an error instead of a hang.

#if __has_include(<cooperative_groups.h>)
#include <cooperative_groups.h>
#define WAVEDP_HAS_CG 1
#endif

#define SYNC_NONE 0
#define SYNC_SIMPLE 1
#define SYNC_TREE2 2
#define SYNC_TREE3 3
#define SYNC_LOCKFREE 4
#define SYNC_GRID 5
// wavedp's own barrier, not the papers' (spread_sync); the micro-benchmark and the stress
// check run it (lab_barriers.cu's extern "C" kernels), the algorithms' kernels do not
#define SYNC_SPREAD 6

// layout of the barrier state: BAR_WORDS zeroed 32-bit words per launch (128-byte aligned)
#define BAR_LINE 32                                           // words per counter (128 bytes)
#define BAR_GROUPS 128                                        // counters per tree level
#define BAR_MAX_BLOCKS 8192                                   // largest grid served
#define BAR_ERROR 0                                           // error flags (ERR_TIMEOUT)
#define BAR_COUNT 32               // simple's counter / the tree's levels / spread's counters
#define BAR_IN (BAR_COUNT + 3 * BAR_GROUPS * BAR_LINE)        // lock-free Arrayin
#define BAR_OUT (BAR_IN + BAR_MAX_BLOCKS)                     // lock-free Arrayout
#define BAR_WORDS (BAR_OUT + BAR_MAX_BLOCKS)
#define BAR_CHECK 64  // polls between two looks at the clock and the error word
// spread's counters, one line each. 8: 1.15 us (1 block) to 2.25 us (1,056) on the H100;
// 32 lines with an acquire first phase measured 1.24 to 1.84 us in an earlier run (another
// machine): measure both before changing it
#define SPREAD_LINES 8

#define ERR_NO_GRID 4  // the grid barrier was compiled without cooperative_groups.h

struct GridBarrier {
    unsigned* w;                     // the state above
    unsigned long long timeout_ns;   // longest wait at one barrier
    unsigned epoch;                  // barriers this block has passed
};

__device__ __forceinline__ GridBarrier grid_barrier(unsigned* w, unsigned long long timeout_ns) {
    return GridBarrier{w, timeout_ns, 0u};
}

__device__ __forceinline__ unsigned bar_load(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned bar_load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// four consecutive words, 16-byte aligned
__device__ __forceinline__ uint4 bar_load_acquire4(const unsigned* p) {
    uint4 v;
    asm volatile("ld.acquire.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void bar_store_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// v into four consecutive words, 16-byte aligned
__device__ __forceinline__ void bar_store_relaxed4(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.v4.u32 [%0], {%1, %1, %1, %1};" ::"l"(p), "r"(v)
                 : "memory");
}

// an arrival whose old value nobody needs: fire and forget
__device__ __forceinline__ void bar_red_release(unsigned* p, unsigned v) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned bar_add_acq_rel(unsigned* p, unsigned v) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
                 : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

// this fence, then relaxed stores, is a release
__device__ __forceinline__ void bar_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// generation v has reached goal (wrap-around safe)
__device__ __forceinline__ bool reached(unsigned v, unsigned goal) { return (int)(v - goal) >= 0; }

// false once another block reported an error, or (setting ERR_TIMEOUT) past the timeout
__device__ __forceinline__ bool bar_keep_waiting(const GridBarrier& b, unsigned long long start) {
    if (bar_load(b.w + BAR_ERROR)) return false;
    if (now_ns() - start > b.timeout_ns) {
        atomicOr(b.w + BAR_ERROR, ERR_TIMEOUT);
        return false;
    }
    return true;
}

// after a poll that found the barrier not yet passed: true to poll again. The first one
// starts the clock; every BAR_CHECK-th looks at the error word and the clock (a poll is an
// L2 round trip, so a failure is noticed within microseconds, and the hot loop issues one
// load per pass, not three).
__device__ __forceinline__ bool bar_spin(const GridBarrier& b, unsigned& polls,
                                         unsigned long long& start) {
    if (polls++ == 0) {
        start = now_ns();
        return true;
    }
    return polls % BAR_CHECK != 0 || bar_keep_waiting(b, start);
}

// wait until *p reaches goal (ACQUIRE: the poll that sees it is an acquire); false if the
// barrier failed
template <bool ACQUIRE = true>
__device__ __forceinline__ bool bar_wait(const unsigned* p, unsigned goal, const GridBarrier& b) {
    unsigned polls = 0;
    unsigned long long start = 0;
    while (!reached(ACQUIRE ? bar_load_acquire(p) : bar_load(p), goal)) {
        if (!bar_spin(b, polls, start)) return false;
    }
    return true;
}

__device__ __forceinline__ unsigned ceil_sqrt(unsigned x) {
    unsigned r = (unsigned)sqrtf((float)x);
    while (r * r < x) ++r;
    while (r > 1 && (r - 1) * (r - 1) >= x) --r;
    return r;
}

// thread 0 of each block
__device__ __forceinline__ bool simple_sync(const GridBarrier& b, unsigned goal) {
    unsigned* counter = b.w + BAR_COUNT;
    bar_red_release(counter, 1u);
    return bar_wait(counter, goal * gridDim.x, b);
}

// units of the top level of the tree on gridDim.x blocks: the arrivals its counter awaits
// (out of line: it keeps the registers of the kernels that inline a barrier)
template <int LEVELS>
__device__ __noinline__ unsigned tree_top() {
    unsigned count = gridDim.x;
    for (int level = 0; level < LEVELS - 1; ++level) {
        const unsigned groups = ceil_sqrt(count);
        const unsigned width = (count + groups - 1) / groups;
        count = (count + width - 1) / width;
    }
    return count;
}

// thread 0 of each block; level l splits its units (blocks, then groups) into
// ceil(sqrt(units)) groups of ceil(units / groups), the top level is one group. The last
// arrival of a group goes on up (acq_rel: it carries every earlier arrival's writes); the
// last arrival at the top has seen everyone and goes on, the others spin on the top counter.
template <int LEVELS>
__device__ __forceinline__ bool tree_sync(const GridBarrier& b, unsigned goal) {
    unsigned unit = blockIdx.x, count = gridDim.x;
    for (int level = 0; level < LEVELS; ++level) {
        const unsigned groups = level == LEVELS - 1 ? 1u : ceil_sqrt(count);
        const unsigned width = (count + groups - 1) / groups;
        const unsigned group = unit / width;
        const unsigned size = min(width, count - group * width);
        unsigned* counter = b.w + BAR_COUNT + (level * BAR_GROUPS + group) * BAR_LINE;
        if (bar_add_acq_rel(counter, 1u) + 1u != size * goal) break;
        if (level == LEVELS - 1) return true;  // the last arrival at the top
        unit = group;
        count = (count + width - 1) / width;
    }
    return bar_wait(b.w + BAR_COUNT + (LEVELS - 1) * BAR_GROUPS * BAR_LINE,
                    tree_top<LEVELS>() * goal, b);
}

// block 0's threads: until Arrayin slots 1 .. count - 1 all reach goal (slot 0 is block 0's
// own). Thread t watches the quads (four slots, one 16-byte load) t, t + blockDim.x, ...: a
// pass of the block reads every slot at once for up to 4 * blockDim.x blocks.
__device__ __forceinline__ bool lockfree_collect(const unsigned* in, unsigned count,
                                                 unsigned goal, const GridBarrier& b) {
    if (count <= 1) return true;
    unsigned polls = 0;
    unsigned long long start = 0;
    for (unsigned k = 4 * threadIdx.x; k < count; k += 4 * blockDim.x) {
        for (;;) {
            const uint4 v = bar_load_acquire4(in + k);
            if ((k == 0 || reached(v.x, goal)) && (k + 1 >= count || reached(v.y, goal)) &&
                (k + 2 >= count || reached(v.z, goal)) && (k + 3 >= count || reached(v.w, goal))) {
                break;
            }
            if (!bar_spin(b, polls, start)) return false;
        }
    }
    return true;
}

// every thread of every block
__device__ __forceinline__ bool lockfree_sync(const GridBarrier& b, unsigned goal) {
    unsigned* in = b.w + BAR_IN;
    unsigned* out = b.w + BAR_OUT;
    if (blockIdx.x != 0) {
        if (threadIdx.x != 0) return true;
        bar_store_release(in + blockIdx.x, goal);
        return bar_wait(out + blockIdx.x, goal, b);
    }
    if (!__syncthreads_and(lockfree_collect(in, gridDim.x, goal, b))) return false;
    const unsigned quads = gridDim.x > 1 ? (gridDim.x + 3) / 4 : 0;
    if (threadIdx.x < quads) {
        bar_fence();  // one fence releases every Arrayout store of this thread
        for (unsigned q = threadIdx.x; q < quads; q += blockDim.x) {
            bar_store_relaxed4(out + 4 * q, goal);
        }
    }
    return true;
}

// spread (wavedp's own), warp 0 of each block: thread 0 adds one (red.release: fire and
// forget) to counter blockIdx.x % K of K = SPREAD_LINES counters, one line each, so at most
// ceil(N / K) arrivals queue at a line; it polls that counter (relaxed: N / K pollers a
// line) until its share of the grid has arrived; then lane k < K polls counter k (acquire,
// every lane's load in one warp instruction) until every share has. One MEMBAR and no relay
// on the way, but the last pass reads K lines, some in the far half of the L2.
__device__ __forceinline__ bool spread_sync(const GridBarrier& b, unsigned goal) {
    const unsigned lanes = min(blockDim.x, 32u);
    const unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    const unsigned k = min((unsigned)SPREAD_LINES, lanes);  // counters (as many in every block)
    unsigned* counters = b.w + BAR_COUNT;
    const unsigned lane = threadIdx.x;
    bool ok = true;
    if (lane == 0) {
        const unsigned mine = blockIdx.x % k;
        bar_red_release(counters + mine * BAR_LINE, 1u);
        ok = bar_wait<false>(counters + mine * BAR_LINE,
                             (gridDim.x / k + (mine < gridDim.x % k)) * goal, b);
    }
    if (!__shfl_sync(mask, ok, 0)) return false;
    const unsigned target = (gridDim.x / k + (lane < gridDim.x % k)) * goal;
    const unsigned* counter = counters + lane * BAR_LINE;
    unsigned polls = 0;
    unsigned long long start = 0;
    while (!__all_sync(mask, lane >= k || reached(bar_load_acquire(counter), target))) {
        if (!__all_sync(mask, bar_spin(b, polls, start))) return false;
    }
    return true;
}

// One barrier across the grid, called by every thread of every block. Returns false (the
// same in every thread of a block) when the barrier failed: the caller must return.
template <int KIND>
__device__ __forceinline__ bool grid_sync(GridBarrier& b) {
    if constexpr (KIND == SYNC_NONE) {
        asm volatile("" ::: "memory");  // no barrier, but memory is reloaded as after one
        return true;
    } else if constexpr (KIND == SYNC_GRID) {
#ifdef WAVEDP_HAS_CG
        cooperative_groups::this_grid().sync();
        return true;
#else
        // compiled without the CUDA headers: every block fails at once, none waits
        if (threadIdx.x == 0) atomicOr(b.w + BAR_ERROR, ERR_NO_GRID);
        return false;
#endif
    } else {
        __syncthreads();
        const unsigned goal = ++b.epoch;
        bool ok = true;
        if constexpr (KIND == SYNC_LOCKFREE) {
            ok = lockfree_sync(b, goal);
        } else if constexpr (KIND == SYNC_SPREAD) {
            if (threadIdx.x < 32) ok = spread_sync(b, goal);
        } else if (threadIdx.x == 0) {
            if constexpr (KIND == SYNC_SIMPLE) {
                ok = simple_sync(b, goal);
            } else {
                ok = tree_sync<KIND == SYNC_TREE2 ? 2 : 3>(b, goal);
            }
        }
        return __syncthreads_and(ok);
    }
}
