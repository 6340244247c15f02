#include <algorithm>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab {
namespace {

const std::vector<SimGpuSpec>& all_specs() {
  static const std::vector<SimGpuSpec> specs = [] {
    std::vector<SimGpuSpec> list{sim::a100_spec(),      sim::h200_spec(),    sim::p100_spec(),
                                 sim::rtx2080ti_spec(), sim::mi250x_spec(),  sim::mi300x_spec(),
                                 sim::v100_spec(),      sim::v100sxm2_spec()};
    std::sort(list.begin(), list.end(),
              [](const SimGpuSpec& a, const SimGpuSpec& b) { return a.key < b.key; });
    return list;
  }();
  return specs;
}

}  // namespace

int SimGpuSpec::boost_graphics_mhz() const { return graphics_mhz_for(default_memory_mhz).front(); }

const std::vector<int>& SimGpuSpec::graphics_mhz_for(int memory) const {
  for (std::size_t i = 0; i < memory_mhz.size(); ++i) {
    if (memory_mhz[i] == memory) return graphics_mhz[i];
  }
  std::string supported;
  for (int m : memory_mhz) supported += fmt::format("{}{} MHz", supported.empty() ? "" : ", ", m);
  throw ConfigError(
      fmt::format("memory clock {} MHz is not supported by {}: choose one of {}", memory, name, supported));
}

std::vector<std::string> sim_gpu_keys() {
  std::vector<std::string> keys;
  for (const auto& spec : all_specs()) keys.push_back(spec.key);
  return keys;
}

const SimGpuSpec& sim_gpu_spec(std::string_view key) {
  for (const auto& spec : all_specs()) {
    if (spec.key == key) return spec;
  }
  throw ConfigError(fmt::format("unknown simulated GPU '{}': choose one of sim:{}", key,
                                fmt::join(sim_gpu_keys(), ", sim:")));
}

}  // namespace dvfslab
