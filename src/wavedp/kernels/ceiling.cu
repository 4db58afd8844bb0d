// Compute ceiling: the multipass engine's score-only per-cell arithmetic (local mode: the
// same update_column of common.cuh, and the score extracted from a packed int8 word by
// prmt) on register-resident rows, with no memory traffic: the packed score words are
// register arithmetic instead of shared-memory loads. Each thread sweeps R rows over `cols` columns;
// the result is written once so the work cannot be optimised away.
#include "common.cuh"

template <int R>
__global__ void __launch_bounds__(32) ceiling(int cols, int go, int ge, int match, int mismatch,
                                              int seed, int* out) {
    static_assert(R % 4 == 0, "R rows are R / 4 packed score words");
    int Hg[R], E[R];
    unsigned int pk[R / 4];  // score + go of 4 rows against residue 0, one byte each
#pragma unroll
    for (int r = 0; r < R; ++r) {
        Hg[r] = -go;
        E[r] = WAVEDP_NEG;
    }
#pragma unroll
    for (int k = 0; k < R / 4; ++k) {
        unsigned int w = 0;
        for (int b = 0; b < 4; ++b) {
            const int qc = (seed + threadIdx.x + ((4 * k + b) * 2654435761u >> 13)) & 3;
            w |= (unsigned int)(u8)((qc == 0 ? match : mismatch) + go) << (8 * b);
        }
        pk[k] = w;
    }
    int hup = -go, fup = WAVEDP_NEG, diag_top = -go, best = 0;
    unsigned int tc = seed ^ (blockIdx.x * 2654435761u);
    for (int c = 0; c < cols; ++c) {
        tc = tc * 1664525u + 1013904223u;
        const unsigned int rot = (tc >> 27) & 24;  // this column's residue: a byte rotation
        const int diag = diag_top;
        int f = fup;
        diag_top = hup;
        update_column<WAVEDP_LOCAL, R>(Hg, E, diag, f, hup, go, ge, [&](int r) {
            int sc;
            const unsigned int w = __funnelshift_r(pk[r / 4], pk[r / 4], rot);
            asm("prmt.b32 %0, %1, 0, %2;" : "=r"(sc) : "r"(w), "r"((r % 4) | (8 | r % 4) * 0x1110));
            return sc;
        });
        fup = __shfl_up_sync(0xffffffffu, f, 1);
        hup = __shfl_up_sync(0xffffffffu, hup, 1);
        best = max(best, hup);
    }
    if (best == 0x7fffffff) out[0] = best;  // never true; keeps the loop alive
    out[blockIdx.x * blockDim.x + threadIdx.x] = best & 1;
}
