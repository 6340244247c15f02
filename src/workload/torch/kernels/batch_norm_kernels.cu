// The training batch-norm kernels (see batch_norm_kernels.hpp). Each pass moves 8
// channels (16 bytes) per thread; the reductions give each block a strided share
// of the rows and every channel tile its own blocks, write one partial sum per
// block and channel, and add the partials in a fixed order in a per-channel pass.
#include "batch_norm_kernels.hpp"
#include "device_elements.cuh"

namespace dvfslab::torch_backend::kernels {
namespace {

constexpr int lanes = 8;
static_assert(lanes == 8, "the ReLU's mask holds one pack in one byte");
// Blocks a reduction aims at: a few per multiprocessor on the GPUs of today, all
// resident at once (the reduction's registers are bounded to let
// `resident_reductions` blocks share a multiprocessor), so no second wave trails.
constexpr std::int64_t reduction_blocks = 512;
constexpr int resident_reductions = 4;

// The pack of `lanes` elements starting at `element`, as stored.
template <typename T>
__device__ Pack<T, lanes> pack_at(const void* base, std::int64_t element) {
  return *reinterpret_cast<const Pack<T, lanes>*>(static_cast<const T*>(base) + element);
}

template <typename T>
__device__ void store_pack(void* base, std::int64_t element, const Pack<T, lanes>& pack) {
  *reinterpret_cast<Pack<T, lanes>*>(static_cast<T*>(base) + element) = pack;
}

template <typename T>
__device__ void load(const void* base, std::int64_t element, float (&out)[lanes]) {
  const auto pack = pack_at<T>(base, element);
  for (int lane = 0; lane < lanes; ++lane) out[lane] = widen(pack.value[lane]);
}

// One pack's per-channel coefficients in 16-byte loads: the workspace is aligned
// and every coefficient row starts at a multiple of 8 channels.
__device__ void load_coefficients(const float* coefficients, std::int64_t first, float (&out)[lanes]) {
  const auto pack = pack_at<float>(coefficients, first);
  for (int lane = 0; lane < lanes; ++lane) out[lane] = pack.value[lane];
}

template <typename T>
__device__ void store(void* base, std::int64_t element, const float (&in)[lanes]) {
  Pack<T, lanes> pack;
  for (int lane = 0; lane < lanes; ++lane) pack.value[lane] = narrow<T>(in[lane]);
  store_pack(base, element, pack);
}

// How a reduction's blocks cover the tensor: `tile` channel groups of 8 across x,
// `row_lanes` rows across y, `channel_tiles` × `row_blocks` blocks.
struct ReductionGrid {
  int tile, row_lanes;
  std::int64_t channel_tiles, row_blocks;
};

ReductionGrid reduction_grid(const NormShape& shape) {
  const std::int64_t groups = shape.channels / lanes;
  const int tile = static_cast<int>(groups < 32 ? groups : 32);
  const int row_lanes = threads_per_block / tile;
  const std::int64_t channel_tiles = (groups + tile - 1) / tile;
  const std::int64_t wanted = reduction_blocks / channel_tiles;
  const std::int64_t most = (shape.rows + row_lanes - 1) / row_lanes;
  const std::int64_t row_blocks = wanted < 1 ? 1 : (wanted > most ? most : wanted);
  return {tile, row_lanes, channel_tiles, row_blocks};
}

// Where the per-channel coefficients of the apply passes start in the workspace.
std::int64_t coefficients_at(const NormShape& shape) {
  return 2 * reduction_grid(shape).row_blocks * shape.channels;
}

// Per block and channel: the sums of `first` and `second` over the block's rows,
// written to partial[block][channel] and partial[row_blocks + block][channel].
// Mode::statistics sums x and x²; Mode::gradients sums g and g·x̂, where g is the
// output gradient masked by the ReLU and x̂ the normalised input. The statistics
// read one tensor, so each thread loads `rows_per_step` rows before adding any:
// with one 16-byte load in flight per thread they moved 1.9 TB/s on an H100
// (ResNet-50's), the gradients with three (g, x and the output, before the mask
// replaced it) 2.7 TB/s; three rows are the most that fit the register bound below
// without spilling. The additions keep the row order, so the sums do not depend on
// the unrolling.
enum class Mode { statistics, gradients };

template <Mode mode>
constexpr int rows_per_step = mode == Mode::statistics ? 3 : 1;

template <typename T, Mode mode>
__global__ void __launch_bounds__(threads_per_block, resident_reductions)
    reduce_kernel(NormShape shape, const void* input, const void* grad_output, const std::uint8_t* relu_mask,
                  const float* mean, const float* inverse_std, float* partial) {
  __shared__ float share[threads_per_block * 2 * lanes];
  const std::int64_t groups = shape.channels / lanes;
  const std::int64_t group = blockIdx.y * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  float first[lanes] = {}, second[lanes] = {};
  if (group < groups) {
    const std::int64_t column = group * lanes;
    float centre[lanes] = {}, scale[lanes] = {};
    if (mode == Mode::gradients) {
      for (int lane = 0; lane < lanes; ++lane) {
        centre[lane] = mean[column + lane];
        scale[lane] = inverse_std[column + lane];
      }
    }
    constexpr int steps = rows_per_step<mode>;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.y;
    for (std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
         row < shape.rows; row += steps * stride) {
      // Held as loaded (16-bit), widened while adding: half the registers.
      Pack<T, lanes> x[steps], g[steps];
      unsigned mask[steps];
#pragma unroll
      for (int step = 0; step < steps; ++step) {
        if (row + step * stride < shape.rows) {
          const std::int64_t element = (row + step * stride) * shape.channels + column;
          x[step] = pack_at<T>(input, element);
          if (mode == Mode::gradients) {
            g[step] = pack_at<T>(grad_output, element);
            mask[step] = relu_mask != nullptr ? relu_mask[element / lanes] : 0xffu;
          }
        }
      }
#pragma unroll
      for (int step = 0; step < steps; ++step) {
        if (row + step * stride < shape.rows) {
          for (int lane = 0; lane < lanes; ++lane) {
            const float value = widen(x[step].value[lane]);
            if (mode == Mode::statistics) {
              first[lane] += value;
              second[lane] += value * value;
            } else {
              const float masked = (mask[step] >> lane & 1u) != 0 ? widen(g[step].value[lane]) : 0.f;
              first[lane] += masked;
              second[lane] += masked * (value - centre[lane]) * scale[lane];
            }
          }
        }
      }
    }
  }
  float* mine = share + (threadIdx.y * blockDim.x + threadIdx.x) * 2 * lanes;
  for (int lane = 0; lane < lanes; ++lane) {
    mine[lane] = first[lane];
    mine[lanes + lane] = second[lane];
  }
  __syncthreads();
  if (threadIdx.y != 0 || group >= groups) return;
  for (unsigned y = 1; y < blockDim.y; ++y) {
    const float* theirs = share + (y * blockDim.x + threadIdx.x) * 2 * lanes;
    for (int lane = 0; lane < lanes; ++lane) {
      first[lane] += theirs[lane];
      second[lane] += theirs[lanes + lane];
    }
  }
  const std::int64_t rows_of_partials = static_cast<std::int64_t>(gridDim.x) * shape.channels;
  for (int lane = 0; lane < lanes; ++lane) {
    const std::int64_t at = blockIdx.x * shape.channels + group * lanes + lane;
    partial[at] = first[lane];
    partial[rows_of_partials + at] = second[lane];
  }
}

// The two per-channel sums over every block, in double: each lane of a warp adds
// every 32nd block, then the lanes' sums meet in a fixed tree, so the order never
// depends on scheduling. Every lane returns the totals.
__device__ void channel_sums(const float* partial, std::int64_t row_blocks, std::int64_t channels,
                             std::int64_t channel, double& first, double& second) {
  const unsigned lane = threadIdx.x % 32;
  first = 0;
  second = 0;
  for (std::int64_t block = lane; block < row_blocks; block += 32) {
    first += partial[block * channels + channel];
    second += partial[(row_blocks + block) * channels + channel];
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    first += __shfl_xor_sync(0xffffffffu, first, offset);
    second += __shfl_xor_sync(0xffffffffu, second, offset);
  }
}

// One warp per channel in the two per-channel passes.
constexpr int warp = 32;
__device__ std::int64_t warp_channel() {
  return (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warp;
}

// Statistics → mean, 1/σ, running statistics, and each channel's scale and shift.
__global__ void finish_statistics_kernel(NormShape shape, std::int64_t row_blocks, NormForward args) {
  const std::int64_t channel = warp_channel();
  if (channel >= shape.channels) return;  // whole warps: a warp holds one channel
  double sum, squares;
  channel_sums(args.workspace, row_blocks, shape.channels, channel, sum, squares);
  if (threadIdx.x % warp != 0) return;
  const double count = static_cast<double>(shape.rows);
  const double mean = sum / count;
  double variance = squares / count - mean * mean;
  if (variance < 0) variance = 0;
  const double inverse_std = 1.0 / sqrt(variance + args.eps);
  args.saved_mean[channel] = static_cast<float>(mean);
  args.saved_inverse_std[channel] = static_cast<float>(inverse_std);
  if (args.running_mean != nullptr) {
    const double unbiased = shape.rows > 1 ? variance * count / (count - 1) : variance;
    args.running_mean[channel] =
        static_cast<float>((1 - args.momentum) * args.running_mean[channel] + args.momentum * mean);
    args.running_var[channel] =
        static_cast<float>((1 - args.momentum) * args.running_var[channel] + args.momentum * unbiased);
  }
  const double scale = args.weight[channel] * inverse_std;
  float* coefficients = args.workspace + 2 * row_blocks * shape.channels;
  coefficients[channel] = static_cast<float>(scale);
  coefficients[shape.channels + channel] = static_cast<float>(args.bias[channel] - mean * scale);
}

// Calls visit(column, element) for each pack of `lanes` channels of one row that
// falls to this thread: its first channel, and its first element's offset.
template <typename Visit>
__device__ void for_each_pack(const NormShape& shape, Visit visit) {
  const std::int64_t groups = shape.channels / lanes;
  const std::int64_t total = shape.rows * groups;
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    const std::int64_t column = (index % groups) * lanes;
    visit(column, (index / groups) * shape.channels + column);
  }
}

template <typename T>
__global__ void apply_forward_kernel(NormShape shape, const float* coefficients, NormForward args) {
  for_each_pack(shape, [&](std::int64_t column, std::int64_t element) {
    float x[lanes], residual[lanes] = {};
    load<T>(args.input, element, x);
    if (args.residual != nullptr) load<T>(args.residual, element, residual);
    float scale[lanes], shift[lanes];
    load_coefficients(coefficients, column, scale);
    load_coefficients(coefficients, shape.channels + column, shift);
    Pack<T, lanes> y;
    unsigned positive = 0;
    for (int lane = 0; lane < lanes; ++lane) {
      const float value = x[lane] * scale[lane] + shift[lane] + residual[lane];
      y.value[lane] = narrow<T>(args.relu && !(value > 0.f) ? 0.f : value);
      // From the stored value, as the ReLU's backward sees it: a tiny positive
      // value that rounds to zero lets no gradient through.
      if (widen(y.value[lane]) > 0.f) positive |= 1u << lane;
    }
    store_pack(args.output, element, y);
    if (args.relu_mask != nullptr) args.relu_mask[element / lanes] = static_cast<std::uint8_t>(positive);
  });
}

// Gradient sums → γ's and β's gradients and the coefficients of
// dx = k·g + c₀ + c₁·x (the batch-norm backward written per channel).
__global__ void finish_gradients_kernel(NormShape shape, std::int64_t row_blocks, NormBackward args) {
  const std::int64_t channel = warp_channel();
  if (channel >= shape.channels) return;  // whole warps: a warp holds one channel
  double grad_sum, grad_dot;
  channel_sums(args.workspace, row_blocks, shape.channels, channel, grad_sum, grad_dot);
  if (threadIdx.x % warp != 0) return;
  args.grad_bias[channel] = static_cast<float>(grad_sum);
  args.grad_weight[channel] = static_cast<float>(grad_dot);
  const double count = static_cast<double>(shape.rows);
  const double inverse_std = args.saved_inverse_std[channel];
  const double k = args.weight[channel] * inverse_std;
  const double slope = -k * grad_dot / count * inverse_std;
  float* coefficients = args.workspace + 2 * row_blocks * shape.channels;
  coefficients[channel] = static_cast<float>(k);
  coefficients[shape.channels + channel] =
      static_cast<float>(-k * grad_sum / count - slope * args.saved_mean[channel]);
  coefficients[2 * shape.channels + channel] = static_cast<float>(slope);
}

template <typename T>
__global__ void apply_backward_kernel(NormShape shape, const float* coefficients, NormBackward args) {
  for_each_pack(shape, [&](std::int64_t column, std::int64_t element) {
    float g[lanes], x[lanes];
    load<T>(args.grad_output, element, g);
    load<T>(args.input, element, x);
    if (args.relu_mask != nullptr) {
      const unsigned positive = args.relu_mask[element / lanes];
      for (int lane = 0; lane < lanes; ++lane) g[lane] = (positive >> lane & 1u) != 0 ? g[lane] : 0.f;
    }
    float k[lanes], offset[lanes], slope[lanes];
    load_coefficients(coefficients, column, k);
    load_coefficients(coefficients, shape.channels + column, offset);
    load_coefficients(coefficients, 2 * shape.channels + column, slope);
    float dx[lanes];
    for (int lane = 0; lane < lanes; ++lane)
      dx[lane] = k[lane] * g[lane] + offset[lane] + slope[lane] * x[lane];
    store<T>(args.grad_input, element, dx);
    if (args.grad_residual != nullptr) store<T>(args.grad_residual, element, g);
  });
}

unsigned elementwise_blocks(const NormShape& shape) {
  return grid_blocks(shape.rows * (shape.channels / lanes));
}

unsigned channel_blocks(const NormShape& shape) {
  const std::int64_t channels_per_block = threads_per_block / warp;
  return static_cast<unsigned>((shape.channels + channels_per_block - 1) / channels_per_block);
}

template <typename T>
cudaError_t forward_as(const NormShape& shape, const NormForward& args, cudaStream_t stream) {
  const ReductionGrid grid = reduction_grid(shape);
  const dim3 blocks(static_cast<unsigned>(grid.row_blocks), static_cast<unsigned>(grid.channel_tiles));
  const dim3 threads(static_cast<unsigned>(grid.tile), static_cast<unsigned>(grid.row_lanes));
  reduce_kernel<T, Mode::statistics>
      <<<blocks, threads, 0, stream>>>(shape, args.input, nullptr, nullptr, nullptr, nullptr, args.workspace);
  finish_statistics_kernel<<<channel_blocks(shape), threads_per_block, 0, stream>>>(shape, grid.row_blocks,
                                                                                    args);
  apply_forward_kernel<T><<<elementwise_blocks(shape), threads_per_block, 0, stream>>>(
      shape, args.workspace + coefficients_at(shape), args);
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const NormShape& shape, const NormBackward& args, cudaStream_t stream) {
  const ReductionGrid grid = reduction_grid(shape);
  const dim3 blocks(static_cast<unsigned>(grid.row_blocks), static_cast<unsigned>(grid.channel_tiles));
  const dim3 threads(static_cast<unsigned>(grid.tile), static_cast<unsigned>(grid.row_lanes));
  reduce_kernel<T, Mode::gradients><<<blocks, threads, 0, stream>>>(shape, args.input, args.grad_output,
                                                                    args.relu_mask, args.saved_mean,
                                                                    args.saved_inverse_std, args.workspace);
  finish_gradients_kernel<<<channel_blocks(shape), threads_per_block, 0, stream>>>(shape, grid.row_blocks,
                                                                                   args);
  apply_backward_kernel<T><<<elementwise_blocks(shape), threads_per_block, 0, stream>>>(
      shape, args.workspace + coefficients_at(shape), args);
  return cudaGetLastError();
}

}  // namespace

std::int64_t relu_mask_bytes(const NormShape& shape) { return shape.rows * (shape.channels / lanes); }

std::int64_t NormWorkspace::floats(const NormShape& shape) {
  return coefficients_at(shape) + 3 * shape.channels;
}

cudaError_t batch_norm_act_forward(HalfType type, const NormShape& shape, const NormForward& args,
                                   cudaStream_t stream) {
  return type == HalfType::bfloat16 ? forward_as<__nv_bfloat16>(shape, args, stream)
                                    : forward_as<__half>(shape, args, stream);
}

cudaError_t batch_norm_act_backward(HalfType type, const NormShape& shape, const NormBackward& args,
                                    cudaStream_t stream) {
  return type == HalfType::bfloat16 ? backward_as<__nv_bfloat16>(shape, args, stream)
                                    : backward_as<__half>(shape, args, stream);
}

}  // namespace dvfslab::torch_backend::kernels
