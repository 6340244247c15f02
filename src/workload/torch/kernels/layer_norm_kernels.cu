// The layer-norm kernels (see layer_norm_kernels.hpp). The row passes give each
// row to one warp, which reads it in packs of four elements: once from memory for
// the mean, then from cache for the variance and the output (forward), or for the
// two row sums and the input's gradient (backward). The gains' and biases'
// gradients are column sums (column_sums.cuh).
#include "column_sums.cuh"
#include "device_elements.cuh"
#include "element_dispatch.cuh"
#include "layer_norm_kernels.hpp"

namespace dvfslab::torch_backend::kernels {
namespace {

constexpr int lanes = column_lanes;

template <typename T>
__device__ void load(const T* at, float (&out)[lanes]) {
  const auto pack = *reinterpret_cast<const Pack<T, lanes>*>(at);
#pragma unroll
  for (int lane = 0; lane < lanes; ++lane) out[lane] = widen(pack.value[lane]);
}

template <typename T>
__device__ void store(T* at, const float (&in)[lanes]) {
  Pack<T, lanes> pack;
#pragma unroll
  for (int lane = 0; lane < lanes; ++lane) pack.value[lane] = narrow<T>(in[lane]);
  *reinterpret_cast<Pack<T, lanes>*>(at) = pack;
}

__device__ float warp_sum(float value) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The row loops: one warp per row, every lane starting at its own pack.
__device__ std::int64_t first_row() { return first_index() / warp_size; }
__device__ std::int64_t row_stride() { return grid_stride() / warp_size; }
__device__ std::int64_t first_column() { return static_cast<std::int64_t>(threadIdx.x % warp_size) * lanes; }
constexpr std::int64_t column_stride = warp_size * lanes;

template <typename T, typename Out>
__global__ void forward_kernel(LayerNormShape shape, LayerNormForward args) {
  const auto* gain = static_cast<const T*>(args.gain);
  const auto* bias = static_cast<const T*>(args.bias);
  for (std::int64_t row = first_row(); row < shape.rows; row += row_stride()) {
    const T* x = static_cast<const T*>(args.input) + row * shape.width;
    float sum = 0.f;
    if (args.branch != nullptr) {
      // The later passes read the sum back as stored, rounded to T.
      const Out* branch = static_cast<const Out*>(args.branch) + row * shape.width;
      T* stream = static_cast<T*>(args.sum) + row * shape.width;
      for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
        float value[lanes], added[lanes];
        load(x + column, value);
        load(branch + column, added);
#pragma unroll
        for (int lane = 0; lane < lanes; ++lane) {
          value[lane] = widen(narrow<T>(value[lane] + added[lane]));
          sum += value[lane];
        }
        store(stream + column, value);
      }
      x = stream;
    } else {
      for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
        float value[lanes];
        load(x + column, value);
#pragma unroll
        for (int lane = 0; lane < lanes; ++lane) sum += value[lane];
      }
    }
    const float mean = warp_sum(sum) / static_cast<float>(shape.width);
    float squares = 0.f;
    for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
      float value[lanes];
      load(x + column, value);
#pragma unroll
      for (int lane = 0; lane < lanes; ++lane) squares += (value[lane] - mean) * (value[lane] - mean);
    }
    const float inverse_std = rsqrtf(warp_sum(squares) / static_cast<float>(shape.width) + args.epsilon);
    Out* y = static_cast<Out*>(args.output) + row * shape.width;
    for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
      float value[lanes], g[lanes], b[lanes];
      load(x + column, value);
      load(gain + column, g);
      load(bias + column, b);
#pragma unroll
      for (int lane = 0; lane < lanes; ++lane)
        value[lane] = (value[lane] - mean) * inverse_std * g[lane] + b[lane];
      store(y + column, value);
    }
    if (first_column() == 0) {
      args.mean[row] = mean;
      args.inverse_std[row] = inverse_std;
    }
  }
}

// dx = inverse_std · (dy·g − mean(dy·g) − x̂ · mean(dy·g·x̂)) + the sum's direct
// gradient, x̂ the normalised input.
template <typename T, typename Out>
__global__ void input_gradient_kernel(LayerNormShape shape, LayerNormBackward args) {
  const auto* gain = static_cast<const T*>(args.gain);
  for (std::int64_t row = first_row(); row < shape.rows; row += row_stride()) {
    const T* x = static_cast<const T*>(args.input) + row * shape.width;
    const Out* dy = static_cast<const Out*>(args.grad_output) + row * shape.width;
    const float mean = args.mean[row], inverse_std = args.inverse_std[row];
    float gradient_sum = 0.f, projection_sum = 0.f;
    for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
      float value[lanes], g[lanes], grad[lanes];
      load(x + column, value);
      load(gain + column, g);
      load(dy + column, grad);
#pragma unroll
      for (int lane = 0; lane < lanes; ++lane) {
        const float scaled = grad[lane] * g[lane];
        gradient_sum += scaled;
        projection_sum += scaled * (value[lane] - mean) * inverse_std;
      }
    }
    const float gradient_mean = warp_sum(gradient_sum) / static_cast<float>(shape.width);
    const float projection_mean = warp_sum(projection_sum) / static_cast<float>(shape.width);
    T* dx = static_cast<T*>(args.grad_input) + row * shape.width;
    for (std::int64_t column = first_column(); column < shape.width; column += column_stride) {
      float value[lanes], g[lanes], grad[lanes];
      load(x + column, value);
      load(gain + column, g);
      load(dy + column, grad);
      float direct[lanes] = {};
      if (args.grad_sum != nullptr)
        load(static_cast<const T*>(args.grad_sum) + row * shape.width + column, direct);
#pragma unroll
      for (int lane = 0; lane < lanes; ++lane) {
        const float normalised = (value[lane] - mean) * inverse_std;
        value[lane] = inverse_std * (grad[lane] * g[lane] - gradient_mean - normalised * projection_mean) +
                      direct[lane];
      }
      store(dx + column, value);
      if (args.grad_branch != nullptr)
        store(static_cast<Out*>(args.grad_branch) + row * shape.width + column, value);
    }
  }
}

// The gain's gradient Σ dy·x̂ and the bias's Σ dy, over a row's four columns.
template <typename T, typename Out>
struct GainBiasTerms {
  LayerNormShape shape;
  LayerNormBackward args;

  __device__ void operator()(std::int64_t row, std::int64_t column, float (&sums)[2][column_lanes]) const {
    float value[lanes], grad[lanes];
    load(static_cast<const T*>(args.input) + row * shape.width + column, value);
    load(static_cast<const Out*>(args.grad_output) + row * shape.width + column, grad);
    const float mean = args.mean[row], inverse_std = args.inverse_std[row];
#pragma unroll
    for (int lane = 0; lane < lanes; ++lane) {
      sums[0][lane] += grad[lane] * (value[lane] - mean) * inverse_std;
      sums[1][lane] += grad[lane];
    }
  }
};

unsigned row_blocks_for(const LayerNormShape& shape) { return grid_blocks(shape.rows * warp_size); }

}  // namespace

cudaError_t layer_norm_forward(ElementType input_type, ElementType output_type, const LayerNormShape& shape,
                               const LayerNormForward& args, cudaStream_t stream) {
  return with_element_types(input_type, output_type, [&](auto input, auto output) {
    forward_kernel<decltype(input), decltype(output)>
        <<<row_blocks_for(shape), threads_per_block, 0, stream>>>(shape, args);
    return cudaGetLastError();
  });
}

std::int64_t layer_norm_backward_scratch(const LayerNormShape& shape) {
  return column_sums_scratch(shape.rows, shape.width, 2);
}

cudaError_t layer_norm_backward(ElementType input_type, ElementType output_type, const LayerNormShape& shape,
                                const LayerNormBackward& args, cudaStream_t stream) {
  return with_element_types(input_type, output_type, [&](auto input, auto output) {
    using T = decltype(input);
    using Out = decltype(output);
    input_gradient_kernel<T, Out><<<row_blocks_for(shape), threads_per_block, 0, stream>>>(shape, args);
    const ColumnTotals<T, 2> totals{{static_cast<T*>(args.grad_gain), static_cast<T*>(args.grad_bias)}};
    return sum_columns(shape.rows, shape.width, GainBiasTerms<T, Out>{shape, args}, args.scratch, totals,
                       stream);
  });
}

}  // namespace dvfslab::torch_backend::kernels
