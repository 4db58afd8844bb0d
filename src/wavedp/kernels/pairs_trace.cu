// The traceback of many pairs (align_pairs, align_all) on the GPU, from what many_pairs.cu's
// sweeps saved (pairs_layout.cuh): trace_saved recomputes the blocks of 8 rows by CKPT
// columns its path crosses from their saved borders, trace_dirs walks many_pairs16's
// direction bits; both write each pair's CIGAR runs backwards from the end of its slot, and
// pack_runs moves them together.
#include "common.cuh"
#include "pairs_layout.cuh"

// the traceback's block (trace_saved): a thread a pair, each its block's directions in shared
// memory (a dynamically indexed array would sit in local memory)
#define TRACE_BLOCK 128

// BAM op codes of the CIGAR letters
#define OP_EQ 7u
#define OP_X 8u
#define OP_I 1u
#define OP_D 2u

struct RunWriter {  // runs written backwards from the end of a pair's slot
    unsigned* end;
    int count;
    unsigned op, len;
    __device__ void add(unsigned o) {
        if (o == op) {
            ++len;
            return;
        }
        flush();
        op = o, len = 1;
    }
    __device__ void add_many(unsigned o, int k) {
        if (k <= 0) return;
        if (o != op) flush(), op = o, len = 0;
        len += k;
    }
    __device__ void flush() {
        if (len) end[-(++count)] = len << 4 | op;
        len = 0;
    }
    // a walk's end at (i, j) from the end cell (qe, te): global's leading gaps, the last run,
    // and o = [query start, query end, target start, target end, runs] (an empty local
    // alignment starts and ends at 0)
    template <int MODE>
    __device__ void finish(int i, int j, int qe, int te, bool stopped, bool empty, int* o) {
        if (MODE == WAVEDP_GLOBAL && !stopped) {
            add_many(OP_D, j), j = 0;
            add_many(OP_I, i), i = 0;
        }
        flush();
        if (empty) i = j = 0;
        o[0] = i, o[1] = qe, o[2] = j, o[3] = te, o[4] = count;
    }
};

// A pair's saved borders (many_pairs' SAVE): int2 units
template <int G>
struct Saved {
    const int2* base;
    i64 bottoms;  // units before the saved columns
    int n, per;   // the pair's columns, saved columns a strip
    // (H - go, F) of strip g's bottom row at column j >= 1
    __device__ int2 bottom(int g, int j) const {
        const int s = g / G, l = g % G;
        return base[bottom_unit(n, G, s, j - 1 + l, l)];
    }
    // (H - go, E) of strip g's row r at saved column c (column (c + 1) * CKPT)
    __device__ int2 column(int g, int c, int r) const {
        return base[bottoms + ((i64)g * per + c) * 8 + r];
    }
};

// The direction codes (common.cuh's encoding; F only where it beats X, then local zero, then
// the diagonal, then E) of strip g's rows (8g + 1 .. 8g + 8) at columns c0 + 1 .. j (at most
// CKPT), recomputed from the saved borders: dirs[x * TRACE_BLOCK] holds column c0 + 1 + x's 8
// codes, 4 bits a row. The borders are loaded first (their loads in flight together), the
// columns unrolled.
template <int MODE, int G>
__device__ __forceinline__ void recompute(const Saved<G>& sv, const u8* q, const u8* t,
                                          int m, int g, int c0, int j, const int* ssub, int A,
                                          int go, int ge, unsigned* dirs) {
    const int width = j - c0;
    int2 top[CKPT];  // (H - go, F) on row 8g at the block's columns
    int col[CKPT];   // the target letters' columns of the table
#pragma unroll
    for (int x = 0; x < CKPT; ++x) {
        const int jj = c0 + 1 + x;
        if (x < width) {
            top[x] = g == 0 ? make_int2(edge<MODE>(jj, go, ge) - go, WAVEDP_NEG)
                            : sv.bottom(g - 1, jj);
            col[x] = t[jj - 1];
        }
    }
    int hl[8], el[8], qa[8];  // H and E of column c0, the rows' table rows
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        const int i = 8 * g + 1 + r;
        qa[r] = (i <= m ? q[i - 1] : 0) * A;
        if (c0 == 0) {
            hl[r] = edge<MODE>(i, go, ge), el[r] = WAVEDP_NEG;
        } else {
            const int2 v = sv.column(g, c0 / CKPT - 1, r);
            hl[r] = v.x + go, el[r] = v.y;
        }
    }
    // H on row 8g at column c0 (the first column's diagonal)
    int diag = g == 0 ? edge<MODE>(c0, go, ge)
               : c0 == 0 ? edge<MODE>(8 * g, go, ge) : sv.bottom(g - 1, c0).x + go;
#pragma unroll
    for (int x = 0; x < CKPT; ++x) {
        if (x >= width) break;
        int hup = top[x].x + go, fup = top[x].y;  // H and F on row 8g
        const int* sc = ssub + col[x];
        int d = diag;
        diag = hup;
        unsigned word = 0;
#pragma unroll
        for (int r = 0; r < 8; ++r) {
            const int dg = d + sc[qa[r]];
            const int e = max(el[r] - ge, hl[r] - go);
            const int xv = MODE == WAVEDP_LOCAL ? max(max(dg, e), 0) : max(dg, e);
            const int f = max(fup - ge, hup - go);
            unsigned nib = f > xv ? DIR_F
                           : (MODE == WAVEDP_LOCAL && xv == 0) ? DIR_ZERO
                           : xv == dg ? DIR_DIAG : DIR_E;
            nib |= hl[r] - go >= el[r] - ge ? E_OPEN : 0;
            nib |= hup - go >= fup - ge ? F_OPEN : 0;
            word |= nib << (4 * r);
            d = hl[r];
            hl[r] = hup = max(xv, f);
            el[r] = e;
            fup = f;
        }
        dirs[x * TRACE_BLOCK] = word;
    }
}

// The traceback of each pair from its end cell (one thread a pair, at most 128 registers: four
// blocks a multiprocessor): block by block (8 rows by CKPT columns), each recomputed from
// many_pairs' saved borders by every thread of a warp at once, then followed to its edge; res5[5p..] = query start, query end, target start, target
// end, runs; the runs (BAM's length << 4 | op) end at runs[roff[p + 1]].
template <int MODE, int G>
__global__ void __launch_bounds__(TRACE_BLOCK, 4) trace_saved(
    const u8* __restrict__ qres, const u8* __restrict__ tres, const i64* __restrict__ qoff,
    const i64* __restrict__ toff, const int* __restrict__ ms, const int* __restrict__ ns,
    const int* __restrict__ order, int count, const int* __restrict__ sub, int A, int go,
    int ge, const void* __restrict__ save, const i64* __restrict__ soff,
    const int* __restrict__ ends, const i64* __restrict__ roff, unsigned* __restrict__ runs,
    int* __restrict__ res5) {
    extern __shared__ int ssub[];  // A x A: query letter's row, target letter's column
    for (int w = threadIdx.x; w < A * A; w += blockDim.x) ssub[w] = sub[w];
    __syncthreads();
    if (blockDim.x != TRACE_BLOCK) return;  // the host leaves no result written: its error
    __shared__ unsigned block_dirs[CKPT * TRACE_BLOCK];
    unsigned* dirs = block_dirs + threadIdx.x;  // the block's column x at dirs[x * TRACE_BLOCK]
    constexpr int T = G * 8;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        const int p = order[k];
        const int m = ms[p], n = ns[p];
        const u8* q = qres + qoff[p];
        const u8* t = tres + toff[p];
        const Saved<G> sv{static_cast<const int2*>(save) + soff[p], saved_bottoms(m, n, G, T), n,
                          n / CKPT};
        int i = ends[3 * (i64)p + 1], j = ends[3 * (i64)p + 2];
        const int qe = i, te = j;
        RunWriter w{runs + roff[p + 1], 0, 0u, 0u};
        const bool empty = MODE == WAVEDP_LOCAL && ends[3 * (i64)p] == 0;
        int state = 0;
        bool stopped = empty;
        while (!stopped && i > 0 && j > 0) {
            const int g = (i - 1) / 8, c0 = (j - 1) / CKPT * CKPT;
            recompute<MODE, G>(sv, q, t, m, g, c0, j, ssub, A, go, ge, dirs);
            while (!stopped && i > 8 * g && j > c0) {  // the path inside the block
                const int a = i - 1, b = j - 1;
                const unsigned dir = dirs[(b - c0) * TRACE_BLOCK] >> (4 * (a % 8)) & 15u;
                if (state == 0) {
                    const unsigned src = dir & 3u;
                    if (MODE == WAVEDP_LOCAL && src == DIR_ZERO) {
                        stopped = true;
                    } else if (src == DIR_DIAG) {
                        w.add(q[a] == t[b] ? OP_EQ : OP_X);
                        --i, --j;
                    } else {
                        state = src == DIR_E ? 1 : 2;
                    }
                } else if (state == 1) {
                    w.add(OP_D);
                    --j;
                    state = dir & E_OPEN ? 0 : 1;
                } else {
                    w.add(OP_I);
                    --i;
                    state = dir & F_OPEN ? 0 : 2;
                }
            }
        }
        w.finish<MODE>(i, j, qe, te, stopped, empty, res5 + 5 * (i64)p);
    }
}

// The traceback of each pair from its end cell over many_pairs16's direction words (DIRS: a
// thread a pair, no recompute): a cell's nibble is bit 4 (a % 8) of the word of its strip g =
// a / 8 (pass g / G, lane g % G) at step b + g % G (row a = i - 1, column b = j - 1), read a
// run of RUN steps (16 bytes) at a time. The walk is trace_saved's; local mode carries the
// score of the cell it stands on (H in state 0, E in 1, F in 2: each step subtracts the
// diagonal's score or adds go or ge), and stops where H = 0 (recompute's DIR_ZERO). res5 and
// the runs as trace_saved's. SWAP (the pairs exchanged, many_pairs16.cu's SWAP): bit 0 is X
// beats F, bit 1 H beats the diagonal, and the walk takes at H the diagonal, then F, then E.
template <int MODE, int G, bool SWAP>
__global__ void __launch_bounds__(TRACE_BLOCK) trace_dirs(
    const u8* __restrict__ qres, const u8* __restrict__ tres, const i64* __restrict__ qoff,
    const i64* __restrict__ toff, const int* __restrict__ ms, const int* __restrict__ ns,
    const int* __restrict__ order, int count, const int* __restrict__ sub, int A, int go,
    int ge, const unsigned* __restrict__ save, const i64* __restrict__ soff,
    const int* __restrict__ ends, const i64* __restrict__ roff, unsigned* __restrict__ runs,
    int* __restrict__ res5) {
    extern __shared__ int ssub[];  // A x A: query letter's row, target letter's column
    for (int w = threadIdx.x; w < A * A; w += blockDim.x) ssub[w] = sub[w];
    __syncthreads();
    if (blockDim.x != TRACE_BLOCK) return;  // the host leaves no result written: its error
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        const int p = order[k];
        const int n = ns[p];
        const u8* q = qres + qoff[p];
        const u8* t = tres + toff[p];
        const unsigned* dw = save + soff[p];
        const int S = bottom_runs(n, G);
        int i = ends[3 * (i64)p + 1], j = ends[3 * (i64)p + 2];
        int h = ends[3 * (i64)p];  // local: the score of the cell the walk stands on
        const int qe = i, te = j;
        RunWriter w{runs + roff[p + 1], 0, 0u, 0u};
        const bool empty = MODE == WAVEDP_LOCAL && h == 0;
        int state = 0;
        bool stopped = empty;
        i64 at = -1;  // the run in hand (its first word's unit)
        uint4 run = make_uint4(0, 0, 0, 0);
        while (!stopped && i > 0 && j > 0) {
            const int a = i - 1, b = j - 1;
            const int g = a >> 3, l = g % G, st = b + l;
            const i64 u = (((i64)(g / G) * S + st / RUN) * G + l) * RUN;
            if (u != at) run = *reinterpret_cast<const uint4*>(dw + u), at = u;
            const int x = st % RUN;
            const unsigned word = x == 0 ? run.x : x == 1 ? run.y : x == 2 ? run.z : run.w;
            const unsigned dir = word >> (4 * (a & 7)) & 15u;
            if (state == 0) {
                if (MODE == WAVEDP_LOCAL && h == 0) {
                    stopped = true;
                } else if (dir & (SWAP ? 2u : 3u)) {  // not the diagonal: F, else E
                    state = (dir & 1u) == (SWAP ? 0u : 1u) ? 2 : 1;
                } else {
                    const int qa = q[a], tb = t[b];
                    w.add(qa == tb ? OP_EQ : OP_X);
                    if (MODE == WAVEDP_LOCAL) h -= ssub[qa * A + tb];
                    --i, --j;
                }
            } else if (state == 1) {
                w.add(OP_D);
                --j;
                if (dir & 4u) {  // E extends
                    if (MODE == WAVEDP_LOCAL) h += ge;
                } else {
                    if (MODE == WAVEDP_LOCAL) h += go;
                    state = 0;
                }
            } else {
                w.add(OP_I);
                --i;
                if (dir & 8u) {  // F extends
                    if (MODE == WAVEDP_LOCAL) h += ge;
                } else {
                    if (MODE == WAVEDP_LOCAL) h += go;
                    state = 0;
                }
            }
        }
        w.finish<MODE>(i, j, qe, te, stopped, empty, res5 + 5 * (i64)p);
    }
}

// Each pair's runs (the last res5[5p + 4] words before runs[roff[p + 1]]) moved to start at
// packed[poff[p]] (a thread a pair); swap: I and D exchanged (the pairs were swept exchanged)
__global__ void pack_runs(const unsigned* __restrict__ runs, const i64* __restrict__ roff,
                          const int* __restrict__ res5, const i64* __restrict__ poff, int count,
                          unsigned* __restrict__ packed, int swap) {
    const unsigned flip = swap ? OP_I ^ OP_D : 0u;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < count; p += gridDim.x * blockDim.x) {
        const int k = res5[5 * (i64)p + 4];
        const unsigned* src = runs + roff[p + 1] - k;
        unsigned* dst = packed + poff[p];
        for (int x = 0; x < k; ++x) {
            const unsigned w = src[x], op = w & 15u;
            dst[x] = op == OP_I || op == OP_D ? w ^ flip : w;
        }
    }
}
