#pragma once
// The networks behind the LibTorch workloads. Each architecture follows its
// reference definition (torchvision for the CNNs, Hugging Face for BERT and
// GPT-2) layer for layer, so parameter counts match the published ones.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <memory>

#include "workload/torch/autocast_operand.hpp"
#include "workload/torch/biased_linear.hpp"

namespace dvfslab::torch_backend {

class Network : public torch::nn::Module {
 public:
  // What inference produces: class logits for the CNNs, next-token logits for
  // GPT-2, the pooled [CLS] vector for BERT.
  virtual torch::Tensor infer(const torch::Tensor& input) = 0;
  // The training objective on one batch (mean cross-entropy).
  virtual torch::Tensor loss(const torch::Tensor& input, const torch::Tensor& target) = 0;
};

inline constexpr int imagenet_classes = 1000;
inline constexpr int bert_vocabulary = 30522;
inline constexpr int bert_max_positions = 512;
inline constexpr int gpt2_vocabulary = 50257;
inline constexpr int gpt2_max_positions = 1024;

// Hugging Face's initialisation of the transformers: weight matrices and
// embeddings N(0, 0.02), biases zero, layer-norm gains one.
void init_transformer_weights(torch::nn::Module& module);

// A dense layer applied to a batch of sequences. nn::Linear's forward adds the
// bias in a separate kernel when the input has more than two dimensions; the ATen
// operator folds the sequence into one GEMM with the bias fused, as PyTorch's
// F.linear does (measured: docs/workloads.md, GPT-2 small). Its input and weight
// arrive in autocast's type (autocast_operand.hpp); the bias keeps its own type and
// gets its gradient in it (biased_linear.hpp).
inline torch::Tensor dense(const torch::nn::Linear& layer, const torch::Tensor& input) {
  return biased_linear(autocast_operand(input), autocast_operand(layer->weight), layer->bias);
}

std::shared_ptr<Network> make_alexnet();
std::shared_ptr<Network> make_vgg16();
std::shared_ptr<Network> make_googlenet();
std::shared_ptr<Network> make_resnet50();
std::shared_ptr<Network> make_bert_base();
std::shared_ptr<Network> make_gpt2_small();

}  // namespace dvfslab::torch_backend
