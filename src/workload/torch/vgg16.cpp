// VGG-16 (configuration D, no batch norm) in torchvision's layout: thirteen 3×3
// convolutions in five stages, adaptive 7×7 pooling, three linear layers.
#include <torch/nn.h>

#include <array>

#include "workload/torch/conv_unit.hpp"
#include "workload/torch/max_pool.hpp"
#include "workload/torch/pooled_classifier.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

// Output channels per convolution; 0 marks a 2×2 max pool.
constexpr std::array<int, 18> stage_layout = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                              0,  512, 512, 512, 0,   512, 512, 512, 0};

nn::Sequential features() {
  nn::Sequential features;
  int channels = 3;
  for (const int width : stage_layout) {
    if (width == 0) {
      features->push_back(std::make_shared<MaxPool>(MaxPoolOptions{2, 2}));
    } else {
      features->push_back(conv_relu(channels, width, 3, 1, 1));
      channels = width;
    }
  }
  return features;
}

nn::Sequential classifier() {
  return nn::Sequential(nn::Linear(512 * 7 * 7, 4096), nn::ReLU(true), nn::Dropout(0.5),
                        nn::Linear(4096, 4096), nn::ReLU(true), nn::Dropout(0.5),
                        nn::Linear(4096, imagenet_classes));
}

}  // namespace

std::shared_ptr<Network> make_vgg16() {
  // Built one after the other: the seed then draws the same weights whatever order a
  // compiler evaluates function arguments in.
  auto feature_layers = features();
  auto classifier_layers = classifier();
  return std::make_shared<PooledClassifier>(std::move(feature_layers), 7, std::move(classifier_layers));
}

}  // namespace dvfslab::torch_backend
