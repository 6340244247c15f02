// The fake ROCm SMI itself (tools/fake_rocm_smi), loaded as dvfslab loads it: its
// devices and levels come from the simulated MI250X and MI300X, enabling levels
// switches to the manual performance level and leaving it enables every level,
// refused and out-of-range calls answer as the library documents, every setter is
// logged, and the control state outlives the process that set it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_backend.hpp"
#include "fake_nvml_env.hpp"
#include "gpu/rocm/rocm_library.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

using namespace dvfslab::rocm;

// The fake, opened with dlopen, initialised under `environment` and shut down at the end.
class FakeRocmSmi : public ::testing::Test {
 protected:
  ScratchDir dir;

  void load(EnvironmentChanges extra = {}) {
    extra["DVFSLAB_FAKE_ROCM_LOG"] = (dir / "setters.log").string();
    extra["DVFSLAB_FAKE_ROCM_STATE"] = (dir / "state.json").string();
    environment_ = std::make_unique<ScopedEnvironment>(fake_rocm_environment("mi250x,mi300x", extra));
    handle_ = dlopen(DVFSLAB_FAKE_ROCM_SMI, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    ASSERT_EQ(function<EntrySignature<Entry::init>::type>("rsmi_init")(0), success);
  }

  void TearDown() override {
    if (handle_ == nullptr) return;
    EXPECT_EQ(function<EntrySignature<Entry::shut_down>::type>("rsmi_shut_down")(), success);
    dlclose(handle_);
  }

  template <class Signature>
  Signature* function(const char* name) {
    auto* found = reinterpret_cast<Signature*>(dlsym(handle_, name));
    EXPECT_NE(found, nullptr) << name;
    return found;
  }

  Frequencies levels(std::uint32_t device, ClockType type) {
    Frequencies frequencies{};
    EXPECT_EQ(function<EntrySignature<Entry::dev_gpu_clk_freq_get>::type>("rsmi_dev_gpu_clk_freq_get")(
                  device, type, &frequencies),
              success);
    return frequencies;
  }

  PerfLevel perf_level(std::uint32_t device) {
    PerfLevel level = perf_level_unknown;
    EXPECT_EQ(
        function<EntrySignature<Entry::dev_perf_level_get>::type>("rsmi_dev_perf_level_get")(device, &level),
        success);
    return level;
  }

  Status set_levels(std::uint32_t device, ClockType type, std::uint64_t mask) {
    return function<EntrySignature<Entry::dev_gpu_clk_freq_set>::type>("rsmi_dev_gpu_clk_freq_set")(
        device, type, mask);
  }

  Status set_cap(std::uint32_t device, std::uint64_t microwatts) {
    return function<EntrySignature<Entry::dev_power_cap_set>::type>("rsmi_dev_power_cap_set")(device, 0,
                                                                                              microwatts);
  }

  std::string log() const { return read_setter_log(dir / "setters.log"); }

  std::unique_ptr<ScopedEnvironment> environment_;
  void* handle_ = nullptr;
};

TEST_F(FakeRocmSmi, ListsTheSimulatedGpusWithTheirLevelsLowestFirstInHertz) {
  load();
  std::uint32_t count = 0;
  ASSERT_EQ(function<EntrySignature<Entry::num_monitor_devices>::type>("rsmi_num_monitor_devices")(&count),
            success);
  ASSERT_EQ(count, 2u);
  char name[64] = {};
  ASSERT_EQ(function<EntrySignature<Entry::dev_name_get>::type>("rsmi_dev_name_get")(0, name, sizeof name),
            success);
  EXPECT_STREQ(name, "AMD Instinct MI250X");
  ASSERT_EQ(function<EntrySignature<Entry::dev_name_get>::type>("rsmi_dev_name_get")(1, name, sizeof name),
            success);
  EXPECT_STREQ(name, "AMD Instinct MI300X");

  const Frequencies mi250x_sclk = levels(0, clock_system);
  ASSERT_EQ(mi250x_sclk.num_supported, 13u);
  EXPECT_EQ(mi250x_sclk.frequency[0], 500'000'000u);
  EXPECT_EQ(mi250x_sclk.frequency[12], 1'700'000'000u);
  const Frequencies mi300x_mclk = levels(1, clock_memory);
  ASSERT_EQ(mi300x_mclk.num_supported, 1u);
  EXPECT_EQ(mi300x_mclk.frequency[0], 2'600'000'000u);

  std::uint64_t max = 0;
  std::uint64_t min = 0;
  ASSERT_EQ(function<EntrySignature<Entry::dev_power_cap_range_get>::type>("rsmi_dev_power_cap_range_get")(
                1, 0, &max, &min),
            success);
  EXPECT_EQ(max, 750'000'000u);
  EXPECT_EQ(min, 300'000'000u);
  std::uint64_t unique_ids[2] = {};
  for (std::uint32_t device = 0; device < 2; ++device) {
    ASSERT_EQ(function<EntrySignature<Entry::dev_unique_id_get>::type>("rsmi_dev_unique_id_get")(
                  device, &unique_ids[device]),
              success);
  }
  EXPECT_NE(unique_ids[0], unique_ids[1]);
}

TEST_F(FakeRocmSmi, EnablingLevelsGoesManualAndLeavingManualEnablesEveryLevelAgain) {
  load();
  EXPECT_EQ(perf_level(1), perf_level_auto);
  ASSERT_EQ(set_levels(1, clock_system, 0x80), success);  // level 7: 1200 MHz
  EXPECT_EQ(perf_level(1), perf_level_manual);
  EXPECT_EQ(levels(1, clock_system).current, 7u) << "the simulated GPU runs at the one enabled level";
  const nlohmann::json held =
      nlohmann::json::parse(std::ifstream(dir / "state.json"))["devices"][1]["controls"];
  EXPECT_EQ(held["sclk_mask"], 0x80);
  EXPECT_EQ(held["perf_level"], "manual");

  ASSERT_EQ(function<EntrySignature<Entry::dev_perf_level_set>::type>("rsmi_dev_perf_level_set_v1")(
                1, perf_level_auto),
            success);
  const nlohmann::json back =
      nlohmann::json::parse(std::ifstream(dir / "state.json"))["devices"][1]["controls"];
  EXPECT_EQ(back["sclk_mask"], 0x1ffff);
  EXPECT_EQ(back["perf_level"], "auto");
  EXPECT_EQ(log(),
            "rsmi_dev_gpu_clk_freq_set device=1 clock=sclk mask=0x80\n"
            "rsmi_dev_perf_level_set_v1 device=1 level=0\n");
}

TEST_F(FakeRocmSmi, RefusesMasksWithoutALevelAndCapsOutsideTheRangeButLogsThem) {
  load();
  EXPECT_EQ(set_levels(0, clock_system, std::uint64_t{1} << 20), status_invalid_args)
      << "the MI250X has 13 levels";
  EXPECT_EQ(set_cap(1, 800'000'000), status_invalid_args);
  EXPECT_EQ(set_cap(1, 450'000'000), success);
  std::uint64_t cap = 0;
  ASSERT_EQ(function<EntrySignature<Entry::dev_power_cap_get>::type>("rsmi_dev_power_cap_get")(1, 0, &cap),
            success);
  EXPECT_EQ(cap, 450'000'000u);
  EXPECT_EQ(perf_level(0), perf_level_auto) << "a refused mask changes nothing";
  EXPECT_EQ(log(),
            "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x100000\n"
            "rsmi_dev_power_cap_set device=1 sensor=0 cap_uw=800000000\n"
            "rsmi_dev_power_cap_set device=1 sensor=0 cap_uw=450000000\n");
}

TEST_F(FakeRocmSmi, WithoutPermissionEverySetterIsLoggedAndRefused) {
  load({{"DVFSLAB_FAKE_ROCM_NO_PERMISSION", "1"}});
  EXPECT_EQ(set_levels(1, clock_memory, 0x1), status_permission);
  EXPECT_EQ(set_cap(1, 450'000'000), status_permission);
  EXPECT_EQ(perf_level(1), perf_level_auto);
  EXPECT_EQ(log(),
            "rsmi_dev_gpu_clk_freq_set device=1 clock=mclk mask=0x1\n"
            "rsmi_dev_power_cap_set device=1 sensor=0 cap_uw=450000000\n");
}

TEST_F(FakeRocmSmi, TheControlStateOutlivesAShutDown) {
  load();
  ASSERT_EQ(set_cap(0, 300'000'000), success);
  ASSERT_EQ(set_levels(0, clock_system, 0x8), success);  // level 3: 800 MHz
  ASSERT_EQ(function<EntrySignature<Entry::shut_down>::type>("rsmi_shut_down")(), success);
  ASSERT_EQ(function<EntrySignature<Entry::init>::type>("rsmi_init")(0), success);
  std::uint64_t cap = 0;
  ASSERT_EQ(function<EntrySignature<Entry::dev_power_cap_get>::type>("rsmi_dev_power_cap_get")(0, 0, &cap),
            success);
  EXPECT_EQ(cap, 300'000'000u);
  EXPECT_EQ(perf_level(0), perf_level_manual);
  EXPECT_EQ(levels(0, clock_system).current, 3u) << "the one enabled level holds in the next process";
}

TEST_F(FakeRocmSmi, WithoutTheDriverInitialisationFailsAsTheRealLibraryDoes) {
  environment_ = std::make_unique<ScopedEnvironment>(
      fake_rocm_environment("mi300x", {{"DVFSLAB_FAKE_ROCM_NO_DRIVER", "1"}}));
  void* handle = dlopen(DVFSLAB_FAKE_ROCM_SMI, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* init = reinterpret_cast<EntrySignature<Entry::init>::type*>(dlsym(handle, "rsmi_init"));
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init(0), status_init_error);
  dlclose(handle);
}

}  // namespace
}  // namespace dvfslab::testing
