// `dvfslab measure [options] -- CMD ARGS...`: measures the energy, power and clocks
// of any program (docs/measure.md). The readable report goes to stderr, like
// time(1), so the program's own stdout stays untouched; with --json the JSON
// document is the only thing on stdout and the program's stdout goes to stderr.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/iterations_from_option.hpp"
#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/twin.hpp"

namespace dvfslab::cli {
namespace {

struct MeasureArguments {
  std::string device = "auto";
  bool json = false;
  std::string trace_path;
  std::int64_t skip_iterations = 0;
  std::optional<double> sample_ms;
  double idle_seconds = 0;
  IterationsFrom iterations_from = IterationsFrom::rank0;
  std::vector<std::string> command;
};

std::string optional_number(const std::optional<double>& value, const char* format_and_unit) {
  return value ? fmt::format(fmt::runtime(format_and_unit), *value) : std::string("n/a");
}

void print_window_line(std::FILE* out, const Measurement& m, const char* suffix) {
  fmt::print(out, "  {:<20} {:>10.3f} s {:>12} {:>10} {:>8} iter  {}{}\n", m.name, m.duration_s,
             optional_number(m.energy_j, "{:.2f} J"), optional_number(m.mean_power_w, "{:.1f} W"),
             m.iterations, fmt::join(m.flags.names(), ","), suffix);
}

// Each GPU's share, when several were metered; the lines above are their total.
void print_gpu_lines(std::FILE* out, const Measurement& total) {
  for (const GpuMeasurement& gpu : total.gpus) {
    const Measurement& m = gpu.measurement;
    fmt::print(out, "  gpu {:<3} {:<24} {:>12}   mean {:>9}   peak {:>9}   {}\n", gpu.index, gpu.name,
               optional_number(m.energy_j, "{:.2f} J"), optional_number(m.mean_power_w, "{:.1f} W"),
               optional_number(m.peak_power_w, "{:.1f} W"), gpu.uuid);
  }
  if (!total.gpus.empty()) {
    fmt::print(out, "  total of {} GPUs above (peak: the sum of each GPU's peak, an upper bound)\n",
               total.gpus.size());
  }
}

void print_report(std::FILE* out, const CommandMeasurement& r) {
  const Measurement& t = r.total;
  if (r.simulated)
    fmt::print(out, "SIMULATED GPU: every figure below comes from the simulator, not hardware\n");
  fmt::print(out, "device       {}{}\n", r.device, r.simulated ? " (SIMULATED)" : "");
  fmt::print(out, "command      {}: {}\n", fmt::join(r.command, " "), r.exit.describe());
  if (r.interrupted_by != 0)
    fmt::print(out, "interrupted  by signal {} (passed on to the program)\n", r.interrupted_by);
  fmt::print(out, "duration     {:.3f} s ({} samples every {:.0f} ms)\n", t.duration_s, t.samples,
             r.sample_period_s * 1000.0);
  const auto difference = energy_difference_pct(t);
  fmt::print(out, "energy       {}{}   integrated power {}{}\n", optional_number(t.energy_j, "{:.2f} J"),
             t.flags.energy_estimated ? " (estimated from power)" : " (counter)",
             optional_number(t.energy_integrated_j, "{:.2f} J"),
             difference ? fmt::format(" ({:+.2f} %)", *difference) : std::string());
  fmt::print(out, "power        mean {}   peak {}", optional_number(t.mean_power_w, "{:.1f} W"),
             optional_number(t.peak_power_w, "{:.1f} W"));
  if (r.idle_power_w) {
    fmt::print(out, "   idle {:.1f} W   dynamic energy {}", *r.idle_power_w,
               t.energy_j ? fmt::format("{:.2f} J", *t.energy_j - *r.idle_power_w * t.duration_s) : "n/a");
  }
  fmt::print(out, "\n");
  print_gpu_lines(out, t);
  fmt::print(out, "clocks       SM mean {} (min {})   memory mean {}\n",
             optional_number(t.sm_mhz_mean, "{:.0f} MHz"),
             t.sm_mhz_min ? fmt::format("{} MHz", *t.sm_mhz_min) : "n/a",
             optional_number(t.mem_mhz_mean, "{:.0f} MHz"));
  fmt::print(out, "temperature  max {}\n", optional_number(t.temperature_c_max, "{:.0f} °C"));
  for (const auto& [reason, fraction] : t.throttle_fraction) {
    fmt::print(out, "throttle     {:<28} {:5.1f} % of the time\n", reason, fraction * 100.0);
  }
  if (!t.flags.names().empty()) fmt::print(out, "flags        {}\n", fmt::join(t.flags.names(), ", "));
  if (r.steady && r.steady->iterations > 0) {
    const Measurement& s = *r.steady;
    const double iterations = static_cast<double>(s.iterations);
    fmt::print(out, "steady state {} iterations from the first marker, skipping {}: {:.6f} s/iteration",
               s.iterations, r.skip_iterations, s.duration_s / iterations);
    if (s.items > 0 && s.duration_s > 0) fmt::print(out, ", {:.2f} items/s", s.items / s.duration_s);
    if (s.energy_j) {
      fmt::print(out, ", {:.4f} J/iteration", *s.energy_j / iterations);
      if (s.items > 0) fmt::print(out, ", {:.6f} J/item", *s.energy_j / s.items);
    }
    fmt::print(out, "{}\n",
               s.flags.names().empty() ? "" : fmt::format(" [{}]", fmt::join(s.flags.names(), ", ")));
    if (r.setup) {
      fmt::print(out, "before loop  {:.3f} s, {} before the first marker (not in the steady state)\n",
                 r.setup->duration_s, optional_number(r.setup->energy_j, "{:.2f} J"));
    }
    if (r.tail) {
      fmt::print(out, "after loop   {:.3f} s, {} after the last iteration marker (not in the steady state)\n",
                 r.tail->duration_s, optional_number(r.tail->energy_j, "{:.2f} J"));
    }
  } else if (r.total.iterations > 0) {
    fmt::print(out, "steady state none (see the warning above)\n");
  }
  if (!r.windows.empty()) {
    fmt::print(out, "windows      {:<20} {:>12} {:>12} {:>10} {:>13}  flags\n", "name", "duration", "energy",
               "power", "iterations");
    for (const auto& w : r.windows) print_window_line(out, w.measurement, w.complete ? "" : " (not ended)");
  }
  if (r.marker_lines > 0) {
    fmt::print(out, "markers      {} lines, {} malformed, {} out of place\n", r.marker_lines,
               r.malformed_markers, r.rejected_markers);
  }
}

void print_warnings(const CommandMeasurement& r) {
  for (const auto& warning : r.warnings) fmt::print(stderr, "dvfslab: warning: {}\n", warning);
}

void refuse_without_live_sensors(Gpu& gpu, const std::string& spec) {
  if (is_replay_gpu(gpu)) {
    throw ConfigError(
        fmt::format("{} is a replayed sweep table ({}): it has no live sensors to measure a program "
                    "with; sweep the table's workloads instead (docs/replay.md)",
                    gpu.identity().name, spec));
  }
  if (is_twin_gpu(gpu)) {
    throw ConfigError(
        fmt::format("{} is a twin ({}): it lives on a virtual clock that a program cannot load; sweep its "
                    "workloads instead (docs/twins.md)",
                    gpu.identity().name, spec));
  }
}

// Every GPU the driver of `metered` finds that is not among them. Best effort: a
// node whose other GPUs cannot be opened just goes unwatched.
std::vector<std::unique_ptr<Gpu>> other_gpus_of_the_node(const std::vector<std::unique_ptr<Gpu>>& metered) {
  std::vector<std::unique_ptr<Gpu>> others;
  try {
    for (auto& gpu : open_gpus("all", open_options(SimTimeMode::wall_time))) {
      const bool is_metered = std::any_of(metered.begin(), metered.end(), [&](const auto& mine) {
        return mine->identity().uuid == gpu->identity().uuid;
      });
      if (!is_metered) others.push_back(std::move(gpu));
    }
  } catch (const Error&) {
    others.clear();
  }
  return others;
}

void run_measure(const MeasureArguments& args) {
  // Finite bounds: an infinite idle time or sampling period would never end.
  if (args.sample_ms && !(*args.sample_ms > 0 && *args.sample_ms <= 60'000)) {
    throw UsageError("--sample-ms must be a number of milliseconds above 0 and at most 60000");
  }
  if (!(args.idle_seconds >= 0 && args.idle_seconds <= 3600)) {
    throw UsageError("--idle-seconds must be a number of seconds from 0 to 3600");
  }
  // Bounded well inside 64 bits: CLI11 turns a larger integer into the largest one.
  if (args.skip_iterations < 0 || args.skip_iterations > 1'000'000'000) {
    throw UsageError("--skip-iters must be an integer from 0 to 1000000000");
  }
  std::vector<std::unique_ptr<Gpu>> gpus = open_gpus(args.device, open_options(SimTimeMode::wall_time));
  // The node's other GPUs, watched so that a job using them is warned about.
  std::vector<std::unique_ptr<Gpu>> unmetered;
  // `auto` keeps meaning one GPU, as it did, but a job on a node of several must not
  // be metered on the first one alone without notice.
  if (args.device == "auto" && gpus.size() > 1) {
    fmt::print(stderr,
               "dvfslab: warning: {} GPUs found; only the first ({}) is metered: give --device all to meter "
               "every GPU\n",
               gpus.size(), gpus.front()->identity().name);
    std::move(gpus.begin() + 1, gpus.end(), std::back_inserter(unmetered));
    gpus.resize(1);
  } else if (gpus.front()->persists_settings()) {
    unmetered = other_gpus_of_the_node(gpus);
  }
  if (gpus.size() > 1 && !args.trace_path.empty()) {
    throw UsageError("--trace writes one GPU's samples: give --device one GPU to trace");
  }
  std::vector<Gpu*> metered;
  for (const auto& gpu : gpus) {
    refuse_without_live_sensors(*gpu, args.device);
    metered.push_back(gpu.get());
  }

  MeasureCommandOptions options;
  if (args.sample_ms) options.meter.sample_period_s = *args.sample_ms / 1000.0;
  options.meter.idle_seconds = args.idle_seconds;
  options.meter.keep_trace = !args.trace_path.empty();
  options.skip_iterations = args.skip_iterations;
  options.child.stdout_to_stderr = args.json;
  options.child.iterations_from = args.iterations_from;
  for (const auto& gpu : unmetered) options.unmetered_gpus.push_back(gpu.get());

  const CommandMeasurement result = measure_command(metered, args.command, options);
  print_warnings(result);
  // Report first: a trace that cannot be written must not lose the measurement.
  if (args.json) {
    fmt::print("{}\n", to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(stdout);
  } else {
    print_report(stderr, result);
  }
  if (!args.trace_path.empty()) {
    write_trace(args.trace_path, result.trace, result.simulated);
  }
  requested_exit_status() = result.exit.shell_code();
}

}  // namespace

void add_measure_command(CLI::App& app) {
  auto args = std::make_shared<MeasureArguments>();
  CLI::App* measure = app.add_subcommand(
      "measure",
      "Run a program and measure the GPU's energy, power, clocks and throttling while it runs.\n"
      "The program runs directly (no shell) with its stdout/stderr passed through; dvfslab exits with the "
      "program's exit code (128+N when killed by signal N, 127 when it is not found, 126 when it cannot be "
      "executed). SIGINT/SIGTERM sent to dvfslab are passed on to the program, and what was measured is "
      "reported however it ends. The report goes to stderr; with --json the JSON goes to stdout and the "
      "program's stdout to stderr.\n"
      "The program may report progress on the descriptor in $DVFSLAB_MARK_FD with lines 'dvfslab:iter N "
      "[items M]', 'dvfslab:begin NAME', 'dvfslab:end NAME' (docs/measure.md).\n"
      "Example: dvfslab measure --device sim:h200 --json -- python3 train.py");
  add_device_option(*measure, args->device,
                    ". A simulated GPU here follows the wall clock (idle unless a load is attached)")
      ->capture_default_str();
  measure->add_flag("--json", args->json, "Print the measurement as one JSON document on stdout");
  measure->add_option("--trace", args->trace_path,
                      "Write every telemetry sample to FILE, as CSV (FILE.csv) or JSON (FILE.json)");
  measure
      ->add_option("--skip-iters", args->skip_iterations,
                   "Warm-up iterations (reported by 'dvfslab:iter' markers) left out of the steady-state "
                   "figures (time per iteration, items/s, energy per iteration and per item) on top of the "
                   "set-up: the steady window opens at the first iteration marker or named window, N "
                   "iterations later")
      ->capture_default_str();
  measure->add_option("--sample-ms", args->sample_ms,
                      "Sampling period in milliseconds (default: half the sensor's update period)");
  measure
      ->add_option("--idle-seconds", args->idle_seconds,
                   "Measure idle power for S seconds before starting the program, to report dynamic energy "
                   "(energy above idle)")
      ->capture_default_str();
  add_iterations_from_option(*measure, args->iterations_from);
  measure->add_option("command", args->command, "The program and its arguments, after --")->required();
  measure->callback([args] { run_measure(*args); });
}

}  // namespace dvfslab::cli
