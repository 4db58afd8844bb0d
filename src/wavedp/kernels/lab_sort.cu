// The lab's bitonic sort over the whole grid (Xiao and Feng, Fig. 15): n = 2^logn keys
// sorted ascending in place by the bitonic network, one merge step (k = 2^logk, j = 2^logj)
// at a time: each of the n/2 compare-exchanges of a step pairs i with i + j and orders the
// pair ascending where bit k of i is clear. Steps depend on each other across the grid: the
// CPU-side strategies launch sort_step once per step, sort_steps<T, KIND> runs them all with
// an in-kernel barrier between steps. Any grid size works: threads stride over the pairs.
#include "common.cuh"
#include "barriers.cuh"

template <typename T>
__device__ __forceinline__ void merge_step(T* x, int logn, int logk, int logj) {
    const unsigned pairs = 1u << (logn - 1), j = 1u << logj, k = 1u << logk;
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += stride) {
        const unsigned i = ((p >> logj) << (logj + 1)) | (p & (j - 1));
        const T a = x[i], b = x[i + j];
        if ((a > b) == ((i & k) == 0)) {
            x[i] = b;
            x[i + j] = a;
        }
    }
}

template <typename T>
__global__ void sort_step(T* x, int logn, int logk, int logj) { merge_step(x, logn, logk, logj); }

template <typename T, int KIND>
__global__ void sort_steps(T* x, int logn, unsigned* bar, unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    for (int logk = 1; logk <= logn; ++logk) {
        for (int logj = logk - 1; logj >= 0; --logj) {
            merge_step(x, logn, logk, logj);
            if ((logk < logn || logj > 0) && !grid_sync<KIND>(sync)) return;
        }
    }
}
