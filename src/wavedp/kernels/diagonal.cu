// Xiao, Aji and Feng's fine-grained Smith-Waterman: the cells of one anti-diagonal d, one per
// thread, diagonals one after another. Score-only: three rolling diagonals of H and two of
// E/F, each a slot of `stride` ints; the end cell comes from per-row bests (local), the last
// row and the last column (global, semiglobal). Storage of a diagonal in its slot:
// - STORE_SIMPLE: anti-diagonal-major, packed: cell (i, d - i) at i - ilo(d), slots back to
//   back (stride m + 1), so a diagonal starts anywhere and the neighbours on d - 1 and d - 2
//   sit at shifted offsets;
// - STORE_COALESCED: cell at row i, slots starting on 64-byte boundaries and threads mapped
//   from the 16-aligned row below ilo(d), so each warp's loads and stores are aligned.
// Synchronization between diagonals: diagonal_step is one diagonal (the CPU-side strategies
// launch it per diagonal); diagonal_sweep<STORAGE, KIND> runs d = 1..m+n with an in-kernel
// barrier between diagonals. H must start zeroed (diagonal 0 and the one before it); rowbest
// zeroed (local).
#include "common.cuh"
#include "barriers.cuh"

#define STORE_SIMPLE 0
#define STORE_COALESCED 1

#define DIAGONAL_PARAMS                                                                     \
    const u8 *__restrict__ q, const u8 *__restrict__ t, const int *__restrict__ sub, int A,  \
        int go, int ge, int m, int n, int mode, int stride, int *H, int *E, int *F,          \
        int *rowbest, int *rowcol, int *lastcol, int *lastrow
#define DIAGONAL_ARGS \
    q, t, sub, A, go, ge, m, n, mode, stride, H, E, F, rowbest, rowcol, lastcol, lastrow

template <int STORAGE>
__device__ __forceinline__ int slot(int d, int i, int n) {
    return STORAGE == STORE_SIMPLE ? i - max(0, d - n) : i;
}

template <int STORAGE>
__device__ __forceinline__ void diagonal_cells(DIAGONAL_PARAMS, int d) {
    const int ilo = max(0, d - n), ihi = min(m, d);
    const int first = STORAGE == STORE_COALESCED ? (ilo & ~15) : ilo;
    int* H0 = H + (d % 3) * stride;
    const int* H1 = H + ((d + 2) % 3) * stride;  // d - 1
    const int* H2 = H + ((d + 1) % 3) * stride;  // d - 2
    int* E0 = E + (d & 1) * stride;
    const int* E1 = E + ((d + 1) & 1) * stride;
    int* F0 = F + (d & 1) * stride;
    const int* F1 = F + ((d + 1) & 1) * stride;
    const int step = gridDim.x * blockDim.x;
    for (int i = first + blockIdx.x * blockDim.x + threadIdx.x; i <= ihi; i += step) {
        if (i < ilo) continue;
        const int j = d - i;
        const int at = slot<STORAGE>(d, i, n);
        if (i == 0 || j == 0) {  // boundary cells of this diagonal
            H0[at] = mode == WAVEDP_GLOBAL ? edge<WAVEDP_GLOBAL>(d, go, ge) : 0;
            E0[at] = WAVEDP_NEG;
            F0[at] = WAVEDP_NEG;
            continue;
        }
        const int left = slot<STORAGE>(d - 1, i, n);    // (i, j - 1)
        const int up = slot<STORAGE>(d - 1, i - 1, n);  // (i - 1, j)
        const int e = add_max(E1[left], -ge, H1[left] - go);
        const int f = add_max(F1[up], -ge, H1[up] - go);
        const int dg = H2[slot<STORAGE>(d - 2, i - 1, n)] + sub[t[j - 1] * A + q[i - 1]];
        const int h = mode == WAVEDP_LOCAL ? max3_relu(dg, e, f) : max3(dg, e, f);
        H0[at] = h;
        E0[at] = e;
        F0[at] = f;
        if (mode == WAVEDP_LOCAL) {
            if (h > rowbest[i]) {  // row i's cells come in increasing j: > keeps the first
                rowbest[i] = h;
                rowcol[i] = j;
            }
        } else {
            if (j == n) lastcol[i] = h;
            if (i == m) lastrow[j] = h;
        }
    }
}

template <int STORAGE>
__global__ void diagonal_step(DIAGONAL_PARAMS, int d) {
    diagonal_cells<STORAGE>(DIAGONAL_ARGS, d);
}

template <int STORAGE, int KIND>
__global__ void diagonal_sweep(DIAGONAL_PARAMS, unsigned* bar, unsigned long long timeout_ns) {
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    for (int d = 1; d <= m + n; ++d) {
        diagonal_cells<STORAGE>(DIAGONAL_ARGS, d);
        if (d < m + n && !grid_sync<KIND>(sync)) return;
    }
}
