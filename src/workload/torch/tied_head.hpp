#pragma once
// The language-model head of GPT-2 and BERT: logits from the token embeddings
// the head shares with the input.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// hidden [..., width] × embeddingsᵀ ([vocabulary, width]) → logits [..., vocabulary].
// A vocabulary that is not a multiple of 64 (GPT-2's 50,257, BERT's 30,522) leaves
// each logits row misaligned for cuBLAS's tensor-core kernels, so the product is
// taken against the embeddings padded with zero rows and the extra columns are
// dropped as a view (what torch.compile's matmul padding does too); on every
// device, so that the CPU tests check the path the GPU takes.
torch::Tensor tied_head_logits(const torch::Tensor& hidden, const torch::Tensor& embeddings);

// The mean cross-entropy of those logits against `targets` (token ids, any shape
// matching hidden's leading dimensions). Where the product is padded, the padded
// columns get a constant -inf bias in the GEMM's epilogue instead of being dropped:
// they then carry no probability and no gradient, and neither the loss nor its
// backward copies the logits to make the narrowed view contiguous (two copies of
// the whole logits tensor per step otherwise, each about 1 ms for GPT-2 at
// 8 × 1024 tokens on an H100).
torch::Tensor tied_head_cross_entropy(const torch::Tensor& hidden, const torch::Tensor& embeddings,
                                      const torch::Tensor& targets);

}  // namespace dvfslab::torch_backend
