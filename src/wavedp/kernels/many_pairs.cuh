// What the two sweeps of many pairs share (many_pairs.cu: a lane's int32 values;
// many_pairs16.cu: two pairs a word's int16 halves): the block, and each pair's end cell.
#include "common.cuh"

#define FULL 0xffffffffu
#define PAIRS_BLOCK 256

// docs/design.md's end-cell rule (a larger score, then a smaller row, then a smaller
// column), or SWAP's, a sweep over the pair exchanged (the target's letters down the rows):
// a larger score, then a smaller column, then a smaller row, which is the rule's order on
// the pair unexchanged
template <bool SWAP>
__device__ __forceinline__ bool better_as(int v, int i, int j, int bv, int bi, int bj) {
    return SWAP ? better(v, j, i, bv, bj, bi) : better(v, i, j, bv, bi, bj);
}

// the group's best (score, i, j) by that rule, into its lane 0
template <int G, bool SWAP>
__device__ __forceinline__ void group_best(int& bv, int& bi, int& bj) {
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) {
        const int v = __shfl_down_sync(FULL, bv, o, G);
        const int i = __shfl_down_sync(FULL, bi, o, G);
        const int j = __shfl_down_sync(FULL, bj, o, G);
        if (better_as<SWAP>(v, i, j, bv, bi, bj)) bv = v, bi = i, bj = j;
    }
}

// pair p's end cell by the group's lanes, written by lane 0: ends[3p..3p+2] = score, end row,
// end column
template <int MODE, int G, bool SWAP>
__device__ __forceinline__ void write_end(int lane, bool real, int p, int bv, int bi, int bj,
                                          int* __restrict__ ends) {
    group_best<G, SWAP>(bv, bi, bj);
    if (lane == 0 && real) {
        if (MODE == WAVEDP_LOCAL && bv == 0) bi = bj = 0;
        ends[3 * (i64)p] = bv, ends[3 * (i64)p + 1] = bi, ends[3 * (i64)p + 2] = bj;
    }
}
