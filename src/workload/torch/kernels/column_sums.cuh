#pragma once
// Sums over the rows of a row-major matrix, one or more per column (a layer norm's
// gain and bias gradients, a linear layer's bias gradient), in two stages with a
// fixed order so that results do not depend on scheduling: every block sums a
// strided share of the rows for a tile of columns into partials, then one warp
// per column adds the partials.
#include <cstdint>

#include "device_elements.cuh"

namespace dvfslab::torch_backend::kernels {

// Columns a thread sums side by side.
inline constexpr int column_lanes = 4;

// How the partial sums' blocks cover the matrix: `tile` groups of column_lanes
// columns across x and `row_lanes` rows across y per block; column_tiles ×
// row_blocks tiles of work, launched as at most most_grid_blocks blocks across the
// columns (the grid's y limit: past 65,535 tiles, 8.4 M columns, a block sums more
// than one tile, every most_grid_blocks-th).
struct ColumnGrid {
  int tile, row_lanes;
  std::int64_t column_tiles, row_blocks;
};

inline ColumnGrid column_grid(std::int64_t rows, std::int64_t width) {
  // A few blocks per multiprocessor on the GPUs of today.
  constexpr std::int64_t wanted_blocks = 512;
  const std::int64_t groups = width / column_lanes;
  const int tile = static_cast<int>(groups < 32 ? groups : 32);
  const int row_lanes = threads_per_block / tile;
  const std::int64_t column_tiles = (groups + tile - 1) / tile;
  const std::int64_t wanted = wanted_blocks / column_tiles;
  const std::int64_t most = (rows + row_lanes - 1) / row_lanes;
  const std::int64_t row_blocks = wanted < 1 ? 1 : (wanted > most ? most : wanted);
  return {tile, row_lanes, column_tiles, row_blocks};
}

// FP32 scratch for `count` sums per column.
inline std::int64_t column_sums_scratch(std::int64_t rows, std::int64_t width, int count) {
  return count * column_grid(rows, width).row_blocks * width;
}

// Where the totals go: one vector of `width` elements per sum.
template <typename T, int count>
struct ColumnTotals {
  T* sum[count];
};

// `terms(row, column, out)` adds the row's terms for columns column … column + 3
// to out[sum][lane]. Writes partial[(sum · row_blocks + block) · width + column].
template <int count, typename Terms>
__global__ void column_partials_kernel(std::int64_t rows, std::int64_t width, std::int64_t column_tiles,
                                       Terms terms, float* partial) {
  __shared__ float share[threads_per_block * count * column_lanes];
  float* mine = share + (threadIdx.y * blockDim.x + threadIdx.x) * count * column_lanes;
  // The same number of passes for every thread of the block: the barriers below are
  // reached by all of them.
  for (std::int64_t column_tile = blockIdx.y; column_tile < column_tiles; column_tile += gridDim.y) {
    const std::int64_t group = column_tile * blockDim.x + threadIdx.x;
    const bool in_width = group < width / column_lanes;
    float sums[count][column_lanes] = {};
    if (in_width) {
      // Unrolled so that several rows' loads are in flight at once.
#pragma unroll 4
      for (std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.y) + threadIdx.y; row < rows;
           row += static_cast<std::int64_t>(gridDim.x) * blockDim.y)
        terms(row, group * column_lanes, sums);
    }
    for (int sum = 0; sum < count; ++sum)
      for (int lane = 0; lane < column_lanes; ++lane) mine[sum * column_lanes + lane] = sums[sum][lane];
    __syncthreads();
    if (threadIdx.y == 0 && in_width) {
      for (unsigned y = 1; y < blockDim.y; ++y) {
        const float* theirs = share + (y * blockDim.x + threadIdx.x) * count * column_lanes;
        for (int sum = 0; sum < count; ++sum)
          for (int lane = 0; lane < column_lanes; ++lane)
            sums[sum][lane] += theirs[sum * column_lanes + lane];
      }
      for (int sum = 0; sum < count; ++sum)
        for (int lane = 0; lane < column_lanes; ++lane)
          partial[(sum * static_cast<std::int64_t>(gridDim.x) + blockIdx.x) * width + group * column_lanes +
                  lane] = sums[sum][lane];
    }
    // The next tile's sums overwrite the shared memory the first row just read.
    __syncthreads();
  }
}

// One warp per column: each lane adds every 32nd block's partial, then the lanes'
// sums meet in a fixed tree (one thread per column, adding the partials in turn,
// took 23 µs per layer norm of GPT-2 on an H100: a chain of dependent loads).
template <typename T, int count>
__global__ void column_totals_kernel(std::int64_t width, std::int64_t row_blocks, const float* partial,
                                     ColumnTotals<T, count> totals) {
  const int lane = static_cast<int>(threadIdx.x % warp_size);
  for (std::int64_t column = first_index() / warp_size; column < width; column += grid_stride() / warp_size) {
    for (int sum = 0; sum < count; ++sum) {
      float total = 0.f;
      for (std::int64_t block = lane; block < row_blocks; block += warp_size)
        total += partial[(sum * row_blocks + block) * width + column];
      for (int offset = warp_size / 2; offset > 0; offset /= 2)
        total += __shfl_xor_sync(0xffffffffu, total, offset);
      if (lane == 0) totals.sum[sum][column] = narrow<T>(total);
    }
  }
}

// Both stages on `stream`; width a multiple of column_lanes, `scratch` of
// column_sums_scratch(rows, width, count) elements.
template <typename T, int count, typename Terms>
cudaError_t sum_columns(std::int64_t rows, std::int64_t width, Terms terms, float* scratch,
                        ColumnTotals<T, count> totals, cudaStream_t stream) {
  const ColumnGrid grid = column_grid(rows, width);
  const std::int64_t column_blocks =
      grid.column_tiles < most_grid_blocks ? grid.column_tiles : most_grid_blocks;
  column_partials_kernel<count>
      <<<dim3(static_cast<unsigned>(grid.row_blocks), static_cast<unsigned>(column_blocks)),
         dim3(static_cast<unsigned>(grid.tile), static_cast<unsigned>(grid.row_lanes)), 0, stream>>>(
          rows, width, grid.column_tiles, terms, scratch);
  column_totals_kernel<T, count><<<grid_blocks(width * warp_size), threads_per_block, 0, stream>>>(
      width, grid.row_blocks, scratch, totals);
  return cudaGetLastError();
}

}  // namespace dvfslab::torch_backend::kernels
