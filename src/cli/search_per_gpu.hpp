#pragma once
// `dvfslab search --per-gpu`: one search stage per GPU of the job, in the job's
// order, under one guard of all of them; stage i varies GPU i while the GPUs before
// it hold the optimum their stage found and those after it stay as found
// (docs/multi-gpu.md#searching-each-gpus-setting---per-gpu).
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "cli/search_output.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/job_stage.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {

struct PerGpuSearch {
  std::vector<GpuIdentity> gpus;      // the job's, in its order
  std::vector<SearchOutcome> stages;  // stages[i] varied gpus[i]
  std::vector<Setting> chosen;        // each GPU's optimum (the default where its stage found none)
};

// Runs `search_stage` once per GPU of `job` (at least two), all under one
// ClockGuardSet taken here and restored on every exit path.
PerGpuSearch search_per_gpu(std::span<Gpu* const> job, const SweepOptions& options,
                            const std::function<SearchOutcome(const JobStage&)>& search_stage);

nlohmann::json per_gpu_json(const PerGpuSearch& search);
std::string per_gpu_text(const PerGpuSearch& search);

}  // namespace dvfslab::cli
