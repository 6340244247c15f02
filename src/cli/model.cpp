// dvfslab model fit | predict: the time-and-power model (docs/model.md).
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/result_input.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/model.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::cli {
namespace {

using Key = std::pair<std::string, std::string>;  // gpu, workload key

// The value of option `name` when the command line gave it, even as '' (which
// OutputFile refuses): absent only when the option was left out.
std::optional<std::string> given(const CLI::App& command, const std::string& name, const std::string& value) {
  if (command.count(name) == 0) return std::nullopt;
  return value;
}

struct Group {
  std::map<Setting, std::vector<const ResultRow*>> by_setting;
  std::optional<Setting> marked_default;
};

// The mean over repetitions of each setting, with their spread when repeated.
std::vector<model::Observation> observations(const Group& group) {
  std::vector<model::Observation> points;
  for (const auto& [setting, rows] : group.by_setting) {
    double time = 0, power = 0;
    for (const auto* r : rows)
      time += r->time_per_iteration_s / r->items_per_iteration, power += r->mean_power_w;
    const double n = static_cast<double>(rows.size());
    model::Observation o{setting, time / n, power / n, std::nullopt, std::nullopt};
    if (rows.size() >= 2) {
      double time_sq = 0, power_sq = 0;
      for (const auto* r : rows)
        time_sq += std::pow(r->time_per_iteration_s / r->items_per_iteration - o.time_s, 2),
            power_sq += std::pow(r->mean_power_w - o.power_w, 2);
      o.time_sd_s = std::sqrt(time_sq / (n - 1)), o.power_sd_w = std::sqrt(power_sq / (n - 1));
    }
    points.push_back(o);
  }
  return points;
}

// The setting an absent knob means: the marked default, else the top setting.
Setting reference_setting(const Group& group) {
  if (group.marked_default) return *group.marked_default;
  Setting top = group.by_setting.begin()->first;
  for (const auto& [setting, rows] : group.by_setting)
    if (setting_order_before(setting, top)) top = setting;
  return top;
}

std::string knob_text(const Setting& s) {
  std::vector<std::string> parts;
  if (s.sm_mhz) parts.push_back(fmt::format("sm {}", *s.sm_mhz));
  if (s.mem_mhz) parts.push_back(fmt::format("mem {}", *s.mem_mhz));
  if (s.power_limit_w) parts.push_back(fmt::format("pl {} W", *s.power_limit_w));
  return parts.empty() ? "default" : fmt::format("{}", fmt::join(parts, ", "));
}

void print_report(const model::Model& m) {
  const auto& r = m.report();
  fmt::print("{} / {}: {} settings, {}\n", m.gpu(), m.workload(), r.points,
             r.identifiable ? "identifiable" : "NOT IDENTIFIABLE: " + r.reason);
  for (const auto& note : r.notes) fmt::print("  note: {}\n", note);
  fmt::print("  fit residuals (rms): time {:.2f} %, power {:.2f} %\n", r.time_rms_pct, r.power_rms_pct);
  if (r.loo_energy_mape_pct)
    fmt::print("  leave-one-out MAPE: time {:.2f} %, power {:.2f} %, energy {:.2f} %\n", *r.loo_time_mape_pct,
               *r.loo_power_mape_pct, *r.loo_energy_mape_pct);
  else
    fmt::print("  leave-one-out MAPE: needs at least 4 settings\n");
  fmt::print("  parameters:");
  for (const auto& p : r.parameters)
    fmt::print(" {}={:.4g}{}", p.name, p.value, p.sd ? fmt::format("±{:.2g}", *p.sd) : "");
  fmt::print("\n  residuals (predicted − measured):\n");
  for (const auto& res : r.residuals)
    fmt::print("    {:<28} time {:+6.2f} %  power {:+6.2f} %\n", knob_text(res.setting), res.time_pct,
               res.power_pct);
}

// `output` absent: the reports only. A given but empty name is refused before the fit
// (docs/cli.md), not taken as "no file".
void run_fit(const std::string& input, const std::string& gpu, const std::string& workload,
             const std::optional<std::string>& output) {
  std::optional<OutputFile> file;
  if (output) file.emplace(*output, input_files(input));
  const auto rows = load_result_rows(input);
  std::map<Key, Group> groups;
  std::set<std::string> gpus, workloads;
  std::size_t not_applied = 0;
  for (const auto& row : rows) {
    const std::string key = sweep_table_workload_key(row);
    gpus.insert(row.gpu), workloads.insert(key);
    if ((!gpu.empty() && row.gpu != gpu) || (!workload.empty() && key != workload)) continue;
    // Measured at some other clock than its setting names: it would teach the model
    // a wrong point.
    if (row.flags.setting_not_applied()) {
      ++not_applied;
      continue;
    }
    auto& group = groups[{row.gpu, key}];
    group.by_setting[row.setting].push_back(&row);
    if (row.is_default) group.marked_default = row.setting;
  }
  if (not_applied > 0)
    fmt::print(stderr,
               "dvfslab: left out {} measurement{} whose setting the GPU did not apply (clock_mismatch with "
               "no power or thermal limit to explain it)\n",
               not_applied, not_applied == 1 ? "" : "s");
  if (groups.empty()) {
    if (rows.empty() || not_applied > 0)
      throw ConfigError(input + " holds no measurements to fit a model to" +
                        (not_applied > 0 ? " whose setting the GPU applied" : ""));
    if (!gpu.empty() && !gpus.count(gpu))
      throw ConfigError(fmt::format("no GPU '{}' in {}; it has: {}", gpu, input, fmt::join(gpus, ", ")));
    throw ConfigError(fmt::format("no workload '{}'{} in {}; see `dvfslab analyze {}` for the workloads",
                                  workload, gpu.empty() ? "" : " on " + gpu, input, input));
  }
  std::vector<model::Model> models;
  for (const auto& [key, group] : groups) {
    models.push_back(model::fit(observations(group), {key.first, key.second, reference_setting(group)}));
    print_report(models.back());
  }
  if (file) {
    file->stream() << model::to_json(models).dump(2) << "\n";
    file->commit();
    fmt::print(stderr, "dvfslab: wrote {} model{} to {}\n", models.size(), models.size() == 1 ? "" : "s",
               *output);
  }
}

// `output` absent or "-": standard output. A file is opened first, so that a name
// it refuses ('') fails before the work.
void run_predict(const std::string& model_file, const std::string& table,
                 const std::optional<std::string>& output) {
  std::optional<OutputFile> file;
  if (output && *output != "-") file.emplace(*output, std::vector<std::filesystem::path>{model_file, table});
  const auto models = model::read_models(model_file);
  if (!std::filesystem::exists(table))
    throw ConfigError(table + " does not exist: give a sweep table (CSV) of the settings to predict");
  require_regular_file(table, "sweep table");
  auto rows = read_setting_table(table);
  for (auto& row : rows) {
    const std::string key = sweep_table_workload_key(row);
    const auto* m = model::find_model(models, row.gpu, key);
    if (!m)
      throw ConfigError(
          fmt::format("{}: no model for GPU '{}' and workload '{}' in {}; fit one with `dvfslab model fit`",
                      table, row.gpu, key, model_file));
    const auto at = m->predict(row.setting);
    row.source = "predicted by dvfslab model (" + model_file + ")";
    row.time_per_iteration_s = at.time_s.value;
    row.items_per_iteration = 1;
    row.mean_power_w = at.power_w.value;
    row.energy_per_iteration_j = at.energy_j.value;
  }
  if (!file) {
    write_sweep_table(rows, std::cout);
    if (!std::cout) throw Error("could not write to standard output: check the pipe or redirection");
    return;
  }
  write_sweep_table(rows, file->stream());
  file->commit();
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "model",
      "Fit a model of time and power over SM clock, memory clock and power limit, and predict from it "
      "(docs/model.md)");
  command->require_subcommand(1);

  auto* fit = command->add_subcommand(
      "fit",
      "Fit one model per (GPU, workload) of INPUT and print each fit's report: residuals, parameters, "
      "leave-one-out error, and whether the points identify the model");
  struct FitOptions {
    std::string input, gpu, workload, output;
  };
  auto fit_options = std::make_shared<FitOptions>();
  fit->add_option("INPUT", fit_options->input, "A dvfslab database or a sweep table (CSV)")->required();
  fit->add_option("--gpu", fit_options->gpu, "Only this GPU (as named in INPUT)");
  fit->add_option("--workload", fit_options->workload, "Only this workload key (as `analyze` shows it)");
  fit->add_option("-o,--output", fit_options->output, "Write the models to this model.json");
  fit->callback([fit, fit_options] {
    run_fit(fit_options->input, fit_options->gpu, fit_options->workload,
            given(*fit, "--output", fit_options->output));
  });

  auto* predict = command->add_subcommand(
      "predict",
      "Predict time and power for every row of a sweep table, written as a sweep table whose source "
      "column says the rows are predicted");
  struct PredictOptions {
    std::string model, table, output;
  };
  auto predict_options = std::make_shared<PredictOptions>();
  predict->add_option("MODEL", predict_options->model, "A model.json from `dvfslab model fit -o`")
      ->required();
  predict
      ->add_option("--at", predict_options->table,
                   "A sweep table (CSV) of the (gpu, workload, setting) rows to predict")
      ->required();
  predict->add_option("-o,--output", predict_options->output,
                      "Write the predicted table here (default: standard output)");
  predict->callback([predict, predict_options] {
    run_predict(predict_options->model, predict_options->table,
                given(*predict, "--output", predict_options->output));
  });
}

}  // namespace dvfslab::cli
