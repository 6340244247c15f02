// The bias-gradient kernel (see bias_gradient_kernels.hpp): a column sum
// (column_sums.cuh) of the output's gradient.
#include "bias_gradient_kernels.hpp"
#include "column_sums.cuh"
#include "device_elements.cuh"
#include "element_dispatch.cuh"

namespace dvfslab::torch_backend::kernels {
namespace {

template <typename Gradient>
struct GradientTerms {
  const Gradient* grad_output;
  std::int64_t width;

  __device__ void operator()(std::int64_t row, std::int64_t column, float (&sums)[1][column_lanes]) const {
    const auto pack =
        *reinterpret_cast<const Pack<Gradient, column_lanes>*>(grad_output + row * width + column);
#pragma unroll
    for (int lane = 0; lane < column_lanes; ++lane) sums[0][lane] += widen(pack.value[lane]);
  }
};

}  // namespace

std::int64_t bias_gradient_scratch(std::int64_t rows, std::int64_t width) {
  return column_sums_scratch(rows, width, 1);
}

cudaError_t bias_gradient(ElementType gradient_type, ElementType bias_type, std::int64_t rows,
                          std::int64_t width, const void* grad_output, void* grad_bias, float* scratch,
                          cudaStream_t stream) {
  return with_element_types(gradient_type, bias_type, [&](auto gradient, auto bias) {
    using Gradient = decltype(gradient);
    using Bias = decltype(bias);
    const ColumnTotals<Bias, 1> totals{{static_cast<Bias*>(grad_bias)}};
    return sum_columns(rows, width, GradientTerms<Gradient>{static_cast<const Gradient*>(grad_output), width},
                       scratch, totals, stream);
  });
}

}  // namespace dvfslab::torch_backend::kernels
