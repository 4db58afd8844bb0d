// Batched pairwise alignment: many pairs per launch, one warp per pair (a search's reported
// hits, align_all's pairs), the end cell and optionally the whole traceback on the GPU.
//
// A warp takes pairs by atomic ticket (the host passes them longest first) and sweeps the
// query in strips of S = 32*R rows: lane l owns rows l*R+1 .. l*R+R of the strip, keeps their
// H and E in registers and runs one column behind lane l-1, whose bottom H and F it gets by
// shuffle. Lane 31 writes the strip's bottom row (H, F) to one of the warp's two scratch rows
// (alternating by strip), which lane 0 reads in the next strip. Warps never wait on each other.
//
// DIRS: one direction byte per cell (common.cuh's encoding, the multipass kernel's rule), in
// the layout of wavedp.engines.cpu.rows.strip_index (rpl = R, cols = n): each warp step stores
// 32*R contiguous bytes. Then lane 0 follows the traceback of docs/design.md from the end cell
// and writes the CIGAR letters in reverse order.
//
// Results, 6 ints per pair: score, query start, query end, target start, target end, number
// of CIGAR letters (starts are -1 without DIRS). Pairs have m >= 1 and n >= 1.
//
// PROF: the query is a profile's rows (wavedp.Profile): sub is the profiles' table (rows x A,
// read through the cache, not shared memory), qoff[p] the first row of pair p's query (its
// codes are consecutive rows); aligned columns are written 'X' (the host compares letters).
//
// FORBID (local, with DIRS): Waterman-Eggert rounds (docs/design.md, "Non-intersecting hits").
// Bit 7 of a cell's direction byte marks it forbidden: the diagonal move into it is not allowed. The
// sweep keeps that bit (each word is read before it is rewritten) and the traceback sets it on
// every cell its path pairs, so the next launch over the same direction bytes (zeroed before
// the first) finds the pair's next hit.
#include "common.cuh"

#define FULL 0xffffffffu
#define WARPS 4
#define FORBIDDEN 0x80u

template <int MODE, int R, bool DIRS, bool FORBID, bool PROF>
__global__ void __launch_bounds__(32 * WARPS) align_batch(
    const u8* __restrict__ res, const i64* __restrict__ qoff, const int* __restrict__ qlen,
    const i64* __restrict__ toff, const int* __restrict__ tlen, int count, const int* __restrict__ sub, int A, int go, int ge, u8* dirs,
    const i64* __restrict__ doff, u8* ops, const i64* __restrict__ ooff, int2* scratch,
    int stride, int* result, int* ticket) {
    extern __shared__ int ssub[];  // the A x A substitution table (not PROF)
    if (!PROF) {
        for (int w = threadIdx.x; w < A * A; w += blockDim.x) ssub[w] = sub[w];
        __syncthreads();
    }
    constexpr int S = 32 * R;
    static_assert(!DIRS || R % 4 == 0, "direction bytes go out 4 rows a word");
    static_assert(!FORBID || (DIRS && MODE == WAVEDP_LOCAL), "forbidden cells: local, DIRS");
    const int lane = threadIdx.x & 31;
    int2* scr = scratch + (i64)(blockIdx.x * WARPS + threadIdx.x / 32) * 2 * stride;

    for (;;) {
        int k = 0;
        if (lane == 0) k = atomicAdd(ticket, 1);
        k = __shfl_sync(FULL, k, 0);
        if (k >= count) return;
        const int p = k;
        const int m = qlen[p], n = tlen[p];
        const u8* q = PROF ? nullptr : res + qoff[p];
        const u8* t = res + toff[p];
        u8* dp = DIRS ? dirs + doff[p] : nullptr;
        // the lane's best end cell. local: the empty alignment unless a cell beats 0;
        // semiglobal: H[0][n] = 0 (column n starts on row 0, which wins ties on i)
        int bv = MODE == WAVEDP_GLOBAL ? WAVEDP_INT_MIN : 0;
        int bi = MODE == WAVEDP_GLOBAL ? 0x7fffffff : 0;
        int bj = MODE == WAVEDP_SEMIGLOBAL ? n : bi;
        const int strips = (m + S - 1) / S;
        for (int s = 0; s < strips; ++s) {
            const int2* up = scr + (s & 1) * stride;  // written by strip s - 1
            int2* down = scr + ((s + 1) & 1) * stride;
            const int row0 = s * S + lane * R;  // this lane's rows: row0 + 1 .. row0 + R
            int qc[R], H[R], E[R], rowbest[R], rowj[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (PROF)
                    qc[r] = row0 + r < m ? (int)(qoff[p] + row0 + r) * A : 0;
                else
                    qc[r] = row0 + r < m ? q[row0 + r] * A : 0;
                H[r] = edge<MODE>(row0 + r + 1, go, ge);
                E[r] = WAVEDP_NEG;
                rowbest[r] = 0;
                rowj[r] = 0;
            }
            const int mr = m - 1 - row0;  // row m's place among this lane's rows
            int diag = edge<MODE>(row0, go, ge);
            int botH = 0, botF = WAVEDP_NEG, c_cur = 0;
            int c_next = lane == 0 ? t[0] : 0;
            int2 up_next = make_int2(0, WAVEDP_NEG);
            if (lane == 0 && s > 0) up_next = up[1];
            for (int st = 0; st < n + 31; ++st) {
                const int j = st - lane + 1;  // this lane's column
                int uh = __shfl_up_sync(FULL, botH, 1);
                int uf = __shfl_up_sync(FULL, botF, 1);
                const int c_above = __shfl_up_sync(FULL, c_cur, 1);
                const int c = lane == 0 ? c_next : c_above;
                if (lane == 0) {
                    if (s == 0) {
                        uh = edge<MODE>(j, go, ge);
                        uf = WAVEDP_NEG;
                    } else {
                        uh = up_next.x;
                        uf = up_next.y;
                    }
                }
                if (j >= 1 && j <= n) {
                    if (lane == 0 && j < n) {
                        c_next = t[j];
                        if (s > 0) up_next = up[j + 1];
                    }
                    int hup = uh, fup = uf, d = diag;
                    unsigned int packed[DIRS ? R / 4 : 1] = {};
                    unsigned int* out = DIRS ? reinterpret_cast<unsigned int*>(
                        dp + (((i64)s * (n + 31) + st) * 32 + lane) * R) : nullptr;
                    unsigned int forbid[FORBID ? R / 4 : 1] = {};
                    if (FORBID) {
#pragma unroll
                        for (int w = 0; w < R / 4; ++w) forbid[w] = out[w] & 0x80808080u;
                    }
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const int e_ext = E[r] - ge, e_open = H[r] - go;
                        const int f_ext = fup - ge, f_open = hup - go;
                        const int e = max(e_ext, e_open), f = max(f_ext, f_open);
                        const int dg = FORBID && (forbid[r / 4] >> (8 * (r % 4) + 7) & 1)
                                           ? WAVEDP_NEG
                                           : d + (PROF ? __ldg(sub + qc[r] + c) : ssub[qc[r] + c]);
                        const int h = MODE == WAVEDP_LOCAL ? max3_relu(dg, e, f) : max3(dg, e, f);
                        if (DIRS)
                            packed[r / 4] |= dir_byte<MODE>(h, dg, e, e_ext, e_open, f_ext, f_open)
                                             << 8 * (r % 4);
                        if (MODE == WAVEDP_LOCAL && h > rowbest[r]) rowbest[r] = h, rowj[r] = j;
                        d = H[r];
                        H[r] = hup = h;
                        E[r] = e;
                        fup = f;
                    }
                    if (DIRS) {
#pragma unroll
                        for (int w = 0; w < R / 4; ++w)
                            out[w] = packed[w] | (FORBID ? forbid[w] : 0u);
                    }
                    if (MODE != WAVEDP_LOCAL && mr >= 0 && mr < R) {  // this lane holds row m
                        int hm = H[0];
#pragma unroll
                        for (int r = 1; r < R; ++r) hm = r == mr ? H[r] : hm;
                        if (MODE == WAVEDP_GLOBAL && j == n) bv = hm, bi = m, bj = n;
                        if (MODE == WAVEDP_SEMIGLOBAL && better(hm, m, j, bv, bi, bj))
                            bv = hm, bi = m, bj = j;
                    }
                    if (MODE == WAVEDP_SEMIGLOBAL && j == n) {  // column n
#pragma unroll
                        for (int r = 0; r < R; ++r)
                            if (row0 + r < m && better(H[r], row0 + r + 1, n, bv, bi, bj))
                                bv = H[r], bi = row0 + r + 1, bj = n;
                    }
                    diag = uh;
                    c_cur = c;
                    botH = hup;
                    botF = fup;
                    if (lane == 31 && s + 1 < strips) down[j] = make_int2(hup, fup);
                }
            }
            if (MODE == WAVEDP_LOCAL) {
#pragma unroll
                for (int r = 0; r < R; ++r)  // a row's first best column is its smallest j
                    if (row0 + r < m && better(rowbest[r], row0 + r + 1, rowj[r], bv, bi, bj))
                        bv = rowbest[r], bi = row0 + r + 1, bj = rowj[r];
            }
            __syncwarp();  // the scratch row (and direction bytes) are visible to the warp
        }
        warp_best(bv, bi, bj);
        if (lane == 0) {
            int* out = result + 6 * (i64)p;
            int si = -1, sj = -1, nops = 0;
            if (DIRS) {
                si = sj = 0;
                if (!(MODE == WAVEDP_LOCAL && bv == 0)) {
                    u8* o = ops + ooff[p];
                    int i = bi, j = bj, state = 0;
                    bool stopped = false;
                    while (i > 0 && j > 0) {
                        const int a = i - 1, b = j - 1, l = a % S / R;
                        u8* cell = dp + (((i64)(a / S) * (n + 31) + b + l) * 32 + l) * R + a % R;
                        const int dir = *cell;
                        if (state == 0) {
                            const int src = dir & 3;
                            if (MODE == WAVEDP_LOCAL && src == DIR_ZERO) {
                                stopped = true;
                                break;
                            }
                            if (src == DIR_DIAG) {
                                if (FORBID) *cell = dir | FORBIDDEN;
                                o[nops++] = PROF || q[a] != t[b] ? 'X' : '=';
                                --i, --j;
                            } else {
                                state = src == DIR_E ? 1 : 2;
                            }
                        } else if (state == 1) {
                            o[nops++] = 'D';
                            --j;
                            state = dir & E_OPEN ? 0 : 1;
                        } else {
                            o[nops++] = 'I';
                            --i;
                            state = dir & F_OPEN ? 0 : 2;
                        }
                    }
                    if (MODE == WAVEDP_GLOBAL && !stopped) {
                        for (; j > 0; --j) o[nops++] = 'D';
                        for (; i > 0; --i) o[nops++] = 'I';
                    }
                    si = i, sj = j;
                } else {
                    bi = bj = 0;
                }
            }
            out[0] = bv, out[1] = si, out[2] = bi, out[3] = sj, out[4] = bj, out[5] = nops;
        }
        __syncwarp();
    }
}
