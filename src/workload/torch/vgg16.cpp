// VGG-16 (configuration D, no batch norm) in torchvision's layout: thirteen 3×3
// convolutions in five stages, adaptive 7×7 pooling, three linear layers.
#include <torch/nn.h>

#include <array>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

// Output channels per convolution; 0 marks a 2×2 max pool.
constexpr std::array<int, 18> stage_layout = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                                              512, 512, 512, 0, 512, 512, 512, 0};

class Vgg16 : public Network {
 public:
  Vgg16() {
    nn::Sequential features;
    int channels = 3;
    for (const int width : stage_layout) {
      if (width == 0) {
        features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
      } else {
        features->push_back(nn::Conv2d(nn::Conv2dOptions(channels, width, 3).padding(1)));
        features->push_back(nn::ReLU(true));
        channels = width;
      }
    }
    features_ = register_module("features", features);
    pool_ = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({7, 7})));
    classifier_ = register_module(
        "classifier", nn::Sequential(nn::Linear(512 * 7 * 7, 4096), nn::ReLU(true), nn::Dropout(0.5),
                                     nn::Linear(4096, 4096), nn::ReLU(true), nn::Dropout(0.5),
                                     nn::Linear(4096, imagenet_classes)));
  }

  torch::Tensor infer(const torch::Tensor& images) override {
    return classifier_->forward(torch::flatten(pool_->forward(features_->forward(images)), 1));
  }

  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) override {
    return torch::nn::functional::cross_entropy(infer(images), labels);
  }

 private:
  nn::Sequential features_{nullptr};
  nn::AdaptiveAvgPool2d pool_{nullptr};
  nn::Sequential classifier_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_vgg16() { return std::make_shared<Vgg16>(); }

}  // namespace dvfslab::torch_backend
