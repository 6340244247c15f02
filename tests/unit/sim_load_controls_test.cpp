#include <gtest/gtest.h>

#include <cstdlib>

#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

TEST(SimLoadControls, RoundTripsTheControlStateEvenInReadOnlyMode) {
  SimGpu changed(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  changed.lock_sm_clocks(1200, 1200);
  changed.lock_memory_clocks(2201, 2201);
  changed.set_power_limit(400);
  const ControlState state = changed.control_state();

  SimGpu fresh(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  fresh.set_read_only(true);
  fresh.load_controls(state);
  fresh.set_read_only(false);
  EXPECT_EQ(fresh.control_state(), state);
  EXPECT_EQ(fresh.effective_sm_mhz(), 1200);

  fresh.load_controls(ControlState{});
  EXPECT_EQ(fresh.control_state(), SimGpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time).control_state());
}

}  // namespace
}  // namespace dvfslab
