// Single-kernel multi-pass wavefront (Ranasinghe; after Xiao, Aji and Feng's fine-grained
// single-instance Smith-Waterman).
//
// The rectangle of rows row0+1..row0+rows and columns col0+1..col0+cols is cut into strips
// of S = 32*R query rows. A block is one warp; it takes the next strip by atomic ticket (so it
// only ever waits on strips taken earlier, by blocks already running) and sweeps it left to
// right: lane k owns rows k*R..k*R+R-1 of the strip and keeps their H and E in registers;
// lane k runs one column behind lane k-1 and gets H and F of the row above by shuffle. The
// strip's bottom row goes, 32 columns at a time, into one of two full-width row buffers; a
// per-strip progress counter published with release semantics tells the strip below (which
// reads it with acquire semantics) how far it may go. The strips in flight form a pass whose
// boundary rows stay in L2. Every spin-wait is bounded (ERR_TIMEOUT).
//
// The strip's profile reads sub[letter * sub_rows + code] for each of the A target letters:
// code the query's letter (q, sub_rows = A), or with qrows a profile's row (wavedp.Profile:
// sub its rows transposed, sub_rows its height).
//
// Optional outputs: checkpoints every ck rows and columns (ck a multiple of S), in row
// blocks of ck_block ints from ck_addr, block b for rows b ck..(b + 1) ck (layout:
// wavedp.engines.cuda.multipass.Checkpoints): H (E from row b ck + 1) of those rows on
// every ck-th column, then H and F of row (b + 1) ck. A strip writes its own block (and the
// next block's row b ck), after waiting until *ck_ready (when given) counts enough blocks
// (the host pins them as the sweep runs), and stages column checkpoints through ccstash
// (2 S ints per block); and either one direction byte per cell (DIRS; layout: wavedp.engines.cpu.rows.strip_index)
// or the end cell (per-strip best for local
// mode, last row and last column otherwise); optionally each strip's timeline.
#include "common.cuh"

#define FULL 0xffffffffu

// The scores of a lane's R rows against one residue: R bytes (int8 profile, 4 rows a word,
// extracted with prmt) or R ints (wide profile: no extraction, 4x the shared memory). When a
// lane's scores are a multiple of 16 bytes, a residue's profile row holds 16-byte chunks:
// chunk k of lane l at byte 512 k + 16 l, read with one LDS.128 each, so the 8 lanes of a
// quarter-warp phase read 128 contiguous bytes (no bank conflicts).
template <typename P, int R>
struct Scores {
    static constexpr int RC = 16 / sizeof(P);  // rows in a 16-byte chunk
    static constexpr bool CHUNKED = R % RC == 0;
    static constexpr int N = R * sizeof(P) / 4;  // 32-bit words
    unsigned int w[N];
    // offset of lane's first score in a residue's profile row (in elements)
    static __device__ __forceinline__ int offset(int lane) { return lane * (CHUNKED ? RC : R); }
    // strip row whose score is stored at element pos of a residue's profile row
    static __device__ __forceinline__ int row_at(int pos) {
        if (!CHUNKED) return pos;
        const int within = pos % (32 * RC);
        return within / RC * R + pos / (32 * RC) * RC + within % RC;
    }
    __device__ __forceinline__ void load(const P* p) {  // p: profile row + offset(lane)
        if (CHUNKED) {
#pragma unroll
            for (int k = 0; k < N; k += 4) {
                const uint4 v = *reinterpret_cast<const uint4*>(p + k / 4 * 32 * RC);
                w[k] = v.x, w[k + 1] = v.y, w[k + 2] = v.z, w[k + 3] = v.w;
            }
        } else if (N == 2) {
            const uint2 v = *reinterpret_cast<const uint2*>(p);
            w[0] = v.x, w[1] = v.y;
        } else {
#pragma unroll
            for (int k = 0; k < N; ++k) w[k] = reinterpret_cast<const unsigned int*>(p)[k];
        }
    }
    __device__ __forceinline__ int get(int r) const {  // r is a compile-time constant
        // byte r % 4 with its sign replicated into the upper bytes: prmt's default mode reads
        // the selector nibble's msb as "replicate the sign" (__byte_perm ignores that bit)
        if (sizeof(P) == 1) {
            int v;
            asm("prmt.b32 %0, %1, 0, %2;" : "=r"(v) : "r"(w[r / 4]),
                "r"((r % 4) | (8 | r % 4) * 0x1110));
            return v;
        }
        return (int)w[r];
    }
};

template <int MODE>
__device__ __forceinline__ int left_h(const int* leftH, int rel, int row0, int go, int ge) {
    return leftH ? leftH[rel] : edge<MODE>(row0 + rel, go, ge);
}

template <int MODE, int R, bool DIRS, typename P>
__global__ void __launch_bounds__(32) multipass(
    const u8* __restrict__ q, const int* __restrict__ qrows, const u8* __restrict__ t,
    const int* __restrict__ sub, int A, int sub_rows, int go, int ge, int row0, int rows, int col0, int cols,
    const int* __restrict__ topH, const int* __restrict__ topF,
    const int* __restrict__ leftH, const int* __restrict__ leftE,
    int* bufH, int* bufF, int* progress, int* ticket, int* error,
    unsigned long long timeout_ns,
    int ck, i64 ck_addr, i64 ck_block, const int* ck_ready, int* ccstash,
    u8* dirs, int* strip_best, int* lastcol, int* lastrow, int keyed, i64* timeline) {
    constexpr bool TRACK = !DIRS;  // a sweep either writes direction bytes or finds the end
    constexpr int S = 32 * R;
    // score-only sweeps keep H as H - go (see the cell update); direction sweeps keep H
    const int sh = DIRS ? 0 : go;
    // query profile of the current strip: prof[tc * S + pos] = score (+ sh) of residue tc
    // against strip row Scores::row_at(pos); a lane reads its R rows at immediate offsets
    // from one base address
    extern __shared__ __align__(16) unsigned char smem[];
    P* prof = reinterpret_cast<P*>(smem);
    constexpr int PAD = sizeof(P) == 1 ? -128 : -(1 << 24);
    const int lane = threadIdx.x;

    const int nstrips = (rows + S - 1) / S;
    const int stride = cols + 1;
    const int ck_cols = ck > 0 ? cols / ck : 0;  // checkpoint columns
    const i64 ck_col = (i64)ck_cols * (ck + 1);   // ints of one block's H (or E) columns

    while (true) {
        int s = 0;
        if (lane == 0) s = atomicAdd(ticket, 1);
        s = __shfl_sync(FULL, s, 0);
        if (s >= nstrips || *(volatile int*)error) return;
        const unsigned long long t_start = timeline ? now_ns() : 0;
        unsigned long long t_wait = 0;  // time spent waiting for the strip above

        const int base = s * S + lane * R;             // rows base+1..base+R (relative)
        const int nvalid = max(0, min(R, rows - base));
        // every row of the strip is a matrix row (warp-uniform; branching on nvalid == R
        // instead, ptxas 13.0 sent full lanes down the guarded path)
        const bool full = rows - s * S >= S;
        const int* inH = bufH + ((s - 1) & 1) * stride;
        const int* inF = bufF + ((s - 1) & 1) * stride;
        int* outH = bufH + (s & 1) * stride;
        int* outF = bufF + (s & 1) * stride;
        const int blk = ck > 0 ? s * S / ck : 0;  // checkpoint block of the strip
        int* block = reinterpret_cast<int*>(ck_addr) + blk * ck_block;
        const bool checkpoint = ck > 0 && (s + 1) * S % ck == 0 && s + 1 < nstrips;
        int* ckrowH = block + 2 * ck_col;
        int* ckrowF = ckrowH + stride;
        if (ck > 0 && ck_ready && !__all_sync(FULL, wait_at_least(ck_ready, blk + 1 + checkpoint,
                                                                      error, timeout_ns)))
            return;

        __syncwarp();  // the previous strip's profile reads are done
        for (int k = lane; k < A * S; k += 32) {
            const int rel = s * S + Scores<P, R>::row_at(k % S) + 1;
            // rows past the rectangle score PAD against everything: their H stays below the
            // H of a real cell at no later column (so they never hold a local end cell)
            const int code = rel > rows ? 0 : qrows ? qrows[row0 + rel - 1] : q[row0 + rel - 1];
            prof[k] = rel <= rows ? (P)(sub[(k / S) * sub_rows + code] + sh) : (P)PAD;
        }
        __syncwarp();
        int Hl[R], Hg[R], E[R];  // H, H - open and E of this lane's rows at the last column
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int rel = base + 1 + r;
            const bool ok = r < nvalid;
            Hl[r] = ok ? left_h<MODE>(leftH, rel, row0, go, ge) : 0;
            Hg[r] = Hl[r] - go;
            E[r] = ok && leftE ? leftE[rel] : WAVEDP_NEG;
        }
        int diag_top = left_h<MODE>(leftH, min(base, rows), row0, go, ge) - sh;
        if (lane == 0 && checkpoint) {
            ckrowH[0] = left_h<MODE>(leftH, s * S + S, row0, go, ge);
            ckrowF[0] = WAVEDP_NEG;
        }
        int botH = 0, botF = WAVEDP_NEG, tileH = 0, tileF = WAVEDP_NEG, oH = 0, oF = 0;
        int best = 0, bi = 0, bj = 0;  // local end cell (value, row, column), absolute
        int bkey = WAVEDP_INT_MIN;  // keyed tracking: the best key so far (see below)
        // keyed is R at run time and the row terms come through a shuffle, so each key is one
        // IMAD (FMA pipe) rather than a LEA or an add (ALU pipe, the busy one)
        int kr[R];
#pragma unroll
        for (int r = 0; r < R; ++r) kr[r] = __shfl_sync(FULL, keyed - 1 - r, 0);
        int cc_next = ck > 0 ? ck : -1;  // next column to checkpoint (relative)
        // a column checkpoint goes first to this block's slot in GPU memory (2 S ints) and
        // to the host right after the next release (which would otherwise wait for the
        // stores' PCIe round trip); cc_pend is its index, or -1
        int* stash = ccstash + (i64)blockIdx.x * 2 * S;  // H of the S rows, then E
        int cc_pend = -1;
        // scores of this lane's next column, and the residue of the column after it
        Scores<P, R> nxt;
        nxt.load(prof + (cols > 0 ? t[col0] : 0) * S + Scores<P, R>::offset(lane));
        int tnext = cols > 1 ? t[col0 + 1] : 0;
        const int lastr = rows - base - 1;  // index of this lane's row that is the last row
        // the error flags as read at the previous fetch: a strip that never has to wait (the
        // first, or one behind a fast strip) still stops within 32 columns of a cancel (the
        // host cancels the traceback tiles the path has moved past), and the read's latency
        // is hidden behind those columns
        int stop = 0;

        for (int st = 0; st < cols + 31; ++st) {
            if ((st & 31) == 0 && st < cols) {  // fetch the next 32 columns of the row above
                if (__any_sync(FULL, stop)) return;
                stop = *(volatile const int*)error;
                bool ok = true;
                if (s > 0) {
                    const unsigned long long w0 = timeline ? now_ns() : 0;
                    ok = wait_at_least(progress + s - 1, min(st + 32, cols), error, timeout_ns);
                    if (timeline) t_wait += now_ns() - w0;
                }
                if (!__all_sync(FULL, ok)) return;
                const int c = st + lane + 1;
                if (c <= cols) {
                    if (s > 0) {
                        tileH = inH[c];
                        tileF = inF[c];
                    } else if (topH) {
                        tileH = topH[c];
                        tileF = topF[c];
                    } else {
                        tileH = edge<MODE>(col0 + c, go, ge);
                        tileF = WAVEDP_NEG;
                    }
                    if (s == 0 && ck > 0 && c % ck == 0)  // entry 0 of block 0's column
                        block[(c / ck - 1) * (ck + 1)] = tileH;
                    tileH -= sh;
                }
            }
            int upH = __shfl_up_sync(FULL, botH, 1);
            int upF = __shfl_up_sync(FULL, botF, 1);
            const int tH = __shfl_sync(FULL, tileH, st & 31);
            const int tF = __shfl_sync(FULL, tileF, st & 31);
            if (lane == 0) {
                upH = tH;
                upF = tF;
            }
            const int c = st - lane;
            if (c >= 0 && c < cols) {
                const Scores<P, R> cur = nxt;  // loaded during the previous column
                nxt.load(prof + tnext * S + Scores<P, R>::offset(lane));
                tnext = c + 2 < cols ? t[col0 + c + 2] : 0;
                int hup = upH, fup = upF, diag = diag_top;
                if (DIRS) {
                    static_assert(!DIRS || R % 4 == 0, "direction bytes go out 4 rows a word");
                    unsigned int packed[DIRS ? R / 4 : 1] = {};
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const int sc = cur.get(r);
                        const int e_ext = E[r] - ge, e_open = Hl[r] - go;
                        const int f_ext = fup - ge, f_open = hup - go;
                        const int e = max(e_ext, e_open), f = max(f_ext, f_open);
                        const int dg = diag + sc;
                        const int h = MODE == WAVEDP_LOCAL ? max3_relu(dg, e, f) : max3(dg, e, f);
                        packed[r / 4] |= dir_byte<MODE>(h, dg, e, e_ext, e_open, f_ext, f_open)
                                         << 8 * (r % 4);
                        diag = Hl[r];
                        Hl[r] = hup = h;
                        E[r] = e;
                        fup = f;
                    }
                    // strip-major, then step, lane and row (rpl = R): each step's stores
                    // are one contiguous 32 * R-byte run (byte stores scattered over rows
                    // cost a read-modify-write of a sector each once tiles outgrow L2)
                    unsigned int* out = reinterpret_cast<unsigned int*>(dirs) +
                                        ((i64)s * (cols + 31) + st) * 8 * R + lane * (R / 4);
#pragma unroll
                    for (int w = 0; w < R / 4; ++w) out[w] = packed[w];
                } else {  // H as H - go, the profile holding score + go (common.cuh)
                    update_column<MODE, R>(Hg, E, diag, fup, hup, go, ge,
                                           [&](int r) { return cur.get(r); });
                }
                botH = hup;
                botF = fup;
                diag_top = upH;
                if (c + 1 == cc_next) {
                    cc_pend = (c + 1) / ck - 1;
                    cc_next += ck;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        stash[lane * R + r] = DIRS ? Hl[r] : Hg[r] + go;
                        stash[S + lane * R + r] = E[r];
                    }
                }
                if (TRACK) {
                    if (MODE == WAVEDP_LOCAL && keyed) {
                        // Constant cost per column (a data-dependent branch here runs on
                        // every column of the rising flank before an alignment, and the
                        // strips below wait for the slowest strip): key = (H - go) * R +
                        // R - 1 - r, whose maximum is the best value at its smallest row;
                        // a strictly larger key in a later column replaces it, so equal
                        // keys keep the smallest column. sweep() enables this only while
                        // every key fits in an int.
                        // (rows past the rectangle take part: PAD keeps them from winning)
                        int km = WAVEDP_INT_MIN;
#pragma unroll
                        for (int r = 0; r + 1 < R; r += 2)
                            km = max3(km, Hg[r] * keyed + kr[r], Hg[r + 1] * keyed + kr[r + 1]);
                        if (km > bkey) {
                            bkey = km;
                            bj = col0 + 1 + c;
                        }
                    } else if (MODE == WAVEDP_LOCAL) {
                        // the column's best H - go. (Starting from -go instead, ptxas 13.0
                        // fused the negation away: VIMNMX3 took +go, dropping every H < 2 go.)
                        int cm = Hg[0];
                        if (full) {
#pragma unroll
                            for (int r = 1; r + 1 < R; r += 2) cm = max3(cm, Hg[r], Hg[r + 1]);
                            if (R % 2 == 0) cm = max(cm, Hg[R - 1]);
                        } else {
#pragma unroll
                            for (int r = 0; r < R; ++r)
                                cm = max(r ? cm : WAVEDP_NEG, r < nvalid ? Hg[r] : WAVEDP_NEG);
                        }
                        if (cm + go > best || (cm + go == best && best > 0)) {
                            int rr = R;
#pragma unroll
                            for (int r = R - 1; r >= 0; --r)
                                if (r < nvalid && Hg[r] == cm) rr = r;
                            const int i = row0 + base + 1 + rr;
                            if (rr < R && (cm + go > best || i < bi)) {
                                best = cm + go;
                                bi = i;
                                bj = col0 + 1 + c;
                            }
                        }
                    } else {
                        if (lastr >= 0 && lastr < R) {
                            int v = 0;
#pragma unroll
                            for (int r = 0; r < R; ++r)
                                if (r == lastr) v = Hg[r] + go;
                            lastrow[c] = v;
                        }
                        if (c == cols - 1) {
#pragma unroll
                            for (int r = 0; r < R; ++r)
                                if (r < nvalid) lastcol[base + r] = Hg[r] + go;
                        }
                    }
                }
            }
            // gather lane 31's bottom row into lane (column % 32), flush every 32 columns
            const int c31 = st - 31;
            const int bH = __shfl_sync(FULL, botH, 31);
            const int bF = __shfl_sync(FULL, botF, 31);
            if (c31 >= 0 && (c31 & 31) == lane) {
                oH = bH + sh;
                oF = bF;
            }
            if (c31 >= 0 && ((c31 & 31) == 31 || c31 == cols - 1)) {
                const int cc = (c31 & ~31) + lane;
                if (cc <= c31) {
                    outH[cc + 1] = oH;
                    outF[cc + 1] = oF;
                }
                __syncwarp();  // then lane 0's release covers every lane's stores (cumulativity)
                if (lane == 0) store_release(progress + s, c31 + 1);
                // checkpoints (host memory, a PCIe round trip away) after the release, which
                // would otherwise wait for them; the next release is 32 columns later
                if (checkpoint && cc <= c31) {
                    ckrowH[cc + 1] = oH;
                    ckrowF[cc + 1] = oF;
                    if ((cc + 1) % ck == 0)  // entry 0 of the next block's column
                        block[ck_block + ((cc + 1) / ck - 1) * (ck + 1)] = oH;
                }
                // the lanes whose checkpoint is pending (at least 32 columns before the next
                // one, ck) are a contiguous range k0..k1 with the same index, and their rows
                // are contiguous in the stash and in the block: the warp copies them together,
                // each store writing 128 contiguous bytes (the stash writes are ordered
                // before these reads by the __syncwarp above)
                const unsigned int pend = __ballot_sync(FULL, cc_pend >= 0);
                if (pend) {
                    const int k0 = __ffs(pend) - 1, k1 = 31 - __clz(pend);
                    const int first = s * S + k0 * R;  // rows first + 1.. (relative)
                    const int len = min((k1 - k0 + 1) * R, rows - first);
                    const int* src = stash + k0 * R;
                    int* dst = block + (i64)__shfl_sync(FULL, cc_pend, k0) * (ck + 1) + first -
                               blk * ck + 1;
                    for (int x = lane; x < len; x += 32) {
                        dst[x] = src[x];
                        dst[ck_col + x] = src[S + x];
                    }
                    cc_pend = -1;
                }
            }
        }
        if (timeline && lane == 0) {  // strip start and end (global timer, ns), time waiting
            timeline[3 * s] = (i64)t_start;
            timeline[3 * s + 1] = (i64)now_ns();
            timeline[3 * s + 2] = (i64)t_wait;
        }
        if (TRACK && MODE == WAVEDP_LOCAL && keyed) {
            constexpr int SH = R == 32 ? 5 : R == 16 ? 4 : R == 8 ? 3 : 2;
            static_assert(1 << SH == R, "keys need R a power of two");
            best = (bkey >> SH) + go;  // floor division: the row part is in [0, R)
            bi = row0 + base + 1 + (R - 1 - (bkey & (R - 1)));
        }
        if (TRACK && MODE == WAVEDP_LOCAL) {  // lexicographic (max value, min row, min col)
            warp_best(best, bi, bj);
            if (lane == 0) {
                strip_best[3 * s] = best;
                strip_best[3 * s + 1] = bi;
                strip_best[3 * s + 2] = bj;
            }
        }
    }
}
