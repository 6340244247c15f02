// `dvfslab hold`: applies one setting and keeps it until the time is up or the
// process is stopped (Ctrl-C, SIGTERM), then restores the GPU. For running some
// other program at a chosen setting by hand; also how the tests drive the guard.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "cli/environment.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab::cli {
namespace {

// std::this_thread::sleep_for counts in 64-bit nanoseconds: beyond about 292 years
// (--seconds 1e308) the count overflows and it returns at once, so a long hold
// sleeps a day at a time until the time has passed.
void sleep_seconds(double seconds) {
  constexpr double day_s = 86400;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const double left = seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, day_s)));
  }
}

struct HoldOptions {
  std::string device = "auto";
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<int> power_limit_w;
  std::optional<double> seconds;  // absent: until a signal
  bool allow_clock_changes = false;
  std::string state_dir;
};

std::string knob(const std::optional<int>& value, const char* unit) {
  return value ? fmt::format("{} {}", *value, unit) : std::string("unknown");
}

// `auto` keeps meaning the first GPU found, as for every command on one GPU; a
// spec that names several GPUs (all, 0-3) holds the setting on each of them.
std::vector<std::unique_ptr<Gpu>> open_held_gpus(const std::string& device) {
  std::vector<std::unique_ptr<Gpu>> gpus = open_gpus(device, open_options(SimTimeMode::wall_time));
  if (device == "auto") gpus.resize(1);
  return gpus;
}

// A GPU's name, with its index when several GPUs of one model are held.
std::string gpu_label(const Gpu& gpu, bool several) {
  const GpuIdentity& identity = gpu.identity();
  return several ? fmt::format("GPU {} ({})", identity.index, identity.name) : identity.name;
}

void run_hold(const HoldOptions& options) {
  const std::vector<std::unique_ptr<Gpu>> opened = open_held_gpus(options.device);
  std::vector<Gpu*> gpus;
  for (const auto& gpu : opened) gpus.push_back(gpu.get());
  const bool several = gpus.size() > 1;
  const Setting setting{options.sm_mhz, options.mem_mhz, options.power_limit_w};
  const Setting plan[] = {setting};
  for (Gpu* gpu : gpus) validate_plan(*gpu, plan, options.allow_clock_changes);

  install_interrupt_handler();  // restore, then exit 128 + signal (docs/safety.md)
  ClockGuardSet guard(gpus, GuardOptions{state_dir(options.state_dir), options.allow_clock_changes});
  const std::vector<EffectiveSetting> effective = guard.apply(setting);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const Gpu& gpu = *gpus[i];
    labels.push_back(gpu_label(gpu, several));
    const std::string simulated = gpu.identity().simulated ? " (SIMULATED)" : "";
    fmt::print("holding {} on {}{}: SM clock {}, memory clock {}, power limit {}\n", to_string(setting),
               labels.back(), simulated, knob(effective[i].sm_mhz, "MHz"), knob(effective[i].mem_mhz, "MHz"),
               effective[i].power_limit_w ? fmt::format("{:g} W", *effective[i].power_limit_w) : "unknown");
  }
  std::fflush(stdout);

  if (options.seconds) {
    sleep_seconds(*options.seconds);
  } else {
    fmt::print(stderr, "dvfslab: press Ctrl-C or send SIGTERM to restore {} and stop\n",
               fmt::join(labels, ", "));
    while (true) ::pause();  // the signal thread restores and exits
  }
  const std::vector<RestoreReport> reports = guard.restore();
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    fmt::print("restored {}{}\n", labels[i],
               reports[i].actions.empty() ? std::string(": nothing was changed")
                                          : fmt::format(" ({})", fmt::join(reports[i].actions, "; ")));
  }
}

}  // namespace

void add_hold_command(CLI::App& app) {
  auto options = std::make_shared<HoldOptions>();
  CLI::App* command = app.add_subcommand(
      "hold",
      "Apply one setting (SM clock, memory clock, power limit) and keep it until --seconds pass or the "
      "process gets Ctrl-C / SIGTERM; then put the GPU back as it was found. Use it to run another "
      "program at a chosen setting. Knobs left out stay as they are.");
  add_device_option(*command, options->device,
                    ". A spec that names several GPUs holds the setting on each of them; auto takes the "
                    "first GPU found")
      ->capture_default_str();
  command->add_option("--sm", options->sm_mhz,
                      "SM (graphics) clock to lock, in MHz; must be a supported clock");
  command->add_option("--mem", options->mem_mhz, "memory clock to lock, in MHz; must be a supported clock");
  command->add_option("--power-limit", options->power_limit_w,
                      "board power limit in W, within the GPU's range");
  command
      ->add_option("--seconds", options->seconds,
                   "hold for this long, then restore and exit 0 "
                   "(default: until Ctrl-C or SIGTERM, exit 130 or 143)")
      ->check(non_negative_number());
  command->add_flag("--allow-clock-changes", options->allow_clock_changes,
                    "allow changing clocks and power limit (needed for any of --sm, --mem, --power-limit)");
  command->add_option("--state-dir", options->state_dir,
                      "directory of the restore journal (default: see `dvfslab restore --help`)");
  command->callback([options] { run_hold(*options); });
}

}  // namespace dvfslab::cli
