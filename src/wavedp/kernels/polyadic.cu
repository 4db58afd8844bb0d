// Non-serial polyadic DP (wavedp.polyadic): the blocked min-plus engine.
//
// T is the gap-coordinate table, ld x ld row-major: T[a][c] (a < c) is the interval of items
// a..c-1, T[a][c] = min over a < p < c of T[a][p] + T[p][c] (+ (D[a] * D[c]) * D[p]), then
// + W[a][c], then the pairing term when strictly better. K holds the chosen k = p - 1 (the
// pairing term: c - 1; a leaf: -1). Max problems arrive negated, so every kernel minimises;
// ties keep the smallest k. Blocks are b x b; the cells of block (A, C) take split points from
// block A and block C (near: `finalize`) and from the blocks between (far: `product`, a
// rectangular min-plus product folded into the block's accumulator, T and K themselves).
// Float sums and products use __fadd_rn/__fmul_rn: never contracted into an FMA, so the
// CPU engine's results are reproduced bit for bit.

typedef long long i64;

#define NO_K 2147483647
// split points per shared-memory chunk; the packed int32 product keeps the chunk offset of
// the best split point in the 5 low bits of value * 32
#define TK 32
#define FIN_THREADS 256

__device__ __forceinline__ int vadd(int x, int y) { return x + y; }
__device__ __forceinline__ i64 vadd(i64 x, i64 y) { return x + y; }
__device__ __forceinline__ float vadd(float x, float y) { return __fadd_rn(x, y); }
__device__ __forceinline__ double vadd(double x, double y) { return __dadd_rn(x, y); }
__device__ __forceinline__ int vmul(int x, int y) { return x * y; }
__device__ __forceinline__ i64 vmul(i64 x, i64 y) { return x * y; }
__device__ __forceinline__ float vmul(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double vmul(double x, double y) { return __dmul_rn(x, y); }

template <typename V> __device__ __forceinline__ V worst();
template <> __device__ __forceinline__ int worst<int>() { return 2147483647; }
template <> __device__ __forceinline__ i64 worst<i64>() { return 9223372036854775807LL; }
template <> __device__ __forceinline__ float worst<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double worst<double>() {
    return __longlong_as_double(0x7ff0000000000000LL);
}

// (v, k) comes before (bv, bk): a smaller value, or an equal one at a smaller k
template <typename V>
__device__ __forceinline__ bool before(V v, int k, V bv, int bk) {
    return v < bv || (v == bv && k < bk);
}

// One product task per blockIdx.x (A, C, L0, L1, slot), one TILE x TILE part of block (A, C)
// per blockIdx.y: the minimum over split points p in [L0 b, L1 b) of T[a][p] + T[p][c]
// (+ weight), chunk by chunk through shared memory, 4 x 4 cells per thread in registers.
// PACK (int32, |values| < 2^26): a chunk's minimum is one DPX instruction per term on
// value * 32 + chunk offset, so the smallest offset wins ties for free; chunks are compared
// by value, earliest first. Otherwise each term is compared and its k kept (strict <, in
// increasing k). slot < 0: fold into the accumulator (T, K); else write the partial result
// to scratch slot `slot` (folded by `reduce`).
template <typename V, bool WEIGHT, int TILE, bool PACK>
__global__ void __launch_bounds__((TILE / 4) * (TILE / 4),
                                  (sizeof(V) == 4 ? 512 : 256) / ((TILE / 4) * (TILE / 4)))
product(V* T, int* K, i64 ld, int b, const int* __restrict__ tasks, const V* __restrict__ D,
        V* __restrict__ PV, int* __restrict__ PK) {
    constexpr int TPR = TILE / 4;
    constexpr int NT = TPR * TPR;
    constexpr int PER = TILE * TK / NT;  // elements of each operand chunk a thread loads
    __shared__ __align__(16) V As[TK][TILE + 4];  // As[kk][row]: T[a0 + row][k0 + kk]
    __shared__ __align__(16) V Bs[TK][TILE];      // Bs[kk][col]: T[k0 + kk][c0 + col]
    __shared__ V Ds[TK];

    const int* task = tasks + 5 * blockIdx.x;
    const int A = task[0], C = task[1], L0 = task[2], L1 = task[3], slot = task[4];
    const int parts = b / TILE;
    const int a0 = A * b + (blockIdx.y / parts) * TILE;
    const int c0 = C * b + (blockIdx.y % parts) * TILE;
    const int tid = threadIdx.x, tx = tid % TPR, ty = tid / TPR;
    const int kbeg = L0 * b, chunks = (L1 - L0) * b / TK;

    V best[4][4], dac[4][4];
    int bk[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            best[i][j] = worst<V>();
            bk[i][j] = NO_K;
            if constexpr (WEIGHT) {
                dac[i][j] = vmul(D[a0 + ty * 4 + i], D[c0 + tx * 4 + j]);
                if constexpr (PACK) dac[i][j] *= 32;
            }
        }

    for (int q = 0; q < chunks; ++q) {
        const int k0 = kbeg + q * TK;
        __syncthreads();  // the previous chunk is consumed
#pragma unroll
        for (int e = 0; e < PER; ++e) {
            const int idx = tid + e * NT;
            const V av = T[(i64)(a0 + idx / TK) * ld + k0 + idx % TK];
            const V bv = T[(i64)(k0 + idx / TILE) * ld + c0 + idx % TILE];
            if constexpr (PACK) {
                As[idx % TK][idx / TK] = av * 32;
                Bs[idx / TILE][idx % TILE] = bv * 32 + idx / TILE;
            } else {
                As[idx % TK][idx / TK] = av;
                Bs[idx / TILE][idx % TILE] = bv;
            }
        }
        if (WEIGHT && tid < TK) Ds[tid] = D[k0 + tid];
        __syncthreads();

        if constexpr (PACK) {
            int cm[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) cm[i][j] = 2147483647;
#pragma unroll 2
            for (int kk = 0; kk < TK; ++kk) {
                const int4 av = *reinterpret_cast<const int4*>(&As[kk][ty * 4]);
                const int4 bv = *reinterpret_cast<const int4*>(&Bs[kk][tx * 4]);
                const int ar[4] = {(int)av.x, (int)av.y, (int)av.z, (int)av.w};
                const int br[4] = {(int)bv.x, (int)bv.y, (int)bv.z, (int)bv.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        int x = ar[i];
                        if constexpr (WEIGHT) x += dac[i][j] * Ds[kk];
                        cm[i][j] = __viaddmin_s32(x, br[j], cm[i][j]);
                    }
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int v = cm[i][j] >> 5;
                    if (v < best[i][j]) {
                        best[i][j] = v;
                        bk[i][j] = k0 + (cm[i][j] & 31) - 1;
                    }
                }
        } else {
#pragma unroll 2
            for (int kk = 0; kk < TK; ++kk) {
                V ar[4], br[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    ar[i] = As[kk][ty * 4 + i];
                    br[i] = Bs[kk][tx * 4 + i];
                }
                const int k = k0 + kk - 1;
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        V v = vadd(ar[i], br[j]);
                        if constexpr (WEIGHT) v = vadd(v, vmul(dac[i][j], Ds[kk]));
                        if (v < best[i][j]) {
                            best[i][j] = v;
                            bk[i][j] = k;
                        }
                    }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int a = a0 + ty * 4 + i, c = c0 + tx * 4 + j;
            if (slot < 0) {
                const i64 at = (i64)a * ld + c;
                if (before(best[i][j], bk[i][j], T[at], K[at])) {
                    T[at] = best[i][j];
                    K[at] = bk[i][j];
                }
            } else {
                const i64 p = (i64)slot * b * b + (i64)(a - A * b) * b + (c - C * b);
                PV[p] = best[i][j];
                PK[p] = bk[i][j];
            }
        }
}

// Fold the partial results of scratch slots [s0, s1) into block (A, C)'s accumulator, one
// group (A, C, s0, s1) per blockIdx.x.
template <typename V>
__global__ void reduce(V* T, int* K, i64 ld, int b, const int* __restrict__ groups,
                       const V* __restrict__ PV, const int* __restrict__ PK) {
    const int* g = groups + 4 * blockIdx.x;
    const int A = g[0], C = g[1], s0 = g[2], s1 = g[3];
    for (int x = blockIdx.y * blockDim.x + threadIdx.x; x < b * b; x += gridDim.y * blockDim.x) {
        const i64 at = (i64)(A * b + x / b) * ld + C * b + x % b;
        V best = T[at];
        int bk = K[at];
        for (int s = s0; s < s1; ++s) {
            const i64 p = (i64)s * b * b + x;
            if (before(PV[p], PK[p], best, bk)) {
                best = PV[p];
                bk = PK[p];
            }
        }
        T[at] = best;
        K[at] = bk;
    }
}

// Finish block (A, C), one task (A, C) per blockIdx.x: the cells in order of interval length
// (each length after __syncthreads), G = a power of two <= FIN_THREADS / b threads per cell,
// each taking every G-th near split point (block A's below the far ones, block C's above),
// then the far accumulator, the table weight, the pairing term and the leaves.
template <typename V>
__global__ void __launch_bounds__(FIN_THREADS)
finalize(V* T, int* K, i64 ld, int b, const int* __restrict__ tasks,
         const V* __restrict__ diag, int wkind, const V* __restrict__ D,
         const V* __restrict__ W, int paired, const int* __restrict__ codes,
         const V* __restrict__ ptab, int na, int min_loop, V big) {
    const int A = tasks[2 * blockIdx.x], C = tasks[2 * blockIdx.x + 1];
    int G = 1;
    while (2 * G * b <= FIN_THREADS) G *= 2;
    const int g = threadIdx.x % G, x = threadIdx.x / G;
    const int mid_lo = (A + 1) * b, mid_hi = C * b;
    const int lo2 = max(mid_lo, mid_hi);
    const int lmin = max(1, C * b - (A * b + b - 1)), lmax = C * b + b - 1 - A * b;
    for (int len = lmin; len <= lmax; ++len) {
        const int alo = max(A * b, C * b - len), ahi = min(A * b + b - 1, C * b + b - 1 - len);
        const int a = alo + x, c = a + len;
        const bool active = a <= ahi;
        V best = big;
        int arg = NO_K;
        if (active && len > 1) {
            const i64 ra = (i64)a * ld;
            const V dac = wkind == 1 ? vmul(D[a], D[c]) : V(0);
            auto term = [&](int p) {
                V v = vadd(T[ra + p], T[(i64)p * ld + c]);
                if (wkind == 1) v = vadd(v, vmul(dac, D[p]));
                if (v < best) {
                    best = v;
                    arg = p - 1;
                }
            };
            for (int p = a + 1 + g; p < min(c, mid_lo); p += G) term(p);  // block A
            for (int p = lo2 + g; p < c; p += G) term(p);                  // block C
        }
        for (int o = G / 2; o > 0; o >>= 1) {
            const V ov = __shfl_xor_sync(0xffffffffu, best, o);
            const int ok = __shfl_xor_sync(0xffffffffu, arg, o);
            if (before(ov, ok, best, arg)) {
                best = ov;
                arg = ok;
            }
        }
        if (active && g == 0) {
            const i64 at = (i64)a * ld + c;
            if (len == 1) {
                best = diag[a];
                arg = -1;
            } else {
                if (mid_lo < mid_hi && before(T[at], K[at], best, arg)) {
                    best = T[at];
                    arg = K[at];
                }
                if (wkind == 2) best = vadd(best, W[at]);
                if (paired && c - 1 - a > min_loop) {  // T[a + 1][a + 1] = 0: empty interval
                    const V v = vadd(ptab[codes[a] * na + codes[c - 1]],
                                     T[(i64)(a + 1) * ld + c - 1]);
                    if (v < best) {
                        best = v;
                        arg = c - 1;
                    }
                }
            }
            T[at] = best;
            K[at] = arg;
        }
        __syncthreads();
    }
}

// Lower triangle (c <= a): 0 and k = -1; blocks two or more from the diagonal: empty far
// accumulators. Every other cell is written by `finalize`.
template <typename V>
__global__ void init(V* T, int* K, i64 ld, int b, V big) {
    for (i64 a = blockIdx.y; a < ld; a += gridDim.y) {
        for (i64 c = blockIdx.x * (i64)blockDim.x + threadIdx.x; c < ld;
             c += (i64)gridDim.x * blockDim.x) {
            if (c <= a) {
                T[a * ld + c] = V(0);
                K[a * ld + c] = -1;
            } else if (c / b >= a / b + 2) {
                T[a * ld + c] = big;
                K[a * ld + c] = NO_K;
            }
        }
    }
}

// The optimal derivation of items 0..n-1, one thread: its non-leaf cells (i, j, k) in
// preorder, left part first (as wavedp.polyadic.traceback.derivation lists them).
__global__ void walk(const int* K, i64 ld, int n, int2* stack, int* out, int* count) {
    int top = 0, m = 0;
    if (n > 1) stack[top++] = make_int2(0, n - 1);
    while (top > 0) {
        const int2 s = stack[--top];
        const int i = s.x, j = s.y;
        const int k = K[(i64)i * ld + j + 1];
        out[3 * m] = i;
        out[3 * m + 1] = j;
        out[3 * m + 2] = k;
        ++m;
        if (k == j) {
            if (i + 1 < j - 1) stack[top++] = make_int2(i + 1, j - 1);
        } else {
            if (k + 1 < j) stack[top++] = make_int2(k + 1, j);
            if (i < k) stack[top++] = make_int2(i, k);
        }
    }
    *count = m;
}
