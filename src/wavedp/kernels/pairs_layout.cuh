// The storage of many pairs' traceback (many_pairs.cu writes it, pairs_trace.cu reads it).
//
// SAVE (the traceback): each lane keeps, for each column j, its bottom row's (H - go, F), and
// every CKPT-th column its rows' (H - go, E): the borders of blocks of 8 rows by CKPT columns,
// from which trace_saved recomputes the blocks the path crosses. A pair's storage (units of
// int2 from many_pairs, of u32 with int16 halves from many_pairs16) starts at soff[p]: the
// bottoms of RUN = 4 steps side by side, step st at ((s * S + st / 4) * G + l) * 4 + st % 4
// for pass s, step st = j - 1 + l, lane l, S = (n + G + 2) / 4 runs of steps a pass (so
// many_pairs16 stores a lane's four in one 16-byte store); after them (B = passes * S * 4G
// units, rounded up to a multiple of 8) the columns at B + ((s * G + l) * (n / CKPT) + j /
// CKPT - 1) * 8 + r for row r of the lane. Lanes whose rows are all past the query save
// nothing.

// columns between two saved columns of a strip (the traceback recomputes blocks this wide)
#define CKPT 16

// steps whose saved bottoms lie side by side (many_pairs16 stores them in one 16-byte store;
// against two in one 8-byte store, DNA with CIGARs 4% faster, the traceback too)
#define RUN 4
// a pass's runs of RUN steps (steps 0 .. n + G - 2 a lane)
__device__ __forceinline__ int bottom_runs(int n, int G) { return (n + G + RUN - 2) / RUN; }
// a pair's saved units before its columns' (see SAVE above), a multiple of 8 (so the columns'
// 8 rows are one aligned 32- or 64-byte store; the host starts each pair on such a multiple)
__device__ __forceinline__ i64 saved_bottoms(int m, int n, int G, int T) {
    return ((i64)((m + T - 1) / T) * bottom_runs(n, G) * RUN * G + 7) & ~(i64)7;
}
// the unit of the bottom of pass s, step st, lane l (see SAVE)
__device__ __forceinline__ i64 bottom_unit(int n, int G, int s, int st, int l) {
    return (((i64)s * bottom_runs(n, G) + st / RUN) * G + l) * RUN + st % RUN;
}
