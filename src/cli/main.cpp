// The dvfslab command line: parse, call the library, print. Errors become one line
// on stderr and the exit code of their class (docs/cli.md).
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/command_names.hpp"
#include "cli/commands.hpp"
#include "cli/control_route.hpp"
#include "cli/daemon_command.hpp"
#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace {

// The library says what failed; only the command line knows that the user may
// switch to a simulated GPU instead, so the hint is added here.
std::string simulated_gpu_hint() {
  std::string keys;
  for (const std::string& key : dvfslab::sim_gpu_keys())
    keys += fmt::format("{}sim:{}", keys.empty() ? "" : ", ", key);
  return fmt::format("to work without an NVIDIA GPU, use a simulated one with --device sim:NAME ({})", keys);
}

}  // namespace

namespace {

int report_internal_error(const std::exception& e) {
  fmt::print(stderr, "dvfslab: internal error: {} (please report it with the command you ran)\n",
             dvfslab::escape_control_characters(e.what()));
  return static_cast<int>(dvfslab::ExitCode::failure);
}

int report_output_failure(int error) {
  fmt::print(stderr, "dvfslab: error: could not write to standard output: {}; the output is incomplete\n",
             error != 0 ? std::strerror(error) : "a write failed (disk full or pipe closed?)");
  return static_cast<int>(dvfslab::ExitCode::failure);
}

// Standard output is buffered, so a full disk or a closed pipe may show only when
// it is flushed or closed: check both, once, for every command.
int finish_standard_output(int status) {
  std::cout.flush();
  errno = 0;
  bool failed = std::fflush(stdout) != 0;
  int error = failed ? errno : 0;
  if (!failed && (std::ferror(stdout) || !std::cout)) failed = true;  // an earlier write failed
  if (std::fclose(stdout) != 0 && !failed) {
    failed = true;
    error = errno;
  }
  return failed ? report_output_failure(error) : status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dvfslab measures how GPU clock and power-limit settings change the time, power and "
      "energy of deep-learning work, and finds the setting that saves the most energy.\n"
      "Without an NVIDIA GPU, use a simulated one: --device sim:NAME (each command's --help lists "
      "the models)."};
  app.set_version_flag("--version", std::string("dvfslab ") + DVFSLAB_VERSION);
  app.require_subcommand(1);
  // One line, like every other error (docs/cli.md); CLI11's default adds a second.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("dvfslab: error: {} (see dvfslab --help)\n",
                       dvfslab::escape_control_characters(e.what()));
  });
  dvfslab::cli::add_analyze_command(app);
  dvfslab::cli::add_info_command(app);
  dvfslab::cli::add_report_command(app);
#ifdef DVFSLAB_RUN_WORKLOAD_MODULE
  dvfslab::cli::add_run_workload_command(app);
#endif
  dvfslab::cli::add_import_command(app);
  dvfslab::cli::add_model_command(app);
  dvfslab::cli::add_clock_map_command(app);
  dvfslab::cli::add_export_command(app);
  dvfslab::cli::add_merge_command(app);
  dvfslab::cli::add_measure_command(app);
  dvfslab::cli::add_hold_command(app);
  dvfslab::cli::add_restore_command(app);
  dvfslab::cli::add_sweep_command(app);
  dvfslab::cli::add_search_command(app);
  dvfslab::cli::add_tune_command(app);
  dvfslab::cli::add_study_command(app);
  dvfslab::cli::add_slurm_command(app);
  dvfslab::cli::add_daemon_command(app);
  dvfslab::cli::add_exporter_command(app);
  dvfslab::cli::install_control_route();

  try {
    dvfslab::cli::check_command_names(app, std::vector<std::string>(argv + 1, argv + argc));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? finish_standard_output(0) : static_cast<int>(dvfslab::ExitCode::usage);
  } catch (const dvfslab::DriverNotFoundError& e) {
    fmt::print(stderr, "dvfslab: error: {}; {}\n", dvfslab::escape_control_characters(e.what()),
               simulated_gpu_hint());
    return static_cast<int>(e.code());
  } catch (const dvfslab::Error& e) {
    dvfslab::wait_for_interrupt_exit();  // an error the interruption caused is no error
    fmt::print(stderr, "dvfslab: error: {}\n", dvfslab::escape_control_characters(e.what()));
    return static_cast<int>(e.code());
  } catch (const std::system_error& e) {
    dvfslab::wait_for_interrupt_exit();
    // fmt::print throws this when standard output cannot be written.
    if (std::ferror(stdout)) return report_output_failure(e.code().value());
    return report_internal_error(e);
  } catch (const std::exception& e) {
    dvfslab::wait_for_interrupt_exit();
    return report_internal_error(e);
  }
  dvfslab::wait_for_interrupt_exit();  // the exit code is then 128 + the signal
  return finish_standard_output(dvfslab::cli::requested_exit_status());
}
