#pragma once
// Greedy generation by the llama decoder with a KV cache: a prompt batch is
// prefilled in one pass, then each step feeds one token per sequence.
#include <torch/types.h>

#include <memory>

#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/llama.hpp"
#include "workload/torch/model_workload.hpp"

namespace dvfslab::torch_backend {

class LlamaGenerator : public TorchGenerator {
 public:
  // The prompts are the synthetic batch of a llama inference workload whose
  // sequence length is the prompt length; it also brings the device and precision.
  LlamaGenerator(std::unique_ptr<ModelWorkload> workload, int generated_length);

  TorchRunInfo run_info() const override { return workload_->run_info(); }
  std::int64_t prefill_tokens() const override { return prompts_.numel(); }
  std::int64_t decode_tokens() const override { return prompts_.size(0) * generated_length_; }
  void prefill() override;
  void decode() override;
  void synchronize() override;

  // The prompts followed by the prefill's token and the decoded ones [batch, prompt + 1 + generated].
  torch::Tensor sequences() const;
  Llama& model() { return model_; }

 private:
  std::unique_ptr<ModelWorkload> workload_;
  Llama& model_;
  int generated_length_;
  torch::Tensor prompts_;
  KvCache cache_;
  torch::Tensor first_token_;  // [batch, 1]: picked by the latest prefill
  torch::Tensor generated_;    // [batch, 1 + generated]
};

}  // namespace dvfslab::torch_backend
