// GoogLeNet (Inception v1) in torchvision's layout: every convolution is followed
// by batch norm (eps 1e-3) and ReLU, the "5×5" branch uses a 3×3 kernel as
// torchvision's does, and the auxiliary classifiers are left out.
#include <torch/nn.h>

#include <memory>
#include <string>
#include <vector>

#include "workload/torch/conv_unit.hpp"
#include "workload/torch/max_pool.hpp"
#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {
namespace {

namespace nn = torch::nn;

constexpr double batch_norm_eps = 0.001;

// torchvision's BasicConv2d: convolution, batch norm, ReLU.
std::shared_ptr<ConvUnit> conv_bn_relu(int in, int out, int kernel, std::int64_t stride = 1,
                                       std::int64_t padding = 0) {
  return std::make_shared<ConvUnit>(
      ConvUnitOptions{in, out, kernel, {stride, padding}, batch_norm_eps, true});
}

struct InceptionWidths {
  int in, branch1x1, reduce3x3, branch3x3, reduce5x5, branch5x5, pool_projection;
};

class Inception : public nn::Module {
 public:
  explicit Inception(const InceptionWidths& w) {
    branch1_ = register_module("branch1", conv_bn_relu(w.in, w.branch1x1, 1));
    branch2_reduce_ = register_module("branch2_reduce", conv_bn_relu(w.in, w.reduce3x3, 1));
    branch2_ = register_module("branch2", conv_bn_relu(w.reduce3x3, w.branch3x3, 3, 1, 1));
    branch3_reduce_ = register_module("branch3_reduce", conv_bn_relu(w.in, w.reduce5x5, 1));
    branch3_ = register_module("branch3", conv_bn_relu(w.reduce5x5, w.branch5x5, 3, 1, 1));
    branch4_pool_ = register_module("branch4_pool", std::make_shared<MaxPool>(MaxPoolOptions{3, 1, 1, true}));
    branch4_ = register_module("branch4", conv_bn_relu(w.in, w.pool_projection, 1));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat(
        {branch1_->forward(x), branch2_->forward(branch2_reduce_->forward(x)),
         branch3_->forward(branch3_reduce_->forward(x)), branch4_->forward(branch4_pool_->forward(x))},
        1);
  }

 private:
  std::shared_ptr<ConvUnit> branch1_, branch2_reduce_, branch2_, branch3_reduce_, branch3_, branch4_;
  std::shared_ptr<MaxPool> branch4_pool_;
};

std::shared_ptr<MaxPool> stem_pool(int kernel) {
  return std::make_shared<MaxPool>(MaxPoolOptions{kernel, 2, 0, true});
}

class GoogLeNet : public Network {
 public:
  GoogLeNet() {
    conv1_ = register_module("conv1", conv_bn_relu(3, 64, 7, 2, 3));
    pool1_ = register_module("maxpool1", stem_pool(3));
    conv2_ = register_module("conv2", conv_bn_relu(64, 64, 1));
    conv3_ = register_module("conv3", conv_bn_relu(64, 192, 3, 1, 1));
    pool2_ = register_module("maxpool2", stem_pool(3));
    add_inception("inception3a", {192, 64, 96, 128, 16, 32, 32});
    add_inception("inception3b", {256, 128, 128, 192, 32, 96, 64});
    pool3_ = register_module("maxpool3", stem_pool(3));
    add_inception("inception4a", {480, 192, 96, 208, 16, 48, 64});
    add_inception("inception4b", {512, 160, 112, 224, 24, 64, 64});
    add_inception("inception4c", {512, 128, 128, 256, 24, 64, 64});
    add_inception("inception4d", {512, 112, 144, 288, 32, 64, 64});
    add_inception("inception4e", {528, 256, 160, 320, 32, 128, 128});
    pool4_ = register_module("maxpool4", stem_pool(2));
    add_inception("inception5a", {832, 256, 160, 320, 32, 128, 128});
    add_inception("inception5b", {832, 384, 192, 384, 48, 128, 128});
    dropout_ = register_module("dropout", nn::Dropout(0.2));
    fc_ = register_module("fc", nn::Linear(1024, imagenet_classes));
  }

  torch::Tensor infer(const torch::Tensor& images) override {
    auto x = pool2_->forward(conv3_->forward(conv2_->forward(pool1_->forward(conv1_->forward(images)))));
    x = inceptions_[1]->forward(inceptions_[0]->forward(x));
    x = pool3_->forward(x);
    for (std::size_t i = 2; i < 7; ++i) x = inceptions_[i]->forward(x);
    x = pool4_->forward(x);
    x = inceptions_[8]->forward(inceptions_[7]->forward(x));
    x = torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1);
    return fc_->forward(dropout_->forward(x));
  }

  torch::Tensor loss(const torch::Tensor& images, const torch::Tensor& labels) override {
    return torch::nn::functional::cross_entropy(infer(images), labels);
  }

 private:
  void add_inception(const std::string& name, const InceptionWidths& widths) {
    inceptions_.push_back(register_module(name, std::make_shared<Inception>(widths)));
  }

  std::shared_ptr<ConvUnit> conv1_, conv2_, conv3_;
  std::shared_ptr<MaxPool> pool1_, pool2_, pool3_, pool4_;
  std::vector<std::shared_ptr<Inception>> inceptions_;
  nn::Dropout dropout_{nullptr};
  nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_googlenet() { return std::make_shared<GoogLeNet>(); }

}  // namespace dvfslab::torch_backend
