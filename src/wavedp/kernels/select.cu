// The search's top-k selection on the GPU (engines/cuda/scan/select.py): every entry of a
// row of the score matrix at or above the row's floor has a ranking key, unique in its row,
//     key = score * 2^32 + (2^32 - 1 - column)
// (larger score first, then smaller column); the others, and the columns past the row's
// end, have NO_KEY. chunk_best finds each chunk's largest key; chunk_keys writes every key
// of the chunks the host picked. Rows are C-contiguous, ld entries apart.

#define NO_KEY (-0x7fffffffffffffffLL - 1)

__device__ __forceinline__ long long rank_key(const int* row, long long col, long long n,
                                              int floor) {
    if (col >= n) return NO_KEY;
    const int v = row[col];
    return v >= floor ? (long long)v * 4294967296LL + (4294967295LL - col) : NO_KEY;
}

// keys[r * chunks + c]: the largest key of chunk c (entries c * chunk ... c * chunk + chunk
// - 1) of row r; grid (chunks, rows), any block size up to 1024 (a multiple of 32).
__global__ void chunk_best(const int* scores, long long ld, long long n,
                                      const int* floor, int chunk, int chunks,
                                      long long* keys) {
    __shared__ long long warp_max[32];
    const int r = blockIdx.y, c = blockIdx.x;
    const int* row = scores + (long long)r * ld;
    long long best = NO_KEY;
    for (int t = threadIdx.x; t < chunk; t += blockDim.x) {
        const long long key = rank_key(row, (long long)c * chunk + t, n, floor[r]);
        best = key > best ? key : best;
    }
    for (int d = 16; d > 0; d /= 2) {
        const long long other = __shfl_down_sync(0xffffffffu, best, d);
        best = other > best ? other : best;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_max[warp] = best;
    __syncthreads();
    if (warp == 0) {
        best = lane < blockDim.x / 32 ? warp_max[lane] : NO_KEY;
        for (int d = 16; d > 0; d /= 2) {
            const long long other = __shfl_down_sync(0xffffffffu, best, d);
            best = other > best ? other : best;
        }
        if (lane == 0) keys[(long long)r * chunks + c] = best;
    }
}

// out[(r * picked + j) * chunk + t]: the key of entry t of chunk chosen[r * picked + j] of
// row r; grid (picked, rows).
__global__ void chunk_keys(const int* scores, long long ld, long long n,
                                      const int* floor, int chunk, const int* chosen,
                                      int picked, long long* out) {
    const int r = blockIdx.y, j = blockIdx.x;
    const int* row = scores + (long long)r * ld;
    const long long c = chosen[r * picked + j];
    long long* dst = out + ((long long)r * picked + j) * chunk;
    for (int t = threadIdx.x; t < chunk; t += blockDim.x)
        dst[t] = rank_key(row, c * chunk + t, n, floor[r]);
}
