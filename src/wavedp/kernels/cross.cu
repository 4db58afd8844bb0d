// The pairs of a cross product on the GPU (engines/cuda/many_pairs.py, align_all): pair
// first + k is query (first + k) / targets against target (first + k) % targets; a thread
// writes one pair's residues' starts and sides, read off the records' offsets. swap: the
// pairs exchanged (the targets down the rows), so the rows' records are the targets'.
#include "common.cuh"

__global__ void cross_pairs(const i64* __restrict__ rows_off, const i64* __restrict__ cols_off,
                            i64 first, int count, i64 targets, int swap,
                            i64* __restrict__ rows_start, i64* __restrict__ cols_start,
                            int* __restrict__ m, int* __restrict__ n) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const i64 pair = first + k, query = pair / targets, target = pair - query * targets;
    const i64 r = swap ? target : query, c = swap ? query : target;
    const i64 r0 = rows_off[r], c0 = cols_off[c];
    rows_start[k] = r0;
    cols_start[k] = c0;
    m[k] = (int)(rows_off[r + 1] - r0);
    n[k] = (int)(cols_off[c + 1] - c0);
}
