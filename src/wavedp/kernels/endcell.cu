// The end cell by docs/design.md's tie rule (largest score, then smallest i, then smallest j),
// reduced on the GPU over one of three kinds of candidates:
//   TRIPLES: count (score, i, j) triples in a (the multipass kernel's per-strip bests);
//   ROWS:    count rows k with score a[k] at column b[k] (per-row bests);
//   EDGES:   semi-global ends, the cells (i, n) for i < m with H in a[i - 1] and (m, j) for
//            j <= n with H in b[j - 1] (row 0 and column 0 score 0).
// One block; out receives score, i, j.
#include "common.cuh"

#define TRIPLES 0
#define ROWS 1
#define EDGES 2

__global__ void __launch_bounds__(1024) best_cell(int kind, const int* a, const int* b, int m,
                                                  int n, int count, int* out) {
    __shared__ int sv[32], si[32], sj[32];
    int bv = WAVEDP_INT_MIN, bi = 0x7fffffff, bj = 0x7fffffff;
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        int v, i, j;
        if (kind == TRIPLES) {
            v = a[3 * k], i = a[3 * k + 1], j = a[3 * k + 2];
        } else if (kind == ROWS) {
            v = a[k], i = k, j = b[k];
        } else if (k < m) {
            v = k ? a[k - 1] : 0, i = k, j = n;
        } else {
            j = k - m, v = j ? b[j - 1] : 0, i = m;
        }
        if (better(v, i, j, bv, bi, bj)) bv = v, bi = i, bj = j;
    }
    warp_best(bv, bi, bj);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    if (lane == 0) sv[warp] = bv, si[warp] = bi, sj[warp] = bj;
    __syncthreads();
    if (warp == 0) {
        bv = lane < warps ? sv[lane] : WAVEDP_INT_MIN;
        bi = lane < warps ? si[lane] : 0x7fffffff;
        bj = lane < warps ? sj[lane] : 0x7fffffff;
        warp_best(bv, bi, bj);
        if (lane == 0) out[0] = bv, out[1] = bi, out[2] = bj;
    }
}
