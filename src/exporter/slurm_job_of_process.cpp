// Which Slurm job a process on a GPU belongs to: SLURM_JOB_ID in its environment
// (/proc/PID/environ), which Slurm sets for every task of a job. Reading another
// user's environment needs root or the same user, as the exporter runs on a node.
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "dvfslab/exporter.hpp"

namespace dvfslab {

std::optional<std::string> slurm_job_of_process(int pid) {
  std::ifstream environ_file("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!environ_file) return std::nullopt;
  const std::string environment((std::istreambuf_iterator<char>(environ_file)),
                                std::istreambuf_iterator<char>());
  constexpr std::string_view key = "SLURM_JOB_ID=";
  // Entries are NUL-separated; a match must start an entry.
  for (std::size_t start = 0; start < environment.size();) {
    const std::size_t end = environment.find('\0', start);
    const std::string_view entry(environment.data() + start,
                                 (end == std::string::npos ? environment.size() : end) - start);
    if (entry.starts_with(key) && entry.size() > key.size()) return std::string(entry.substr(key.size()));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace dvfslab
