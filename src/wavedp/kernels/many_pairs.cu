// Many pairs per launch (align_pairs, align_all): a group of G lanes per pair, the database
// scan's layout (search.cu) with a query of its own per group.
//
// Lane l of a group owns rows l*R+1 .. l*R+R of a tile of T = G*R query rows, keeps their
// H - go and E in registers and runs one column behind lane l-1, whose bottom H - go and F it
// gets by shuffle; a query longer than T runs in passes over successive tiles, the last lane
// writing its bottom row to the group's scratch row, which lane 0 reads in the next pass. A
// warp holds 32/G groups and takes 32/G consecutive pairs of the launch's order (sorted by
// shape, so warp-mates have about the same passes and columns) by atomic ticket; the warp
// runs as many passes and steps as its largest pair, a shorter pair's group idling through
// the rest. The substitution table (score + go) sits in shared memory 32 times, entry x of
// lane c at word x*32 + c, so a warp's lookups never share a bank.
//
// The cell update is search.cu's (four DPX add-max operations a cell: with gap open >= gap
// extend, F of the next row is max(F - ge, X - go), so the chain down a column is one
// operation a row). The local best is kept per lane as (score, row, column) by
// docs/design.md's tie rule: a column's best key X << 3 | 7 - r (a larger X, then a smaller
// row; a max of three a two rows) replaces the pass's best key only when larger, so a later
// column wins only with a larger score or a smaller row; passes merge by the rule. Rows past
// the query score PAD: nothing there exceeds the rows above it (and ties go to those).
//
// SAVE (the traceback): the borders or direction bits a pair keeps, laid out as
// pairs_layout.cuh says; pairs_trace.cu walks them. many_pairs16.cu sweeps two pairs a
// group in int16 halves, where their values fit.
#include "many_pairs.cuh"
#include "pairs_layout.cuh"

// the score of a row past the query: its diagonal never wins, so nothing there exceeds the
// rows above it (and ties go to the smaller row)
#define PAD (-(1 << 29))

template <int MODE, int G, int R, bool SAVE>
__global__ void __launch_bounds__(PAIRS_BLOCK) many_pairs(
    const u8* __restrict__ qres, const u8* __restrict__ tres, const i64* __restrict__ qoff,
    const i64* __restrict__ toff, const int* __restrict__ ms, const int* __restrict__ ns,
    const int* __restrict__ order, int count, const int* __restrict__ sub, int A, int go,
    int ge, int2* __restrict__ save, const i64* __restrict__ soff, int2* __restrict__ scratch,
    int stride, int* __restrict__ ends, int* __restrict__ ticket) {
    extern __shared__ int ssub[];  // (A + 1) x A entries: a last row of PAD for rows past m
    for (int w = threadIdx.x; w < (A + 1) * A * 32; w += PAIRS_BLOCK)
        ssub[w] = w >> 5 < A * A ? sub[w >> 5] + go : PAD;
    __syncthreads();
    constexpr int T = G * R;
    constexpr int GPW = 32 / G;  // groups a warp
    static_assert(R == 8, "the saved blocks and the local key hold 8 rows");
    const int lane32 = threadIdx.x & 31;
    const int lane = lane32 % G;
    const int gw = lane32 / G;
    const char* sl = reinterpret_cast<const char*>(ssub + lane32);
    int2* scr = scratch + ((i64)(blockIdx.x * PAIRS_BLOCK + threadIdx.x) / G) * stride;
    const int row_bytes = A * 128;  // a query letter's row of the table, 32 copies of each

    for (;;) {
        int k0 = 0;
        if (lane32 == 0) k0 = atomicAdd(ticket, GPW);
        k0 = __shfl_sync(FULL, k0, 0);
        if (k0 >= count) return;
        const int k = k0 + gw;
        int p = 0, m = 0, n = 0;
        const u8* q = qres;
        const u8* t = tres;
        if (k < count) {
            p = order[k];
            m = ms[p], n = ns[p];
            q += qoff[p], t += toff[p];
        }
        const int passes = (m + T - 1) / T;
        const int wpasses = __reduce_max_sync(FULL, passes);
        const int steps = __reduce_max_sync(FULL, n) + G - 1;
        int2* sp = SAVE && k < count ? save + soff[p] : nullptr;
        const i64 sb = SAVE ? saved_bottoms(m, n, G, T) : 0;
        // the lane's best end cell. local: the empty alignment unless a cell beats 0;
        // semiglobal: H[0][n] = 0 (column n starts on row 0, which wins ties on i)
        int bv = MODE == WAVEDP_GLOBAL ? WAVEDP_INT_MIN : 0;
        int bi = MODE == WAVEDP_GLOBAL ? 0x7fffffff : 0;
        int bj = MODE == WAVEDP_SEMIGLOBAL ? n : bi;
        for (int s = 0; s < wpasses; ++s) {
            const bool live = s < passes;
            const bool last = s == passes - 1;
            const int row0 = s * T + lane * R;  // this lane's rows: row0 + 1 .. row0 + R
            const int valid = min(max(m - row0, 0), R);
            int qa[R], Hg[R], E[R];  // qa: the row's table row, in bytes (PAD past m)
#pragma unroll
            for (int r = 0; r < R; ++r) {
                qa[r] = (r < valid ? q[row0 + r] : A) * row_bytes;
                Hg[r] = edge<MODE>(row0 + r + 1, go, ge) - go;
                E[r] = WAVEDP_NEG;
            }
            const int mr = m - 1 - row0;  // row m's place among this lane's rows
            int diag = edge<MODE>(row0, go, ge) - go;
            int botH = 0, botF = WAVEDP_NEG, c_cur = 0;
            int c_next = lane == 0 && live && n > 0 ? t[0] : 0;
            int2 up_next = make_int2(0, WAVEDP_NEG);
            if (lane == 0 && live && s > 0 && n > 0) up_next = scr[1];
            int bk = 0, bkj = 0;  // local: this pass's best key (X << 3 | 7 - row) and column
            for (int st = 0; st < steps; ++st) {
                const int j = st - lane + 1;  // this lane's column
                int uh = __shfl_up_sync(FULL, botH, 1, G);
                int uf = __shfl_up_sync(FULL, botF, 1, G);
                const int c_above = __shfl_up_sync(FULL, c_cur, 1, G);
                const int c = lane == 0 ? c_next : c_above;
                if (lane == 0) {
                    if (s == 0) {
                        uh = edge<MODE>(j, go, ge) - go;
                        uf = WAVEDP_NEG;
                    } else {
                        uh = up_next.x;
                        uf = up_next.y;
                    }
                }
                if (live && j >= 1 && j <= n) {
                    if (lane == 0 && j < n) {
                        c_next = t[j];
                        if (s > 0) up_next = scr[j + 1];
                    }
                    const char* col = sl + c * 128;
                    int f = uf, hup = uh, d = diag, xg = 0;
                    int xs[R];
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const int sc = *reinterpret_cast<const int*>(col + qa[r]);
                        const int e = add_max(E[r], -ge, Hg[r]);
                        const int x = MODE == WAVEDP_LOCAL ? add_max_relu(d, sc, e)
                                                           : add_max(d, sc, e);
                        f = r == 0 ? add_max(f, -ge, hup) : add_max(f, -ge, xg);
                        xg = x - go;
                        d = Hg[r];
                        Hg[r] = hup = add_max(f, -go, xg);
                        E[r] = e;
                        xs[r] = x;
                    }
                    if (SAVE && valid > 0) {
                        sp[bottom_unit(n, G, s, st, lane)] = make_int2(hup, f);
                        if (j % CKPT == 0) {
                            int4* ck = reinterpret_cast<int4*>(
                                sp + sb + ((i64)(s * G + lane) * (n / CKPT) + j / CKPT - 1) * R);
#pragma unroll
                            for (int r = 0; r < R; r += 2)
                                ck[r / 2] = make_int4(Hg[r], E[r], Hg[r + 1], E[r + 1]);
                        }
                    }
                    if (MODE == WAVEDP_LOCAL) {  // the column's best (X, then the first row)
                        int ck = xs[0] << 3 | 7;
#pragma unroll
                        for (int r = 1; r + 1 < R; r += 2)
                            ck = max3(ck, xs[r] << 3 | (7 - r), xs[r + 1] << 3 | (6 - r));
                        if (R % 2 == 0) ck = max(ck, xs[R - 1] << 3 | (8 - R));
                        if (ck > bk) bk = ck, bkj = j;  // a later column: only a better key
                    }
                    if (MODE != WAVEDP_LOCAL) {
                        if (mr >= 0 && mr < R) {  // this lane holds row m
                            int hm = Hg[0];
#pragma unroll
                            for (int r = 1; r < R; ++r) hm = r == mr ? Hg[r] : hm;
                            hm += go;
                            if (MODE == WAVEDP_GLOBAL && j == n) bv = hm, bi = m, bj = n;
                            if (MODE == WAVEDP_SEMIGLOBAL && better(hm, m, j, bv, bi, bj))
                                bv = hm, bi = m, bj = j;
                        }
                        if (MODE == WAVEDP_SEMIGLOBAL && j == n) {  // column n
#pragma unroll
                            for (int r = 0; r < R; ++r)
                                if (r < valid && better(Hg[r] + go, row0 + r + 1, n, bv, bi, bj))
                                    bv = Hg[r] + go, bi = row0 + r + 1, bj = n;
                        }
                    }
                    diag = uh;
                    c_cur = c;
                    botH = hup;
                    botF = f;
                    if (lane == G - 1 && !last) scr[j] = make_int2(hup, f);
                }
            }
            if (MODE == WAVEDP_LOCAL && bk >> 3 > 0 &&
                better(bk >> 3, row0 + 8 - (bk & 7), bkj, bv, bi, bj))
                bv = bk >> 3, bi = row0 + 8 - (bk & 7), bj = bkj;
            __syncwarp();  // the scratch row is visible to lane 0 of the next pass
        }
        write_end<MODE, G, false>(lane, k < count, p, bv, bi, bj, ends);
    }
}
