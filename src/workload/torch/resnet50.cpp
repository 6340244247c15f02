// ResNet-50 in torchvision's layout (v1.5: the stride sits on the 3×3 convolution
// of each bottleneck): stages of 3, 4, 6 and 3 bottlenecks with expansion 4.
#include <torch/nn.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "workload/torch/conv_unit.hpp"
#include "workload/torch/max_pool.hpp"
#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr int bottleneck_expansion = 4;
constexpr double batch_norm_eps = 1e-5;

// A convolution followed by batch norm, and by ReLU when `relu`.
std::shared_ptr<ConvUnit> conv_bn(int in, int out, int kernel, std::int64_t stride, std::int64_t padding,
                                  bool relu) {
  return std::make_shared<ConvUnit>(
      ConvUnitOptions{in, out, kernel, {stride, padding}, batch_norm_eps, relu});
}

class Bottleneck : public nn::Module {
 public:
  Bottleneck(int in, int width, int stride) {
    const int out = width * bottleneck_expansion;
    reduce_ = register_module("conv1", conv_bn(in, width, 1, 1, 0, true));
    spatial_ = register_module("conv2", conv_bn(width, width, 3, stride, 1, true));
    // Its ReLU comes after the residual is added (forward_add_relu).
    expand_ = register_module("conv3", conv_bn(width, out, 1, 1, 0, false));
    if (stride != 1 || in != out)
      shortcut_ = register_module("downsample", conv_bn(in, out, 1, stride, 0, false));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto residual = shortcut_ ? shortcut_->forward(x) : x;
    return expand_->forward_add_relu(spatial_->forward(reduce_->forward(x)), residual);
  }

 private:
  std::shared_ptr<ConvUnit> reduce_, spatial_, expand_, shortcut_;
};

class ResNet50 : public Network {
 public:
  ResNet50() {
    stem_ = register_module("conv1", conv_bn(3, 64, 7, 2, 3, true));
    stem_pool_ = register_module("maxpool", std::make_shared<MaxPool>(MaxPoolOptions{3, 2, 1}));
    constexpr std::array<int, 4> blocks_per_stage = {3, 4, 6, 3};
    constexpr std::array<int, 4> stage_widths = {64, 128, 256, 512};
    int channels = 64;
    for (std::size_t stage = 0; stage < blocks_per_stage.size(); ++stage) {
      for (int block = 0; block < blocks_per_stage[stage]; ++block) {
        const int stride = (stage > 0 && block == 0) ? 2 : 1;
        const auto name = "layer" + std::to_string(stage + 1) + "_" + std::to_string(block);
        blocks_.push_back(
            register_module(name, std::make_shared<Bottleneck>(channels, stage_widths[stage], stride)));
        channels = stage_widths[stage] * bottleneck_expansion;
      }
    }
    fc_ = register_module("fc", nn::Linear(channels, imagenet_classes));
  }

  torch::Tensor infer(const torch::Tensor& images) override {
    auto x = stem_pool_->forward(stem_->forward(images));
    for (auto& block : blocks_) x = block->forward(x);
    return fc_->forward(torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1));
  }

  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) override {
    return torch::nn::functional::cross_entropy(infer(images), labels);
  }

 private:
  std::shared_ptr<ConvUnit> stem_;
  std::shared_ptr<MaxPool> stem_pool_;
  std::vector<std::shared_ptr<Bottleneck>> blocks_;
  nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_resnet50() { return std::make_shared<ResNet50>(); }

}  // namespace dvfslab::torch_backend
