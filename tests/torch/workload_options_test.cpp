// Options, errors and registration of the LibTorch workloads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"

namespace dvfslab {
namespace {

using ::testing::HasSubstr;

Case resnet_case(Mode mode = Mode::infer, Precision precision = Precision::fp32) {
  return Case{"resnet50", 1, mode, precision};
}

WorkloadOptions cpu_options() {
  WorkloadOptions options;
  options.torch_device = "cpu";
  options.image_size = 32;
  return options;
}

template <typename ErrorType>
std::string error_message(const Case& workload_case, const WorkloadOptions& options) {
  try {
    create_torch_workload(workload_case, options);
  } catch (const ErrorType& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error for " << to_string(workload_case);
  return "";
}

TEST(TorchWorkloadOptions, UnknownNameListsTheChoices) {
  const auto message =
      error_message<ConfigError>(Case{"resnet51", 1, Mode::train, Precision::fp32}, cpu_options());
  for (const char* name : {"alexnet", "vgg16", "googlenet", "resnet50", "bert_base", "gpt2_small"}) {
    EXPECT_THAT(message, HasSubstr(name));
  }
}

TEST(TorchWorkloadOptions, InvalidSizesAndBatchesAreRejected) {
  auto options = cpu_options();
  options.image_size = 16;
  EXPECT_THAT(error_message<ConfigError>(resnet_case(), options), HasSubstr("choose 32 to 1024"));
  options.image_size = 0;
  options.sequence_length = 64;
  EXPECT_THAT(error_message<ConfigError>(resnet_case(), options), HasSubstr("not a sequence length"));
  options.sequence_length = 2048;
  EXPECT_THAT(error_message<ConfigError>(Case{"gpt2_small", 1, Mode::infer, Precision::fp32}, options),
              HasSubstr("choose 1 to 1024"));
  EXPECT_THAT(error_message<ConfigError>(Case{"resnet50", 0, Mode::infer, Precision::fp32}, cpu_options()),
              HasSubstr("batch size 0"));
}

TEST(TorchWorkloadOptions, DevicesAreCheckedWithTheChoices) {
  auto options = cpu_options();
  options.torch_device = "tpu";
  EXPECT_THAT(error_message<ConfigError>(resnet_case(), options), HasSubstr("choose cpu, cuda or cuda:N"));
  options.torch_device = "cuda:x";
  EXPECT_THROW(create_torch_workload(resnet_case(), options), Error);
}

TEST(TorchWorkloadOptions, Fp16NeedsCuda) {
  EXPECT_THAT(error_message<NotSupportedError>(resnet_case(Mode::train, Precision::fp16), cpu_options()),
              HasSubstr("use bf16 or fp32"));
}

TEST(TorchWorkloadOptions, CpuRunsReportTheirSettings) {
  auto workload = create_torch_workload(resnet_case(Mode::infer, Precision::tf32), cpu_options());
  workload->prepare();
  const auto info = workload->run_info();
  EXPECT_EQ(info.device, "cpu");
  EXPECT_FALSE(info.cuda_graph);
  EXPECT_EQ(info.image_size, 32);
  ASSERT_EQ(info.notices.size(), 1U);
  EXPECT_THAT(info.notices[0], HasSubstr("TF32"));
  EXPECT_EQ(workload->item_unit(), "images");
  EXPECT_EQ(workload->items_per_iteration(), 1.0);
  EXPECT_THROW(workload->last_loss(), ConfigError);
}

TEST(TorchWorkloadOptions, TokenWorkloadsCountTokens) {
  WorkloadOptions options;
  options.torch_device = "cpu";
  options.sequence_length = 8;
  auto workload = create_torch_workload(Case{"bert_base", 3, Mode::infer, Precision::fp32}, options);
  EXPECT_EQ(workload->item_unit(), "tokens");
  EXPECT_EQ(workload->items_per_iteration(), 24.0);
}

TEST(TorchWorkloadOptions, ListHasNamesDefaultsAndUnits) {
  const auto infos = torch_workload_infos();
  ASSERT_EQ(infos.size(), 7U);
  EXPECT_EQ(infos[0].name, "alexnet");
  EXPECT_EQ(infos[0].item_unit, "images");
  EXPECT_EQ(infos[0].default_batch, 128);
  EXPECT_EQ(infos[5].name, "gpt2_small");
  EXPECT_EQ(infos[5].item_unit, "tokens");
  for (const auto& info : infos) EXPECT_FALSE(info.description.empty()) << info.name;
}

}  // namespace
}  // namespace dvfslab
