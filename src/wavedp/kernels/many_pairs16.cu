// many_pairs16: many_pairs.cu's sweep with two pairs a group, pair k in the low int16 half of
// every word and pair k + 1 in the high half (Hopper DPX s16x2: the four add-max operations of
// a cell serve two cells).
// The host routes a launch here only where no value can leave its half: every score + go and
// PAD16 within int16, and by the pairs' sides, the local end key X << K | R - 1 - r at most
// 32767 (K = 3 for R = 8 rows a lane, X <= 4095; K = 4 for R = 16, X <= 2047) or, global and
// semiglobal, every H between -16384 and 16383. The table (score + go) has a last row and a
// last column of PAD16: rows past a pair's query and columns past its target (the group runs
// the longer pair's passes and columns) score PAD16, and no cell there
// beats the cells before it (a later column, or row, loses ties). The key of a cell is one
// multiply-add on the word (X >= 0 in local mode, so no carry crosses the halves); a column's
// key replaces a half's best only where larger, its column kept per half. R = 16 (score-only:
// TALL in engines/cuda/many_pairs.py) spreads a step's shuffles and bookkeeping over twice
// the cells.
//
// Lane 0's columns come G at a time: lane l of the group loads the code (the two pairs' table
// offsets) of column b + l and H - go and F above it (the first row's, or the scratch row's
// after the first pass), G columns ahead, and lane 0 takes its column's by shuffle. The steps
// go RUN at a time; after the first G - 1 (lanes waiting for their first column) every lane
// computes every step, the cells past its pair's columns harmless (kept out of the best, the
// saved borders and the scratch row). Past the group's n they are not a padded table's: a
// lane that skipped such columns in the first steps hands the next one its last column's
// values and letters, so a semiglobal row m unmasked there took scores above the best.
//
// PROF (where every score + go fits int8 and the profiles their room: DNA): in place of the
// table, each thread keeps a profile of its rows in shared memory, made at the start of a
// pass: for each pair of its group's word and each letter t (A: past the target), word k holds
// rows 4k + 1 .. 4k + 4 (a byte each, low byte first) of score(row, t) + go, PAD8 past the
// query or the target, at words (P * (A + 1) + t) * PROF_LETTER + k * PAIRS_BLOCK + the thread
// (P = 0 for pair a, 1 for b: no bank is shared). A column's code holds the two pairs' letter
// offsets, so four rows' scores are one load of each profile (at an immediate offset) and a
// row's one byte permute that sign-extends a byte of each into its half, against two loads,
// two address adds and a select a row from the table. PAD8 in place of PAD16 keeps the
// argument above: within the group's columns, a cell past a query or a target is below the
// cell its diagonal comes from.
//
// SWAP: the host has exchanged the pairs' sides (the target's letters down the rows, the table
// transposed) where that pads fewer cells, and the sweep keeps docs/design.md's results of the
// pairs unexchanged by the rules exchanged: end cells by better_as<SWAP> (a smaller column
// before a smaller row; local: a later column replaces a half's best only with a larger X;
// semiglobal: the empty end on row m at column 0), and SAVE's flags bit 0, X beats F, and bit 1,
// H beats the diagonal, which trace_dirs walks diagonal first, then F, then E. The host
// exchanges the coordinates back, and pack_runs I and D.
#include "many_pairs.cuh"
#include "pairs_layout.cuh"

#define PAD16 (-16384)
#define PAD8 (-128)
#define NEG16 (-16384)
// a compile-time flag passed to a generic lambda
template <bool B> struct Flag { static constexpr bool value = B; };
__device__ __forceinline__ unsigned splat16(int v) { return (unsigned)(v & 0xffff) * 0x10001u; }
__device__ __forceinline__ int lo16(unsigned w) { return (int)(short)(w & 0xffffu); }
__device__ __forceinline__ int hi16(unsigned w) { return (int)w >> 16; }

// the shared word at byte address a (32-bit shared addresses: no 64-bit arithmetic)
__device__ __forceinline__ unsigned lds(unsigned a) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}

// the target letters of column index j (0-based) of pairs a (low byte) and b, A past a target
__device__ __forceinline__ unsigned letters(const u8* ta, const u8* tb, int j, int na, int nb,
                                            int A) {
    return (unsigned)(j < na ? ta[j] : A) | (unsigned)(j < nb ? tb[j] : A) << 8;
}
// a column's code from its letters: the two pairs' table offsets
__device__ __forceinline__ unsigned code_of(unsigned ab) {
    return (ab & 0xffu) * 128 | (ab >> 8) * 128 << 16;
}
// SAVE of many_pairs16, one pair of a group: the lane's direction words in this pass (set
// once a pass; null where the pass or the lane's rows are past the pair's query), stored a run
// of RUN steps at a time.
struct Saver {
    unsigned* words;  // the lane's words of steps RUN k .. RUN k + RUN - 1 at words + RUN kG
    int n;
    unsigned word[RUN];  // the words of the run of steps in hand
    template <int G>
    __device__ __forceinline__ void pass(unsigned* sp, int s, int lane, bool live) {
        words = live ? sp + bottom_unit(n, G, s, 0, lane) : nullptr;
    }
    // the step's direction word (the pair's 8 rows' nibbles; u = st % RUN, a constant where
    // it is called), held until its run's store
    __device__ __forceinline__ void put(int u, unsigned w) { word[u] = w; }
    // the words of the run ending at step st in one store, within the pair's runs
    template <int G>
    __device__ __forceinline__ void store(int st) const {
        if (words == nullptr || st / RUN >= bottom_runs(n, G)) return;
        *reinterpret_cast<uint4*>(words + (i64)(st / RUN) * RUN * G) =
            make_uint4(word[0], word[1], word[2], word[3]);
    }
};

// SAVE (many_pairs16's traceback: the sweep's direction bits): each lane stores, every step,
// a word a pair of its 8 rows' flags at the step's column, row r's
// at bits 4r .. 4r + 3 (nibble bits): bit 0, F beats X (F > X: H's source is F); bit 1, X beats
// the diagonal (X > H[i-1][j-1] + s: H's source is E unless X = 0 in local mode); bit 2, E
// extends (E[i][j-1] - ge > H[i][j-1] - go); bit 3, F extends (F[i-1][j] - ge > H[i-1][j] - go).
// These are recompute()'s DIR_* and E_OPEN / F_OPEN decisions (F only where it beats X, then
// local zero, then the diagonal, then E; open where open >= extend) but for local zero, which
// trace_dirs reads off the score it carries along the path (H = 0 exactly where recompute says
// DIR_ZERO). The word of pass s, step st, lane l sits where many_pairs' SAVE puts the bottom
// (bottom_unit: a lane's four steps of a run in one 16-byte store); a pair's words number
// saved_bottoms(m, n, G, T). Each flag is the sign bit of an int16 difference (a - b < 0
// where b = max(a, ...)), whose size the host's int16 bounds keep within range; prmt's sign
// mode spreads a sign bit over a byte, and a tree of bit selects gathers the bytes.

// prmt with its sign-replicating selectors (__byte_perm masks them off), SEL an immediate
template <unsigned SEL>
__device__ __forceinline__ unsigned prmt_sign(unsigned a, unsigned b) {
    unsigned v;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "n"(SEL));
    return v;
}
// byte X of a and of b, each sign-extended into its half
template <int X>
__device__ __forceinline__ unsigned bytes_signed(unsigned a, unsigned b) {
    return prmt_sign<0xC480u + 0x1111u * X>(a, b);
}
// a's bits where c is set, b's elsewhere: one LOP3 (written as C, the compiler makes the
// tree of selects two AND-OR layers, 10 LOP3 for 7)
template <unsigned C>
__device__ __forceinline__ unsigned bit_select(unsigned a, unsigned b) {
    unsigned v;
    asm("lop3.b32 %0, %1, %2, %3, 0xe4;" : "=r"(v) : "r"(a), "r"(b), "n"(C));
    return v;
}
// rows r0 .. r0 + 3 of both pairs' flags (sign bits of s*[r]): row r0 + r's nibble at bits
// 4r (pair a, low half) and 16 + 4r (pair b). A leaf spreads flag k of rows r and r + 2 (r =
// r0, r0 + 1) over bytes [a's row r, a's row r + 2, b's row r, b's row r + 2]; the leaf of
// (r - r0, k) owns bit 4(r - r0) + k of every byte.
__device__ __forceinline__ unsigned dir_nibbles(const unsigned (&sF)[8], const unsigned (&sX)[8],
                                                const unsigned (&sE)[8], const unsigned (&sO)[8],
                                                int r0) {
    constexpr unsigned SEL = 0xfbd9;  // sign of a's byte 1, b's 1, a's 3, b's 3
    unsigned lv[8];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = r0 + h;
        lv[4 * h + 0] = prmt_sign<SEL>(sF[r], sF[r + 2]);
        lv[4 * h + 1] = prmt_sign<SEL>(sX[r], sX[r + 2]);
        lv[4 * h + 2] = prmt_sign<SEL>(sE[r], sE[r + 2]);
        lv[4 * h + 3] = prmt_sign<SEL>(sO[r], sO[r + 2]);
    }
    const unsigned b01 = bit_select<0x01010101u>(lv[0], lv[1]);
    const unsigned b23 = bit_select<0x04040404u>(lv[2], lv[3]);
    const unsigned b45 = bit_select<0x10101010u>(lv[4], lv[5]);
    const unsigned b67 = bit_select<0x40404040u>(lv[6], lv[7]);
    return bit_select<0x0f0f0f0fu>(bit_select<0x03030303u>(b01, b23),
                                   bit_select<0x30303030u>(b45, b67));
}

template <int R> struct LOG2 { static constexpr int value = R == 16 ? 4 : 3; };
// semiglobal's row m: the word of pair a's half of h[ra] and pair b's of h[rb], by a tree of
// byte permutes, one a level for both pairs (pick[b]: bit b of ra and rb), where a tree of
// selects a pair and their merge spilled registers with SAVE
template <int R>
__device__ __forceinline__ unsigned halves_at(const unsigned (&h)[R],
                                              const unsigned (&pick)[LOG2<R>::value]) {
    unsigned v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = h[i];
#pragma unroll
    for (int b = 0, w = 1; w < R; ++b, w *= 2)
#pragma unroll
        for (int i = 0; i + w < R; i += 2 * w) v[i] = __byte_perm(v[i], v[i + w], pick[b]);
    return v[0];
}

template <int MODE, int G, int R, bool SAVE, bool PROF, bool SWAP>
__global__ void __launch_bounds__(PAIRS_BLOCK, 2) many_pairs16(
    const u8* __restrict__ qres, const u8* __restrict__ tres, const i64* __restrict__ qoff,
    const i64* __restrict__ toff, const int* __restrict__ ms, const int* __restrict__ ns,
    const int* __restrict__ order, int count, const int* __restrict__ sub, int A, int go,
    int ge, unsigned* __restrict__ save, const i64* __restrict__ soff,
    uint2* __restrict__ scratch, int stride, int* __restrict__ ends, int* __restrict__ ticket,
    unsigned scale) {
    // scale: 1 << K (R) from the host, so a key's multiply-add stays on the FMA pipe (a
    // constant becomes a shift-add on the ALU pipe, which bounds the sweep)
    extern __shared__ int ssub[];  // the table, (A + 1) x (A + 1) entries, 32 copies each
    const int A1 = A + 1;          // (PROF: the threads' profiles)
    for (int w = threadIdx.x; !PROF && w < A1 * A1 * 32; w += PAIRS_BLOCK) {
        const int e = w >> 5, qc = e / A1, tc = e % A1;
        ssub[w] = qc < A && tc < A ? sub[qc * A + tc] + go : PAD16;
    }
    __syncthreads();
    constexpr int T = G * R;
    constexpr int GPW = 32 / G;
    constexpr unsigned PROF_LETTER = R / 4 * PAIRS_BLOCK;  // a letter's words in a profile
    static_assert((R == 8 || (R == 16 && !SAVE)) && RUN == 4 && G % RUN == 0,
                  "a saved word holds 8 rows; steps go four at a time, one 16-byte store");
    const int lane32 = threadIdx.x & 31;
    const int lane = lane32 % G;
    const int gw = lane32 / G;
    const unsigned base = (unsigned)__cvta_generic_to_shared(ssub + lane32);
    unsigned* const prof = reinterpret_cast<unsigned*>(ssub) + threadIdx.x;
    // a column's code: the two pairs' table offsets in bytes, or (PROF) profile offsets in words
    auto code = [&](unsigned ab) {
        if (!PROF) return code_of(ab);
        return (ab & 0xffu) * PROF_LETTER | ((ab >> 8) + A1) * PROF_LETTER << 16;
    };
    uint2* scr = scratch + ((i64)(blockIdx.x * PAIRS_BLOCK + threadIdx.x) / G) * stride;
    const int row_bytes = A1 * 128;
    const unsigned mgo = splat16(-go), mge = splat16(-ge), neg = splat16(NEG16);

    for (;;) {
        int k0 = 0;
        if (lane32 == 0) k0 = atomicAdd(ticket, 2 * GPW);
        k0 = __shfl_sync(FULL, k0, 0);
        if (k0 >= count) return;
        const int k = k0 + 2 * gw;  // pairs k (low halves) and k + 1 (high)
        int pa = 0, pb = 0, ma = 0, mb = 0, na = 0, nb = 0;
        const u8 *qa = qres, *qb = qres, *ta = tres, *tb = tres;
        if (k < count) {
            pa = order[k];
            ma = ms[pa], na = ns[pa];
            qa += qoff[pa], ta += toff[pa];
        }
        if (k + 1 < count) {
            pb = order[k + 1];
            mb = ms[pb], nb = ns[pb];
            qb += qoff[pb], tb += toff[pb];
        }
        const int n = max(na, nb);
        const int passes = (max(ma, mb) + T - 1) / T;
        const int pas = (ma + T - 1) / T, pbs = (mb + T - 1) / T;  // each pair's passes
        unsigned* spa = SAVE && k < count ? save + soff[pa] : nullptr;
        unsigned* spb = SAVE && k + 1 < count ? save + soff[pb] : nullptr;
        Saver sva{nullptr, na}, svb{nullptr, nb};
        const int wpasses = __reduce_max_sync(FULL, passes);
        const int steps = __reduce_max_sync(FULL, n) + G - 1;
        // each pair's best end cell (local: the empty alignment; semiglobal: H = 0 on row 0 at
        // column n, or SWAP on row m at column 0, which wins its ties)
        const bool sg = MODE == WAVEDP_SEMIGLOBAL;
        int av = MODE == WAVEDP_GLOBAL ? WAVEDP_INT_MIN : 0, bv = av;
        int ai = MODE == WAVEDP_GLOBAL ? 0x7fffffff : sg && SWAP ? ma : 0;
        int aj = sg ? (SWAP ? 0 : na) : ai;
        int bi = MODE == WAVEDP_GLOBAL ? ai : sg && SWAP ? mb : 0;
        int bj = sg ? (SWAP ? 0 : nb) : bi;
        // score v at row i, column j the end cell of pair a (b: pair b) where better
        auto take = [&](bool b, int v, int i, int j) {
            int &tv = b ? bv : av, &ti = b ? bi : ai, &tj = b ? bj : aj;
            if (better_as<SWAP>(v, i, j, tv, ti, tj)) tv = v, ti = i, tj = j;
        };
        for (int s = 0; s < wpasses; ++s) {
            const bool live = s < passes;
            const int row0 = s * T + lane * R;  // this lane's rows: row0 + 1 .. row0 + R
            const int va = min(max(ma - row0, 0), R), vb = min(max(mb - row0, 0), R);
            if (SAVE) {
                sva.pass<G>(spa, s, lane, spa != nullptr && s < pas && va > 0);
                svb.pass<G>(spb, s, lane, spb != nullptr && s < pbs && vb > 0);
            }
            int oa[R], ob[R];  // the rows' table rows, in bytes (PAD16's past the query)
            unsigned Hg[R], E[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                oa[r] = (r < va ? qa[row0 + r] : A) * row_bytes;
                ob[r] = (r < vb ? qb[row0 + r] : A) * row_bytes;
                Hg[r] = splat16(edge<MODE>(row0 + r + 1, go, ge) - go);
                E[r] = neg;
            }
            if (PROF) {  // this pass's profiles: pair a's, then b's
                for (int t = 0; t < A1; ++t) {
#pragma unroll
                    for (int r = 0; r < R; r += 4) {
                        auto word = [&](const u8* q, int v) {  // rows r .. r + 3, a byte each
                            unsigned w = 0;
#pragma unroll
                            for (int x = r; x < r + 4; ++x)
                                w |= (unsigned)((x < v && t < A ? sub[q[row0 + x] * A + t] + go
                                                                : PAD8) & 0xff) << 8 * (x - r);
                            return w;
                        };
                        const unsigned h = r / 4 * PAIRS_BLOCK;
                        prof[t * PROF_LETTER + h] = word(qa, va);
                        prof[(A1 + t) * PROF_LETTER + h] = word(qb, vb);
                    }
                }
            }
            const int ra = ma - 1 - row0, rb = mb - 1 - row0;  // row m's place, each pair
            const bool hold_a = ra >= 0 && ra < R, hold_b = rb >= 0 && rb < R;
            unsigned pick[LOG2<R>::value];  // semiglobal: halves_at's selectors for row m
#pragma unroll
            for (int b = 0; b < LOG2<R>::value; ++b)
                pick[b] = (ra >> b & 1 ? 0x54u : 0x10u) | (rb >> b & 1 ? 0x7600u : 0x3200u);
            unsigned diag = splat16(edge<MODE>(row0, go, ge) - go);
            unsigned botH = 0, botF = neg, c_cur = 0;
            // lane 0's columns, G at a time: lane l holds column index b + l's code (cur) and
            // H - go and F above it (top: the first row, or the scratch row), and loads those
            // of b + G + l (nxt, the letters, and ntop); lane 0 takes its column's by shuffle
            auto above = [&](int x) {
                if (s == 0) return make_uint2(splat16(edge<MODE>(x + 1, go, ge) - go), neg);
                return x < n ? scr[x] : make_uint2(0, neg);
            };
            unsigned cur = 0, nxt = 0;
            uint2 top = make_uint2(0, neg), ntop = top;
            if (live) {
                cur = code(letters(ta, tb, lane, na, nb, A));
                nxt = letters(ta, tb, G + lane, na, nb, A);
                top = above(lane), ntop = above(G + lane);
            }
            unsigned bk = 0, bja = 0, bjb = 0;  // local: the pass's best keys, their columns
            unsigned mk = neg, mkj = 0;         // semiglobal: row m's best H - go and columns
            // a step (a column of each lane): GUARD, lanes out of their columns skip it (the
            // first G - 1 steps, where lanes wait for their first column); else every lane
            // computes, the cells past a pair's columns (or a group idle in this pass) harmless:
            // out of the best, the saved borders and the scratch row
            auto step = [&](const int st, const int u, auto guard) {
                constexpr bool GUARD = decltype(guard)::value;
                if (u == 0 && st % G == 0 && st > 0) {  // the next G columns of lane 0
                    cur = code(nxt);
                    top = ntop;
                    if (live) {
                        nxt = letters(ta, tb, st + G + lane, na, nb, A);
                        ntop = above(st + G + lane);
                    }
                }
                const int j = st - lane + 1;  // this lane's column
                const unsigned h_up = __shfl_up_sync(FULL, botH, 1, G);
                const unsigned f_up = __shfl_up_sync(FULL, botF, 1, G);
                const unsigned c_up = __shfl_up_sync(FULL, c_cur, 1, G);
                const unsigned h_own = __shfl_sync(FULL, top.x, st % G, G);
                const unsigned f_own = __shfl_sync(FULL, top.y, st % G, G);
                const unsigned c_own = __shfl_sync(FULL, cur, st % G, G);
                const unsigned uh = lane == 0 ? h_own : h_up, uf = lane == 0 ? f_own : f_up;
                const unsigned c = lane == 0 ? c_own : c_up;
                const bool in = live && j >= 1 && j <= n;
                if (!GUARD || in) {
                    const unsigned cola = base + (c & 0xffff), colb = base + (c >> 16);
                    const unsigned *pa = prof + (c & 0xffff), *pb = prof + (c >> 16);
                    unsigned wa = 0, wb = 0;  // PROF: rows r .. r + 3 of each pair's profile
                    unsigned f = uf, hup = uh, d = diag, xg = 0;
                    unsigned xs[R];
                    // SAVE: differences whose sign bits (15 and 31) are the cell's flags (see
                    // SAVE above): F beats X, X beats the diagonal, E extends, F extends
                    unsigned sF[R], sX[R], sE[R], sO[R];
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        if (PROF && r % 4 == 0)
                            wa = pa[r / 4 * PAIRS_BLOCK], wb = pb[r / 4 * PAIRS_BLOCK];
                        // PROF: byte r % 4 of wa and of wb, each sign-extended into its half
                        const unsigned sc =
                            PROF ? (r % 4 == 0   ? bytes_signed<0>(wa, wb)
                                    : r % 4 == 1 ? bytes_signed<1>(wa, wb)
                                    : r % 4 == 2 ? bytes_signed<2>(wa, wb)
                                                 : bytes_signed<3>(wa, wb))
                                 : __byte_perm(lds(cola + oa[r]), lds(colb + ob[r]), 0x5410);
                        const unsigned e = __viaddmax_s16x2(E[r], mge, Hg[r]);
                        const unsigned x = MODE == WAVEDP_LOCAL
                                               ? __viaddmax_s16x2_relu(d, sc, e)
                                               : __viaddmax_s16x2(d, sc, e);
                        if (SAVE) {
                            sE[r] = __vsub2(Hg[r], e);               // H - go < E - ge
                            sX[r] = __vadd2(d, sc);                  // the diagonal
                            if (!SWAP) sX[r] = __vsub2(sX[r], x);    // diagonal < X
                            sO[r] = hup;                             // H - go above
                        }
                        f = __viaddmax_s16x2(f, mge, r == 0 ? hup : xg);
                        if (SAVE) sO[r] = __vsub2(sO[r], f);         // H - go above < F
                        xg = __vadd2(x, mgo);
                        d = Hg[r];
                        Hg[r] = hup = __viaddmax_s16x2(f, mgo, xg);
                        if (SAVE && !SWAP) sF[r] = __vsub2(xg, hup);  // X - go < H - go
                        if (SAVE && SWAP) {
                            sF[r] = __vsub2(f, x);                   // F < X
                            sX[r] = __vsub2(__vadd2(sX[r], mgo), hup);  // diagonal < H
                        }
                        E[r] = e;
                        xs[r] = x;
                    }
                    if constexpr (SAVE) {  // each pair's word: row r's nibble at bits 4r
                        const unsigned X = dir_nibbles(sF, sX, sE, sO, 0);
                        const unsigned Y = dir_nibbles(sF, sX, sE, sO, 4);
                        sva.put(u, __byte_perm(X, Y, 0x5410));
                        svb.put(u, __byte_perm(X, Y, 0x7632));
                    }
                    if (MODE == WAVEDP_LOCAL) {  // keys X << K | R - 1 - r
                        unsigned ky[R];
#pragma unroll
                        for (int r = 0; r < R; ++r)
                            ky[r] = xs[r] * scale + (unsigned)(R - 1 - r) * 0x10001u;
                        unsigned ck;
                        if constexpr (R == 8) {
                            ck = __vimax3_s16x2(
                                __vimax3_s16x2(ky[0], ky[1], ky[2]),
                                __vimax3_s16x2(ky[3], ky[4], ky[5]), __vmaxs2(ky[6], ky[7]));
                        } else {
                            const unsigned a0 = __vimax3_s16x2(ky[0], ky[1], ky[2]);
                            const unsigned a1 = __vimax3_s16x2(ky[3], ky[4], ky[5]);
                            const unsigned a2 = __vimax3_s16x2(ky[6], ky[7], ky[8]);
                            const unsigned a3 = __vimax3_s16x2(ky[9], ky[10], ky[11]);
                            const unsigned a4 = __vimax3_s16x2(ky[12], ky[13], ky[14]);
                            ck = __vimax3_s16x2(__vimax3_s16x2(a0, a1, a2),
                                                __vimax3_s16x2(a3, a4, ky[15]), a0);
                        }
                        // a later column: only a larger key (a half that changed), SWAP a larger
                        // X (the key against the best's X with the lowest row's bits)
                        const unsigned b7 = SWAP ? bk | (unsigned)(R - 1) * 0x10001u : bk;
                        const unsigned nk = __vmaxs2(b7, GUARD || in ? ck : 0u);
                        const unsigned grew = nk ^ b7;
                        bja = grew & 0xffffu ? j : bja;
                        bjb = grew >> 16 ? j : bjb;
                        const unsigned kept = SWAP ? __vcmpeq2(nk, b7) : 0u;  // halves kept
                        bk = (nk & ~kept) | (bk & kept);
                    }
                    if (MODE == WAVEDP_GLOBAL && (j == na || j == nb)) {
                        if (hold_a && j == na)
                            av = lo16(row_of<R>(Hg, ra)) + go, ai = ma, aj = na;
                        if (hold_b && j == nb)
                            bv = hi16(row_of<R>(Hg, rb)) + go, bi = mb, bj = nb;
                    }
                    if (MODE == WAVEDP_SEMIGLOBAL) {
                        if (hold_a || hold_b) {  // row m, up to column n: earlier columns win
                            const unsigned ok = (hold_a && j <= na ? 0xffffu : 0u) |
                                                (hold_b && j <= nb ? 0xffff0000u : 0u);
                            const unsigned hm = halves_at<R>(Hg, pick);
                            const unsigned nk = __vmaxs2((hm & ok) | (neg & ~ok), mk);
                            const unsigned grew = __vcmpne2(nk, mk);
                            mkj = ((unsigned)j * 0x10001u & grew) | (mkj & ~grew);
                            mk = nk;
                        }
                        if (j == na || j == nb) {  // column n: each pair's best row, one take
                            const unsigned at = (j == na ? 0xffffu : 0u) |
                                                (j == nb ? 0xffff0000u : 0u);
                            unsigned h[R], cm = neg;
#pragma unroll
                            for (int r = 0; r < R; ++r) {  // rows past a query out
                                const unsigned q = at & ((r < va ? 0xffffu : 0u) |
                                                         (r < vb ? 0xffff0000u : 0u));
                                h[r] = (Hg[r] & q) | (neg & ~q);
                                cm = __vmaxs2(cm, h[r]);
                            }
                            int fa = 0, fb = 0;  // the first row of each half's best
#pragma unroll
                            for (int r = R - 1; r >= 0; --r) {
                                const unsigned eq = __vcmpeq2(h[r], cm);
                                fa = eq & 0xffffu ? r : fa;
                                fb = eq >> 16 ? r : fb;
                            }
                            if (j == na) take(false, lo16(cm) + go, row0 + fa + 1, na);
                            if (j == nb) take(true, hi16(cm) + go, row0 + fb + 1, nb);
                        }
                    }
                    diag = uh;
                    c_cur = c;
                    botH = hup;
                    botF = f;
                    if (lane == G - 1 && s < passes - 1 && j <= n)
                        scr[j - 1] = make_uint2(hup, f);
                }
                if (SAVE && u == RUN - 1) sva.store<G>(st), svb.store<G>(st);
            };
            auto run = [&](int s0, auto guard) {  // RUN steps, one store of their bottoms
                step(s0, 0, guard), step(s0 + 1, 1, guard);
                step(s0 + 2, 2, guard), step(s0 + 3, 3, guard);
            };
            int s0 = 0;
            for (; s0 < G - 1; s0 += RUN) run(s0, Flag<true>{});
            for (; s0 < steps; s0 += RUN) run(s0, Flag<false>{});
            if (MODE == WAVEDP_LOCAL) {
                const int ka = lo16(bk), kb = hi16(bk);
                constexpr int KB = R == 8 ? 3 : 4;
                if (ka >> KB > 0) take(false, ka >> KB, row0 + R - (ka & (R - 1)), bja);
                if (kb >> KB > 0) take(true, kb >> KB, row0 + R - (kb & (R - 1)), bjb);
            }
            if (MODE == WAVEDP_SEMIGLOBAL) {
                if (hold_a) take(false, lo16(mk) + go, ma, mkj & 0xffff);
                if (hold_b) take(true, hi16(mk) + go, mb, mkj >> 16);
            }
            __syncwarp();  // the scratch row is visible to lane 0 of the next pass
        }
        write_end<MODE, G, SWAP>(lane, k < count, pa, av, ai, aj, ends);
        write_end<MODE, G, SWAP>(lane, k + 1 < count, pb, bv, bi, bj, ends);
    }
}
