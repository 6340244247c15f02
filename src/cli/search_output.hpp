#pragma once
// What `dvfslab search` prints: the optimum, its saving against the default, the
// probes in order, the confidence and the GPU time, as text or as JSON.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {

struct SearchOutcome {
  GpuIdentity gpu;        // of a job on several GPUs, the first one's
  std::string job_label;  // a job on several GPUs ("GPUs 0, 1 (NVIDIA H200)"); empty for one
  ClockTable clocks;
  PowerLimits limits;
  // The GPU's controls as found (and restored): the default setting ran at them.
  ControlState found;
  frontend::SearchKnobs knobs;
  std::string strategy;
  Objective objective;
  std::string database;
  SweepResult sweep;
  bool stopped_by_budget = false;
  std::vector<Probe> probes;
  std::optional<CaseAnalysis> analysis;  // absent when nothing was measured
  std::optional<double> confidence;
};

// A setting as the search prints it: every knob it controls, with the value the
// GPU was found at where the setting leaves the knob at the default.
nlohmann::json setting_json(const SearchOutcome& outcome, const Setting& setting);
std::string setting_text(const SearchOutcome& outcome, const Setting& setting);

nlohmann::json search_json(const SearchOutcome& outcome);
std::string search_text(const SearchOutcome& outcome);

}  // namespace dvfslab::cli
