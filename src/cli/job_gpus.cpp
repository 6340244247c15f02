#include "cli/job_gpus.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/environment.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"

namespace dvfslab::cli {

std::vector<std::unique_ptr<Gpu>> open_job_gpus(const std::string& device) {
  std::vector<std::unique_ptr<Gpu>> gpus = open_gpus(device, open_options());
  if (device == "auto") gpus.resize(1);
  if (gpus.size() == 1) return gpus;
  for (const auto& gpu : gpus) {
    if (const auto table = frontend::table_gpu(*gpu)) {
      throw ConfigError(
          fmt::format("--device {}: {} is a {}, which answers for one GPU: a job on several "
                      "GPUs takes NVIDIA GPUs or simulated ones (sim:h200x2)",
                      device, gpu->identity().device_spec, table->kind));
    }
  }
  return gpus;
}

std::string job_label(std::span<Gpu* const> gpus) {
  if (gpus.size() == 1) return gpus.front()->identity().name;
  const std::string& first_name = gpus.front()->identity().name;
  const bool one_model = std::all_of(
      gpus.begin(), gpus.end(), [&first_name](const Gpu* gpu) { return gpu->identity().name == first_name; });
  std::vector<std::string> items;
  for (const Gpu* gpu : gpus) {
    const GpuIdentity& identity = gpu->identity();
    items.push_back(one_model ? std::to_string(identity.index)
                              : fmt::format("{} ({})", identity.index, identity.name));
  }
  return one_model ? fmt::format("GPUs {} ({})", fmt::join(items, ", "), first_name)
                   : fmt::format("GPUs {}", fmt::join(items, ", "));
}

}  // namespace dvfslab::cli
