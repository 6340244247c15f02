// GPT-2 small (Hugging Face's GPT2LMHeadModel): 12 pre-norm decoder blocks of
// width 768, 12 heads, fused q/k/v projection, tanh-approximated GELU, learned
// positions, and the language-model head tied to the token embeddings.
#include <torch/nn.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workload/torch/layer_fusion.hpp"
#include "workload/torch/layer_norm_operand.hpp"
#include "workload/torch/network.hpp"
#include "workload/torch/tied_head.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr int hidden_width = 768;
constexpr int heads = 12;
constexpr int layer_count = 12;
constexpr double dropout_rate = 0.1;
constexpr double norm_epsilon = 1e-5;

nn::LayerNorm layer_norm() { return nn::LayerNorm(nn::LayerNormOptions({hidden_width}).eps(norm_epsilon)); }

// The residual stream as a block receives it: the stream, and the previous block's
// MLP branch not yet added, so that the add runs in the passes of the norm that
// follows it (layer_norm_operand.hpp). The first block gets no branch.
struct PendingResidual {
  torch::Tensor stream, branch;
};

// {the stream with its branch added, the norm of that as the next product's operand}.
std::pair<torch::Tensor, torch::Tensor> add_and_norm(const PendingResidual& residual, nn::LayerNorm norm) {
  if (!residual.branch.defined())
    return {residual.stream, layer_norm_operand(std::move(norm), residual.stream)};
  return residual_layer_norm_operand(residual.stream, residual.branch, std::move(norm));
}

class DecoderBlock : public nn::Module, public FreezableBlock {
 public:
  DecoderBlock() {
    attention_norm_ = register_module("ln_1", layer_norm());
    qkv_ = register_module("c_attn", nn::Linear(hidden_width, 3 * hidden_width));
    attention_projection_ = register_module("c_proj", nn::Linear(hidden_width, hidden_width));
    mlp_norm_ = register_module("ln_2", layer_norm());
    mlp_in_ = register_module("c_fc", nn::Linear(hidden_width, 4 * hidden_width));
    mlp_out_ = register_module("mlp_c_proj", nn::Linear(4 * hidden_width, hidden_width));
  }

  PendingResidual forward(const PendingResidual& input) {
    const auto batch = input.stream.size(0);
    const auto tokens = input.stream.size(1);
    const double dropout = is_training() ? dropout_rate : 0.0;
    const auto [x, attention_input] = add_and_norm(input, attention_norm_);
    // Split along the features rather than indexed out of one permuted view: the
    // backward then joins the three gradients with one concatenation, where
    // indexing zero-fills a buffer and copies each gradient into it with a strided
    // copy (fills and strided copies led GPT-2's training profile on the H200).
    const auto qkv = dense(qkv_, attention_input).chunk(3, -1);
    const auto heads_of = [&](const torch::Tensor& y) {
      return y.view({batch, tokens, heads, hidden_width / heads}).transpose(1, 2);
    };
    auto context = attention(heads_of(qkv[0]), heads_of(qkv[1]), heads_of(qkv[2]), /*causal=*/true, dropout);
    context = context.transpose(1, 2).reshape({batch, tokens, hidden_width});
    const auto attention_branch =
        torch::dropout(dense(attention_projection_, context), dropout, is_training());
    const auto [y, mlp_input] = residual_layer_norm_operand(x, attention_branch, mlp_norm_);
    auto mlp = dense(mlp_out_, gelu_in_gemm_ ? linear_tanh_gelu(mlp_input, mlp_in_->weight, mlp_in_->bias)
                                             : torch::gelu(dense(mlp_in_, mlp_input), "tanh"));
    return {y, torch::dropout(mlp, dropout, is_training())};
  }

  // The linear layers are stored in the computing dtype by now (freeze_for_inference).
  void freeze(torch::ScalarType /*dtype*/) override { gelu_in_gemm_ = true; }

 private:
  bool gelu_in_gemm_ = false;
  nn::LayerNorm attention_norm_{nullptr}, mlp_norm_{nullptr};
  nn::Linear qkv_{nullptr}, attention_projection_{nullptr}, mlp_in_{nullptr}, mlp_out_{nullptr};
};

class Gpt2Small : public Network {
 public:
  Gpt2Small() {
    token_embeddings_ = register_module("wte", nn::Embedding(gpt2_vocabulary, hidden_width));
    position_embeddings_ = register_module("wpe", nn::Embedding(gpt2_max_positions, hidden_width));
    for (int i = 0; i < layer_count; ++i) {
      blocks_.push_back(
          register_module(std::string("h").append(std::to_string(i)), std::make_shared<DecoderBlock>()));
    }
    final_norm_ = register_module("ln_f", layer_norm());
    init_transformer_weights(*this);
  }

  // Next-token logits for every position. The head shares the token-embedding
  // matrix, so it adds no parameters.
  torch::Tensor infer(const torch::Tensor& tokens) override {
    return tied_head_logits(final_hidden(tokens), token_embeddings_->weight);
  }

  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& next_tokens) override {
    return tied_head_cross_entropy(final_hidden(tokens), token_embeddings_->weight, next_tokens);
  }

 private:
  torch::Tensor final_hidden(const torch::Tensor& tokens) {
    const auto positions = torch::arange(tokens.size(1), tokens.options());
    PendingResidual residual{
        torch::dropout(token_embeddings_->forward(tokens) + position_embeddings_->forward(positions),
                       dropout_rate, is_training()),
        torch::Tensor()};
    for (auto& block : blocks_) residual = block->forward(residual);
    return add_and_norm(residual, final_norm_).second;
  }

  nn::Embedding token_embeddings_{nullptr}, position_embeddings_{nullptr};
  std::vector<std::shared_ptr<DecoderBlock>> blocks_;
  nn::LayerNorm final_norm_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_gpt2_small() { return std::make_shared<Gpt2Small>(); }

}  // namespace dvfslab::torch_backend
