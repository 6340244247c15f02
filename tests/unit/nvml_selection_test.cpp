#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "gpu/nvml/nvml_devices.hpp"

namespace dvfslab::nvml {
namespace {

GpuIdentity h200_identity() {
  GpuIdentity identity;
  identity.index = 1;
  identity.name = "NVIDIA H200";
  identity.uuid = "GPU-8F6C1A2B-1234-5678-9ABC-DEF012345678";
  identity.pci_bus_id = "00000000:3B:00.0";
  return identity;
}

TEST(PciBusId, ParsesLongShortAndDomainlessForms) {
  const PciAddress expected{0, 0x3b, 0, 0};
  EXPECT_EQ(parse_pci_bus_id("00000000:3B:00.0"), expected);
  EXPECT_EQ(parse_pci_bus_id("0000:3b:00.0"), expected);
  EXPECT_EQ(parse_pci_bus_id("3b:00.0"), expected);
  EXPECT_EQ(parse_pci_bus_id("0001:3b:1f.7"), (PciAddress{1, 0x3b, 0x1f, 7}));
}

TEST(PciBusId, RejectsTextThatIsNoBusId) {
  EXPECT_FALSE(parse_pci_bus_id("GPU-8f6c1a2b"));
  EXPECT_FALSE(parse_pci_bus_id("3b:00"));
  EXPECT_FALSE(parse_pci_bus_id("zz:00.0"));
  EXPECT_FALSE(parse_pci_bus_id(""));
}

TEST(DeviceSelector, MatchesIndexUuidAndPciBusId) {
  const GpuIdentity identity = h200_identity();
  EXPECT_TRUE(selector_matches("1", identity));
  EXPECT_FALSE(selector_matches("0", identity));
  EXPECT_TRUE(selector_matches("GPU-8F6C1A2B-1234-5678-9ABC-DEF012345678", identity));
  EXPECT_TRUE(selector_matches("gpu-8f6c1a2b-1234-5678-9abc-def012345678", identity));
  EXPECT_TRUE(selector_matches("8f6c1a2b-1234-5678-9abc-def012345678", identity));
  EXPECT_TRUE(selector_matches("0000:3b:00.0", identity));
  EXPECT_TRUE(selector_matches("3B:00.0", identity));
  EXPECT_FALSE(selector_matches("0000:3c:00.0", identity));
  EXPECT_FALSE(selector_matches("GPU-8f6c1a2b", identity));
}

TEST(OpenGpu, EmptyDeviceIsAUsageError) { EXPECT_THROW(open_gpus(""), UsageError); }

TEST(OpenGpu, UnknownSimulatedGpuIsAConfigError) { EXPECT_THROW(open_gpu("sim:gtx480"), ConfigError); }

TEST(OpenGpu, SimulatedGpuComesFromItsSpec) {
  auto gpu = open_gpu("sim:h200");
  EXPECT_TRUE(gpu->identity().simulated);
  EXPECT_EQ(gpu->identity().name.find("H200") != std::string::npos, true) << gpu->identity().name;
  EXPECT_TRUE(gpu->clock().is_virtual());
  OpenOptions wall_time;
  wall_time.sim_time = SimTimeMode::wall_time;
  auto wall = open_gpu("sim:h200", wall_time);
  EXPECT_FALSE(wall->clock().is_virtual());
}

}  // namespace
}  // namespace dvfslab::nvml
