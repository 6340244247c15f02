// AlexNet in torchvision's layout (the single-GPU variant of Krizhevsky's "one
// weird trick" paper): five convolutions, adaptive 6×6 pooling, three linear layers.
#include <torch/nn.h>

#include "workload/torch/conv_unit.hpp"
#include "workload/torch/max_pool.hpp"
#include "workload/torch/pooled_classifier.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

std::shared_ptr<MaxPool> pool() { return std::make_shared<MaxPool>(MaxPoolOptions{3, 2}); }

nn::Sequential features() {
  return nn::Sequential(conv_relu(3, 64, 11, 4, 2), pool(), conv_relu(64, 192, 5, 1, 2), pool(),
                        conv_relu(192, 384, 3, 1, 1), conv_relu(384, 256, 3, 1, 1),
                        conv_relu(256, 256, 3, 1, 1), pool());
}

nn::Sequential classifier() {
  return nn::Sequential(nn::Dropout(0.5), nn::Linear(256 * 6 * 6, 4096), nn::ReLU(true), nn::Dropout(0.5),
                        nn::Linear(4096, 4096), nn::ReLU(true), nn::Linear(4096, imagenet_classes));
}

}  // namespace

std::shared_ptr<Network> make_alexnet() {
  // Built one after the other: the seed then draws the same weights whatever order a
  // compiler evaluates function arguments in.
  auto feature_layers = features();
  auto classifier_layers = classifier();
  return std::make_shared<PooledClassifier>(std::move(feature_layers), 6, std::move(classifier_layers));
}

}  // namespace dvfslab::torch_backend
