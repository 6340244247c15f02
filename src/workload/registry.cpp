#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

void WorkloadRegistry::add(WorkloadInfo info, Applies applies, Factory factory) {
  entries_.push_back(Entry{std::move(info), std::move(applies), std::move(factory)});
}

std::vector<WorkloadInfo> WorkloadRegistry::list(const Gpu* gpu) const {
  std::vector<WorkloadInfo> infos;
  for (const auto& entry : entries_) {
    if (gpu == nullptr || entry.applies(*gpu)) infos.push_back(entry.info);
  }
  return infos;
}

std::unique_ptr<Workload> WorkloadRegistry::create(const Case& workload_case, Gpu& gpu,
                                                   const WorkloadOptions& options) const {
  for (const auto& entry : entries_) {
    if (entry.info.name == workload_case.workload && entry.applies(gpu)) {
      return entry.factory(workload_case, gpu, options);
    }
  }
  std::string names;
  for (const auto& info : list(&gpu)) names += (names.empty() ? "" : ", ") + info.name;
  throw ConfigError(fmt::format("unknown workload '{}' for {}: choose one of {}", workload_case.workload,
                                gpu.identity().name, names.empty() ? "(none available)" : names));
}

}  // namespace dvfslab
