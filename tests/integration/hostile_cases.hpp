#pragma once
// The hostile-input suite's cases (issue 11): plans, sweep tables, databases,
// marker streams, output paths and option values a careless or hostile user could
// give. Generated deterministically (fixed seeds), so a failing case is the same on
// every run; hostile_input_test.cpp runs each and checks the properties every run of
// dvfslab must keep.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace dvfslab::testing {

struct HostileCase {
  std::string name;  // unique; letters, digits and '_' (a gtest parameter name)
  // Creates the case's input files in `in` (an empty directory); every regular file
  // there must be unchanged after the run.
  std::function<void(const std::filesystem::path& in)> prepare;
  // The dvfslab arguments; "{in}" and "{out}" stand for the input directory and an
  // empty directory for outputs.
  std::vector<std::string> arguments;
  // Runs against the fake NVML's GPU 0 (instead of only simulated GPUs) and checks
  // that no control call reached it and its state file did not change.
  bool fake_gpu = false;
  bool stdout_to_dev_full = false;
  // The run must fail (with one error line): exit 0 would mean the input was taken
  // or the output lost.
  bool must_fail = true;
};

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const HostileCase& hostile, std::ostream* out);

std::vector<HostileCase> hostile_plan_cases();
std::vector<HostileCase> hostile_option_cases();
std::vector<HostileCase> hostile_table_cases();
std::vector<HostileCase> hostile_database_cases();
std::vector<HostileCase> hostile_marker_cases();
std::vector<HostileCase> hostile_output_cases();

// Shared by the generators.
void write_file(const std::filesystem::path& path, const std::string& bytes);
// `size` bytes from a fixed-seed generator: the same garbage on every run.
std::string seeded_bytes(unsigned seed, std::size_t size);
// A sweep table (docs/replay.md) every command accepts, and a plan valid on it and
// on simulated GPUs.
extern const char* const valid_table;
extern const char* const valid_plan;

}  // namespace dvfslab::testing
