#pragma once
// A base for test GPUs whose controls do nothing: the clock and power-limit setters
// succeed without effect, the clock table and power limits are empty and the
// control state is the default. A test GPU adds its identity, clock and telemetry.
#include "dvfslab/gpu.hpp"

namespace dvfslab::testing {

class FixedControlsGpu : public Gpu {
 public:
  ClockTable clock_table() override { return {}; }
  PowerLimits power_limits() override { return {}; }
  ControlState control_state() override { return {}; }

 protected:
  void do_lock_sm_clocks(int, int) override {}
  void do_reset_sm_clocks() override {}
  void do_lock_memory_clocks(int, int) override {}
  void do_reset_memory_clocks() override {}
  void do_set_application_clocks(int, int) override {}
  void do_reset_application_clocks() override {}
  void do_set_power_limit(double) override {}
  void do_reset_power_limit() override {}
};

}  // namespace dvfslab::testing
