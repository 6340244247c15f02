#pragma once
// A Llama-style decoder (Hugging Face's LlamaForCausalLM layout): pre-norm blocks
// with RMSNorm, rotary position embeddings, grouped-query attention and a SwiGLU
// MLP, no biases, and an untied language-model head. Sizes come as presets.
#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {

struct LlamaConfig {
  std::string preset;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // heads / kv_heads query heads share one key/value head
  int mlp_hidden = 0;
  int vocabulary = 0;
  int max_positions = 0;  // rows of the rotary table: prompt plus generated tokens
  std::string origin;     // which published model the widths follow, and any reduction

  int head_dim() const { return hidden / heads; }
  // Computed from the widths, so the big presets' sizes are known without building them.
  std::int64_t parameter_count() const;
};

const std::vector<LlamaConfig>& llama_presets();
inline constexpr std::string_view default_llama_preset = "125m";
// Throws ConfigError listing the presets when `name` is unknown.
const LlamaConfig& find_llama_preset(std::string_view name);

// Keys and values of every layer for a batch, preallocated for `capacity`
// positions; `length` of them are filled.
struct KvCache {
  std::vector<torch::Tensor> keys, values;  // per layer [batch, kv_heads, capacity, head_dim]
  std::int64_t length = 0;
};

class Llama : public Network {
 public:
  explicit Llama(const LlamaConfig& config);

  const LlamaConfig& config() const { return config_; }
  // Logits of every position of `tokens` [batch, tokens], which follow the
  // `cache->length` positions already in the cache and are appended to it. A
  // cache takes either a whole prompt (when empty) or one token at a time.
  torch::Tensor forward(const torch::Tensor& tokens, KvCache* cache = nullptr);
  KvCache make_cache(std::int64_t batch, std::int64_t capacity, torch::ScalarType dtype) const;

  torch::Tensor infer(const torch::Tensor& tokens) override { return forward(tokens); }
  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& next_tokens) override;

 private:
  class Block;
  LlamaConfig config_;
  torch::nn::Embedding embeddings_{nullptr};
  std::vector<std::shared_ptr<Block>> blocks_;
  torch::Tensor final_norm_gain_;
  torch::nn::Linear head_{nullptr};
  // [max_positions, head_dim]: cos of each angle, and its sin negated on the first half.
  torch::Tensor rotary_cos_, rotary_signed_sin_;
};

std::shared_ptr<Llama> make_llama(const LlamaConfig& config);

}  // namespace dvfslab::torch_backend
