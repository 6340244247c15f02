#include "workload/torch/tied_head.hpp"

#include <torch/torch.h>

#include <limits>

#include "workload/torch/autocast_operand.hpp"
#include "workload/torch/token_loss.hpp"

namespace dvfslab::torch_backend {
namespace {

constexpr std::int64_t row_alignment = 64;

// The zero rows the product is padded with. Alignment pays on CUDA only, but the
// CPU takes the same path (a few more rows of a GEMM) so that its tests check it.
std::int64_t padding_rows(const torch::Tensor& embeddings) {
  return (row_alignment - embeddings.size(0) % row_alignment) % row_alignment;
}

// The embeddings with `padding` zero rows appended, in the type the GEMM reads: cast
// first, so the padded copy is made once.
torch::Tensor padded_embeddings(const torch::Tensor& embeddings, std::int64_t padding) {
  return torch::constant_pad_nd(autocast_operand(embeddings), {0, 0, 0, padding});
}

}  // namespace

torch::Tensor tied_head_logits(const torch::Tensor& hidden, const torch::Tensor& embeddings) {
  const auto padding = padding_rows(embeddings);
  const auto operand = autocast_operand(hidden);
  if (padding == 0) return torch::linear(operand, autocast_operand(embeddings));
  return torch::linear(operand, padded_embeddings(embeddings, padding)).narrow(-1, 0, embeddings.size(0));
}

torch::Tensor tied_head_cross_entropy(const torch::Tensor& hidden, const torch::Tensor& embeddings,
                                      const torch::Tensor& targets) {
  const auto rows = autocast_operand(hidden.reshape({-1, hidden.size(-1)}));
  const auto padding = padding_rows(embeddings);
  if (padding == 0)
    return mean_token_cross_entropy(torch::linear(rows, autocast_operand(embeddings)), targets);
  const auto weight = padded_embeddings(embeddings, padding);
  // A constant (no gradient), so the backward adds no reduction over the logits.
  auto mask = torch::zeros({weight.size(0)}, weight.options().requires_grad(false));
  mask.narrow(0, embeddings.size(0), padding).fill_(-std::numeric_limits<double>::infinity());
  return mean_token_cross_entropy(torch::linear(rows, weight, mask), targets);
}

}  // namespace dvfslab::torch_backend
