#include "dvfslab/gpu_use.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

namespace dvfslab {
namespace {

// The parent of process `pid` from PROC/PID/stat, or nullopt when it is gone.
// std::getline, not an istreambuf_iterator: a process that ends between the open
// and the read makes read() fail (ESRCH), which libstdc++'s filebuf throws as
// std::ios_base::failure through an iterator but turns into badbit in getline.
std::optional<int> parent_of(const std::filesystem::path& proc, int pid) {
  std::ifstream stat(proc / std::to_string(pid) / "stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  // "PID (COMMAND) STATE PPID ...": the command may hold spaces and parentheses,
  // so the fields are counted from the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  int parent = 0;
  if (!(fields >> state >> parent)) return std::nullopt;
  return parent;
}

std::optional<int> as_pid(std::string_view name) {
  int pid = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (error != std::errc() || end != name.data() + name.size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

std::vector<int> process_tree(int root, const std::filesystem::path& proc) {
  std::multimap<int, int> children;  // parent -> child
  bool root_found = false;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(proc, error)) {
    const auto pid = as_pid(entry.path().filename().string());
    if (!pid) continue;
    const auto parent = parent_of(proc, *pid);
    if (!parent) continue;  // ended while the list was read
    root_found = root_found || *pid == root;
    children.emplace(*parent, *pid);
  }
  if (!root_found) return {};
  std::vector<int> tree{root};
  for (std::size_t next = 0; next < tree.size(); ++next) {
    const auto [first, last] = children.equal_range(tree[next]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

GpuUse gpus_used_by(const std::vector<int>& process_ids, const std::vector<Gpu*>& gpus) {
  GpuUse use;
  for (Gpu* gpu : gpus) {
    const auto listed = gpu->compute_process_ids();
    if (!listed) {
      use.unknown.push_back(gpu->identity().uuid);
      continue;
    }
    const bool used = std::any_of(listed->begin(), listed->end(), [&](int pid) {
      return std::find(process_ids.begin(), process_ids.end(), pid) != process_ids.end();
    });
    if (used) use.used.push_back(gpu->identity().uuid);
  }
  return use;
}

}  // namespace dvfslab
