// TOML → Plan. Every error names the place in the file (file:line:column) and what
// to write instead; unknown keys list the valid ones, so a typo never passes silently.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string_view>
#include <toml.hpp>

#include "dvfslab/checked_narrow.hpp"
#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload_profile_names.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/plan_limits.hpp"
#include "sweep/toml_text_checks.hpp"

namespace dvfslab {
namespace {

std::string where(const toml::value& value) {
  const auto location = value.location();
  return fmt::format("{}:{}:{}", location.file_name(), location.line(), location.column());
}

[[noreturn]] void fail(const toml::value& value, const std::string& message) {
  throw ConfigError(where(value), message);
}

// toml11 formats a syntax error over several lines with "N | text" excerpts and "^"
// markers; the last marker is the point where parsing failed. This turns it into
// "file:line:column: what went wrong (detail)".
ConfigError syntax_error_to_config_error(const toml::syntax_error& error) {
  std::istringstream lines(error.what());
  std::string line, headline, detail;
  unsigned line_number = error.location().line(), column = error.location().column();
  unsigned excerpt_line = 0;
  std::size_t excerpt_text_start = 0;
  while (std::getline(lines, line)) {
    if (headline.empty()) {
      headline = line;
      if (headline.rfind("[error] ", 0) == 0) headline.erase(0, 8);
      if (auto colon = headline.find(": "); headline.rfind("toml::", 0) == 0 && colon != std::string::npos) {
        headline.erase(0, colon + 2);
      }
      continue;
    }
    const auto bar = line.find(" | ");
    if (bar == std::string::npos) continue;
    const std::string gutter = line.substr(0, bar);
    const auto digits = gutter.find_first_not_of(' ');
    if (digits != std::string::npos && std::all_of(gutter.begin() + static_cast<long>(digits), gutter.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; })) {
      excerpt_line = static_cast<unsigned>(std::stoul(gutter.substr(digits)));
      excerpt_text_start = bar + 3;
    } else if (const auto caret = line.find('^', bar); caret != std::string::npos && excerpt_line != 0) {
      line_number = excerpt_line;
      column = static_cast<unsigned>(caret - excerpt_text_start + 1);
      detail = line.substr(caret + 1);
      detail.erase(0, detail.find_first_not_of("- "));
    }
  }
  std::string message = "malformed TOML: " + headline;
  if (!detail.empty() && detail != "here") message += " (" + detail + ")";
  return ConfigError(fmt::format("{}:{}:{}", error.location().file_name(), line_number, column), message);
}

const toml::table& as_table(const toml::value& value, std::string_view name) {
  if (!value.is_table()) fail(value, fmt::format("[{}] must be a table", name));
  return value.as_table();
}

// Rejects any key of `table` not in `valid`, naming the first offending key (in file
// order) and the valid ones.
void check_keys(const toml::value& table, std::string_view table_name,
                const std::vector<std::string_view>& valid) {
  const toml::value* first_unknown = nullptr;
  std::string unknown_name;
  for (const auto& [key, value] : table.as_table()) {
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    const auto location = value.location();
    if (first_unknown == nullptr || location.line() < first_unknown->location().line() ||
        (location.line() == first_unknown->location().line() &&
         location.column() < first_unknown->location().column())) {
      first_unknown = &value;
      unknown_name = key;
    }
  }
  if (first_unknown != nullptr) {
    const std::string scope = table_name.empty() ? "at the top level" : fmt::format("in [{}]", table_name);
    fail(*first_unknown,
         fmt::format("unknown key '{}' {}: valid keys are {}", unknown_name, scope, fmt::join(valid, ", ")));
  }
}

const toml::value* member(const toml::value& table, const std::string& key) {
  const auto& entries = table.as_table();
  const auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

std::int64_t to_integer(const toml::value& value, std::string_view key) {
  if (!value.is_integer()) fail(value, fmt::format("'{}' must be an integer", key));
  return value.as_integer();
}

double to_number(const toml::value& value, std::string_view key) {
  if (value.is_integer()) return static_cast<double>(value.as_integer());
  if (value.is_floating()) return value.as_floating();
  fail(value, fmt::format("'{}' must be a number", key));
}

std::string to_string_value(const toml::value& value, std::string_view key) {
  if (!value.is_string()) fail(value, fmt::format("'{}' must be a string", key));
  return value.as_string().str;
}

bool to_bool(const toml::value& value, std::string_view key) {
  if (!value.is_boolean()) fail(value, fmt::format("'{}' must be true or false", key));
  return value.as_boolean();
}

// A value written either alone or as an array of such values.
template <typename Convert>
auto one_or_many(const toml::value& value, std::string_view key, Convert convert) {
  std::vector<decltype(convert(value, key))> out;
  if (value.is_array()) {
    for (const auto& element : value.as_array()) out.push_back(convert(element, key));
    if (out.empty()) fail(value, fmt::format("'{}' must not be empty", key));
  } else {
    out.push_back(convert(value, key));
  }
  return out;
}

// A plan number within the documented range [lo, hi] (docs/plans.md); NaN and
// infinities are outside every range.
double number_in(const toml::value& value, std::string_view key, const NumberRange& range) {
  const double number = to_number(value, key);
  const bool above_lo = range.lo_exclusive ? number > range.lo : number >= range.lo;
  if (!(above_lo && number <= range.hi)) {
    fail(value, fmt::format("'{}' = {} is outside its range: give a number {} {} and at most {}", key, number,
                            range.lo_exclusive ? "above" : "from", range.lo, range.hi));
  }
  return number;
}

// A plan integer within the documented range [lo, hi], as an int.
int int_in(const toml::value& value, std::string_view key, const IntegerRange& range) {
  const std::int64_t number = to_integer(value, key);
  const auto narrowed = checked_narrow<int>(number);
  if (!narrowed || *narrowed < range.lo || *narrowed > range.hi) {
    fail(value, fmt::format("'{}' = {} is outside its range: give an integer from {} to {}", key, number,
                            range.lo, range.hi));
  }
  return *narrowed;
}

KnobSpec parse_range_text(const toml::value& value, const std::string& text, std::string_view key) {
  KnobSpec spec;
  spec.kind = KnobSpec::Kind::range;
  std::int64_t start = 0, stop = 0, step = 0;
  char colon1 = 0, colon2 = 0;
  std::istringstream in(text);
  in >> start >> colon1 >> stop >> colon2 >> step;
  if (in.fail() || colon1 != ':' || colon2 != ':' || !(in >> std::ws).eof()) {
    fail(value, fmt::format("'{}' = \"{}\" is not understood: write a list [a, b, ...], \"start:stop:step\", "
                            "\"all\", {{ every = N }} or {{ count = N }}",
                            key, text));
  }
  const auto limits = plan_limits::knob_value;
  for (const std::int64_t part : {start, stop, step}) {
    if (part < limits.lo || part > limits.hi) {
      fail(value, fmt::format("'{}' range \"{}\": {} is outside {}–{}; start, stop and step must lie in it",
                              key, text, part, limits.lo, limits.hi));
    }
  }
  if (start > stop) fail(value, fmt::format("'{}' range \"{}\" needs start <= stop", key, text));
  spec.start = static_cast<int>(start);
  spec.stop = static_cast<int>(stop);
  spec.step = static_cast<int>(step);
  return spec;
}

KnobSpec parse_knob(const toml::value& value, std::string_view key, bool continuous) {
  KnobSpec spec;
  if (value.is_integer() || value.is_array()) {
    spec.kind = KnobSpec::Kind::list;
    const auto knob_value = [](const toml::value& element, std::string_view name) {
      return int_in(element, name, plan_limits::knob_value);
    };
    spec.values = one_or_many(value, key, knob_value);
  } else if (value.is_string()) {
    const std::string text = value.as_string().str;
    if (text == "default") {
      spec.kind = KnobSpec::Kind::unset;
    } else if (text == "all") {
      if (continuous)
        fail(value, fmt::format("'{}' = \"all\" is not possible: power limits are continuous; "
                                "use a list, \"start:stop:step\" or {{ count = N }}",
                                key));
      spec.kind = KnobSpec::Kind::all;
    } else {
      spec = parse_range_text(value, text, key);
    }
  } else if (value.is_table()) {
    check_keys(value, std::string("knobs.") + std::string(key), {"every", "count", "min", "max"});
    const auto* every = member(value, "every");
    const auto* count = member(value, "count");
    if (every && count) fail(value, fmt::format("'{}' takes either 'every' or 'count', not both", key));
    if (every && continuous) fail(*every, fmt::format("'{}' cannot take 'every': use 'count'", key));
    spec.kind = every ? KnobSpec::Kind::every : count ? KnobSpec::Kind::count : KnobSpec::Kind::all;
    if (spec.kind == KnobSpec::Kind::all && continuous) {
      fail(value, fmt::format("'{}' needs 'count' (power limits are continuous)", key));
    }
    if (every) spec.n = int_in(*every, "every", plan_limits::knob_count);
    if (count) spec.n = int_in(*count, "count", plan_limits::knob_count);
    if (const auto* min = member(value, "min")) spec.min = int_in(*min, "min", plan_limits::knob_value);
    if (const auto* max = member(value, "max")) spec.max = int_in(*max, "max", plan_limits::knob_value);
    if (spec.min && spec.max && *spec.min > *spec.max) fail(value, fmt::format("'{}' has min > max", key));
  } else {
    fail(value, fmt::format("'{}' must be a list, \"start:stop:step\", \"all\" or a table", key));
  }
  spec.where = where(value);
  return spec;
}

int profile_id(const toml::value& value, std::string_view key) {
  const std::string name = to_string_value(value, key);
  if (const auto id = workload_power_profile_id(name)) return *id;
  fail(value, fmt::format("'{}': unknown workload power profile '{}': give names as `dvfslab info` lists them "
                          "(max-q, compute, memory-bound, llm-inference, ...) or \"all\"",
                          key, escape_control_characters(name)));
}

ProfileKnobSpec parse_profile_knob(const toml::value& value) {
  ProfileKnobSpec spec;
  spec.where = where(value);
  if (value.is_string() && value.as_string().str == "all") {
    spec.all = true;
    return spec;
  }
  std::set<int> ids;
  for (int id : one_or_many(value, "workload_profile", profile_id)) {
    if (!ids.insert(id).second) {
      fail(value, fmt::format("'workload_profile' names {} twice", workload_power_profile_name(id)));
    }
  }
  spec.ids.assign(ids.begin(), ids.end());
  return spec;
}

Knobs parse_knobs(const toml::value& table) {
  as_table(table, "knobs");
  check_keys(table, "knobs", {"sm_mhz", "mem_mhz", "power_limit_w", "workload_profile"});
  Knobs knobs;
  if (const auto* v = member(table, "sm_mhz")) knobs.sm_mhz = parse_knob(*v, "sm_mhz", false);
  if (const auto* v = member(table, "mem_mhz")) knobs.mem_mhz = parse_knob(*v, "mem_mhz", false);
  if (const auto* v = member(table, "power_limit_w"))
    knobs.power_limit_w = parse_knob(*v, "power_limit_w", true);
  if (const auto* v = member(table, "workload_profile")) knobs.workload_profile = parse_profile_knob(*v);
  return knobs;
}

CaseSpec parse_case(const toml::value& table) {
  as_table(table, "cases");
  check_keys(table, "cases", {"workloads", "name", "command", "batch_sizes", "modes", "precisions"});
  CaseSpec spec;
  const auto* workloads = member(table, "workloads");
  const auto* command = member(table, "command");
  if (workloads && command)
    fail(*command, "a case takes either 'workloads' or 'command' (with 'name'), not both");
  if (!workloads && !command)
    fail(table, "a case needs 'workloads' (built-in names) or 'command' and 'name'");
  if (workloads) {
    spec.workloads = one_or_many(*workloads, "workloads", to_string_value);
    if (member(table, "name")) fail(*member(table, "name"), "'name' belongs to a 'command' case");
  } else {
    CommandSpec command_spec;
    const auto* name = member(table, "name");
    if (!name) fail(*command, "a 'command' case needs a 'name' (used as its workload name)");
    command_spec.name = to_string_value(*name, "name");
    if (!command->is_array()) fail(*command, "'command' must be an array: [\"python3\", \"train.py\", ...]");
    command_spec.argv = one_or_many(*command, "command", to_string_value);
    command_spec.where = where(*command);
    spec.workloads = {command_spec.name};
    spec.command = std::move(command_spec);
  }
  if (const auto* batches = member(table, "batch_sizes")) {
    const auto batch_size = [](const toml::value& element, std::string_view name) {
      return int_in(element, name, plan_limits::batch_size);
    };
    spec.batch_sizes = one_or_many(*batches, "batch_sizes", batch_size);
  } else if (spec.command) {
    spec.batch_sizes = {1};
  } else {
    fail(table, "a case needs 'batch_sizes', e.g. batch_sizes = [32, 64]");
  }
  spec.modes = {Mode::train};
  if (const auto* modes = member(table, "modes")) {
    spec.modes.clear();
    for (const auto& text : one_or_many(*modes, "modes", to_string_value)) {
      try {
        spec.modes.push_back(parse_mode(text));
      } catch (const ConfigError& e) {
        fail(*modes, e.what());
      }
    }
  }
  spec.precisions = {Precision::fp32};
  if (const auto* precisions = member(table, "precisions")) {
    spec.precisions.clear();
    for (const auto& text : one_or_many(*precisions, "precisions", to_string_value)) {
      try {
        spec.precisions.push_back(parse_precision(text));
      } catch (const ConfigError& e) {
        fail(*precisions, e.what());
      }
    }
  }
  return spec;
}

MeasurePolicy parse_measure(const toml::value& table) {
  as_table(table, "measure");
  check_keys(
      table, "measure",
      {"warmup_iterations", "warmup_s", "duration_s", "repetitions", "max_repetitions", "ci_target_pct",
       "settle_s", "cooldown_s", "order", "seed", "include_default", "drift_check", "drift_every"});
  MeasurePolicy policy;
  const auto* warmup_iterations = member(table, "warmup_iterations");
  const auto* warmup_s = member(table, "warmup_s");
  if (warmup_iterations && warmup_s)
    fail(*warmup_s, "give either 'warmup_iterations' or 'warmup_s', not both");
  if (warmup_iterations) {
    policy.warmup_iterations =
        int_in(*warmup_iterations, "warmup_iterations", plan_limits::warmup_iterations);
  }
  if (warmup_s) policy.warmup_s = number_in(*warmup_s, "warmup_s", plan_limits::wait_s);
  if (const auto* v = member(table, "duration_s"))
    policy.duration_s = number_in(*v, "duration_s", plan_limits::duration_s);
  if (const auto* v = member(table, "repetitions"))
    policy.repetitions = int_in(*v, "repetitions", plan_limits::repetitions);
  if (const auto* v = member(table, "ci_target_pct")) {
    policy.ci_target_pct = number_in(*v, "ci_target_pct", plan_limits::ci_target_pct);
  }
  // A confidence target needs room to add repetitions: 10 unless told otherwise.
  policy.max_repetitions = policy.ci_target_pct ? std::max(policy.repetitions, 10) : policy.repetitions;
  if (const auto* v = member(table, "max_repetitions")) {
    policy.max_repetitions = int_in(*v, "max_repetitions", plan_limits::repetitions);
    if (policy.max_repetitions < policy.repetitions)
      fail(*v, "'max_repetitions' must be at least 'repetitions'");
  }
  if (const auto* v = member(table, "settle_s"))
    policy.settle_s = number_in(*v, "settle_s", plan_limits::wait_s);
  if (const auto* v = member(table, "cooldown_s"))
    policy.cooldown_s = number_in(*v, "cooldown_s", plan_limits::wait_s);
  if (const auto* v = member(table, "order")) {
    const auto text = to_string_value(*v, "order");
    const auto order = parse_order(text);
    if (!order) {
      std::vector<std::string> names;
      for (const auto& known : setting_orders()) names.push_back(known.name);
      fail(*v, fmt::format("unknown order '{}': choose {}", text, fmt::join(names, " or ")));
    }
    policy.order = *order;
  }
  if (const auto* v = member(table, "seed")) {
    const auto seed = to_integer(*v, "seed");
    if (seed < 0 || seed > plan_limits::max_seed) {
      fail(*v, fmt::format("'seed' = {} is outside its range: give an integer from 0 to {}", seed,
                           plan_limits::max_seed));
    }
    policy.seed = static_cast<std::uint64_t>(seed);
  }
  if (const auto* v = member(table, "include_default"))
    policy.include_default = to_bool(*v, "include_default");
  if (const auto* v = member(table, "drift_check")) policy.drift_check = to_bool(*v, "drift_check");
  if (const auto* v = member(table, "drift_every")) {
    policy.drift_every = int_in(*v, "drift_every", plan_limits::drift_every);
  }
  return policy;
}

void parse_plan_table(const toml::value& table, Plan& plan) {
  as_table(table, "plan");
  check_keys(table, "plan", {"name", "description", "devices"});
  if (const auto* v = member(table, "name")) plan.name = to_string_value(*v, "name");
  if (const auto* v = member(table, "description")) plan.description = to_string_value(*v, "description");
  if (const auto* v = member(table, "devices")) plan.devices = one_or_many(*v, "devices", to_string_value);
}

}  // namespace

double MeasurePolicy::resolved_duration_s(std::optional<double> sensor_period_s) const {
  if (duration_s) return *duration_s;
  return std::max(2.0, 20.0 * sensor_period_s.value_or(0.1));
}

Plan parse_plan_text(const std::string& text, const std::string& source_name) {
  check_utf8(text, source_name);
  check_toml_nesting(text, source_name);
  check_line_lengths(text, source_name, plan_limits::max_line_bytes);
  toml::value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, source_name);
  } catch (const toml::syntax_error& e) {
    throw syntax_error_to_config_error(e);
  }
  check_keys(root, "", {"plan", "knobs", "cases", "measure"});
  Plan plan;
  plan.source_name = source_name;
  plan.source_text = text;
  if (const auto* v = member(root, "plan")) parse_plan_table(*v, plan);
  if (const auto* v = member(root, "knobs")) plan.knobs = parse_knobs(*v);
  if (const auto* v = member(root, "measure")) plan.measure = parse_measure(*v);
  const auto* cases = member(root, "cases");
  if (!cases) {
    throw ConfigError(source_name,
                      "the plan has no cases: add a [[cases]] table with 'workloads' and 'batch_sizes'");
  }
  if (cases->is_array()) {
    for (const auto& entry : cases->as_array()) plan.cases.push_back(parse_case(entry));
  } else {
    plan.cases.push_back(parse_case(*cases));
  }
  if (plan.cases.empty()) fail(*cases, "the plan has no cases: add a [[cases]] table");
  if (plan.name.empty()) plan.name = source_name;
  return plan;
}

Plan load_plan_file(const std::string& path) {
  require_regular_file(path, "plan file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(fmt::format("cannot read plan file '{}': check the path and its permissions", path));
  std::string text(plan_limits::max_plan_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ConfigError(fmt::format("cannot read plan file '{}': read error", path));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > plan_limits::max_plan_bytes) {
    throw ConfigError(fmt::format("plan file '{}' is larger than {} KiB: a plan is a short TOML file", path,
                                  plan_limits::max_plan_bytes / 1024));
  }
  return parse_plan_text(text, path);
}

}  // namespace dvfslab
