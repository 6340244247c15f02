#include "workload/torch/llama.hpp"

#include <torch/nn.h>

#include <string>

#include "dvfslab/error.hpp"
#include "workload/torch/rotary.hpp"
#include "workload/torch/swiglu.hpp"
#include "workload/torch/token_loss.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr double norm_epsilon = 1e-5;
constexpr double rotary_base = 10000.0;

nn::Linear projection(int in, int out) { return nn::Linear(nn::LinearOptions(in, out).bias(false)); }

}  // namespace

std::int64_t LlamaConfig::parameter_count() const {
  const std::int64_t h = hidden, kv_width = static_cast<std::int64_t>(kv_heads) * head_dim();
  const std::int64_t per_layer = 2 * h + 2 * h * h + 2 * h * kv_width + 3 * h * mlp_hidden;
  return 2 * static_cast<std::int64_t>(vocabulary) * h + h + layers * per_layer;
}

const std::vector<LlamaConfig>& llama_presets() {
  static const std::vector<LlamaConfig> presets = {
      {"tiny", 2, 64, 4, 2, 176, 256, 512, "a test size: 2 layers of width 64, 4 heads, 2 KV heads"},
      {"125m", 12, 768, 12, 4, 2048, 32000, 4096,
       "GPT-2 small's depth and width with 4 KV heads and Llama 2's 32,000-token vocabulary"},
      {"1b", 16, 2048, 32, 8, 8192, 32000, 4096,
       "Llama 3.2 1B's widths with Llama 2's 32,000-token vocabulary and an untied head"},
      {"7b", 16, 4096, 32, 8, 11008, 32000, 4096,
       "Llama 2 7B's widths with 8 KV heads and 16 of its 32 layers, so AdamW training fits one GPU"},
  };
  return presets;
}

const LlamaConfig& find_llama_preset(std::string_view name) {
  std::string names;
  for (const auto& preset : llama_presets()) {
    if (preset.preset == name) return preset;
    names += (names.empty() ? "" : ", ") + preset.preset;
  }
  throw ConfigError("unknown llama preset '" + std::string(name) + "': choose one of " + names);
}

class Llama::Block : public nn::Module {
 public:
  explicit Block(const LlamaConfig& config) : config_(config) {
    const int kv_width = config.kv_heads * config.head_dim();
    attention_norm_gain_ = register_parameter("input_layernorm", torch::ones({config.hidden}));
    // The projections that read the same normalised input are one weight each (rows:
    // queries, keys, values; gate, up), as Phi-3's qkv_proj and gate_up_proj: one
    // GEMM instead of three and two, and one autocast cast of its input.
    query_key_value_ = register_module("qkv_proj", projection(config.hidden, config.hidden + 2 * kv_width));
    output_ = register_module("o_proj", projection(config.hidden, config.hidden));
    mlp_norm_gain_ = register_parameter("post_attention_layernorm", torch::ones({config.hidden}));
    gate_up_ = register_module("gate_up_proj", projection(config.hidden, 2 * config.mlp_hidden));
    down_ = register_module("down_proj", projection(config.mlp_hidden, config.hidden));
  }

  // `cached_keys`/`cached_values` are this layer's cache (undefined without one),
  // of which the first `start` positions are filled.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& signed_sin,
                        const torch::Tensor& cached_keys, const torch::Tensor& cached_values,
                        std::int64_t start) {
    const auto batch = x.size(0), tokens = x.size(1);
    const auto heads_of = [&](const torch::Tensor& y, int heads) {
      return y.view({batch, tokens, heads, config_.head_dim()});
    };
    const std::int64_t kv_width = static_cast<std::int64_t>(config_.kv_heads) * config_.head_dim();
    const auto projected = dense(query_key_value_, rms_norm(x, attention_norm_gain_, norm_epsilon))
                               .split_with_sizes({config_.hidden, kv_width, kv_width}, -1);
    // Rotated in the projection's [batch, tokens, heads, head_dim] layout, which
    // attention then reads through a transposed view.
    const auto query =
        rotary_embedding(heads_of(projected[0], config_.heads), cos, signed_sin).transpose(1, 2);
    auto key = rotary_embedding(heads_of(projected[1], config_.kv_heads), cos, signed_sin).transpose(1, 2);
    auto value = heads_of(projected[2], config_.kv_heads).transpose(1, 2);
    if (cached_keys.defined()) {
      cached_keys.narrow(2, start, tokens).copy_(key);
      cached_values.narrow(2, start, tokens).copy_(value);
      key = cached_keys.narrow(2, 0, start + tokens);
      value = cached_values.narrow(2, 0, start + tokens);
    }
    // Without earlier positions the queries and keys are the same tokens, where
    // the causal mask applies; a single new token may see every cached one.
    auto context = attention(query, key, value, /*causal=*/start == 0, /*dropout=*/0.0);
    context = context.transpose(1, 2).reshape({batch, tokens, config_.hidden});
    const auto y = x + dense(output_, context);
    const auto gated = swiglu(dense(gate_up_, rms_norm(y, mlp_norm_gain_, norm_epsilon)));
    return y + dense(down_, gated);
  }

 private:
  LlamaConfig config_;
  torch::Tensor attention_norm_gain_, mlp_norm_gain_;
  nn::Linear query_key_value_{nullptr}, output_{nullptr};
  nn::Linear gate_up_{nullptr}, down_{nullptr};
};

Llama::Llama(const LlamaConfig& config) : config_(config) {
  embeddings_ = register_module("embed_tokens", nn::Embedding(config.vocabulary, config.hidden));
  for (int i = 0; i < config.layers; ++i) {
    blocks_.push_back(register_module("layers" + std::to_string(i), std::make_shared<Block>(config)));
  }
  final_norm_gain_ = register_parameter("norm", torch::ones({config.hidden}));
  head_ = register_module("lm_head", projection(config.hidden, config.vocabulary));
  const auto dim = config.head_dim();
  const auto inverse_frequencies =
      torch::pow(rotary_base, -torch::arange(0, dim, 2, torch::kDouble) / dim).to(torch::kFloat);
  const auto angles = torch::outer(torch::arange(config.max_positions, torch::kFloat), inverse_frequencies);
  rotary_cos_ = register_buffer("rotary_cos", torch::cat({angles.cos(), angles.cos()}, -1));
  rotary_signed_sin_ = register_buffer("rotary_signed_sin", torch::cat({-angles.sin(), angles.sin()}, -1));
  init_transformer_weights(*this);
}

torch::Tensor Llama::forward(const torch::Tensor& tokens, KvCache* cache) {
  const std::int64_t start = cache != nullptr ? cache->length : 0;
  const auto count = tokens.size(1);
  if (start > 0 && count != 1) throw Error("a filled KV cache takes one token at a time");
  if (start + count > config_.max_positions) {
    throw ConfigError("llama " + config_.preset + " takes at most " + std::to_string(config_.max_positions) +
                      " positions");
  }
  const auto cos = rotary_cos_.narrow(0, start, count);
  const auto signed_sin = rotary_signed_sin_.narrow(0, start, count);
  auto x = embeddings_->forward(tokens);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    const torch::Tensor none;
    x = blocks_[i]->forward(x, cos, signed_sin, cache != nullptr ? cache->keys[i] : none,
                            cache != nullptr ? cache->values[i] : none, start);
  }
  if (cache != nullptr) cache->length += count;
  return dense(head_, rms_norm(x, final_norm_gain_, norm_epsilon));
}

KvCache Llama::make_cache(std::int64_t batch, std::int64_t capacity, torch::ScalarType dtype) const {
  KvCache cache;
  const auto options = rotary_cos_.options().dtype(dtype);
  for (int i = 0; i < config_.layers; ++i) {
    cache.keys.push_back(torch::empty({batch, config_.kv_heads, capacity, config_.head_dim()}, options));
    cache.values.push_back(torch::empty({batch, config_.kv_heads, capacity, config_.head_dim()}, options));
  }
  return cache;
}

torch::Tensor Llama::loss(const torch::Tensor& tokens, const torch::Tensor& next_tokens) {
  return mean_token_cross_entropy(forward(tokens), next_tokens);
}

std::shared_ptr<Llama> make_llama(const LlamaConfig& config) { return std::make_shared<Llama>(config); }

}  // namespace dvfslab::torch_backend
