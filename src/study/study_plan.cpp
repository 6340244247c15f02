// The built-in plan of `dvfslab study`, written as TOML so it is stored with the run
// like any user plan and a user can start their own plan from it (--print-plan).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "dvfslab/plan.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/study.hpp"

namespace dvfslab {
namespace {

// The study swept the core clock from about a third of the highest clock up (V100:
// 510–1380 of 135–1530 MHz); lower clocks only cost energy.
constexpr double lowest_clock_fraction = 1.0 / 3.0;
// Core clock points per memory clock: the study used 7; 12 spread evenly keep a
// point within about 50 MHz of any optimum on a V100 (step ≈ 90 MHz).
constexpr int core_clock_points = 12;
// Memory clocks far below the highest are idle states with a handful of graphics
// clocks, not settings anyone trains at.
constexpr double lowest_memory_fraction = 0.5;

std::vector<int> study_memory_clocks(const ClockTable& clocks, int lowest_core_mhz) {
  if (clocks.memory_mhz.empty()) return {};
  const int highest = *std::max_element(clocks.memory_mhz.begin(), clocks.memory_mhz.end());
  std::vector<int> chosen;
  for (int memory : clocks.memory_mhz) {
    const auto graphics = clocks.graphics_mhz.find(memory);
    if (memory >= lowest_memory_fraction * highest && graphics != clocks.graphics_mhz.end() &&
        !graphics->second.empty() &&
        *std::max_element(graphics->second.begin(), graphics->second.end()) >= lowest_core_mhz) {
      chosen.push_back(memory);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

const std::vector<StudyCase>& study_cases() {
  // The study's networks at its batch sizes (training as run with Caffe, inference at
  // TensorRT's batch 256); the simulated profiles keep the table of them.
  static const std::vector<StudyCase> cases = [] {
    std::vector<StudyCase> out;
    for (Mode mode : {Mode::train, Mode::infer}) {
      for (const char* network : {"alexnet", "googlenet", "resnet50", "vgg16"}) {
        out.push_back(StudyCase{network, mode, sim_workload_study_batches(network, mode)});
      }
    }
    return out;
  }();
  return cases;
}

std::string study_plan_text(const GpuIdentity& gpu, const ClockTable& clocks, bool sweep_clocks) {
  std::string text = fmt::format(
      "# dvfslab's built-in plan reproducing the e-Energy'19 DVFS study (Tang et al.) on {}.\n"
      "# Written by `dvfslab study`; save it with --print-plan to adapt it for `dvfslab sweep`.\n\n"
      "[plan]\nname = {}\n"
      "description = \"The four CNNs, training and inference, {}\"\n\n",
      gpu.name, toml_string("e-Energy'19 DVFS study on " + gpu.name + (gpu.simulated ? " (SIMULATED)" : "")),
      sweep_clocks ? "across the core clock range" : "at the default setting only");
  if (sweep_clocks) {
    const auto all = clocks.all_graphics_mhz();
    const int lowest = all.empty() ? 0 : static_cast<int>(lowest_clock_fraction * all.front());
    text += "[knobs]\n";
    if (!all.empty()) {
      text += fmt::format(
          "# {} core clocks spread evenly from a third of the highest supported clock up\n"
          "sm_mhz = {{ count = {}, min = {} }}\n",
          core_clock_points, core_clock_points, lowest);
    }
    if (const auto memory = study_memory_clocks(clocks, lowest); memory.size() > 1) {
      text += fmt::format("# the memory clocks of this GPU (at least half the highest)\nmem_mhz = [{}]\n",
                          fmt::join(memory, ", "));
    }
    text += "\n";
  }
  for (const auto& study_case : study_cases()) {
    text +=
        fmt::format("[[cases]]\nworkloads = [\"{}\"]\nmodes = [\"{}\"]\nbatch_sizes = [{}]\n\n",
                    study_case.workload, to_string(study_case.mode), fmt::join(study_case.batch_sizes, ", "));
  }
  text +=
      "[measure]\n"
      "warmup_iterations = 5\n"
      "# 1 s windows: the meter's energy between counter updates makes them as repeatable\n"
      "# as 2 s ones (docs/study.md)\n"
      "duration_s = 1.0\n"
      "repetitions = 2\n"
      "max_repetitions = 5\n"
      "ci_target_pct = 2.0\n"
      "settle_s = 1.0\n"
      "order = \"random\"\n"
      "seed = 2019\n"
      "drift_every = 25\n";
  return text;
}

}  // namespace dvfslab
