#include "gpu/recorded_control_gpu.hpp"

#include <cmath>

namespace dvfslab {

namespace {

Setting over(Setting defaults, const Setting& requested) {
  if (requested.sm_mhz) defaults.sm_mhz = requested.sm_mhz;
  if (requested.mem_mhz) defaults.mem_mhz = requested.mem_mhz;
  if (requested.power_limit_w) defaults.power_limit_w = requested.power_limit_w;
  return defaults;
}

}  // namespace

Setting RecordedControlGpu::with_defaults(const Setting& requested) const {
  return over(default_setting(), requested);
}

Setting RecordedControlGpu::with_defaults_of(const std::string& workload, const Setting& requested) const {
  return over(default_setting_of(workload), requested);
}

Setting RecordedControlGpu::current_setting() const { return with_defaults(applied_setting()); }

Setting RecordedControlGpu::current_setting_of(const std::string& workload) const {
  return with_defaults_of(workload, applied_setting());
}

Setting RecordedControlGpu::applied_setting() const {
  Setting applied;
  // A locked clock wins over the application clock, as on the real driver.
  applied.sm_mhz =
      control_.locked_sm_max_mhz ? control_.locked_sm_max_mhz : control_.application_graphics_mhz;
  applied.mem_mhz =
      control_.locked_mem_max_mhz ? control_.locked_mem_max_mhz : control_.application_memory_mhz;
  if (control_.power_limit_w) applied.power_limit_w = static_cast<int>(std::lround(*control_.power_limit_w));
  return applied;
}

PowerLimits RecordedControlGpu::with_current_limit(PowerLimits limits) const {
  if (limits.default_w)
    limits.current_w = control_.power_limit_w ? *control_.power_limit_w : *limits.default_w;
  return limits;
}

// The table answers one clock per setting: a locked range holds its top.
void RecordedControlGpu::do_lock_sm_clocks(int /*min_mhz*/, int max_mhz) {
  settle_before_change();
  control_.locked_sm_max_mhz = max_mhz;
  control_.locked_sm_min_mhz = max_mhz;
}
void RecordedControlGpu::do_reset_sm_clocks() {
  settle_before_change();
  control_.locked_sm_min_mhz.reset();
  control_.locked_sm_max_mhz.reset();
}
void RecordedControlGpu::do_lock_memory_clocks(int /*min_mhz*/, int max_mhz) {
  settle_before_change();
  control_.locked_mem_max_mhz = max_mhz;
  control_.locked_mem_min_mhz = max_mhz;
}
void RecordedControlGpu::do_reset_memory_clocks() {
  settle_before_change();
  control_.locked_mem_min_mhz.reset();
  control_.locked_mem_max_mhz.reset();
}
void RecordedControlGpu::do_set_application_clocks(int memory_mhz, int graphics_mhz) {
  settle_before_change();
  control_.application_memory_mhz = memory_mhz;
  control_.application_graphics_mhz = graphics_mhz;
}
void RecordedControlGpu::do_reset_application_clocks() {
  settle_before_change();
  control_.application_memory_mhz.reset();
  control_.application_graphics_mhz.reset();
}
void RecordedControlGpu::do_set_power_limit(double watts) {
  settle_before_change();
  control_.power_limit_w = watts;
}
void RecordedControlGpu::do_reset_power_limit() {
  settle_before_change();
  control_.power_limit_w.reset();
}

}  // namespace dvfslab
