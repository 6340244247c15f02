// AlexNet in torchvision's layout (the single-GPU variant of Krizhevsky's "one
// weird trick" paper): five convolutions, adaptive 6×6 pooling, three linear layers.
#include <torch/nn.h>

#include "workload/torch/pooled_classifier.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

nn::Sequential features() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), nn::ReLU(true),
                        nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                        nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)), nn::ReLU(true),
                        nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                        nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)), nn::ReLU(true),
                        nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)), nn::ReLU(true),
                        nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)), nn::ReLU(true),
                        nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)));
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
