#pragma once
// The shape AlexNet and VGG-16 share in torchvision: convolutional features, an
// adaptive average pool to a fixed grid, and a stack of linear layers.
#include <torch/nn.h>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {

class PooledClassifier : public Network {
 public:
  // Registers the parts under torchvision's names ("features", "avgpool", "classifier").
  PooledClassifier(torch::nn::Sequential features, int pooled_size, torch::nn::Sequential classifier);

  torch::Tensor infer(const torch::Tensor& images) override;
  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) override;

 private:
  torch::nn::Sequential features_{nullptr};
  torch::nn::AdaptiveAvgPool2d pool_{nullptr};
  torch::nn::Sequential classifier_{nullptr};
};

}  // namespace dvfslab::torch_backend
