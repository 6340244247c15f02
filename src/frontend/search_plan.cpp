// The in-memory plan of `dvfslab search`, as TOML.
#include "dvfslab/frontend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab::frontend {
namespace {

constexpr int spread_power_limits = 16;

std::string power_knob(Gpu& gpu, const std::string& workload) {
  const auto table = table_gpu(gpu);
  if (!table) return fmt::format("{{ count = {} }}", spread_power_limits);
  const PowerLimits limits = gpu.power_limits();
  std::vector<int> held;
  if (limits.min_w && limits.max_w) {
    for (int watts = static_cast<int>(std::ceil(*limits.min_w)); watts <= std::floor(*limits.max_w);
         ++watts) {
      if (table->holds(gpu, workload, Setting{std::nullopt, std::nullopt, watts})) held.push_back(watts);
    }
  }
  if (held.empty()) {
    throw ConfigError(
        fmt::format("the {} of {} holds no power limit for '{}': search the knobs "
                    "it varies (--knobs sm or mem)",
                    table->kind, gpu.identity().name, workload));
  }
  return fmt::format("[{}]", fmt::join(held, ", "));
}

}  // namespace

SearchKnobs parse_search_knobs(const std::string& text) {
  SearchKnobs knobs;
  std::istringstream names(text);
  std::string name;
  int count = 0;
  while (std::getline(names, name, ',')) {
    bool* knob = name == "sm"        ? &knobs.sm
                 : name == "mem"     ? &knobs.mem
                 : name == "pl"      ? &knobs.power
                 : name == "profile" ? &knobs.profile
                                     : nullptr;
    if (!knob) {
      throw UsageError(
          fmt::format("--knobs '{}': unknown knob '{}'; give a comma-separated list of sm (core "
                      "clock), mem (memory clock) and pl (power limit), or profile (workload power "
                      "profiles) alone",
                      text, name));
    }
    if (*knob) throw UsageError(fmt::format("--knobs '{}': '{}' is named twice", text, name));
    *knob = true;
    ++count;
  }
  if (count == 0) throw UsageError("--knobs is empty: give sm, mem, pl or a comma-separated list of them");
  if (knobs.profile && count > 1) {
    throw UsageError(
        fmt::format("--knobs '{}': profile is searched on its own (a workload power profile is measured with "
                    "the clocks and power limit as found, not crossed with them): give --knobs profile",
                    text));
  }
  return knobs;
}

std::string search_plan_text(Gpu& gpu, const SearchCase& search_case, const SearchKnobs& knobs,
                             const SearchMeasure& measure, const std::string& strategy,
                             const std::string& objective) {
  const ClockTable clocks = gpu.clock_table();
  const auto refuse_fixed = [&](const char* knob, const char* what) {
    throw ConfigError(
        fmt::format("--knobs {}: {} has only one {}, so there is nothing to search; choose the "
                    "knobs it varies (`dvfslab info --device ...` lists them)",
                    knob, gpu.identity().name, what));
  };
  if (knobs.sm && clocks.all_graphics_mhz().size() < 2) refuse_fixed("sm", "SM clock");
  if (knobs.mem && clocks.memory_mhz.size() < 2) refuse_fixed("mem", "memory clock");
  if (knobs.profile) {
    const auto profiles = workload_power_profiles(gpu);
    if (!profiles || profiles->supported.empty()) {
      throw NotSupportedError(fmt::format("--knobs profile: {} has no workload power profiles (its backend, driver "
                                          "or the GPU itself; `dvfslab info` says which)",
                                          gpu.identity().name));
    }
  }
  std::string text =
      fmt::format("[plan]\nname = {}\n\n[knobs]\n", toml_string("search " + search_case.workload));
  if (knobs.sm) text += "sm_mhz = \"all\"\n";
  if (knobs.mem) text += "mem_mhz = \"all\"\n";
  if (knobs.profile) text += "workload_profile = \"all\"\n";
  if (knobs.power) text += fmt::format("power_limit_w = {}\n", power_knob(gpu, search_case.workload));
  text += "\n[[cases]]\n";
  if (search_case.command.empty()) {
    text += fmt::format("workloads = [{}]\n", toml_string(search_case.workload));
  } else {
    std::vector<std::string> argv;
    for (const auto& argument : search_case.command) argv.push_back(toml_string(argument));
    text +=
        fmt::format("name = {}\ncommand = [{}]\n", toml_string(search_case.workload), fmt::join(argv, ", "));
  }
  text += fmt::format("batch_sizes = [{}]\n", search_case.batch.value_or(1));
  if (!search_case.mode.empty()) text += fmt::format("modes = [{}]\n", toml_string(search_case.mode));
  if (!search_case.precision.empty())
    text += fmt::format("precisions = [{}]\n", toml_string(search_case.precision));
  text += fmt::format(
      "\n[measure]\nrepetitions = {}\nmax_repetitions = {}\nci_target_pct = {}\nsettle_s = {}\n"
      "order = \"ascending\"\ninclude_default = true\ndrift_check = false\n",
      measure.repetitions, measure.max_repetitions, toml_float(measure.ci_target_pct),
      toml_float(measure.settle_s));
  if (measure.duration_s) text += fmt::format("duration_s = {}\n", toml_float(*measure.duration_s));
  return plan_text_with_strategy(text, strategy, objective);
}

}  // namespace dvfslab::frontend
