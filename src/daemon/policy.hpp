#pragma once
// The daemon's policy file (/etc/dvfslab/policy.toml): who may change which GPUs,
// within which bounds, and who may only read. Parsed strictly (unknown keys, wrong
// types and empty ranges are errors naming file:line:column), because the daemon
// acts on it as root. docs/daemon.md is the reference.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::daemon {

struct IntRange {
  int min = 0;
  int max = 0;
};

struct PowerRange {
  double min_w = 0;
  double max_w = 0;
};

// One [[rule]]: the users and groups it names (by name), the GPUs (empty = all,
// else indices and UUIDs as written) and what they may do there.
struct PolicyRule {
  std::vector<std::string> users;
  std::vector<std::string> groups;
  bool all_gpus = false;
  std::vector<std::string> gpus;  // "0", "GPU-..." (as in the file; indices written as integers)
  bool read_only = false;
  std::optional<IntRange> sm_mhz;
  std::optional<IntRange> mem_mhz;
  std::optional<PowerRange> power_limit_w;
  std::optional<int> max_lease_seconds;
  std::string where;  // file:line:column of the rule, for the audit log and errors
};

struct Policy {
  std::optional<std::string> socket_group;  // the socket's group (mode 0660); absent: mode 0666
  int max_connections_per_user = 16;
  std::vector<PolicyRule> rules;
};

// Who is asking, as the kernel reports the peer (SO_PEERCRED, SO_PEERGROUPS) and the
// user and group databases name it.
struct PeerIdentity {
  unsigned uid = 0;
  unsigned gid = 0;
  int pid = 0;
  std::string user;                 // the uid's name, or the number when it has none
  std::vector<std::string> groups;  // names of the primary and supplementary groups
};

// What one peer may do on one GPU: the first rule naming both decides.
struct Grant {
  bool control = false;  // false: read-only
  std::optional<IntRange> sm_mhz;
  std::optional<IntRange> mem_mhz;
  std::optional<PowerRange> power_limit_w;
  std::optional<int> max_lease_seconds;
  std::string rule_where;
};

Policy parse_policy_text(const std::string& text, const std::string& source_name);
// Reads and parses `path`; ConfigError naming the file when it is missing, too large or invalid.
Policy load_policy_file(const std::filesystem::path& path);

// Whether any rule names the peer (by user or group).
bool names_peer(const Policy& policy, const PeerIdentity& peer);
// The grant of the first rule naming the peer and the GPU; nullopt when none does.
std::optional<Grant> grant_for(const Policy& policy, const PeerIdentity& peer, const GpuIdentity& gpu);

// A GPU entry of a rule matches `gpu`: its index, or its UUID (case-insensitive, the
// "GPU-" prefix optional).
bool gpu_entry_matches(const std::string& entry, const GpuIdentity& gpu);

}  // namespace dvfslab::daemon
