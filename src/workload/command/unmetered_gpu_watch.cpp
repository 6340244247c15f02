#include "workload/command/unmetered_gpu_watch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dvfslab/gpu_use.hpp"

namespace dvfslab {
namespace {

constexpr std::chrono::seconds check_interval{1};

}  // namespace

UnmeteredGpuWatch::UnmeteredGpuWatch(std::vector<Gpu*> unmetered) : unmetered_(std::move(unmetered)) {}

void UnmeteredGpuWatch::check(int root) {
  if (unmetered_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (last_check_ && now - *last_check_ < check_interval) return;
  last_check_ = now;
  const std::vector<int> processes = process_tree(root);
  if (processes.empty()) return;
  for (const std::string& uuid : gpus_used_by(processes, unmetered_).used) used_.insert(uuid);
}

std::optional<std::string> UnmeteredGpuWatch::warning() const {
  if (used_.empty()) return std::nullopt;
  std::vector<std::string> named;
  for (const Gpu* gpu : unmetered_) {
    const GpuIdentity& identity = gpu->identity();
    if (used_.contains(identity.uuid))
      named.push_back(fmt::format("GPU {} ({})", identity.index, identity.uuid));
  }
  return fmt::format(
      "the program also used {} that {} not metered: its energy is missing from these figures; give --device "
      "all (or list every GPU the job uses)",
      fmt::join(named, ", "), named.size() == 1 ? "was" : "were");
}

}  // namespace dvfslab
