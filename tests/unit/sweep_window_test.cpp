// How the runner sizes its calls into a workload while filling a window.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "sweep/window.hpp"

namespace dvfslab::sweep_detail {
namespace {

TEST(IterationPace, FirstCallIsOneIteration) {
  const IterationPace pace;
  EXPECT_EQ(pace.iterations_for(2.0), 1);
}

TEST(IterationPace, SizesCallsFromTheLastPaceWithinTwiceTheLargestCall) {
  IterationPace pace;
  pace.observe(0.05, 5);  // 10 ms per iteration
  EXPECT_EQ(pace.iterations_for(0.08), 8);
  EXPECT_EQ(pace.iterations_for(2.0), 10) << "200 iterations would fill the window; the cap is 2 × 5";
  pace.observe(0.1, 10);
  EXPECT_EQ(pace.iterations_for(2.0), 20);
  EXPECT_EQ(pace.iterations_for(0.0001), 1);
}

// A program's markers read from the pipe in one burst make a call look nearly free
// (the case that once sized a call at 30,000 iterations of 20 ms for a 0.3 s window).
TEST(IterationPace, AMarkerBurstCannotBlowUpTheNextCall) {
  IterationPace pace;
  pace.observe(0.2, 10);      // 20 ms per iteration
  pace.observe(0.00001, 15);  // 15 buffered markers read at once
  EXPECT_EQ(pace.iterations_for(0.3), 30);
}

TEST(IterationPace, CallsWithoutIterationsTeachNothing) {
  IterationPace pace;
  pace.observe(1.0, 0);
  EXPECT_EQ(pace.iterations_for(2.0), 1);
}

// A call that took no time on the clock once sized the next at one iteration again,
// forever: a twin of 1e-9 s per unit never filled its window.
TEST(IterationPace, M2_CallsThatTakeNoTimeDoubleUpToTheLargestAllowed) {
  IterationPace pace;
  pace.observe(0.0, 4);
  EXPECT_EQ(pace.iterations_for(2.0), 8);
  pace.observe(0.0, 8);
  EXPECT_EQ(pace.iterations_for(2.0), 16);
  pace.observe(0.0, IterationPace::largest_allowed_call);
  EXPECT_EQ(pace.iterations_for(2.0), IterationPace::largest_allowed_call);
  pace.observe(0.5, 10);  // time again: the pace decides
  EXPECT_EQ(pace.iterations_for(0.1), 2);
}

// Iterations that never move the clock: the window ends with an error after a
// bounded number of calls instead of spinning (counted, no time-out involved).
class TimelessWorkload final : public Workload {
 public:
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "units of work"; }
  double items_per_iteration() const override { return 1.0; }
  void run_iterations(std::int64_t) override { ++calls; }
  int calls = 0;

 private:
  Case case_{"timeless", 1, Mode::train, Precision::fp32};
};

TEST(MeasureWindow, M2_IterationsThatTakeNoTimeEndTheWindowWithAnError) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  EnergyMeter meter(gpu);
  meter.start();
  TimelessWorkload workload;
  IterationPace pace;
  try {
    measure_window(meter, workload, gpu.clock(), 1.0, pace, "point");
    FAIL() << "a window of iterations that take no time cannot fill";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timeless ran 1000000000 iterations without the GPU's clock moving"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LE(workload.calls, 32) << "the calls double from 1 to 1e9";
}

}  // namespace
}  // namespace dvfslab::sweep_detail
