// AlexNet in torchvision's layout (the single-GPU variant of Krizhevsky's "one
// weird trick" paper): five convolutions, adaptive 6×6 pooling, three linear layers.
#include <torch/nn.h>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

class AlexNet : public Network {
 public:
  AlexNet() {
    features_ = register_module(
        "features",
        nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), nn::ReLU(true),
                       nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                       nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)), nn::ReLU(true),
                       nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                       nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)), nn::ReLU(true),
                       nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)), nn::ReLU(true),
                       nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)), nn::ReLU(true),
                       nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2))));
    pool_ = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({6, 6})));
    classifier_ = register_module(
        "classifier", nn::Sequential(nn::Dropout(0.5), nn::Linear(256 * 6 * 6, 4096), nn::ReLU(true),
                                     nn::Dropout(0.5), nn::Linear(4096, 4096), nn::ReLU(true),
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

std::shared_ptr<Network> make_alexnet() { return std::make_shared<AlexNet>(); }

}  // namespace dvfslab::torch_backend
