// The networks themselves: sizes match the reference definitions, outputs have
// the right shapes, and training on one fixed batch lowers the loss.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/model_catalog.hpp"
#include "workload/torch/model_workload.hpp"

namespace dvfslab::torch_backend {
namespace {

std::int64_t parameter_count(Network& network) {
  std::int64_t count = 0;
  for (const auto& parameter : network.parameters()) count += parameter.numel();
  return count;
}

// Small inputs keep the CPU tests quick; each is the smallest the network takes
// comfortably (AlexNet's stride-4 stem needs 64 pixels).
WorkloadOptions small_cpu_options(const std::string& name) {
  WorkloadOptions options;
  options.torch_device = "cpu";
  if (name == "bert_base" || name == "gpt2_small") {
    options.sequence_length = 16;
  } else {
    options.image_size = name == "alexnet" ? 64 : 32;
  }
  return options;
}

std::unique_ptr<ModelWorkload> small_workload(const std::string& name, Mode mode, int batch = 2,
                                              Precision precision = Precision::fp32) {
  auto workload = create_torch_workload(Case{name, batch, mode, precision}, small_cpu_options(name));
  return std::unique_ptr<ModelWorkload>(dynamic_cast<ModelWorkload*>(workload.release()));
}

TEST(TorchModels, ParameterCountsMatchTheReferenceDefinitions) {
  const std::map<std::string, std::int64_t> published = {
      {"alexnet", 61'100'840},  {"vgg16", 138'357'544},     {"googlenet", 6'624'904},
      {"resnet50", 25'557'032}, {"bert_base", 109'482'240}, {"gpt2_small", 124'439'808},
  };
  ASSERT_EQ(model_specs().size(), published.size());
  for (const auto& spec : model_specs()) {
    auto network = spec.build();
    EXPECT_EQ(parameter_count(*network), published.at(spec.name)) << spec.name;
  }
}

TEST(TorchModels, InferenceOutputShapes) {
  const std::map<std::string, std::vector<std::int64_t>> expected = {
      {"alexnet", {2, 1000}},  {"vgg16", {2, 1000}},    {"googlenet", {2, 1000}},
      {"resnet50", {2, 1000}}, {"bert_base", {2, 768}}, {"gpt2_small", {2, 16, 50257}},
  };
  for (const auto& [name, shape] : expected) {
    auto workload = small_workload(name, Mode::infer);
    workload->run_iterations(1);
    EXPECT_EQ(workload->last_output().sizes().vec(), shape) << name;
    EXPECT_TRUE(torch::isfinite(workload->last_output()).all().item<bool>()) << name;
  }
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& spec : model_specs()) names.push_back(spec.name);
  return names;
}

// One test per network: a failure names the network, and ctest runs two networks
// side by side (the six took 4.6 minutes on 2 cores, against 7.9 in one test).
class TorchModelTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchModelTraining, TwentyStepsOnOneBatchLowerTheLoss) {
  auto workload = small_workload(GetParam(), Mode::train);
  workload->run_iterations(1);
  const double first = workload->last_loss();
  workload->run_iterations(19);
  const double last = workload->last_loss();
  EXPECT_TRUE(std::isfinite(first) && std::isfinite(last));
  EXPECT_LT(last, first) << "loss " << first << " -> " << last;
}

INSTANTIATE_TEST_SUITE_P(EveryNetwork, TorchModelTraining, ::testing::ValuesIn(model_names()),
                         [](const ::testing::TestParamInfo<std::string>& network) { return network.param; });

// The convolutions and, in GPT-2, the linear layers and tied head whose operands
// are cast before the product (autocast_operand.hpp).
TEST(TorchModels, Bf16AutocastTrainsOnTheCpu) {
  for (const std::string name : {"resnet50", "gpt2_small"}) {
    auto workload = small_workload(name, Mode::train, 2, Precision::bf16);
    workload->run_iterations(1);
    const double first = workload->last_loss();
    workload->run_iterations(9);
    EXPECT_LT(workload->last_loss(), first) << name;
  }
}

TEST(TorchModels, InferenceIsDeterministic) {
  for (const std::string name : {"resnet50", "gpt2_small"}) {
    auto first = small_workload(name, Mode::infer);
    auto second = small_workload(name, Mode::infer);
    first->run_iterations(1);
    const auto once = first->last_output().clone();
    first->run_iterations(1);
    second->run_iterations(1);
    EXPECT_TRUE(torch::equal(once, first->last_output())) << name << ": repeated step differs";
    EXPECT_TRUE(torch::equal(once, second->last_output())) << name << ": same seed, different output";
  }
}

TEST(TorchModels, TheSeedChangesWeightsAndData) {
  auto options = small_cpu_options("resnet50");
  auto first = create_torch_workload(Case{"resnet50", 2, Mode::infer, Precision::fp32}, options);
  options.seed += 1;
  auto second = create_torch_workload(Case{"resnet50", 2, Mode::infer, Precision::fp32}, options);
  first->run_iterations(1);
  second->run_iterations(1);
  EXPECT_FALSE(torch::equal(dynamic_cast<ModelWorkload&>(*first).last_output(),
                            dynamic_cast<ModelWorkload&>(*second).last_output()));
}

}  // namespace
}  // namespace dvfslab::torch_backend
