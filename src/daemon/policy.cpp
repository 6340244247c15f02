// Policy TOML → Policy, and who may do what on which GPU. Every error names the
// place in the file; unknown keys list the valid ones, so a typo never widens or
// narrows a grant silently.
#include "daemon/policy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string_view>
#include <toml.hpp>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

// A policy is a few rules; a larger file is a mistake (or an attack on the parser).
constexpr std::size_t max_policy_bytes = 1 << 20;

std::string where(const toml::value& value) {
  const auto location = value.location();
  return fmt::format("{}:{}:{}", location.file_name(), location.line(), location.column());
}

[[noreturn]] void fail(const toml::value& value, const std::string& message) {
  throw ConfigError(where(value), message);
}

void check_keys(const toml::value& table, std::string_view scope,
                const std::vector<std::string_view>& valid) {
  for (const auto& [key, value] : table.as_table()) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end())
      fail(value, fmt::format("unknown key '{}' {}: valid keys are {}", key, scope, fmt::join(valid, ", ")));
  }
}

const toml::value* member(const toml::value& table, const std::string& key) {
  const auto& entries = table.as_table();
  const auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

std::vector<std::string> names(const toml::value& value, std::string_view key) {
  if (!value.is_array()) fail(value, fmt::format("'{}' must be a list of names, e.g. [\"alice\"]", key));
  std::vector<std::string> result;
  for (const auto& entry : value.as_array()) {
    if (!entry.is_string() || entry.as_string().str.empty())
      fail(entry, fmt::format("'{}' must list names as non-empty strings", key));
    result.push_back(entry.as_string().str);
  }
  return result;
}

void parse_gpus(const toml::value& value, PolicyRule& rule) {
  if (value.is_string()) {
    if (value.as_string().str != "all")
      fail(value, "'gpus' must be \"all\" or a list of GPU indices and UUIDs, e.g. [0, \"GPU-8f6c...\"]");
    rule.all_gpus = true;
    return;
  }
  if (!value.is_array() || value.as_array().empty())
    fail(value, "'gpus' must be \"all\" or a non-empty list of GPU indices and UUIDs, e.g. [0, 1]");
  for (const auto& entry : value.as_array()) {
    if (entry.is_integer() && entry.as_integer() >= 0) {
      rule.gpus.push_back(std::to_string(entry.as_integer()));
    } else if (entry.is_string() && !entry.as_string().str.empty()) {
      rule.gpus.push_back(entry.as_string().str);
    } else {
      fail(entry, "a GPU in 'gpus' is an index (0, 1, ...) or a UUID string (\"GPU-...\")");
    }
  }
}

IntRange clock_range(const toml::value& value, std::string_view key) {
  const auto& entries = value.is_array() ? value.as_array() : toml::array{};
  if (entries.size() != 2 || !entries[0].is_integer() || !entries[1].is_integer())
    fail(value, fmt::format("'{}' must be [min, max] in MHz, e.g. [900, 1980]", key));
  const auto min = entries[0].as_integer(), max = entries[1].as_integer();
  if (min <= 0 || max > 100000 || min > max)
    fail(value,
         fmt::format("'{}' must be [min, max] with 0 < min <= max (MHz); got [{}, {}]", key, min, max));
  return {static_cast<int>(min), static_cast<int>(max)};
}

double watts(const toml::value& value) {
  if (value.is_integer()) return static_cast<double>(value.as_integer());
  if (value.is_floating()) return value.as_floating();
  fail(value, "'power_limit_w' must be [min, max] in watts, e.g. [200, 500]");
}

PowerRange power_range(const toml::value& value) {
  const auto& entries = value.is_array() ? value.as_array() : toml::array{};
  if (entries.size() != 2) fail(value, "'power_limit_w' must be [min, max] in watts, e.g. [200, 500]");
  const double min = watts(entries[0]), max = watts(entries[1]);
  if (!(min > 0) || !(max < 1e6) || min > max)
    fail(value,
         fmt::format("'power_limit_w' must be [min, max] with 0 < min <= max (W); got [{}, {}]", min, max));
  return {min, max};
}

PolicyRule parse_rule(const toml::value& value) {
  if (!value.is_table()) fail(value, "each [[rule]] must be a table");
  check_keys(
      value, "in [[rule]]",
      {"users", "groups", "gpus", "read_only", "sm_mhz", "mem_mhz", "power_limit_w", "max_lease_seconds"});
  PolicyRule rule;
  rule.where = where(value);
  if (const auto* v = member(value, "users")) rule.users = names(*v, "users");
  if (const auto* v = member(value, "groups")) rule.groups = names(*v, "groups");
  if (rule.users.empty() && rule.groups.empty())
    fail(value, "a [[rule]] must name whom it applies to: 'users = [\"alice\"]' and/or 'groups = [\"ml\"]'");
  const auto* gpus = member(value, "gpus");
  if (gpus == nullptr)
    fail(value, "a [[rule]] must say which GPUs it covers: 'gpus = \"all\"' or 'gpus = [0, 1]'");
  parse_gpus(*gpus, rule);
  if (const auto* v = member(value, "read_only")) {
    if (!v->is_boolean()) fail(*v, "'read_only' must be true or false");
    rule.read_only = v->as_boolean();
  }
  if (const auto* v = member(value, "sm_mhz")) rule.sm_mhz = clock_range(*v, "sm_mhz");
  if (const auto* v = member(value, "mem_mhz")) rule.mem_mhz = clock_range(*v, "mem_mhz");
  if (const auto* v = member(value, "power_limit_w")) rule.power_limit_w = power_range(*v);
  if (const auto* v = member(value, "max_lease_seconds")) {
    if (!v->is_integer() || v->as_integer() <= 0 || v->as_integer() > 366 * 86400)
      fail(*v, "'max_lease_seconds' must be a whole number of seconds from 1 to 31622400 (a year)");
    rule.max_lease_seconds = static_cast<int>(v->as_integer());
  }
  return rule;
}

void parse_daemon_table(const toml::value& value, Policy& policy) {
  if (!value.is_table()) fail(value, "[daemon] must be a table");
  check_keys(value, "in [daemon]", {"socket_group", "max_connections_per_user"});
  if (const auto* v = member(value, "socket_group")) {
    if (!v->is_string() || v->as_string().str.empty()) fail(*v, "'socket_group' must be a group name");
    policy.socket_group = v->as_string().str;
  }
  if (const auto* v = member(value, "max_connections_per_user")) {
    if (!v->is_integer() || v->as_integer() < 1 || v->as_integer() > 1024)
      fail(*v, "'max_connections_per_user' must be a whole number from 1 to 1024");
    policy.max_connections_per_user = static_cast<int>(v->as_integer());
  }
}

// toml11's syntax errors span several lines; the command line prints one.
ConfigError syntax_error(const toml::syntax_error& error, const std::string& source_name) {
  std::string headline = error.what();
  headline = headline.substr(0, headline.find('\n'));
  if (headline.rfind("[error] ", 0) == 0) headline.erase(0, 8);
  return ConfigError(fmt::format("{}:{}:{}", source_name, error.location().line(), error.location().column()),
                     "malformed TOML: " + headline);
}

bool rule_names_peer(const PolicyRule& rule, const PeerIdentity& peer) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  if (listed(rule.users, peer.user)) return true;
  return std::any_of(peer.groups.begin(), peer.groups.end(),
                     [&](const std::string& group) { return listed(rule.groups, group); });
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string without_gpu_prefix(const std::string& uuid) {
  const std::string lower = lowercase(uuid);
  return lower.rfind("gpu-", 0) == 0 ? lower.substr(4) : lower;
}

}  // namespace

Policy parse_policy_text(const std::string& text, const std::string& source_name) {
  toml::value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, source_name);
  } catch (const toml::syntax_error& e) {
    throw syntax_error(e, source_name);
  } catch (const std::exception& e) {
    throw ConfigError(source_name, std::string("malformed TOML: ") + e.what());
  }
  check_keys(root, "at the top level", {"daemon", "rule"});
  Policy policy;
  if (const auto* v = member(root, "daemon")) parse_daemon_table(*v, policy);
  const auto* rules = member(root, "rule");
  if (rules == nullptr || !rules->is_array() || rules->as_array().empty())
    throw ConfigError(source_name,
                      "the policy has no rules: add a [[rule]] with 'users' (or 'groups') and 'gpus'");
  for (const auto& rule : rules->as_array()) policy.rules.push_back(parse_rule(rule));
  return policy;
}

Policy load_policy_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw ConfigError(fmt::format("policy file '{}' is not a readable file: check the path", path.string()));
  std::ifstream in(path, std::ios::binary);
  std::string text(max_policy_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ConfigError(fmt::format("cannot read policy file '{}'", path.string()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_policy_bytes)
    throw ConfigError(
        fmt::format("policy file '{}' is larger than {} bytes", path.string(), max_policy_bytes));
  return parse_policy_text(text, path.string());
}

bool gpu_entry_matches(const std::string& entry, const GpuIdentity& gpu) {
  if (!entry.empty() &&
      std::all_of(entry.begin(), entry.end(), [](unsigned char c) { return std::isdigit(c); }))
    return entry == std::to_string(gpu.index);
  return without_gpu_prefix(entry) == without_gpu_prefix(gpu.uuid);
}

bool names_peer(const Policy& policy, const PeerIdentity& peer) {
  return std::any_of(policy.rules.begin(), policy.rules.end(),
                     [&](const PolicyRule& rule) { return rule_names_peer(rule, peer); });
}

std::optional<Grant> grant_for(const Policy& policy, const PeerIdentity& peer, const GpuIdentity& gpu) {
  for (const PolicyRule& rule : policy.rules) {
    if (!rule_names_peer(rule, peer)) continue;
    const bool covers =
        rule.all_gpus || std::any_of(rule.gpus.begin(), rule.gpus.end(),
                                     [&](const auto& entry) { return gpu_entry_matches(entry, gpu); });
    if (!covers) continue;
    return Grant{!rule.read_only,        rule.sm_mhz, rule.mem_mhz, rule.power_limit_w,
                 rule.max_lease_seconds, rule.where};
  }
  return std::nullopt;
}

}  // namespace dvfslab::daemon
