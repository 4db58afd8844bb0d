// Shared definitions for wavedp's CUDA kernels (compiled at run time by NVRTC through CuPy).
#pragma once

#define WAVEDP_LOCAL 0
#define WAVEDP_GLOBAL 1
#define WAVEDP_SEMIGLOBAL 2

// "minus infinity" for E and F; real scores stay inside +-2^29 (checked before launch)
#define WAVEDP_NEG (-(1 << 30))
#define WAVEDP_INT_MIN (-2147483647 - 1)

// direction byte, same encoding as wavedp/engines/common.py
#define DIR_ZERO 0
#define DIR_DIAG 1
#define DIR_E 2
#define DIR_F 3
#define E_OPEN 4
#define F_OPEN 8

// error flags reported back to Python
#define ERR_TIMEOUT 1
#define ERR_CANCELLED 2  // set by the host (multipass.CANCELLED): stop, the result is unused

typedef unsigned char u8;
typedef long long i64;

// max(a + b, c) and max(a + b, c, 0), Hopper DPX instructions (emulated on older GPUs)
__device__ __forceinline__ int add_max(int a, int b, int c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ int add_max_relu(int a, int b, int c) {
    return __viaddmax_s32_relu(a, b, c);
}

// max(a, b, c) and max(a, b, c, 0)
__device__ __forceinline__ int max3(int a, int b, int c) { return __vimax3_s32(a, b, c); }
__device__ __forceinline__ int max3_relu(int a, int b, int c) { return __vimax3_s32_relu(a, b, c); }

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ int load_relaxed(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ int load_acquire(const int* p) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release(int* p, int v) {
    asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Spin until *p >= target; the load that returns sees it with acquire semantics. Gives up
// (sets ERR_TIMEOUT in *error, returns false) after timeout_ns, or as soon as another block
// has reported an error. The spin reads with relaxed loads and does not sleep at first: the
// waiting warp holds up every strip below it, and each L2 round trip is already a pause
// (sleeping with exponential backoff cost the 1M x 1M sweep most of its time); after SPIN_NS
// it sleeps between reads (a long wait, e.g. a strip far down the pipeline at the start).
#define SPIN_NS 20000
__device__ __forceinline__ bool wait_at_least(const int* p, int target, int* error,
                                              unsigned long long timeout_ns) {
    if (load_acquire(p) >= target) return true;
    const unsigned long long start = now_ns();
    while (load_relaxed(p) < target) {
        if (*(volatile int*)error) return false;
        const unsigned long long waited = now_ns() - start;
        if (waited > timeout_ns) {
            atomicOr(error, ERR_TIMEOUT);
            return false;
        }
        if (waited > SPIN_NS) __nanosleep(256);
    }
    load_acquire(p);  // orders the reads of the strip above's row after the value seen
    return true;
}

// One column of the score-only cell update over a thread's R rows. H travels as H - go (the
// scores hold score + go). With X = max(diag + score, E[, 0]) and h = max(X, F), F of the
// next row is max(F - ge, h - go) = max(F - min(ge, go), X - go), so the dependent chain
// down the column is one instruction per row instead of three. Hg, E: the rows' H - go and
// E at the previous column, updated; diag: H - go above-left of the first row; f, hup: F
// and H - go of the row above the first, left as those of the last row; score(r): row r's
// score + go (r a compile-time constant once unrolled). multipass.cu and ceiling.cu share it.
template <int MODE, int R, typename Score>
__device__ __forceinline__ void update_column(int (&Hg)[R], int (&E)[R], int diag, int& f,
                                              int& hup, int go, int ge, Score score) {
    const int mge = min(ge, go);
    int xg = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int e = add_max(E[r], -ge, Hg[r]);
        const int x = MODE == WAVEDP_LOCAL ? add_max_relu(diag, score(r), e)
                                           : add_max(diag, score(r), e);
        f = r == 0 ? add_max(f, -ge, hup) : add_max(f, -mge, xg);
        xg = x - go;
        diag = Hg[r];
        Hg[r] = hup = add_max(f, -go, xg);
        E[r] = e;
    }
}

// The direction byte of one cell (docs/design.md's traceback preference: zero in local mode, then
// the diagonal, then E, then F; a gap closes where opening it is at least as good as
// extending it). multipass.cu and batch.cu share it.
template <int MODE>
__device__ __forceinline__ unsigned int dir_byte(int h, int dg, int e, int e_ext, int e_open,
                                                 int f_ext, int f_open) {
    unsigned int d = (e_open >= e_ext ? E_OPEN : 0) | (f_open >= f_ext ? F_OPEN : 0);
    if (MODE == WAVEDP_LOCAL && h == 0) d |= DIR_ZERO;
    else if (h == dg) d |= DIR_DIAG;
    else if (h == e) d |= DIR_E;
    else d |= DIR_F;
    return d;
}

// docs/design.md's tie rule for end cells: a larger score, then a smaller i, then a smaller j
__device__ __forceinline__ bool better(int v, int i, int j, int bv, int bi, int bj) {
    return v > bv || (v == bv && (i < bi || (i == bi && j < bj)));
}

// the best (score, i, j) of a warp, by that rule, into lane 0
__device__ __forceinline__ void warp_best(int& bv, int& bi, int& bj) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const int v = __shfl_down_sync(0xffffffffu, bv, o);
        const int i = __shfl_down_sync(0xffffffffu, bi, o);
        const int j = __shfl_down_sync(0xffffffffu, bj, o);
        if (better(v, i, j, bv, bi, bj)) bv = v, bi = i, bj = j;
    }
}

// h[r] for 0 <= r < R, by a tree of selects on the bits of r (R - 1 selects, one predicate
// per bit, where comparing r with every index took 2R instructions)
template <int R>
__device__ __forceinline__ unsigned row_of(const unsigned (&h)[R], int r) {
    unsigned v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = h[i];
#pragma unroll
    for (int w = 1; w < R; w *= 2)
#pragma unroll
        for (int i = 0; i + w < R; i += 2 * w) v[i] = r & w ? v[i + w] : v[i];
    return v[0];
}

// H on row 0 / column 0 at distance k from the origin
template <int MODE>
__device__ __forceinline__ int edge(int k, int gap_open, int gap_extend) {
    if (MODE == WAVEDP_GLOBAL && k > 0) return -(gap_open + (k - 1) * gap_extend);
    return 0;
}
