#pragma once
// The language-model head of GPT-2 and BERT: logits from the token embeddings
// the head shares with the input.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// hidden [..., width] × embeddingsᵀ ([vocabulary, width]) → logits [..., vocabulary].
// On CUDA, a vocabulary that is not a multiple of 64 (GPT-2's 50,257, BERT's
// 30,522) leaves each logits row misaligned for cuBLAS's tensor-core kernels, so the
// product is taken against the embeddings padded with zero rows and the extra
// columns are dropped as a view (what torch.compile's matmul padding does too).
torch::Tensor tied_head_logits(const torch::Tensor& hidden, const torch::Tensor& embeddings);

}  // namespace dvfslab::torch_backend
