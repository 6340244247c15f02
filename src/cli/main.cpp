// The dvfslab command line: parse, call the library, print. Errors become one line
// on stderr and the exit code of their class (docs/cli.md).
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace {

// The library says what failed; only the command line knows that the user may
// switch to a simulated GPU instead, so the hint is added here.
std::string simulated_gpu_hint() {
  std::string keys;
  for (const std::string& key : dvfslab::sim_gpu_keys()) keys += fmt::format("{}sim:{}", keys.empty() ? "" : ", ", key);
  return fmt::format("to work without an NVIDIA GPU, use a simulated one with --device sim:NAME ({})", keys);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dvfslab measures how GPU clock and power-limit settings change the time, power and "
      "energy of deep-learning work, and finds the setting that saves the most energy.\n"
      "Without an NVIDIA GPU, use a simulated one: --device sim:h200 (or sim:a100, sim:v100, "
      "sim:p100, sim:rtx2080ti)."};
  app.set_version_flag("--version", std::string("dvfslab ") + DVFSLAB_VERSION);
  app.require_subcommand(1);
  dvfslab::cli::add_analyze_command(app);
  dvfslab::cli::add_info_command(app);
  dvfslab::cli::add_report_command(app);
#ifdef DVFSLAB_HAVE_TORCH
  dvfslab::cli::add_run_workload_command(app);
#endif
  dvfslab::cli::add_import_command(app);
  dvfslab::cli::add_export_command(app);
  dvfslab::cli::add_merge_command(app);
  dvfslab::cli::add_measure_command(app);
  dvfslab::cli::add_hold_command(app);
  dvfslab::cli::add_restore_command(app);
  dvfslab::cli::add_sweep_command(app);
  dvfslab::cli::add_study_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(dvfslab::ExitCode::usage);
  } catch (const dvfslab::DriverNotFoundError& e) {
    fmt::print(stderr, "dvfslab: error: {}; {}\n", e.what(), simulated_gpu_hint());
    return static_cast<int>(e.code());
  } catch (const dvfslab::Error& e) {
    fmt::print(stderr, "dvfslab: error: {}\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    fmt::print(stderr, "dvfslab: internal error: {} (please report it with the command you ran)\n", e.what());
    return static_cast<int>(dvfslab::ExitCode::failure);
  }
  return dvfslab::cli::requested_exit_status();
}
