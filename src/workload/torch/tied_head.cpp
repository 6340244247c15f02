#include "workload/torch/tied_head.hpp"

#include <torch/torch.h>

#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

constexpr std::int64_t row_alignment = 64;

}  // namespace

torch::Tensor tied_head_logits(const torch::Tensor& hidden, const torch::Tensor& embeddings) {
  const auto vocabulary = embeddings.size(0);
  const auto padding = (row_alignment - vocabulary % row_alignment) % row_alignment;
  if (!hidden.is_cuda() || padding == 0) return torch::linear(hidden, embeddings);
  auto weight = embeddings;
  // Cast before padding so the padded copy is made once, in the type the GEMM reads.
  if (const auto dtype = active_autocast_dtype(hidden.device().type())) weight = weight.to(*dtype);
  weight = torch::constant_pad_nd(weight, {0, 0, 0, padding});
  return torch::linear(hidden, weight).narrow(-1, 0, vocabulary);
}

}  // namespace dvfslab::torch_backend
