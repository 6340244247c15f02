// The sweep's windows for a command workload, a program that runs by itself and
// reports iterations through markers: a window lasts its duration and counts what
// completed inside it (issue 11, items 3 and 4). The program paces itself; the
// margins are wide enough for a loaded machine.
#include <gtest/gtest.h>

#include "dvfslab/command.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "sweep/window.hpp"

namespace dvfslab {
namespace {

// `iter 1 items 8` every 10 ms, after an optional burst of iterations at start.
std::vector<std::string> paced_program(int burst) {
  const std::string script =
      "import os, sys, time\n"
      "fd = int(os.environ['DVFSLAB_MARK_FD'])\n"
      "if " +
      std::to_string(burst) +
      " > 0:\n"
      "    os.write(fd, b'dvfslab:iter " +
      std::to_string(burst) + " items " + std::to_string(burst * 8) +
      "\\n')\n"
      "end = time.monotonic() + 60\n"
      "while time.monotonic() < end:\n"
      "    time.sleep(0.01)\n"
      "    os.write(fd, b'dvfslab:iter 1 items 8\\n')\n";
  return {"python3", "-c", script};
}

class CommandWindows : public ::testing::Test {
 protected:
  SimGpu gpu_{sim_gpu_spec("h200"), SimTimeMode::wall_time};
  EnergyMeter meter_{gpu_};
  sweep_detail::IterationPace pace_;

  std::unique_ptr<Workload> start(int burst) {
    auto workload = make_command_workload(
        paced_program(burst), Case{"paced", 8, Mode::train, Precision::fp32}, "items", &gpu_.clock());
    workload->prepare();
    meter_.start();
    return workload;
  }
};

TEST_F(CommandWindows, WindowsDoNotDoubleAtEveryPoint) {
  auto workload = start(0);
  MeasurePolicy policy;
  policy.warmup_iterations = 2;
  for (int point = 0; point < 6; ++point) {
    gpu_.clock().sleep_for(0.2);  // settle time and the store's writes: the program runs on
    sweep_detail::warm_up(*workload, gpu_.clock(), policy, pace_);
    const Measurement m = sweep_detail::measure_window(meter_, *workload, gpu_.clock(), 0.3, pace_, "point");
    EXPECT_GE(m.duration_s, 0.3) << "point " << point;
    EXPECT_LT(m.duration_s, 0.45) << "point " << point;
    EXPECT_GT(m.iterations, 5) << "point " << point;
  }
}

TEST_F(CommandWindows, IterationsFromBeforeTheWindowAreNotCountedInIt) {
  auto workload = start(1000);
  // Python may take a while to start on a loaded machine: wait for the burst.
  while (workload->completed_between(-1e9, 1e9).iterations < 1000) {
    workload->follow_until(gpu_.clock().now_s() + 0.05);
  }
  gpu_.clock().sleep_for(0.5);  // settle: ~50 paced iterations wait in the pipe
  const Measurement m = sweep_detail::measure_window(meter_, *workload, gpu_.clock(), 0.5, pace_, "point");
  // About 50 iterations of 10 ms (fewer on a loaded machine), never the burst.
  EXPECT_GT(m.iterations, 10);
  EXPECT_LE(m.iterations, 60);
  EXPECT_DOUBLE_EQ(m.items, 8.0 * static_cast<double>(m.iterations));
}

TEST_F(CommandWindows, WarmupIterationsAreNotCountedInTheWindow) {
  auto workload = start(0);
  MeasurePolicy policy;
  policy.warmup_iterations = 30;
  sweep_detail::warm_up(*workload, gpu_.clock(), policy, pace_);
  const Measurement m = sweep_detail::measure_window(meter_, *workload, gpu_.clock(), 0.2, pace_, "point");
  EXPECT_GT(m.iterations, 3);
  EXPECT_LE(m.iterations, 25) << "the 30 warm-up iterations (or some of them) were counted";
}

}  // namespace
}  // namespace dvfslab
