// ResNet-50 in torchvision's layout (v1.5: the stride sits on the 3×3 convolution
// of each bottleneck): stages of 3, 4, 6 and 3 bottlenecks with expansion 4.
#include <torch/nn.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr int bottleneck_expansion = 4;

nn::Conv2d conv(int in, int out, int kernel, int stride = 1, int padding = 0) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

class Bottleneck : public nn::Module {
 public:
  Bottleneck(int in, int width, int stride) {
    const int out = width * bottleneck_expansion;
    conv1_ = register_module("conv1", conv(in, width, 1));
    bn1_ = register_module("bn1", nn::BatchNorm2d(width));
    conv2_ = register_module("conv2", conv(width, width, 3, stride, 1));
    bn2_ = register_module("bn2", nn::BatchNorm2d(width));
    conv3_ = register_module("conv3", conv(width, out, 1));
    bn3_ = register_module("bn3", nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      shortcut_ = register_module("downsample", nn::Sequential(conv(in, out, 1, stride), nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = torch::relu(bn2_->forward(conv2_->forward(y)));
    y = bn3_->forward(conv3_->forward(y));
    return torch::relu(y + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  nn::Sequential shortcut_{nullptr};
};

class ResNet50 : public Network {
 public:
  ResNet50() {
    conv1_ = register_module("conv1", conv(3, 64, 7, 2, 3));
    bn1_ = register_module("bn1", nn::BatchNorm2d(64));
    constexpr std::array<int, 4> blocks_per_stage = {3, 4, 6, 3};
    constexpr std::array<int, 4> stage_widths = {64, 128, 256, 512};
    int channels = 64;
    for (std::size_t stage = 0; stage < blocks_per_stage.size(); ++stage) {
      for (int block = 0; block < blocks_per_stage[stage]; ++block) {
        const int stride = (stage > 0 && block == 0) ? 2 : 1;
        const auto name = "layer" + std::to_string(stage + 1) + "_" + std::to_string(block);
        blocks_.push_back(register_module(name, std::make_shared<Bottleneck>(channels, stage_widths[stage], stride)));
        channels = stage_widths[stage] * bottleneck_expansion;
      }
    }
    fc_ = register_module("fc", nn::Linear(channels, imagenet_classes));
  }

  torch::Tensor infer(const torch::Tensor& images) override {
    auto x = torch::relu(bn1_->forward(conv1_->forward(images)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& block : blocks_) x = block->forward(x);
    return fc_->forward(torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1));
  }

  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) override {
    return torch::nn::functional::cross_entropy(infer(images), labels);
  }

 private:
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  std::vector<std::shared_ptr<Bottleneck>> blocks_;
  nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_resnet50() { return std::make_shared<ResNet50>(); }

}  // namespace dvfslab::torch_backend
