// BERT-base (Hugging Face's BertModel with pooler): 12 post-norm encoder layers of
// width 768, 12 heads, 3072-wide GELU feed-forward, learned positions and token
// types. Training uses a masked-LM loss over every position, decoded through the
// word embeddings (no extra head parameters) — the MLM task without the 15 %
// masking, so the work per token is fixed.
#include <torch/nn.h>

#include <memory>
#include <string>
#include <vector>

#include "workload/torch/network.hpp"
#include "workload/torch/tied_head.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr int hidden_width = 768;
constexpr int heads = 12;
constexpr int feed_forward_width = 3072;
constexpr int layer_count = 12;
constexpr double dropout_rate = 0.1;
constexpr double norm_epsilon = 1e-12;

nn::LayerNorm layer_norm() { return nn::LayerNorm(nn::LayerNormOptions({hidden_width}).eps(norm_epsilon)); }

class EncoderLayer : public nn::Module {
 public:
  EncoderLayer() {
    query_ = register_module("query", nn::Linear(hidden_width, hidden_width));
    key_ = register_module("key", nn::Linear(hidden_width, hidden_width));
    value_ = register_module("value", nn::Linear(hidden_width, hidden_width));
    attention_output_ = register_module("attention_output", nn::Linear(hidden_width, hidden_width));
    attention_norm_ = register_module("attention_norm", layer_norm());
    intermediate_ = register_module("intermediate", nn::Linear(hidden_width, feed_forward_width));
    output_ = register_module("output", nn::Linear(feed_forward_width, hidden_width));
    output_norm_ = register_module("output_norm", layer_norm());
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto batch = x.size(0);
    const auto tokens = x.size(1);
    auto split_heads = [&](const torch::Tensor& t) {
      return t.view({batch, tokens, heads, hidden_width / heads}).transpose(1, 2);
    };
    const double dropout = is_training() ? dropout_rate : 0.0;
    auto context = attention(split_heads(dense(query_, x)), split_heads(dense(key_, x)),
                             split_heads(dense(value_, x)), /*causal=*/false, dropout);
    context = context.transpose(1, 2).reshape({batch, tokens, hidden_width});
    auto y = attention_norm_->forward(
        x + torch::dropout(dense(attention_output_, context), dropout, is_training()));
    auto feed_forward = dense(output_, torch::gelu(dense(intermediate_, y)));
    return output_norm_->forward(y + torch::dropout(feed_forward, dropout, is_training()));
  }

 private:
  nn::Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, attention_output_{nullptr};
  nn::Linear intermediate_{nullptr}, output_{nullptr};
  nn::LayerNorm attention_norm_{nullptr}, output_norm_{nullptr};
};

class BertBase : public Network {
 public:
  BertBase() {
    word_embeddings_ = register_module("word_embeddings", nn::Embedding(bert_vocabulary, hidden_width));
    position_embeddings_ =
        register_module("position_embeddings", nn::Embedding(bert_max_positions, hidden_width));
    token_type_embeddings_ = register_module("token_type_embeddings", nn::Embedding(2, hidden_width));
    embedding_norm_ = register_module("embedding_norm", layer_norm());
    for (int i = 0; i < layer_count; ++i) {
      layers_.push_back(register_module("layer" + std::to_string(i), std::make_shared<EncoderLayer>()));
    }
    pooler_ = register_module("pooler", nn::Linear(hidden_width, hidden_width));
    init_transformer_weights(*this);
  }

  // The pooled [CLS] vector, as BertModel returns it.
  torch::Tensor infer(const torch::Tensor& tokens) override {
    return torch::tanh(pooler_->forward(encode(tokens).select(1, 0)));
  }

  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& targets) override {
    return tied_head_cross_entropy(encode(tokens), word_embeddings_->weight, targets);
  }

 private:
  torch::Tensor encode(const torch::Tensor& tokens) {
    const auto positions = torch::arange(tokens.size(1), tokens.options());
    // Every token is of type 0 (single-segment input).
    auto x = word_embeddings_->forward(tokens) + position_embeddings_->forward(positions) +
             token_type_embeddings_->weight[0];
    x = torch::dropout(embedding_norm_->forward(x), dropout_rate, is_training());
    for (auto& layer : layers_) x = layer->forward(x);
    return x;
  }

  nn::Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr}, token_type_embeddings_{nullptr};
  nn::LayerNorm embedding_norm_{nullptr};
  std::vector<std::shared_ptr<EncoderLayer>> layers_;
  nn::Linear pooler_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_bert_base() { return std::make_shared<BertBase>(); }

}  // namespace dvfslab::torch_backend
