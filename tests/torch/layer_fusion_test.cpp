// Fused convolution units compute what the layer-by-layer networks compute: batch
// norm folded for inference, the hand-written convolution + bias + ReLU backward,
// and (on a CUDA build with a GPU) the cuDNN fused kernels against ATen's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/conv_unit.hpp"
#include "workload/torch/fused_conv.hpp"
#include "workload/torch/layer_fusion.hpp"
#include "workload/torch/model_catalog.hpp"
#include "workload/torch/model_workload.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

// Convolutions per network: every one of them becomes a fused unit.
const std::map<std::string, int> convolutions = {
    {"alexnet", 5}, {"vgg16", 13}, {"googlenet", 57}, {"resnet50", 53}};

int image_side(const std::string& name) { return name == "alexnet" ? 64 : 32; }

// Batch-norm statistics and affine parameters away from their initial 0/1, so
// that folding them is not a no-op.
void randomize_batch_norms(torch::nn::Module& network) {
  torch::NoGradGuard no_grad;
  for (const auto& module : network.modules()) {
    if (auto* batch_norm = module->as<torch::nn::BatchNorm2d>()) {
      batch_norm->running_mean.uniform_(-0.5, 0.5);
      batch_norm->running_var.uniform_(0.5, 2.0);
      batch_norm->weight.uniform_(0.5, 1.5);
      batch_norm->bias.uniform_(-0.2, 0.2);
    }
  }
}

double relative_difference(const torch::Tensor& actual, const torch::Tensor& expected) {
  return ((actual.to(torch::kFloat) - expected.to(torch::kFloat)).abs().max() /
          expected.to(torch::kFloat).abs().max())
      .item<double>();
}

TEST(LayerFusion, FrozenInferenceMatchesTheLayerByLayerNetwork) {
  for (const auto& [name, count] : convolutions) {
    torch::manual_seed(7);
    auto network = find_model(name).build();
    randomize_batch_norms(*network);
    network->eval();
    torch::NoGradGuard no_grad;
    const auto images = torch::randn({2, 3, image_side(name), image_side(name)});
    const auto reference = network->infer(images);
    EXPECT_EQ(freeze_for_inference(*network, torch::kFloat), count) << name;
    // The frozen units must run on their own copies: wiping the originals changes nothing.
    for (const auto& module : network->modules()) {
      if (auto* unit = module->as<ConvUnit>()) {
        for (auto& parameter : unit->parameters()) parameter.zero_();
      }
    }
    const auto frozen = network->infer(images);
    EXPECT_LT(relative_difference(frozen, reference), 1e-4) << name;
  }
}

TEST(LayerFusion, FreezingStoresWeightsInTheComputePrecision) {
  auto network = find_model("alexnet").build();
  network->eval();
  freeze_for_inference(*network, torch::kBFloat16);
  for (const auto& module : network->modules()) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      EXPECT_EQ(linear->weight.scalar_type(), torch::kBFloat16);
    }
  }
  torch::NoGradGuard no_grad;
  AutocastScope autocast(torch::kCPU, torch::kBFloat16);
  const auto logits = network->infer(torch::randn({2, 3, 64, 64}));
  EXPECT_EQ(logits.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(logits.sizes().vec(), (std::vector<std::int64_t>{2, 1000}));
}

TEST(LayerFusion, FrozenNetworksRefuseToTrain) {
  auto network = find_model("resnet50").build();
  EXPECT_THROW(freeze_for_inference(*network, torch::kFloat), Error) << "training mode must be refused";
  network->eval();
  freeze_for_inference(*network, torch::kFloat);
  network->train();
  EXPECT_THROW(network->loss(torch::randn({2, 3, 32, 32}), torch::tensor({1, 2})), Error);
}

TEST(LayerFusion, TrainableConvBiasReluMatchesAutograd) {
  torch::manual_seed(3);
  for (const bool input_needs_gradient : {true, false}) {
    const auto input = torch::randn({2, 4, 9, 9}).requires_grad_(input_needs_gradient);
    const auto weight = torch::randn({6, 4, 3, 3}).requires_grad_();
    const auto bias = torch::randn({6}).requires_grad_();
    const auto upstream = torch::randn({2, 6, 5, 5});
    const ConvGeometry geometry{2, 1};

    const auto reference = torch::relu(torch::conv2d(input, weight, bias, 2, 1));
    const auto reference_gradients = torch::autograd::grad({reference}, {weight, bias}, {upstream}, true);
    const auto reference_input_gradient =
        input_needs_gradient ? torch::autograd::grad({reference}, {input}, {upstream})[0] : torch::Tensor();

    const auto fused = trainable_conv_bias_relu(input, weight, bias, geometry);
    ASSERT_TRUE(torch::allclose(fused, reference, 1e-5, 1e-6));
    ASSERT_GT((reference == 0).sum().item<std::int64_t>(), 0)
        << "the ReLU must cut somewhere for the test to bite";
    fused.backward(upstream);
    EXPECT_TRUE(torch::allclose(weight.grad(), reference_gradients[0], 1e-4, 1e-5));
    EXPECT_TRUE(torch::allclose(bias.grad(), reference_gradients[1], 1e-4, 1e-5));
    if (input_needs_gradient) {
      EXPECT_TRUE(torch::allclose(input.grad(), reference_input_gradient, 1e-4, 1e-5));
    } else {
      EXPECT_FALSE(input.grad().defined());
    }
  }
}

TEST(LayerFusion, WorkloadsReportTheirFusedUnits) {
  WorkloadOptions options;
  options.torch_device = "cpu";
  options.image_size = 32;
  auto frozen = create_torch_workload(Case{"resnet50", 1, Mode::infer, Precision::fp32}, options);
  EXPECT_EQ(frozen->run_info().fused_layers, 53);
  auto training = create_torch_workload(Case{"resnet50", 1, Mode::train, Precision::fp32}, options);
  EXPECT_EQ(training->run_info().fused_layers, 0) << "fused training runs on CUDA only";
  options.fused_layers = false;
  auto layer_by_layer = create_torch_workload(Case{"resnet50", 1, Mode::infer, Precision::fp32}, options);
  EXPECT_EQ(layer_by_layer->run_info().fused_layers, 0);
  EXPECT_EQ(frozen->run_info().own_kernel_pools, 0) << "the own pooling kernels run on CUDA only";
}

TEST(LayerFusion, EveryMaxPoolOfTheCnnsCanRunTheOwnKernels) {
  const std::map<std::string, int> max_pools = {
      {"alexnet", 3}, {"vgg16", 5}, {"googlenet", 13}, {"resnet50", 1}};
  for (const auto& [name, count] : max_pools) {
    auto network = find_model(name).build();
    EXPECT_EQ(use_own_pool_kernels(*network), count) << name;
  }
}

std::unique_ptr<ModelWorkload> gpt2_inference(const std::string& device, Precision precision, bool fused) {
  WorkloadOptions options;
  options.torch_device = device;
  options.sequence_length = 32;
  options.cuda_graph = false;
  options.fused_layers = fused;
  auto workload = create_torch_workload(Case{"gpt2_small", 2, Mode::infer, precision}, options);
  return std::unique_ptr<ModelWorkload>(dynamic_cast<ModelWorkload*>(workload.release()));
}

TEST(LayerFusion, FrozenGpt2BlocksGiveTheLayerByLayerLogits) {
  auto frozen = gpt2_inference("cpu", Precision::fp32, true);
  auto reference = gpt2_inference("cpu", Precision::fp32, false);
  EXPECT_EQ(frozen->run_info().fused_layers, 12) << "one per decoder block";
  EXPECT_EQ(reference->run_info().fused_layers, 0);
  frozen->run_iterations(1);
  reference->run_iterations(1);
  ASSERT_EQ(frozen->last_output().sizes(), (std::vector<std::int64_t>{2, 32, 50257}));
  EXPECT_LT(relative_difference(frozen->last_output(), reference->last_output()), 1e-5);
}

TEST(LayerFusion, GeluInTheGemmIsTheTanhGeluOnCuda) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  torch::manual_seed(5);
  torch::NoGradGuard no_grad;
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const auto input = torch::randn({2, 16, 64}, cuda);
  const auto weight = (torch::randn({256, 64}, cuda) * 0.2).to(torch::kBFloat16);
  const auto bias = (torch::randn({256}, cuda) * 0.2).to(torch::kBFloat16);
  const auto fused = linear_tanh_gelu(input, weight, bias).to(torch::kFloat);
  const auto product = torch::linear(input, weight.to(torch::kFloat), bias.to(torch::kFloat));
  ASSERT_EQ(fused.sizes(), (std::vector<std::int64_t>{2, 16, 256}));
  EXPECT_LT(relative_difference(fused, torch::gelu(product, "tanh")), 2e-2);
  EXPECT_GT(relative_difference(fused, product), 0.2) << "the epilogue must apply the GELU";

  auto gpu_frozen = gpt2_inference("cuda", Precision::bf16, true);
  auto gpu_reference = gpt2_inference("cuda", Precision::bf16, false);
  gpu_frozen->run_iterations(1);
  gpu_reference->run_iterations(1);
  EXPECT_LT(relative_difference(gpu_frozen->last_output(), gpu_reference->last_output()), 0.05);
}

std::unique_ptr<ModelWorkload> cuda_workload(const std::string& name, Mode mode, Precision precision,
                                             bool fused) {
  WorkloadOptions options;
  options.torch_device = "cuda";
  options.image_size = 64;
  options.cuda_graph = false;
  options.fused_layers = fused;
  auto workload = create_torch_workload(Case{name, 4, mode, precision}, options);
  return std::unique_ptr<ModelWorkload>(dynamic_cast<ModelWorkload*>(workload.release()));
}

TEST(LayerFusion, CudnnFusedKernelsAgreeWithLayerByLayerOnCuda) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  for (const auto& [name, count] : convolutions) {
    auto fused = cuda_workload(name, Mode::infer, Precision::bf16, true);
    auto reference = cuda_workload(name, Mode::infer, Precision::bf16, false);
    EXPECT_EQ(fused->run_info().fused_layers, count) << name;
    fused->run_iterations(1);
    reference->run_iterations(1);
    EXPECT_LT(relative_difference(fused->last_output(), reference->last_output()), 0.05) << name;
  }
  for (const std::string name : {"alexnet", "vgg16"}) {
    auto fused = cuda_workload(name, Mode::train, Precision::fp32, true);
    auto reference = cuda_workload(name, Mode::train, Precision::fp32, false);
    EXPECT_EQ(fused->run_info().fused_layers, convolutions.at(name)) << name;
    for (int step = 0; step < 5; ++step) {
      fused->run_iterations(1);
      reference->run_iterations(1);
      EXPECT_NEAR(fused->last_loss(), reference->last_loss(), 1e-3 * std::abs(reference->last_loss()))
          << name << " step " << step;
    }
  }
}

}  // namespace
}  // namespace dvfslab::torch_backend
