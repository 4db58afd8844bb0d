// Xiao, Aji and Feng's fine-grained Smith-Waterman: one kernel launch per anti-diagonal
// (the host loop is the synchronisation), cells of a diagonal one per thread, and the matrix
// "re-aligned" to anti-diagonal-major storage: each diagonal is a row of its own buffer that
// starts on a 64-byte boundary, so a diagonal's loads and stores are coalesced. Score-only:
// three rolling diagonals of H and two of E/F; the end cell comes from per-row bests (local),
// the last row and the last column (global, semiglobal).
#include "common.cuh"

// cell (i, d - i) of diagonal d, for i in [ilo, ihi]; buffers are indexed by row i
template <int MODE>
__global__ void diagonal(const u8* __restrict__ q, const u8* __restrict__ t,
                         const int* __restrict__ sub, int A, int go, int ge, int m, int n,
                         int d, int ilo, int ihi,
                         const int* __restrict__ H2, const int* __restrict__ H1, int* H0,
                         const int* __restrict__ E1, int* E0,
                         const int* __restrict__ F1, int* F0,
                         int* rowbest, int* rowcol, int* lastcol, int* lastrow) {
    const int i = ilo + blockIdx.x * blockDim.x + threadIdx.x;
    if (i > ihi) return;
    const int j = d - i;
    if (i == 0 || j == 0) {  // boundary cells of this diagonal
        H0[i] = edge<MODE>(i + j, go, ge);
        E0[i] = WAVEDP_NEG;
        F0[i] = WAVEDP_NEG;
        return;
    }
    const int e = add_max(E1[i], -ge, H1[i] - go);          // left: (i, j-1) on d-1
    const int f = add_max(F1[i - 1], -ge, H1[i - 1] - go);  // up: (i-1, j) on d-1
    const int dg = H2[i - 1] + sub[t[j - 1] * A + q[i - 1]];  // (i-1, j-1) on d-2
    const int h = MODE == WAVEDP_LOCAL ? max3_relu(dg, e, f) : max3(dg, e, f);
    H0[i] = h;
    E0[i] = e;
    F0[i] = f;
    if (MODE == WAVEDP_LOCAL) {
        if (h > rowbest[i]) {  // row i's cells come in increasing j: strict > keeps the first
            rowbest[i] = h;
            rowcol[i] = j;
        }
    } else {
        if (j == n) lastcol[i] = h;
        if (i == m) lastrow[j] = h;
    }
}
