#include "gpu/nvml/nvml_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_errors.hpp"
#include "gpu/nvml/nvml_profile_mask.hpp"
#include "gpu/nvml/nvml_throttle.hpp"

namespace dvfslab::nvml {
namespace {

constexpr std::string_view locked_sm_clocks_gpus =
    "locked SM clocks need a Volta or newer GPU; older GPUs use application clocks";
constexpr std::string_view locked_memory_clocks_gpus =
    "locked memory clocks need an Ampere or newer data-centre GPU (A100, H100, H200, ...)";
constexpr std::string_view application_clocks_gpus =
    "application clocks exist on data-centre (Tesla) GPUs from Kepler on and some workstation "
    "boards, not on most GeForce boards";
constexpr std::string_view workload_profiles_gpus =
    "workload power profiles need an NVIDIA driver R570 or newer and a GPU that offers them "
    "(`dvfslab info` lists them)";
constexpr std::string_view power_limit_gpus =
    "a settable power limit needs a data-centre or workstation GPU from Kepler on";

std::string architecture_name(std::optional<unsigned> architecture) {
  static constexpr std::array<std::string_view, 9> names = {
      "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell"};
  if (!architecture || *architecture == arch_unknown) return "unknown";
  if (*architecture >= arch_kepler && *architecture <= arch_blackwell) {
    return std::string(names[*architecture - arch_kepler]);
  }
  return fmt::format("unknown ({})", *architecture);
}

std::optional<double> field_as_double(const FieldValue& field) {
  if (field.nvml_return != success) return std::nullopt;
  switch (field.value_type) {
    case value_type_double: return field.value.d_val;
    case value_type_unsigned_int: return static_cast<double>(field.value.ui_val);
    case value_type_unsigned_long: return static_cast<double>(field.value.ul_val);
    case value_type_unsigned_long_long: return static_cast<double>(field.value.ull_val);
    case value_type_signed_long_long: return static_cast<double>(field.value.sll_val);
    case value_type_signed_int: return static_cast<double>(field.value.si_val);
    default: return std::nullopt;
  }
}

std::string from_buffer(const char* buffer, std::size_t size) {
  return std::string(buffer, std::find(buffer, buffer + size, '\0'));
}

std::vector<int> descending(const unsigned* clocks, unsigned count) {
  std::vector<int> result(clocks, clocks + count);
  std::sort(result.begin(), result.end(), std::greater<>());
  return result;
}

}  // namespace

NvmlGpu::NvmlGpu(std::shared_ptr<Library> library, Device device, int index)
    : library_(std::move(library)), device_(device) {
  identity_.index = index;
  identity_.backend = "nvml";
  read_identity();
}

template <Entry E, class... Args>
void NvmlGpu::call(std::string_view action, std::string_view supported_on, Args... args) {
  const Return code = library_->get<E>(action)(args...);
  if (code != success) fail(E, code, action, supported_on);
}

template <Entry E, class... Args>
bool NvmlGpu::try_call(std::string_view action, Args... args) {
  auto* function = library_->find<E>();
  if (function == nullptr) return false;
  const Return code = function(args...);
  if (code == success) return true;
  // FUNCTION_NOT_FOUND: the library exports the name but this driver lacks it.
  if (code == error_not_supported || code == error_function_not_found) return false;
  fail(E, code, action, {});
}

void NvmlGpu::fail(Entry entry, Return code, std::string_view action, std::string_view supported_on) {
  const std::string gpu = identity_.name.empty()
                              ? fmt::format("GPU {}", identity_.index)
                              : fmt::format("GPU {} ({})", identity_.index, identity_.name);
  throw_error(code, Failure{gpu, std::string(action), library_->symbol_name(entry), library_->describe(code),
                            supported_on});
}

void NvmlGpu::read_identity() {
  std::array<char, name_buffer_size> name{};
  call<Entry::device_get_name>("read the GPU name", {}, device_, name.data(), name_buffer_size);
  identity_.name = from_buffer(name.data(), name.size());

  std::array<char, uuid_buffer_size> uuid{};
  call<Entry::device_get_uuid>("read the GPU UUID", {}, device_, uuid.data(), uuid_buffer_size);
  identity_.uuid = from_buffer(uuid.data(), uuid.size());
  identity_.device_spec = identity_.uuid;  // an index can change between boots; the UUID cannot

  PciInfo pci{};
  call<Entry::device_get_pci_info>("read the PCI bus id", {}, device_, &pci);
  identity_.pci_bus_id = from_buffer(pci.bus_id, sizeof pci.bus_id);

  unsigned architecture = 0;
  if (try_call<Entry::device_get_architecture>("read the GPU architecture", device_, &architecture)) {
    architecture_ = architecture;
  }
  identity_.architecture = architecture_name(architecture_);

  // Drivers before R450 have no MIG and GPUs without it answer NOT_SUPPORTED: both
  // are MIG off. Any other fault (a lost GPU) also leaves it off here, so that
  // opening makes no demand of an optional reading: the next call reports it.
  if (auto* get_mig_mode = library_->find<Entry::device_get_mig_mode>()) {
    unsigned current_mode = 0;
    unsigned pending_mode = 0;
    identity_.mig_enabled =
        get_mig_mode(device_, &current_mode, &pending_mode) == success && current_mode == device_mig_enable;
  }

  std::array<char, version_buffer_size> version{};
  call<Entry::system_get_driver_version>("read the driver version", {}, version.data(), version_buffer_size);
  identity_.driver_version = from_buffer(version.data(), version.size());
  version.fill('\0');
  call<Entry::system_get_nvml_version>("read the NVML version", {}, version.data(), version_buffer_size);
  identity_.library_version = from_buffer(version.data(), version.size());
}

ClockTable NvmlGpu::clock_table() {
  ClockTable table;
  std::array<unsigned, max_clock_count> clocks{};
  unsigned count = max_clock_count;
  if (!try_call<Entry::device_get_supported_memory_clocks>("list the supported memory clocks", device_,
                                                           &count, clocks.data())) {
    return table;
  }
  table.memory_mhz = descending(clocks.data(), count);
  for (int memory : table.memory_mhz) {
    count = max_clock_count;
    call<Entry::device_get_supported_graphics_clocks>(
        fmt::format("list the graphics clocks supported at memory clock {} MHz", memory), {}, device_,
        static_cast<unsigned>(memory), &count, clocks.data());
    table.graphics_mhz[memory] = descending(clocks.data(), count);
  }
  unsigned graphics = 0;
  unsigned memory = 0;
  if (try_call<Entry::device_get_default_applications_clock>("read the default graphics clock", device_,
                                                             clock_graphics, &graphics) &&
      try_call<Entry::device_get_default_applications_clock>("read the default memory clock", device_,
                                                             clock_mem, &memory)) {
    table.default_graphics_mhz = static_cast<int>(graphics);
    table.default_memory_mhz = static_cast<int>(memory);
  }
  return table;
}

PowerLimits NvmlGpu::power_limits() {
  PowerLimits limits;
  unsigned milliwatts = 0;
  unsigned max_milliwatts = 0;
  if (try_call<Entry::device_get_power_management_default_limit>("read the default power limit", device_,
                                                                 &milliwatts)) {
    limits.default_w = milliwatts / 1000.0;
  }
  if (try_call<Entry::device_get_power_management_limit_constraints>("read the power-limit range", device_,
                                                                     &milliwatts, &max_milliwatts)) {
    limits.min_w = milliwatts / 1000.0;
    limits.max_w = max_milliwatts / 1000.0;
  }
  if (try_call<Entry::device_get_power_management_limit>("read the power limit", device_, &milliwatts)) {
    limits.current_w = milliwatts / 1000.0;
  }
  return limits;
}

void NvmlGpu::read_field_values(Telemetry& telemetry) {
  std::array<FieldValue, 2> fields{};
  fields[0].field_id = field_power_instant;
  fields[1].field_id = field_memory_temperature;
  if (!try_call<Entry::device_get_field_values>("read instant power and memory temperature", device_,
                                                static_cast<int>(fields.size()), fields.data())) {
    return;
  }
  for (const FieldValue& field : fields) {
    if (field.nvml_return == error_gpu_is_lost) {
      fail(Entry::device_get_field_values, field.nvml_return, "read instant power", {});
    }
  }
  if (auto milliwatts = field_as_double(fields[0])) telemetry.power_instant_w = *milliwatts / 1000.0;
  telemetry.memory_temperature_c = field_as_double(fields[1]);
}

Telemetry NvmlGpu::read_telemetry() {
  Telemetry telemetry;
  telemetry.time_s = clock_.now_s();
  read_field_values(telemetry);

  unsigned value = 0;
  if (try_call<Entry::device_get_power_usage>("read the averaged power", device_, &value)) {
    telemetry.power_average_w = value / 1000.0;
  }
  unsigned long long millijoules = 0;
  if (try_call<Entry::device_get_total_energy_consumption>("read the energy counter", device_,
                                                           &millijoules)) {
    telemetry.energy_j = static_cast<double>(millijoules) / 1000.0;
  }
  if (try_call<Entry::device_get_clock_info>("read the SM clock", device_, clock_sm, &value)) {
    telemetry.sm_mhz = static_cast<int>(value);
  }
  if (try_call<Entry::device_get_clock_info>("read the memory clock", device_, clock_mem, &value)) {
    telemetry.mem_mhz = static_cast<int>(value);
  }
  if (try_call<Entry::device_get_temperature>("read the GPU temperature", device_, temperature_gpu, &value)) {
    telemetry.gpu_temperature_c = value;
  }
  Utilization utilization{};
  if (try_call<Entry::device_get_utilization_rates>("read the utilisation", device_, &utilization)) {
    telemetry.gpu_utilization_pct = static_cast<int>(utilization.gpu);
    telemetry.memory_utilization_pct = static_cast<int>(utilization.memory);
  }
  unsigned long long reasons = 0;
  if (try_call<Entry::device_get_current_clocks_event_reasons>("read the clock-event reasons", device_,
                                                               &reasons)) {
    telemetry.throttle_reasons = neutral_throttle_reasons(reasons);
  }
  return telemetry;
}

std::optional<double> NvmlGpu::sensor_period_s() const {
  // On Volta and newer the board power sensor behind the instant power, the energy
  // counter and the averaged power refreshes about every 100 ms (Yang, Adamek,
  // Armour, "Accurate and Convenient Energy Measurements for GPUs", SC24). For
  // older GPUs no figure is known, so none is claimed.
  if (architecture_ && *architecture_ >= arch_volta && *architecture_ <= arch_blackwell) return 0.1;
  return std::nullopt;
}

ControlState NvmlGpu::control_state() {
  // NVML has no getter for locked clocks: they stay absent (see ControlState).
  ControlState state;
  unsigned graphics = 0;
  unsigned memory = 0;
  if (try_call<Entry::device_get_applications_clock>("read the application graphics clock", device_,
                                                     clock_graphics, &graphics) &&
      try_call<Entry::device_get_applications_clock>("read the application memory clock", device_, clock_mem,
                                                     &memory)) {
    state.application_graphics_mhz = static_cast<int>(graphics);
    state.application_memory_mhz = static_cast<int>(memory);
  }
  unsigned milliwatts = 0;
  if (try_call<Entry::device_get_power_management_limit>("read the power limit", device_, &milliwatts)) {
    state.power_limit_w = milliwatts / 1000.0;
  }
  return state;
}

std::optional<std::vector<int>> NvmlGpu::compute_process_ids() {
  auto* list_processes = library_->find<Entry::device_get_compute_running_processes>();
  if (list_processes == nullptr) return std::nullopt;
  constexpr std::string_view action = "list the processes using the GPU";
  // Processes may start between the call that sizes the list and the one that
  // fills it: the list grows until it holds them all.
  std::vector<ProcessInfo> processes(64);
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto count = static_cast<unsigned>(processes.size());
    const Return code = list_processes(device_, &count, processes.data());
    if (code == success) {
      std::vector<int> ids;
      for (unsigned i = 0; i < count && i < processes.size(); ++i) {
        ids.push_back(static_cast<int>(processes[i].pid));
      }
      return ids;
    }
    if (code == error_not_supported || code == error_function_not_found) return std::nullopt;
    if (code != error_insufficient_size) fail(Entry::device_get_compute_running_processes, code, action, {});
    processes.resize(std::max<std::size_t>(count, processes.size()) * 2);
  }
  fail(Entry::device_get_compute_running_processes, error_insufficient_size, action, {});
}

void NvmlGpu::refuse_in_mig_mode() const {
  if (!identity_.mig_enabled) return;
  throw PermissionError(fmt::format(
      "GPU {} is in MIG mode: its clocks and power limit are shared by all its instances; dvfslab does not "
      "change them",
      identity_.index));
}

void NvmlGpu::do_lock_sm_clocks(int min_mhz, int max_mhz) {
  refuse_in_mig_mode();
  call<Entry::device_set_gpu_locked_clocks>(fmt::format("lock the SM clock to {}–{} MHz", min_mhz, max_mhz),
                                            locked_sm_clocks_gpus, device_, static_cast<unsigned>(min_mhz),
                                            static_cast<unsigned>(max_mhz));
}

void NvmlGpu::do_reset_sm_clocks() {
  call<Entry::device_reset_gpu_locked_clocks>("reset the SM clock lock", locked_sm_clocks_gpus, device_);
}

void NvmlGpu::do_lock_memory_clocks(int min_mhz, int max_mhz) {
  refuse_in_mig_mode();
  call<Entry::device_set_memory_locked_clocks>(
      fmt::format("lock the memory clock to {}–{} MHz", min_mhz, max_mhz), locked_memory_clocks_gpus, device_,
      static_cast<unsigned>(min_mhz), static_cast<unsigned>(max_mhz));
}

void NvmlGpu::do_reset_memory_clocks() {
  call<Entry::device_reset_memory_locked_clocks>("reset the memory clock lock", locked_memory_clocks_gpus,
                                                 device_);
}

void NvmlGpu::do_set_application_clocks(int memory_mhz, int graphics_mhz) {
  refuse_in_mig_mode();
  call<Entry::device_set_applications_clocks>(
      fmt::format("set application clocks to memory {} MHz, graphics {} MHz", memory_mhz, graphics_mhz),
      application_clocks_gpus, device_, static_cast<unsigned>(memory_mhz),
      static_cast<unsigned>(graphics_mhz));
}

void NvmlGpu::do_reset_application_clocks() {
  call<Entry::device_reset_applications_clocks>("reset application clocks", application_clocks_gpus, device_);
}

void NvmlGpu::do_set_power_limit(double watts) {
  refuse_in_mig_mode();
  call<Entry::device_set_power_management_limit>(fmt::format("set the power limit to {} W", watts),
                                                 power_limit_gpus, device_,
                                                 static_cast<unsigned>(std::lround(watts * 1000.0)));
}

void NvmlGpu::do_reset_power_limit() {
  // NVML has no reset call: the default limit is read and set.
  unsigned milliwatts = 0;
  call<Entry::device_get_power_management_default_limit>("read the default power limit", power_limit_gpus,
                                                         device_, &milliwatts);
  call<Entry::device_set_power_management_limit>("reset the power limit to its default", power_limit_gpus,
                                                 device_, milliwatts);
}

// Workload power profiles (R570+). On a driver without the functions, or a GPU
// that answers NOT_SUPPORTED (an H200 on driver 580 does, for both getters),
// there are none, which is not an error.
std::optional<WorkloadPowerProfiles> NvmlGpu::read_workload_power_profiles() {
  // The profile table is 11 KB: on the heap rather than the stack.
  auto info = std::make_unique<WorkloadPowerProfilesInfo>();
  info->version = struct_version_1<WorkloadPowerProfilesInfo>;
  if (!try_call<Entry::device_workload_power_profile_get_profiles_info>("list the workload power profiles",
                                                                        device_, info.get())) {
    return std::nullopt;
  }
  WorkloadPowerCurrentProfiles current{};
  current.version = struct_version_1<WorkloadPowerCurrentProfiles>;
  if (!try_call<Entry::device_workload_power_profile_get_current_profiles>(
          "read the requested workload power profiles", device_, &current)) {
    return std::nullopt;
  }
  WorkloadPowerProfiles profiles;
  for (int id : ids_in(info->perf_profiles_mask)) {
    const WorkloadPowerProfileInfo& entry = info->perf_profile[id];
    profiles.supported.push_back({id, workload_power_profile_name(id), static_cast<int>(entry.priority)});
  }
  profiles.requested = ids_in(current.requested_profiles_mask);
  profiles.enforced = ids_in(current.enforced_profiles_mask);
  return profiles;
}

void NvmlGpu::add_requested_workload_power_profiles(const std::vector<int>& ids) {
  refuse_in_mig_mode();
  WorkloadPowerRequestedProfiles request{struct_version_1<WorkloadPowerRequestedProfiles>, mask_of(ids)};
  call<Entry::device_workload_power_profile_set_requested_profiles>(
      fmt::format("request the workload power profiles {}", profile_names_of(ids)), workload_profiles_gpus,
      device_, &request);
}

void NvmlGpu::remove_requested_workload_power_profiles(const std::vector<int>& ids) {
  WorkloadPowerRequestedProfiles request{struct_version_1<WorkloadPowerRequestedProfiles>, mask_of(ids)};
  call<Entry::device_workload_power_profile_clear_requested_profiles>(
      fmt::format("clear the requested workload power profiles {}", profile_names_of(ids)),
      workload_profiles_gpus, device_, &request);
}

}  // namespace dvfslab::nvml
