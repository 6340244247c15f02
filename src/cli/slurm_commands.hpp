#pragma once
// What the files of `dvfslab slurm` share: its status, resubmit, prolog and epilog subcommands and
// the writing of a submission directory's files.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

namespace dvfslab::cli {

// `slurm status`, `slurm resubmit` and `slurm cancel`, under the `slurm` subcommand.
void add_slurm_status_commands(CLI::App& slurm);

// `slurm prolog` and `slurm epilog`, Slurm's Prolog and Epilog (slurm_prolog.cpp).
void add_slurm_job_script_commands(CLI::App& slurm);

// Writes `text` to `path` whole or not at all (through a temporary file); throws Error.
void write_slurm_file(const std::filesystem::path& path, const std::string& text);

}  // namespace dvfslab::cli
