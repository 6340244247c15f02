#include "dvfslab/gpu.hpp"

#include <algorithm>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "gpu/clock_knob_control.hpp"
#include "gpu/control_set.hpp"
#include "gpu/workload_profile_knob.hpp"

namespace dvfslab {
namespace {

void refuse_in_read_only_mode(const Gpu& gpu, std::string_view action) {
  if (gpu.read_only()) {
    throw PermissionError(std::string("refused to ") + std::string(action) +
                          ": DVFSLAB_READ_ONLY=1 forbids every clock and power-limit change "
                          "(unset it to allow control calls)");
  }
}

}  // namespace

bool ClockTable::supports(int memory, int graphics) const {
  auto it = graphics_mhz.find(memory);
  return it != graphics_mhz.end() &&
         std::find(it->second.begin(), it->second.end(), graphics) != it->second.end();
}

std::vector<int> ClockTable::all_graphics_mhz() const {
  std::vector<int> all;
  for (const auto& [memory, clocks] : graphics_mhz) all.insert(all.end(), clocks.begin(), clocks.end());
  std::sort(all.begin(), all.end(), std::greater<>());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void Gpu::lock_sm_clocks(int min_mhz, int max_mhz) {
  refuse_in_read_only_mode(*this, "lock the SM clock");
  do_lock_sm_clocks(min_mhz, max_mhz);
}

void Gpu::reset_sm_clocks() {
  refuse_in_read_only_mode(*this, "reset the SM clock lock");
  do_reset_sm_clocks();
}

void Gpu::lock_memory_clocks(int min_mhz, int max_mhz) {
  refuse_in_read_only_mode(*this, "lock the memory clock");
  do_lock_memory_clocks(min_mhz, max_mhz);
}

void Gpu::reset_memory_clocks() {
  refuse_in_read_only_mode(*this, "reset the memory clock lock");
  do_reset_memory_clocks();
}

void Gpu::set_application_clocks(int memory_mhz, int graphics_mhz) {
  refuse_in_read_only_mode(*this, "set application clocks");
  do_set_application_clocks(memory_mhz, graphics_mhz);
}

void Gpu::reset_application_clocks() {
  refuse_in_read_only_mode(*this, "reset application clocks");
  do_reset_application_clocks();
}

void Gpu::set_power_limit(double watts) {
  refuse_in_read_only_mode(*this, "set the power limit");
  do_set_power_limit(watts);
}

void Gpu::reset_power_limit() {
  refuse_in_read_only_mode(*this, "reset the power limit");
  do_reset_power_limit();
}

void Gpu::restore(const ControlState& state) {
  refuse_in_read_only_mode(*this, "restore clocks and power limit");
  if (state.locked_sm_min_mhz && state.locked_sm_max_mhz) {
    do_lock_sm_clocks(*state.locked_sm_min_mhz, *state.locked_sm_max_mhz);
  } else {
    do_reset_sm_clocks();
  }
  if (state.locked_mem_min_mhz && state.locked_mem_max_mhz) {
    do_lock_memory_clocks(*state.locked_mem_min_mhz, *state.locked_mem_max_mhz);
  } else {
    do_reset_memory_clocks();
  }
  if (state.application_memory_mhz && state.application_graphics_mhz) {
    do_set_application_clocks(*state.application_memory_mhz, *state.application_graphics_mhz);
  }
  if (state.power_limit_w) do_set_power_limit(*state.power_limit_w);
}

std::unique_ptr<GpuControl> Gpu::control() {
  // The profile knob only where profiles exist: a GPU or driver without them keeps
  // the clock control alone, and its journals no profile state.
  if (!workload_power_profiles(*this)) return std::make_unique<ClockKnobControl>(*this);
  std::vector<std::unique_ptr<GpuControl>> members;
  members.push_back(std::make_unique<ClockKnobControl>(*this));
  members.push_back(std::make_unique<WorkloadProfileKnob>(*this));
  return std::make_unique<ControlSet>(std::move(members));
}

}  // namespace dvfslab
