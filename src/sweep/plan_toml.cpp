// A Plan written back as plan TOML: what parse_plan_text reads into the same plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

#include "dvfslab/plan.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {
namespace {

template <typename T, typename Write>
std::string toml_array(const std::vector<T>& values, Write write) {
  std::vector<std::string> items;
  for (const T& value : values) items.push_back(write(value));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string string_array(const std::vector<std::string>& values) {
  return toml_array(values, [](const std::string& value) { return toml_string(value); });
}

// A knob as the parser reads it back; empty for one left as the GPU has it.
std::string knob_value(const KnobSpec& knob) {
  std::vector<std::string> bounds;
  if (knob.kind == KnobSpec::Kind::every) bounds.push_back(fmt::format("every = {}", knob.n));
  if (knob.kind == KnobSpec::Kind::count) bounds.push_back(fmt::format("count = {}", knob.n));
  if (knob.min) bounds.push_back(fmt::format("min = {}", *knob.min));
  if (knob.max) bounds.push_back(fmt::format("max = {}", *knob.max));
  switch (knob.kind) {
    case KnobSpec::Kind::unset:
      return {};
    case KnobSpec::Kind::list:
      return fmt::format("[{}]", fmt::join(knob.values, ", "));
    case KnobSpec::Kind::range:
      return fmt::format("\"{}:{}:{}\"", knob.start, knob.stop, knob.step);
    case KnobSpec::Kind::all:
      if (bounds.empty()) return "\"all\"";
      break;
    case KnobSpec::Kind::every:
    case KnobSpec::Kind::count:
      break;
  }
  return fmt::format("{{ {} }}", fmt::join(bounds, ", "));
}

std::string knobs_table(const Knobs& knobs) {
  std::string text;
  const auto knob = [&text](std::string_view key, const KnobSpec& spec) {
    if (const std::string value = knob_value(spec); !value.empty()) text += fmt::format("{} = {}\n", key, value);
  };
  knob("sm_mhz", knobs.sm_mhz);
  knob("mem_mhz", knobs.mem_mhz);
  knob("power_limit_w", knobs.power_limit_w);
  if (knobs.workload_profile.all) {
    text += "workload_profile = \"all\"\n";
  } else if (!knobs.workload_profile.unset()) {
    text += fmt::format("workload_profile = {}\n", toml_array(knobs.workload_profile.ids, [](int id) {
                          return toml_string(workload_power_profile_name(id));
                        }));
  }
  return text.empty() ? text : "\n[knobs]\n" + text;
}

std::string case_table(const CaseSpec& spec) {
  std::string text = "\n[[cases]]\n";
  if (spec.command) {
    text += fmt::format("name = {}\ncommand = {}\n", toml_string(spec.command->name),
                        string_array(spec.command->argv));
  } else {
    text += fmt::format("workloads = {}\n", string_array(spec.workloads));
  }
  text += fmt::format("batch_sizes = [{}]\n", fmt::join(spec.batch_sizes, ", "));
  text += fmt::format("modes = {}\n", toml_array(spec.modes, [](Mode mode) {
                        return toml_string(std::string(to_string(mode)));
                      }));
  text += fmt::format("precisions = {}\n", toml_array(spec.precisions, [](Precision precision) {
                        return toml_string(std::string(to_string(precision)));
                      }));
  return text;
}

std::string measure_table(const MeasurePolicy& measure) {
  std::string text = "\n[measure]\n";
  if (measure.warmup_s)
    text += fmt::format("warmup_s = {}\n", toml_float(*measure.warmup_s));
  else
    text += fmt::format("warmup_iterations = {}\n", measure.warmup_iterations);
  if (measure.duration_s) text += fmt::format("duration_s = {}\n", toml_float(*measure.duration_s));
  text += fmt::format("repetitions = {}\nmax_repetitions = {}\n", measure.repetitions, measure.max_repetitions);
  if (measure.ci_target_pct) text += fmt::format("ci_target_pct = {}\n", toml_float(*measure.ci_target_pct));
  text += fmt::format("settle_s = {}\ncooldown_s = {}\norder = {}\nseed = {}\n", toml_float(measure.settle_s),
                      toml_float(measure.cooldown_s), toml_string(setting_order(measure.order).name),
                      measure.seed);
  text += fmt::format("include_default = {}\ndrift_check = {}\ndrift_every = {}\n", measure.include_default,
                      measure.drift_check, measure.drift_every);
  return text;
}

}  // namespace

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string toml_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string to_toml(const Plan& plan) {
  std::string text = fmt::format("[plan]\nname = {}\n", toml_string(plan.name));
  if (!plan.description.empty()) text += fmt::format("description = {}\n", toml_string(plan.description));
  if (!plan.devices.empty()) text += fmt::format("devices = {}\n", string_array(plan.devices));
  text += knobs_table(plan.knobs);
  for (const CaseSpec& spec : plan.cases) text += case_table(spec);
  return text + measure_table(plan.measure);
}

}  // namespace dvfslab
