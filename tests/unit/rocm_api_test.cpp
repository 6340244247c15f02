// dvfslab declares the ROCm SMI API itself (src/gpu/rocm/rocm_api.hpp). Where AMD's
// header is installed (Debian's librocm-smi-dev, scripts/install-deps.sh --tests)
// the declarations are checked against it: values, layouts and signatures.
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "gpu/rocm/rocm_api.hpp"
#include "gpu/rocm/rocm_library.hpp"

#if __has_include(<rocm_smi/rocm_smi.h>)
#include <rocm_smi/rocm_smi.h>
#define DVFSLAB_HAVE_ROCM_SMI_HEADER 1
#endif

namespace dvfslab::rocm {
namespace {

#ifdef DVFSLAB_HAVE_ROCM_SMI_HEADER
static_assert(sizeof(Frequencies) == sizeof(rsmi_frequencies_t));
static_assert(offsetof(Frequencies, num_supported) == offsetof(rsmi_frequencies_t, num_supported));
static_assert(offsetof(Frequencies, current) == offsetof(rsmi_frequencies_t, current));
static_assert(offsetof(Frequencies, frequency) == offsetof(rsmi_frequencies_t, frequency));
static_assert(max_frequencies == RSMI_MAX_NUM_FREQUENCIES);
static_assert(sizeof(Version) == sizeof(rsmi_version_t));
static_assert(offsetof(Version, build) == offsetof(rsmi_version_t, build));
// The enums travel as 32-bit integers: AMD's are int-sized C enums.
static_assert(sizeof(rsmi_status_t) == sizeof(Status));
static_assert(sizeof(rsmi_dev_perf_level_t) == sizeof(PerfLevel));
static_assert(sizeof(rsmi_clk_type_t) == sizeof(ClockType));
static_assert(sizeof(rsmi_temperature_metric_t) == sizeof(TemperatureMetric));
static_assert(sizeof(rsmi_sw_component_t) == sizeof(SoftwareComponent));

// The parameter widths of AMD's function and dvfslab's declaration agree.
template <class Theirs, class Ours>
struct SameShape : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct SameShape<R1(A1...), R2(A2...)>
    : std::bool_constant<sizeof(R1) == sizeof(R2) && sizeof...(A1) == sizeof...(A2) &&
                         ((sizeof(A1) == sizeof(A2) &&
                           std::is_pointer_v<A1> == std::is_pointer_v<A2>)&&...)> {};

#define DVFSLAB_CHECK_ROCM_SIGNATURE(entry, function)                                       \
  static_assert(SameShape<decltype(::function), EntrySignature<Entry::entry>::type>::value, \
                #function " is declared with other parameters than rocm_smi.h's")
DVFSLAB_CHECK_ROCM_SIGNATURE(init, rsmi_init);
DVFSLAB_CHECK_ROCM_SIGNATURE(shut_down, rsmi_shut_down);
DVFSLAB_CHECK_ROCM_SIGNATURE(status_string, rsmi_status_string);
DVFSLAB_CHECK_ROCM_SIGNATURE(version_get, rsmi_version_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(version_str_get, rsmi_version_str_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(num_monitor_devices, rsmi_num_monitor_devices);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_name_get, rsmi_dev_name_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_unique_id_get, rsmi_dev_unique_id_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_pci_id_get, rsmi_dev_pci_id_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_gpu_clk_freq_get, rsmi_dev_gpu_clk_freq_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_gpu_clk_freq_set, rsmi_dev_gpu_clk_freq_set);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_perf_level_get, rsmi_dev_perf_level_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_perf_level_set, rsmi_dev_perf_level_set_v1);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_perf_level_set, rsmi_dev_perf_level_set);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_power_cap_get, rsmi_dev_power_cap_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_power_cap_default_get, rsmi_dev_power_cap_default_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_power_cap_range_get, rsmi_dev_power_cap_range_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_power_cap_set, rsmi_dev_power_cap_set);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_power_ave_get, rsmi_dev_power_ave_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_energy_count_get, rsmi_dev_energy_count_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_temp_metric_get, rsmi_dev_temp_metric_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_busy_percent_get, rsmi_dev_busy_percent_get);
DVFSLAB_CHECK_ROCM_SIGNATURE(dev_memory_busy_percent_get, rsmi_dev_memory_busy_percent_get);
#endif

TEST(RocmApi, TheDeclaredValuesAreThoseOfAmdsHeader) {
#ifndef DVFSLAB_HAVE_ROCM_SMI_HEADER
  GTEST_SKIP() << "rocm_smi/rocm_smi.h is not installed (librocm-smi-dev)";
#else
  EXPECT_EQ(success, RSMI_STATUS_SUCCESS);
  EXPECT_EQ(status_not_supported, RSMI_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_permission, RSMI_STATUS_PERMISSION);
  EXPECT_EQ(status_input_out_of_bounds, RSMI_STATUS_INPUT_OUT_OF_BOUNDS);
  EXPECT_EQ(status_init_error, RSMI_STATUS_INIT_ERROR);
  EXPECT_EQ(status_not_yet_implemented, RSMI_STATUS_NOT_YET_IMPLEMENTED);
  EXPECT_EQ(status_insufficient_size, RSMI_STATUS_INSUFFICIENT_SIZE);
  EXPECT_EQ(status_busy, RSMI_STATUS_BUSY);
  EXPECT_EQ(status_unknown_error, RSMI_STATUS_UNKNOWN_ERROR);
  EXPECT_EQ(perf_level_auto, RSMI_DEV_PERF_LEVEL_AUTO);
  EXPECT_EQ(perf_level_manual, RSMI_DEV_PERF_LEVEL_MANUAL);
  EXPECT_EQ(perf_level_determinism, RSMI_DEV_PERF_LEVEL_DETERMINISM);
  EXPECT_EQ(perf_level_unknown, RSMI_DEV_PERF_LEVEL_UNKNOWN);
  EXPECT_EQ(clock_system, RSMI_CLK_TYPE_SYS);
  EXPECT_EQ(clock_memory, RSMI_CLK_TYPE_MEM);
  EXPECT_EQ(temperature_edge, RSMI_TEMP_TYPE_EDGE);
  EXPECT_EQ(temperature_junction, RSMI_TEMP_TYPE_JUNCTION);
  EXPECT_EQ(temperature_memory, RSMI_TEMP_TYPE_MEMORY);
  EXPECT_EQ(temperature_current, RSMI_TEMP_CURRENT);
  EXPECT_EQ(component_driver, RSMI_SW_COMP_DRIVER);
#endif
}

}  // namespace
}  // namespace dvfslab::rocm
