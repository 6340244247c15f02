// How the runner sizes its calls into a workload while filling a window.
#include <gtest/gtest.h>

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
  pace.observe(0.0, 4);
  EXPECT_EQ(pace.iterations_for(2.0), 1) << "no time measured yet";
}

}  // namespace
}  // namespace dvfslab::sweep_detail
