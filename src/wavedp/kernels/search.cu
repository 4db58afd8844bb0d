// Database search: queries (one, or two packed, per profile) against many subjects, score
// only. A launch scans NQ profiles of one kernel shape against the same subjects; a block's
// ticket names a profile and a batch of subjects (profile-major), so blocks move on to the
// next profile without waiting for the others.
//
// A thread group of G lanes (G a power of two, G <= 32) aligns one subject at a time against
// a query tile of T = G*R rows: lane l owns tile rows l*R .. l*R+R-1 and keeps their H and E in
// registers; lane l runs one column behind lane l-1 and gets H and F of the row above its
// first row by shuffle. Queries longer than T run in passes over successive tiles: the last
// lane of a group writes its bottom row (H - go and F) to the group's scratch row, which lane 0
// reads back in the next pass, two columns at a time through a ring in shared memory (see
// fetch_chunk). Groups never wait on each other; a block takes batches of subjects (one per
// group) by atomic ticket and loads the query profile of each pass into shared memory, the
// groups' rings after it.
//
// Per cell pair (word) the step spends four DPX add-max operations (E, X with the zero floor,
// F, H) and half a three-way max for the running best, all on the ALU pipe that bounds the
// kernel; local X - go is a plain packed add (__vadd2), which runs on the FMA pipe.
//
// Words: PACKED keeps two queries in one 32-bit word (two int16 lanes, Hopper DPX
// __viaddmax_s16x2 & co.), else one int32. The host checks that 16-bit values cannot wrap
// (gap open <= 8000, scores + open within int16) and rescores at 32 bits every subject whose
// 16-bit best reaches 32767 - (largest substitution score): below that no cell overflowed.
//
// Profile (prepared by the host): for pass p and residue c, T words of (score + go) in chunks
// of 4 rows: chunk k of lane l at word (k*G + l)*4 (rows l*R + 4k .. l*R + 4k + 3), so a
// quarter-warp reads 128 contiguous bytes. Rows past the query score PAD. Profile q has
// only its own passes and starts at word poffs[q].
//
// Results: out[q * count + k] for profile q and the subject order[k]: the local best (PACKED:
// two int16), or H[m][n] (global), or the best of the last row and last column (semiglobal);
// m = ms[q], the profile's (longer) query length.
//
// PAIRS (local, PACKED, a profile of one query in both halves): a group sweeps two subjects
// at once, order[2k] in the low halves and order[2k + 1] in the high halves, so a lone query
// fills both halves of its words. Shared memory then holds each pass's profile twice, its
// low halves (high halves zero) and its high halves (low halves zero), each with a row more,
// letter A, that scores PAD_COLUMN at every row: the columns past the shorter subject's end
// (as the rows past a query's end, no cell there can beat a cell of the matrix). A step's
// scores are the two rows' words added (__vadd2, on the FMA pipe; the ALU pipe bounds the
// step). With G = 4 a quarter-warp's 16-byte loads are two groups' (two letters' rows): the
// rows are padded to 32 words, the high halves' profile starts 16 words off a bank's
// start, and odd groups read the high halves' row first, so the two groups of a quarter-warp
// read different banks (PairLayout). Results: out[q * ((count + 1) / 2) + k], the low half
// order[2k]'s best, the high half order[2k + 1]'s (0 where count is odd and it is the last).
#include "common.cuh"

#define FULL 0xffffffffu
#define BLOCK 128
// Lane 0 reads the scratch row in chunks of two columns (16 bytes), copied asynchronously
// (cp.async, past L1) into a ring of RING slots per group in shared memory, AHEAD chunks
// before use: the rows of all resident groups can outgrow L2, and then they come from DRAM.
#ifndef AHEAD
#define AHEAD 3
#endif
#define RING 4  // > AHEAD; the host sizes shared memory with the same number (search.RING)
// PAIRS: the score of a column past its subject's end, in one int16 half (shapes.PAD16)
#define PAD_COLUMN 0xe000u

__device__ __forceinline__ void fetch_chunk(uint4* ring, const uint2* scr, int i) {
    const unsigned to = (unsigned)__cvta_generic_to_shared(ring + (unsigned)i % RING);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(scr + 2 * i));
}
// one commit group per chunk, so waiting until AHEAD - 1 are pending completes the oldest
__device__ __forceinline__ void commit_chunk() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void wait_chunk() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(AHEAD - 1));
}

template <bool PACKED> struct Word;

template <> struct Word<true> {
    static __device__ __forceinline__ unsigned addmax(unsigned a, unsigned b, unsigned c) {
        return __viaddmax_s16x2(a, b, c);
    }
    static __device__ __forceinline__ unsigned addmax_relu(unsigned a, unsigned b, unsigned c) {
        return __viaddmax_s16x2_relu(a, b, c);
    }
    static __device__ __forceinline__ unsigned max3(unsigned a, unsigned b, unsigned c) {
        return __vimax3_s16x2(a, b, c);
    }
    static __device__ __forceinline__ unsigned vmax(unsigned a, unsigned b) { return __vmaxs2(a, b); }
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) { return __vadd2(a, b); }
    static __device__ __forceinline__ unsigned splat(int v) { return (unsigned)(v & 0xffff) * 0x10001u; }
};

template <> struct Word<false> {
    static __device__ __forceinline__ unsigned addmax(unsigned a, unsigned b, unsigned c) {
        return (unsigned)__viaddmax_s32((int)a, (int)b, (int)c);
    }
    static __device__ __forceinline__ unsigned addmax_relu(unsigned a, unsigned b, unsigned c) {
        return (unsigned)__viaddmax_s32_relu((int)a, (int)b, (int)c);
    }
    static __device__ __forceinline__ unsigned max3(unsigned a, unsigned b, unsigned c) {
        return (unsigned)__vimax3_s32((int)a, (int)b, (int)c);
    }
    static __device__ __forceinline__ unsigned vmax(unsigned a, unsigned b) {
        return (unsigned)max((int)a, (int)b);
    }
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) { return a + b; }
    static __device__ __forceinline__ unsigned splat(int v) { return (unsigned)v; }
};

// PAIRS: a letter's row of either half's profile (words) and where the high halves' starts
template <int G, int T> struct PairLayout {
    static constexpr int stride = G == 4 ? (T + 31) / 32 * 32 : T;
    static constexpr int skew = G == 4 ? 16 : 0;
};

// PAIRS: the residue codes of 0-based column j of the two subjects (of n and n2 residues at
// base and base2), the low byte the first's, the next the second's; A past an end
__device__ __forceinline__ int pair_codes(const u8* __restrict__ res, i64 base, int n,
                                          i64 base2, int n2, int j, int A) {
    return (j < n ? (int)res[base + j] : A) | (j < n2 ? (int)res[base2 + j] : A) << 8;
}

// mgo and mge: -go and -ge as words (both halves when PACKED), from the host: as kernel
// arguments the step reads them from the constant bank instead of copying registers
template <int MODE, int G, int R, bool PACKED, bool PAIRS = false>
__global__ void __launch_bounds__(BLOCK) scan(
    const u8* __restrict__ res, const i64* __restrict__ off, const int* __restrict__ order,
    int count, const unsigned* __restrict__ profs, int A, const i64* __restrict__ poffs,
    const int* __restrict__ ms, int nq, int go, int ge, unsigned mgo, unsigned mge,
    uint2* scratch, int stride, unsigned* outs, int* ticket) {
    static_assert(!PAIRS || (PACKED && MODE == WAVEDP_LOCAL), "pairs: local, packed");
    using W = Word<PACKED>;
    extern __shared__ __align__(16) unsigned sprof[];
    __shared__ int sbatch;
    constexpr int T = G * R;
    const int lane = threadIdx.x % G;
    const int group = threadIdx.x / G;
    constexpr int groups = BLOCK / G;
    uint2* scr = scratch + (i64)(blockIdx.x * groups + group) * stride;  // column j at j - 1
    const unsigned neg = W::splat(PACKED ? -16384 : WAVEDP_NEG);
    const int words = A * T;
    using Pair = PairLayout<G, T>;
    const int half = (A + 1) * Pair::stride;  // PAIRS: the words of each half's profile
    const int high = half + Pair::skew;  // PAIRS: where the high halves' profile starts
    const int items = PAIRS ? (count + 1) / 2 : count;  // a group's subject, or pair
    const int batches = (items + groups - 1) / groups;
    int loaded = -1;  // the profile in shared memory

    for (;;) {
        __syncthreads();  // every thread has read the previous batch number
        if (threadIdx.x == 0) sbatch = atomicAdd(ticket, 1);
        __syncthreads();
        const int qi = sbatch / batches;
        if (qi >= nq) return;
        const int first = sbatch % batches * groups;
        const int k = first + group;
        const int m = ms[qi];
        const unsigned* prof = profs + poffs[qi];
        unsigned* out = outs + (i64)qi * items;
        int n = 0, n2 = 0;  // n2: PAIRS, the second subject's length
        i64 base = 0, base2 = 0;
        if (k < items) {
            const int s = order[PAIRS ? 2 * k : k];
            base = off[s];
            n = (int)(off[s + 1] - base);
            if (PAIRS && 2 * k + 1 < count) {
                const int s2 = order[2 * k + 1];
                base2 = off[s2];
                n2 = (int)(off[s2 + 1] - base2);
            }
        }
        const int na = n;  // PAIRS: the first subject's length; n: the columns swept
        if (PAIRS) n = max(n, n2);
        const int nw = __reduce_max_sync(FULL, n);  // the warp's longest subject
        // local: best H; global: H[m][n] - go; semiglobal: best H - go of row m / column n
        unsigned best = MODE == WAVEDP_LOCAL ? 0u : W::splat(MODE == WAVEDP_GLOBAL ? WAVEDP_NEG : -go);
        const int own = (m + T - 1) / T;  // this profile's passes (a shorter query: fewer)
        for (int p = 0; p < own; ++p) {
            if (own > 1 || loaded != qi) {  // one pass: the profile stays for its batches
                loaded = qi;
                __syncthreads();
                const uint4* src = reinterpret_cast<const uint4*>(prof + (i64)p * words);
                if (PAIRS) {  // each half apart, and the row of letter A
                    for (int w = threadIdx.x; w < (A + 1) * T / 4; w += BLOCK) {
                        const uint4 v = w < words / 4 ? src[w] : make_uint4(
                            PAD_COLUMN * 0x10001u, PAD_COLUMN * 0x10001u,
                            PAD_COLUMN * 0x10001u, PAD_COLUMN * 0x10001u);
                        const int at = w / (T / 4) * Pair::stride + w % (T / 4) * 4;
                        uint4* lo = reinterpret_cast<uint4*>(sprof + at);
                        uint4* hi = reinterpret_cast<uint4*>(sprof + high + at);
                        *lo = make_uint4(v.x & 0xffffu, v.y & 0xffffu, v.z & 0xffffu,
                                         v.w & 0xffffu);
                        *hi = make_uint4(v.x & 0xffff0000u, v.y & 0xffff0000u,
                                         v.z & 0xffff0000u, v.w & 0xffff0000u);
                    }
                } else {
                    for (int w = threadIdx.x; w < words / 4; w += BLOCK)
                        reinterpret_cast<uint4*>(sprof)[w] = src[w];
                }
                __syncthreads();
            }
            const int row0 = p * T + lane * R;  // rows row0+1 .. row0+R (1-based)
            unsigned Hg[R], E[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                Hg[r] = W::splat(edge<MODE>(row0 + r + 1, go, ge) - go);
                E[r] = neg;
            }
            unsigned diag = W::splat(edge<MODE>(row0, go, ge) - go);
            unsigned bot_h = 0, bot_f = neg;
            const bool last = p == own - 1;
            const int mrow = m - 1 - p * T;  // row m's place in this tile (global, semiglobal)
            const bool owns_m = MODE != WAVEDP_LOCAL && last && mrow / R == lane;
            const int rm = mrow % R;
            int c_cur = 0;  // residue of the column this lane did last step (for the lane below)
            int c_next = n > 0 && lane == 0  // lane 0: its next column's
                ? (PAIRS ? pair_codes(res, base, na, base2, n2, 0, A) : res[base]) : 0;
            uint4* ring = reinterpret_cast<uint4*>(sprof + (PAIRS ? high + half : words))
                + group * RING;
            if (p > 0 && lane == 0) {
                for (int i = 0; i < AHEAD; ++i) {
                    if (2 * i < n) fetch_chunk(ring, scr, i);
                    commit_chunk();
                }
            }
            const int steps = nw + G - 1;
            for (int s0 = 0; s0 < steps; s0 += 2) {  // a step past the last does nothing
              uint4 up;  // lane 0: H - go and F above its columns s0 + 1 and s0 + 2
#pragma unroll
              for (int u = 0; u < 2; ++u) {
                const int s = s0 + u;
                const int j = s - lane + 1;  // this lane's column (1-based)
                unsigned uh = __shfl_up_sync(FULL, bot_h, 1, G);
                unsigned uf = __shfl_up_sync(FULL, bot_f, 1, G);
                const int c_above = __shfl_up_sync(FULL, c_cur, 1, G);
                const int c = lane == 0 ? c_next : c_above;
                if (lane == 0) {
                    if (p == 0) {
                        uh = W::splat(edge<MODE>(j, go, ge) - go);
                        uf = neg;
                    } else {
                        if (u == 0) {
                            const int i = s0 / 2;
                            wait_chunk();
                            up = ring[(unsigned)i % RING];
                            if (2 * (i + AHEAD) < n) fetch_chunk(ring, scr, i + AHEAD);
                            commit_chunk();
                        }
                        uh = u == 0 ? up.x : up.z;
                        uf = u == 0 ? up.y : up.w;
                    }
                }
                if (j >= 1 && j <= n) {
                    if (lane == 0 && j < n) {
                        c_next = PAIRS ? pair_codes(res, base, na, base2, n2, j, A)
                                       : res[base + j];
                    }
                    unsigned sc[R];
                    if (PAIRS) {  // the first subject's letter's low halves + the second's high
                        const unsigned* lo = sprof + (c & 0xff) * Pair::stride;
                        const unsigned* hi = sprof + high + (c >> 8) * Pair::stride;
                        const bool swap = Pair::skew && (group & 1);  // see PairLayout
                        const uint4* pl = reinterpret_cast<const uint4*>(swap ? hi : lo) + lane;
                        const uint4* ph = reinterpret_cast<const uint4*>(swap ? lo : hi) + lane;
#pragma unroll
                        for (int q = 0; q < R / 4; ++q) {
                            const uint4 v = pl[q * G], w = ph[q * G];
                            sc[4 * q] = __vadd2(v.x, w.x), sc[4 * q + 1] = __vadd2(v.y, w.y);
                            sc[4 * q + 2] = __vadd2(v.z, w.z), sc[4 * q + 3] = __vadd2(v.w, w.w);
                        }
                    } else {
                        const uint4* pr = reinterpret_cast<const uint4*>(sprof + c * T) + lane;
#pragma unroll
                        for (int q = 0; q < R / 4; ++q) {
                            const uint4 v = pr[q * G];
                            sc[4 * q] = v.x, sc[4 * q + 1] = v.y, sc[4 * q + 2] = v.z,
                            sc[4 * q + 3] = v.w;
                        }
                    }
                    unsigned h = uh, f = uf, d = diag, xg = 0;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const unsigned e = W::addmax(E[r], mge, Hg[r]);
                        const unsigned x = MODE == WAVEDP_LOCAL ? W::addmax_relu(d, sc[r], e)
                                                                : W::addmax(d, sc[r], e);
                        f = r == 0 ? W::addmax(f, mge, h) : W::addmax(f, mge, xg);
                        // x - go: local X >= 0 cannot wrap, and a plain add leaves the DPX
                        // (ALU) pipe to the four add-max operations; else floored at neg
                        xg = MODE == WAVEDP_LOCAL ? W::add(x, mgo) : W::addmax(x, mgo, neg);
                        d = Hg[r];
                        Hg[r] = h = W::addmax(f, mgo, xg);
                        E[r] = e;
                        if (MODE == WAVEDP_LOCAL) {
                            if (r % 2 == 1) best = W::max3(best, x, sc[r - 1]);
                            else if (r == R - 1) best = W::vmax(best, x);
                            sc[r] = x;  // keeps row r's X for the pairwise max above
                        }
                    }
                    diag = uh;
                    c_cur = c;
                    bot_h = h;
                    bot_f = f;
                    if (!last && lane == G - 1) scr[j - 1] = make_uint2(h, f);
                    if (MODE != WAVEDP_LOCAL) {
                        if (owns_m && (MODE == WAVEDP_SEMIGLOBAL || j == n)) {
                            const unsigned v = row_of<R>(Hg, rm);
                            best = MODE == WAVEDP_SEMIGLOBAL ? W::vmax(best, v) : v;
                        }
                        if (MODE == WAVEDP_SEMIGLOBAL && j == n) {
#pragma unroll
                            for (int r = 0; r < R; ++r)
                                if (row0 + r + 1 <= m) best = W::vmax(best, Hg[r]);
                        }
                    }
                }
              }
            }
        }
        for (int o = G / 2; o > 0; o >>= 1) best = W::vmax(best, __shfl_xor_sync(FULL, best, o, G));
        if (k < items && lane == 0) {
            if (MODE == WAVEDP_LOCAL) out[k] = best;
            else out[k] = (unsigned)((int)best + go);
        }
    }
}

// The profiles of a launch (see "Profile" above), built on the GPU from the queries' codes:
// unit u has the queries codes[q.x .. q.x + q.y) and codes[q.z .. q.z + q.w) (q = units[u];
// the second is the first again where a unit has one query), the passes of T = G*R rows its
// longer query needs (at least one) and its words from poffs[u]; sub is the A x A
// substitution matrix (query residue major). A row past a query scores pad.
__global__ void build_profiles(const int* __restrict__ codes, const int4* __restrict__ units,
                               const i64* __restrict__ poffs, int count,
                               const int* __restrict__ sub, int A, int G, int R, int go,
                               int pad, int packed, unsigned* __restrict__ out) {
    const int T = G * R;
    for (int u = blockIdx.y; u < count; u += gridDim.y) {
        const int4 q = units[u];
        const int passes = max(1, (max(q.y, q.w) + T - 1) / T);
        const i64 words = (i64)passes * A * T;
        unsigned* dst = out + poffs[u];
        for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < words;
             w += (i64)gridDim.x * blockDim.x) {
            const int e = (int)(w & 3);
            i64 rest = w >> 2;
            const int l = (int)(rest % G);
            rest /= G;
            const int k = (int)(rest % (R / 4));
            rest /= R / 4;
            const int c = (int)(rest % A);
            const i64 row = rest / A * T + l * R + 4 * k + e;
            const int lo = row < q.y ? sub[codes[q.x + row] * A + c] + go : pad;
            if (packed) {
                const int hi = row < q.w ? sub[codes[q.z + row] * A + c] + go : pad;
                dst[w] = ((unsigned)lo & 0xffffu) | ((unsigned)hi << 16);
            } else {
                dst[w] = (unsigned)lo;
            }
        }
    }
}

// A launch's words into the score matrix: the word of unit u against the launch's j-th
// subject (words[u * count + j]) goes to out[rows[u].x * width + subjects[j]]; packed, that
// is its low int16 half, and its high half goes to row rows[u].y where that is >= 0; else the
// whole word, an int32. over[0] gains the number of packed halves at or above limit (they may
// have saturated: the caller rescores them at 32 bits).
__global__ void scatter_scores(const unsigned* __restrict__ words, int units, int count,
                               const int2* __restrict__ rows, const int* __restrict__ subjects,
                               int* __restrict__ out, i64 width, int packed, int limit,
                               int* __restrict__ over) {
    int found = 0;
    for (int u = blockIdx.y; u < units; u += gridDim.y) {
        const int2 row = rows[u];
        const unsigned* src = words + (i64)u * count;
        int* low = out + (i64)row.x * width;
        int* high = out + (i64)max(row.y, 0) * width;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < count;
             j += gridDim.x * blockDim.x) {
            const unsigned w = src[j];
            const int col = subjects[j];
            if (packed) {
                const int lo = (short)(w & 0xffffu);
                low[col] = lo;
                found += lo >= limit;
                if (row.y >= 0) {
                    const int hi = (short)(w >> 16);
                    high[col] = hi;
                    found += hi >= limit;
                }
            } else {
                low[col] = (int)w;
            }
        }
    }
    if (found) atomicAdd(over, found);
}

// A PAIRS launch's words into the score matrix (see scatter_scores): word j (of one
// profile, its query's row of out) holds the subjects[2j]'s score in its low int16 half and
// subjects[2j + 1]'s in its high half (none where count is odd and j is the last).
__global__ void scatter_pairs(const unsigned* __restrict__ words, int count, int row,
                              const int* __restrict__ subjects, int* __restrict__ out,
                              i64 width, int limit, int* __restrict__ over) {
    int found = 0;
    int* dst = out + (i64)row * width;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; 2 * j < count;
         j += gridDim.x * blockDim.x) {
        const unsigned w = words[j];
        const int lo = (short)(w & 0xffffu);
        dst[subjects[2 * j]] = lo;
        found += lo >= limit;
        if (2 * j + 1 < count) {
            const int hi = (short)(w >> 16);
            dst[subjects[2 * j + 1]] = hi;
            found += hi >= limit;
        }
    }
    if (found) atomicAdd(over, found);
}

// Keep the GPU busy for ns nanoseconds (one thread; the calibration runs it before a launch
// it times, so that launch is queued behind work, as a search's launches are).
__global__ void hold(unsigned long long ns) {
    const unsigned long long start = now_ns();
    while (now_ns() - start < ns) {
    }
}
