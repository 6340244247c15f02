#pragma once
// The GPUs of one sweep or search job: what a --device value opens for it, and how
// its output names them.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::cli {

// Every GPU `device` names, as one job; `auto` keeps meaning the first GPU found.
// A job of several GPUs is refused (ConfigError) when one of them is a replayed
// table or a twin: those answer for one GPU, on a clock of their own.
std::vector<std::unique_ptr<Gpu>> open_job_gpus(const std::string& device);

// "NVIDIA H200" for one GPU; "GPUs 0, 1 (NVIDIA H200)" for several, with each
// GPU's name where they differ ("GPUs 0 (NVIDIA H200), 1 (Tesla V100-SXM2-16GB)").
std::string job_label(std::span<Gpu* const> gpus);

}  // namespace dvfslab::cli
