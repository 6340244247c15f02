#pragma once
// The project's own declarations of the few NVML types, constants and entry points
// dvfslab uses. Values and layouts follow NVIDIA's published NVML ABI; NVIDIA's
// header is deliberately not needed, so building dvfslab needs no NVIDIA package.
#include <cstdint>

namespace dvfslab::nvml {

// nvmlReturn_t is a C enum: int-sized.
using Return = int;
// nvmlDevice_t is an opaque pointer owned by the driver.
using Device = struct DeviceHandle*;

// Return codes (nvmlReturn_t).
inline constexpr Return success = 0;
inline constexpr Return error_uninitialized = 1;
inline constexpr Return error_invalid_argument = 2;
inline constexpr Return error_not_supported = 3;
inline constexpr Return error_no_permission = 4;
inline constexpr Return error_not_found = 6;
inline constexpr Return error_insufficient_size = 7;
inline constexpr Return error_driver_not_loaded = 9;
inline constexpr Return error_library_not_found = 12;
inline constexpr Return error_function_not_found = 13;
inline constexpr Return error_gpu_is_lost = 15;
inline constexpr Return error_reset_required = 16;
inline constexpr Return error_lib_rm_version_mismatch = 18;
inline constexpr Return error_no_data = 21;
inline constexpr Return error_argument_version_mismatch = 25;  // a versioned struct of another version
inline constexpr Return error_unknown = 999;

// nvmlClockType_t
inline constexpr int clock_graphics = 0;
inline constexpr int clock_sm = 1;
inline constexpr int clock_mem = 2;

// nvmlTemperatureSensors_t
inline constexpr int temperature_gpu = 0;

// nvmlDeviceArchitecture_t (an unsigned int).
inline constexpr unsigned arch_kepler = 2;
inline constexpr unsigned arch_volta = 5;
inline constexpr unsigned arch_blackwell = 10;
inline constexpr unsigned arch_unknown = 0xffffffff;

// Field ids for nvmlDeviceGetFieldValues.
inline constexpr unsigned field_memory_temperature = 82;  // NVML_FI_DEV_MEMORY_TEMP
inline constexpr unsigned field_power_instant = 186;      // NVML_FI_DEV_POWER_INSTANT

// nvmlValueType_t
inline constexpr int value_type_double = 0;
inline constexpr int value_type_unsigned_int = 1;
inline constexpr int value_type_unsigned_long = 2;
inline constexpr int value_type_unsigned_long_long = 3;
inline constexpr int value_type_signed_long_long = 4;
inline constexpr int value_type_signed_int = 5;

// nvmlDeviceGetMigMode's current and pending modes.
inline constexpr unsigned device_mig_enable = 1;  // NVML_DEVICE_MIG_ENABLE

// Buffer sizes NVML documents for its string getters.
inline constexpr unsigned name_buffer_size = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned uuid_buffer_size = 80;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned version_buffer_size = 80;  // NVML_SYSTEM_*_VERSION_BUFFER_SIZE
inline constexpr unsigned max_clock_count = 512;     // more than any GPU lists

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v2/_v3 (68 bytes).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68);

// nvmlUtilization_t
struct Utilization {
  unsigned gpu;
  unsigned memory;
};

// nvmlValue_t
union Value {
  double d_val;
  unsigned ui_val;
  unsigned long ul_val;
  unsigned long long ull_val;
  long long sll_val;
  int si_val;
  unsigned short us_val;
};

// nvmlFieldValue_t (40 bytes on LP64).
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  Return nvml_return;
  Value value;
};
static_assert(sizeof(FieldValue) == 40);

// nvmlProcessInfo_t as filled by nvmlDeviceGetComputeRunningProcesses_v2/_v3 (24
// bytes on LP64); the unversioned function fills a shorter v1 layout.
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
static_assert(sizeof(ProcessInfo) == 24);

// Workload power profiles (R570+). nvmlPowerProfileType_t: a profile's id is its
// bit in the masks below.
inline constexpr unsigned power_profile_max_p = 0;
inline constexpr unsigned power_profile_max_q = 1;
inline constexpr unsigned power_profile_compute = 2;
inline constexpr unsigned power_profile_memory_bound = 3;
inline constexpr unsigned power_profile_network = 4;
inline constexpr unsigned power_profile_balanced = 5;
inline constexpr unsigned power_profile_llm_inference = 6;
inline constexpr unsigned power_profile_llm_training = 7;
inline constexpr unsigned power_profile_rbm = 8;
inline constexpr unsigned power_profile_dcpcie = 9;
inline constexpr unsigned power_profile_hmma_sparse = 10;
inline constexpr unsigned power_profile_hmma_dense = 11;
inline constexpr unsigned power_profile_sync_balanced = 12;
inline constexpr unsigned power_profile_hpc = 13;
inline constexpr unsigned power_profile_mig = 14;
inline constexpr unsigned workload_power_max_profiles = 255;  // NVML_WORKLOAD_POWER_MAX_PROFILES

// nvmlMask255_t: bit i of mask[i / 32] stands for profile i.
struct Mask255 {
  unsigned mask[8];
};
static_assert(sizeof(Mask255) == 32);

// nvmlWorkloadPowerProfileInfo_v1_t (44 bytes).
struct WorkloadPowerProfileInfo {
  unsigned version;
  unsigned profile_id;
  unsigned priority;
  Mask255 conflicting_mask;
};
static_assert(sizeof(WorkloadPowerProfileInfo) == 44);

// nvmlWorkloadPowerProfileProfilesInfo_v1_t: perf_profile[i] describes profile i
// when bit i of perf_profiles_mask is set.
struct WorkloadPowerProfilesInfo {
  unsigned version;
  Mask255 perf_profiles_mask;
  WorkloadPowerProfileInfo perf_profile[workload_power_max_profiles];
};
static_assert(sizeof(WorkloadPowerProfilesInfo) == 11256);

// nvmlWorkloadPowerProfileCurrentProfiles_v1_t (100 bytes).
struct WorkloadPowerCurrentProfiles {
  unsigned version;
  Mask255 perf_profiles_mask;
  Mask255 requested_profiles_mask;
  Mask255 enforced_profiles_mask;
};
static_assert(sizeof(WorkloadPowerCurrentProfiles) == 100);

// nvmlWorkloadPowerProfileRequestedProfiles_v1_t (36 bytes): Set adds these
// profiles to the request, Clear removes them.
struct WorkloadPowerRequestedProfiles {
  unsigned version;
  Mask255 requested_profiles_mask;
};
static_assert(sizeof(WorkloadPowerRequestedProfiles) == 36);

// NVML_STRUCT_VERSION(name, 1): the struct's size with the version in the top byte.
template <class Struct>
constexpr unsigned struct_version_1 = static_cast<unsigned>(sizeof(Struct)) | (1u << 24);

// Every entry point dvfslab uses:
//   X(member, C signature, a driver branch that has it, symbol names to try in order)
// The branch is the one users are told to update to when the symbol is missing;
// where the first release is not certain, a later branch known to have it is given.
// Versioned names come first: they are the ones current drivers implement; the
// plain name is only listed where its ABI is the same. nvmlDeviceGetPciInfo (v1)
// filled an older struct layout, so only _v3 and _v2 are tried.
#define DVFSLAB_NVML_ENTRY_POINTS(X)                                                                         \
  X(init, Return(), "R319", "nvmlInit_v2", "nvmlInit")                                                       \
  X(shutdown, Return(), "R319", "nvmlShutdown")                                                              \
  X(error_string, const char*(Return), "R319", "nvmlErrorString")                                            \
  X(system_get_driver_version, Return(char*, unsigned), "R319", "nvmlSystemGetDriverVersion")                \
  X(system_get_nvml_version, Return(char*, unsigned), "R319", "nvmlSystemGetNVMLVersion")                    \
  X(device_get_count, Return(unsigned*), "R319", "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")              \
  X(device_get_handle_by_index, Return(unsigned, Device*), "R319", "nvmlDeviceGetHandleByIndex_v2",          \
    "nvmlDeviceGetHandleByIndex")                                                                            \
  X(device_get_name, Return(Device, char*, unsigned), "R319", "nvmlDeviceGetName")                           \
  X(device_get_uuid, Return(Device, char*, unsigned), "R319", "nvmlDeviceGetUUID")                           \
  X(device_get_pci_info, Return(Device, PciInfo*), "R319", "nvmlDeviceGetPciInfo_v3",                        \
    "nvmlDeviceGetPciInfo_v2")                                                                               \
  X(device_get_architecture, Return(Device, unsigned*), "R470", "nvmlDeviceGetArchitecture")                 \
  X(device_get_supported_memory_clocks, Return(Device, unsigned*, unsigned*), "R319",                        \
    "nvmlDeviceGetSupportedMemoryClocks")                                                                    \
  X(device_get_supported_graphics_clocks, Return(Device, unsigned, unsigned*, unsigned*), "R319",            \
    "nvmlDeviceGetSupportedGraphicsClocks")                                                                  \
  X(device_get_default_applications_clock, Return(Device, int, unsigned*), "R319",                           \
    "nvmlDeviceGetDefaultApplicationsClock")                                                                 \
  X(device_get_applications_clock, Return(Device, int, unsigned*), "R319", "nvmlDeviceGetApplicationsClock") \
  X(device_get_power_management_default_limit, Return(Device, unsigned*), "R319",                            \
    "nvmlDeviceGetPowerManagementDefaultLimit")                                                              \
  X(device_get_power_management_limit_constraints, Return(Device, unsigned*, unsigned*), "R319",             \
    "nvmlDeviceGetPowerManagementLimitConstraints")                                                          \
  X(device_get_power_management_limit, Return(Device, unsigned*), "R319",                                    \
    "nvmlDeviceGetPowerManagementLimit")                                                                     \
  X(device_get_power_usage, Return(Device, unsigned*), "R319", "nvmlDeviceGetPowerUsage")                    \
  X(device_get_total_energy_consumption, Return(Device, unsigned long long*), "R410",                        \
    "nvmlDeviceGetTotalEnergyConsumption")                                                                   \
  X(device_get_field_values, Return(Device, int, FieldValue*), "R384", "nvmlDeviceGetFieldValues")           \
  X(device_get_clock_info, Return(Device, int, unsigned*), "R319", "nvmlDeviceGetClockInfo")                 \
  X(device_get_temperature, Return(Device, int, unsigned*), "R319", "nvmlDeviceGetTemperature")              \
  X(device_get_utilization_rates, Return(Device, Utilization*), "R319", "nvmlDeviceGetUtilizationRates")     \
  X(device_get_current_clocks_event_reasons, Return(Device, unsigned long long*), "R319",                    \
    "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")                   \
  X(device_set_gpu_locked_clocks, Return(Device, unsigned, unsigned), "R418",                                \
    "nvmlDeviceSetGpuLockedClocks")                                                                          \
  X(device_reset_gpu_locked_clocks, Return(Device), "R418", "nvmlDeviceResetGpuLockedClocks")                \
  X(device_set_memory_locked_clocks, Return(Device, unsigned, unsigned), "R470",                             \
    "nvmlDeviceSetMemoryLockedClocks")                                                                       \
  X(device_reset_memory_locked_clocks, Return(Device), "R470", "nvmlDeviceResetMemoryLockedClocks")          \
  X(device_set_applications_clocks, Return(Device, unsigned, unsigned), "R319",                              \
    "nvmlDeviceSetApplicationsClocks")                                                                       \
  X(device_reset_applications_clocks, Return(Device), "R319", "nvmlDeviceResetApplicationsClocks")           \
  X(device_set_power_management_limit, Return(Device, unsigned), "R319",                                     \
    "nvmlDeviceSetPowerManagementLimit")                                                                     \
  X(device_get_mig_mode, Return(Device, unsigned*, unsigned*), "R450", "nvmlDeviceGetMigMode")               \
  X(device_get_compute_running_processes, Return(Device, unsigned*, ProcessInfo*), "R510",                   \
    "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2")                  \
  X(device_workload_power_profile_get_profiles_info, Return(Device, WorkloadPowerProfilesInfo*), "R570",     \
    "nvmlDeviceWorkloadPowerProfileGetProfilesInfo")                                                         \
  X(device_workload_power_profile_get_current_profiles, Return(Device, WorkloadPowerCurrentProfiles*),       \
    "R570", "nvmlDeviceWorkloadPowerProfileGetCurrentProfiles")                                              \
  X(device_workload_power_profile_set_requested_profiles, Return(Device, WorkloadPowerRequestedProfiles*),   \
    "R570", "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles")                                            \
  X(device_workload_power_profile_clear_requested_profiles,                                                  \
    Return(Device, WorkloadPowerRequestedProfiles*), "R570", "nvmlDeviceWorkloadPowerProfileClearRequestedProfiles")

}  // namespace dvfslab::nvml
