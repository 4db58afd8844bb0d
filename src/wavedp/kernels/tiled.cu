// Xiao, Aji and Feng's tiled Smith-Waterman: the matrix cut into TILE x TILE tiles, a tile
// per block; tile (I, J) needs tiles (I - 1, J) and (I, J - 1), so the tiles of one tile
// diagonal D = I + J run in parallel and diagonals one after another. Inside a tile each
// thread owns a row and the block sweeps the tile's own anti-diagonals (a __syncthreads per
// step), handing H and F down through shared memory; the substitution table, the tile's
// target residues and its top row sit in shared memory too. Score-only.
// Between tiles: rowH/rowF hold, per tile column J, TILE + 1 entries: H (F) on the bottom row
// of the last tile done in that column at columns J*TILE .. J*TILE + TILE (entry 0, the
// corner, comes from that tile's left input); colH/colE hold H (E) on the right column of the
// last tile done in each row. The host fills them with the matrix's row 0 and column 0.
// tiled_step does one tile diagonal (the CPU-side strategies launch it per diagonal);
// tiled_sweep<KIND> does them all with an in-kernel barrier between tile diagonals. The end
// cell comes from per-row bests (local, rowbest zeroed), the last row and the last column.
// Dynamic shared memory: A * A ints.
#include "common.cuh"
#include "barriers.cuh"

#define TILE 128

#define TILED_PARAMS                                                                        \
    const u8 *__restrict__ q, const u8 *__restrict__ t, const int *__restrict__ sub, int A,  \
        int go, int ge, int m, int n, int mode, int *rowH, int *rowF, int *colH, int *colE,  \
        int *rowbest, int *rowcol, int *lastcol, int *lastrow
#define TILED_ARGS \
    q, t, sub, A, go, ge, m, n, mode, rowH, rowF, colH, colE, rowbest, rowcol, lastcol, lastrow

struct TileShared {
    int top_h[TILE + 1], top_f[TILE + 1];  // H and F on the row above the tile
    int res[TILE];                         // the tile's target residues
    int xh[2][TILE], xf[2][TILE];          // H and F handed from row r to row r + 1
};

__device__ __forceinline__ void tile(TILED_PARAMS, const int* ssub, TileShared& s, int I,
                                     int J) {
    const int i0 = I * TILE, j0 = J * TILE;
    const int rows = min(TILE, m - i0), cols = min(TILE, n - j0);
    int* row_h = rowH + J * (TILE + 1);
    int* row_f = rowF + J * (TILE + 1);
    for (int k = threadIdx.x; k <= cols; k += blockDim.x) {
        s.top_h[k] = row_h[k];
        s.top_f[k] = row_f[k];
        if (k < cols) s.res[k] = t[j0 + k];
    }
    const int r = threadIdx.x, i = i0 + 1 + r;  // this thread's row
    const bool live = r < rows;
    int hleft = 0, eleft = 0, hdiag = 0, qres = 0;
    if (live) {
        hleft = colH[i];
        eleft = colE[i];
        hdiag = r == 0 ? row_h[0] : colH[i - 1];
        qres = q[i - 1];
    }
    __syncthreads();  // every input read before any of them is overwritten
    const bool bottom = r == rows - 1;
    if (bottom) row_h[0] = hleft;  // the corner of the tile below
    int best = 0, best_j = 0;
    for (int step = 0; step < rows + cols - 1; ++step) {
        const int c = step - r;
        if (live && c >= 0 && c < cols) {
            const int hup = r == 0 ? s.top_h[c + 1] : s.xh[(step - 1) & 1][r - 1];
            const int fup = r == 0 ? s.top_f[c + 1] : s.xf[(step - 1) & 1][r - 1];
            const int e = add_max(eleft, -ge, hleft - go);
            const int f = add_max(fup, -ge, hup - go);
            const int dg = hdiag + ssub[s.res[c] * A + qres];
            const int h = mode == WAVEDP_LOCAL ? max3_relu(dg, e, f) : max3(dg, e, f);
            hdiag = hup;
            hleft = h;
            eleft = e;
            s.xh[step & 1][r] = h;
            s.xf[step & 1][r] = f;
            const int j = j0 + c + 1;
            if (mode == WAVEDP_LOCAL) {
                if (h > best) best = h, best_j = j;
            } else {
                if (j == n) lastcol[i] = h;
                if (i == m) lastrow[j] = h;
            }
            if (bottom) row_h[c + 1] = h, row_f[c + 1] = f;
            if (c == cols - 1) colH[i] = h, colE[i] = e;
        }
        __syncthreads();
    }
    if (mode == WAVEDP_LOCAL && live && best > rowbest[i]) {  // tiles of a row come left to right
        rowbest[i] = best;
        rowcol[i] = best_j;
    }
}

__device__ __forceinline__ void tile_diagonal(TILED_PARAMS, const int* ssub, TileShared& s,
                                              int D) {
    const int ntr = (m + TILE - 1) / TILE, ntc = (n + TILE - 1) / TILE;
    const int ihi = min(ntr - 1, D);
    for (int I = max(0, D - ntc + 1) + blockIdx.x; I <= ihi; I += gridDim.x) {
        tile(TILED_ARGS, ssub, s, I, D - I);
    }
}

__device__ __forceinline__ void load_table(const int* sub, int A, int* ssub) {
    for (int k = threadIdx.x; k < A * A; k += blockDim.x) ssub[k] = sub[k];
    __syncthreads();
}

__global__ void __launch_bounds__(TILE) tiled_step(TILED_PARAMS, int D) {
    extern __shared__ int ssub[];
    __shared__ TileShared s;
    load_table(sub, A, ssub);
    tile_diagonal(TILED_ARGS, ssub, s, D);
}

template <int KIND>
__global__ void __launch_bounds__(TILE) tiled_sweep(TILED_PARAMS, unsigned* bar,
                                                    unsigned long long timeout_ns) {
    extern __shared__ int ssub[];
    __shared__ TileShared s;
    GridBarrier sync = grid_barrier(bar, timeout_ns);
    load_table(sub, A, ssub);
    const int last = (m + TILE - 1) / TILE + (n + TILE - 1) / TILE - 2;
    for (int D = 0; D <= last; ++D) {
        tile_diagonal(TILED_ARGS, ssub, s, D);
        if (D < last && !grid_sync<KIND>(sync)) return;
    }
}
