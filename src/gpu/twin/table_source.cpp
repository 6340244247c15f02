#include "gpu/twin/table_source.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace dvfslab::twin {

TableSource::TableSource(const std::filesystem::path& path, const std::string& gpu_name)
    : table_(path, gpu_name) {
  bool first = true;
  for (const std::string& workload : table_.workloads()) {
    for (const Setting& setting : table_.settings()) {
      const auto measured = table_.find(workload, setting);
      if (!measured) continue;
      idle_power_w_ = first ? measured->power_w : std::min(idle_power_w_, measured->power_w);
      first = false;
    }
  }
}

std::string TableSource::origin() const {
  return fmt::format("{} ({})", table_.path().filename().string(), table_.source());
}

std::optional<TwinRates> TableSource::rates(const std::string& workload, const Setting& setting) const {
  const auto measured = table_.find(workload, setting);
  if (!measured) return std::nullopt;
  return TwinRates{measured->time_s, measured->power_w};
}

}  // namespace dvfslab::twin
