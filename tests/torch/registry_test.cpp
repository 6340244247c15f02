// The LibTorch workloads join the registry for real GPUs only.
#include <gtest/gtest.h>

#include "../fixed_controls_gpu.hpp"
#include "dvfslab/clock.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/torch_workloads.hpp"

namespace dvfslab {
namespace {

// A Gpu that only has an identity: enough for the registry to decide.
class IdentityOnlyGpu final : public testing::FixedControlsGpu {
 public:
  explicit IdentityOnlyGpu(bool simulated) {
    identity_.name = simulated ? "simulated H200" : "NVIDIA H200";
    identity_.simulated = simulated;
  }
  const GpuIdentity& identity() const override { return identity_; }
  Telemetry read_telemetry() override { return {}; }
  Clock& clock() override { return clock_; }

 private:
  GpuIdentity identity_;
  WallClock clock_;
};

TEST(TorchWorkloadRegistry, ServesRealGpusOnly) {
  WorkloadRegistry registry;
  add_torch_workloads(registry);
  IdentityOnlyGpu real(false);
  IdentityOnlyGpu simulated(true);
  EXPECT_EQ(registry.list(&real).size(), 7U);
  EXPECT_TRUE(registry.list(&simulated).empty());

  WorkloadOptions options;
  options.torch_device = "cpu";
  options.image_size = 32;
  auto workload = registry.create(Case{"googlenet", 1, Mode::infer, Precision::fp32}, real, options);
  EXPECT_EQ(workload->item_unit(), "images");
  EXPECT_THROW(registry.create(Case{"googlenet", 1, Mode::infer, Precision::fp32}, simulated, options),
               ConfigError);
}

TEST(TorchWorkloadRegistry, AWorkloadTooLargeForMemoryFailsInOneLine) {
  WorkloadRegistry registry;
  add_torch_workloads(registry);
  IdentityOnlyGpu real(false);
  WorkloadOptions options;
  options.torch_device = "cpu";
  options.image_size = 64;
  try {
    auto workload = registry.create(Case{"alexnet", 2'000'000'000, Mode::infer, Precision::fp32}, real, options);
    workload->prepare();
    workload->run_iterations(1);
    FAIL() << "a batch of 2e9 images of 64 x 64 ran";
  } catch (const ConfigError& error) {
    FAIL() << error.what();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("LibTorch ran out of memory: ", 0), 0U) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dvfslab
