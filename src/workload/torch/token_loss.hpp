#pragma once
// The language models' training loss over a vocabulary of tens of thousands.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// The mean cross-entropy of `logits` ([..., vocabulary]) against `targets` (token
// ids, logits' leading shape): the same values and gradients as cross_entropy.
// cross_entropy under autocast runs log_softmax in the logits' 16-bit type, then
// casts every log-probability to FP32 for nll_loss, whose backward fills an FP32
// tensor of the logits' size and casts it back: on GPT-2 at 8 × 1024 tokens, three
// passes over 1.6 GB. Here only the target's log-probability of each row is
// widened, and the backward scatters into a tensor of the logits' own type.
torch::Tensor mean_token_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace dvfslab::torch_backend
