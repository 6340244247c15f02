#pragma once
// Notices when a measured program uses GPUs it was not metered on: a job on four
// GPUs measured with one GPU given would report a quarter of its energy.
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

class UnmeteredGpuWatch {
 public:
  // `unmetered`: the node's GPUs that the meter does not read.
  explicit UnmeteredGpuWatch(std::vector<Gpu*> unmetered);

  // Looks at which unmetered GPUs the processes under `root` use, at most once a
  // second: listing processes costs a driver call per GPU and a walk of /proc.
  void check(int root);
  // One line naming the unmetered GPUs the program used, or nullopt.
  std::optional<std::string> warning() const;

 private:
  std::vector<Gpu*> unmetered_;
  std::set<std::string> used_;  // UUIDs
  std::optional<std::chrono::steady_clock::time_point> last_check_;
};

}  // namespace dvfslab
