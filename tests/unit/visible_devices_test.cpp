// Mapping CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES onto NVML's GPUs: by
// UUID (or a unique beginning), PCI bus id, or a CUDA index counted in PCI bus
// order, never by NVML's own index.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "gpu/nvml/visible_devices.hpp"

namespace dvfslab::nvml {
namespace {

GpuIdentity gpu(int index, const std::string& name, const std::string& uuid, const std::string& pci) {
  GpuIdentity identity;
  identity.index = index;
  identity.name = name;
  identity.uuid = uuid;
  identity.pci_bus_id = pci;
  return identity;
}

// NVML's enumeration here is not in PCI bus order: NVML index 0 sits on bus 0x48.
const std::vector<GpuIdentity> kFourH200 = {
    gpu(0, "NVIDIA H200", "GPU-dd000000-0000-0000-0000-000000000000", "00000000:48:00.0"),
    gpu(1, "NVIDIA H200", "GPU-aa000000-0000-0000-0000-000000000000", "00000000:18:00.0"),
    gpu(2, "NVIDIA H200", "GPU-bb000000-0000-0000-0000-000000000000", "00000000:28:00.0"),
    gpu(3, "NVIDIA H200", "GPU-cc000000-0000-0000-0000-000000000000", "00000000:38:00.0"),
};

std::optional<std::vector<std::size_t>> cuda(const std::string& list, bool pci_order = false,
                                             const std::vector<GpuIdentity>& gpus = kFourH200) {
  return visible_gpu_positions({"CUDA_VISIBLE_DEVICES", list, pci_order}, gpus);
}

std::string refusal_of(const std::string& list, const std::vector<GpuIdentity>& gpus = kFourH200) {
  try {
    cuda(list, false, gpus);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

using Positions = std::vector<std::size_t>;

TEST(VisibleDevices, CudaIndicesCountGpusInPciBusOrder) {
  EXPECT_EQ(cuda("0,1"), (Positions{1, 2}));
  EXPECT_EQ(cuda("3"), (Positions{0}));
  EXPECT_EQ(cuda(" 2 , 0 "), (Positions{3, 1})) << "the list's order is kept, spaces ignored";
}

TEST(VisibleDevices, UuidsTheirUniqueBeginningsAndPciBusIdsNameGpus) {
  EXPECT_EQ(cuda("GPU-cc000000-0000-0000-0000-000000000000,gpu-AA"), (Positions{3, 1}));
  EXPECT_EQ(cuda("0000:28:00.0,48:00.0"), (Positions{2, 0}));
}

TEST(VisibleDevices, ANegativeIndexHidesTheRestAsInCuda) {
  EXPECT_EQ(cuda("1,-1,2"), (Positions{2}));
  EXPECT_NE(refusal_of("-1").find("leaves the job no GPU"), std::string::npos);
  EXPECT_NE(refusal_of("").find("is empty"), std::string::npos);
}

TEST(VisibleDevices, EntriesThatNameNoGpuOrSeveralOrOneTwiceAreRefused) {
  const std::string unknown = refusal_of("0,GPU-ee");
  EXPECT_NE(unknown.find("CUDA_VISIBLE_DEVICES=0,GPU-ee: 'GPU-ee' names none of this node's GPUs"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("GPU-dd000000"), std::string::npos) << "the GPUs here are listed: " << unknown;
  EXPECT_EQ(unknown.find('\n'), std::string::npos);
  EXPECT_NE(refusal_of("GPU-").find("begins the UUID of 4 GPUs"), std::string::npos);
  EXPECT_NE(refusal_of("4").find("there is no GPU 4"), std::string::npos);
  EXPECT_NE(refusal_of("1,GPU-bb").find("listed twice"), std::string::npos);
  EXPECT_NE(refusal_of("MIG-1234").find("MIG instance"), std::string::npos);
  EXPECT_NE(refusal_of("fast").find("'fast' names none"), std::string::npos);
}

TEST(VisibleDevices, CudaIndicesOnANodeOfSeveralModelsNeedPciBusOrder) {
  std::vector<GpuIdentity> mixed = kFourH200;
  mixed[2].name = "Tesla V100-PCIE-16GB";
  EXPECT_NE(refusal_of("0", mixed).find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
  EXPECT_EQ(cuda("0", true, mixed), (Positions{1}));
  EXPECT_EQ(cuda("GPU-bb", false, mixed), (Positions{2})) << "UUIDs need no order";
}

TEST(VisibleDevices, NvidiaVisibleDevicesKeywordsAndIndicesWereAppliedByTheContainerRuntime) {
  for (const char* list : {"all", "none", "void", "", "0,1", "2"}) {
    EXPECT_FALSE(visible_gpu_positions({"NVIDIA_VISIBLE_DEVICES", list, false}, kFourH200)) << list;
  }
  EXPECT_EQ(visible_gpu_positions({"NVIDIA_VISIBLE_DEVICES", "GPU-bb,GPU-aa", false}, kFourH200),
            (Positions{2, 1}));
}

}  // namespace
}  // namespace dvfslab::nvml
