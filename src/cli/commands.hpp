#pragma once
// One function per subcommand; each lives in its own file under src/cli/.
#include <CLI/CLI.hpp>

namespace dvfslab::cli {

void add_info_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_report_command(CLI::App& app);
#ifdef DVFSLAB_RUN_WORKLOAD_MODULE
void add_run_workload_command(CLI::App& app);
#endif
void add_import_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_clock_map_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_study_command(CLI::App& app);
void add_slurm_command(CLI::App& app);
void add_exporter_command(CLI::App& app);

// The exit status main() returns after a subcommand ran without error; a
// subcommand sets it when success is not 0 (measure: its program's status).
inline int& requested_exit_status() {
  static int status = 0;
  return status;
}

// Declares a command's --device option: the backend table's help followed by
// `extra_help` (what the command does with it), and a check that refuses an empty
// value (an unset shell variable) rather than take it as "not given", which would
// silently pick a GPU. Returns the option for command-specific settings.
CLI::Option* add_device_option(CLI::App& command, std::string& device, const std::string& extra_help = "");

void add_measure_command(CLI::App& app);
void add_hold_command(CLI::App& app);
void add_restore_command(CLI::App& app);
void add_tune_command(CLI::App& app);

}  // namespace dvfslab::cli
