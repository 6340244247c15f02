// The hostile-input suite (issue 11, "Done when"): runs the real binary on every
// case of hostile_cases.hpp and checks what must hold however bad the input is:
//   - the exit code is a documented one (docs/cli.md), never a signal;
//   - it finishes within the case time limit;
//   - a failure is exactly one line "dvfslab: error: ..." on stderr, never an
//     "internal error"; a success prints no error line;
//   - every input file is byte-for-byte unchanged;
//   - on the fake NVML, no control call reached the GPU and its state is unchanged.
// Run it alone with `ctest -L hostile`.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "hostile_cases.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

namespace fs = std::filesystem;

// Generous for a loaded 2-core machine; a case that needs more is hanging.
constexpr std::chrono::seconds case_time_limit{10};
const std::set<int> documented_exit_codes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The content of every regular file under `root` (not following links), by path.
std::map<fs::path, std::string> snapshot(const fs::path& root) {
  std::map<fs::path, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && !entry.is_symlink()) files[entry.path()] = read_bytes(entry.path());
  }
  return files;
}

std::vector<std::string> stderr_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string quoted_for_shell(const std::string& word) { return "'" + replace_all(word, "'", "'\\''") + "'"; }

class HostileInput : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileInput, FailsCleanlyAndChangesNothing) {
  const HostileCase& hostile = GetParam();
  ScratchDir scratch;
  const fs::path in = scratch / "in", out = scratch / "out", gpu = scratch / "gpu";
  fs::create_directories(in);
  fs::create_directories(out);
  fs::create_directories(gpu / "state");
  if (hostile.prepare) hostile.prepare(in);

  EnvironmentChanges environment = {{"DVFSLAB_STATE_DIR", (gpu / "state").string()},
                                    {"DVFSLAB_READ_ONLY", std::nullopt}};
  const fs::path gpu_state = gpu / "fake-state.json", setter_log = gpu / "setters.log";
  std::string gpu_state_before;
  if (hostile.fake_gpu) {
    environment = fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_STATE", gpu_state.string()},
                                                 {"DVFSLAB_FAKE_NVML_LOG", setter_log.string()},
                                                 {"DVFSLAB_STATE_DIR", (gpu / "state").string()}});
    // The fake writes its state at the first nvmlInit: this is the GPU as found.
    ASSERT_EQ(run_dvfslab({"info", "--device", "0"}, environment).exit_code, 0);
    gpu_state_before = read_bytes(gpu_state);
    ASSERT_FALSE(gpu_state_before.empty());
  }
  const auto inputs_before = snapshot(in);

  std::vector<std::string> arguments;
  for (const auto& argument : hostile.arguments) {
    arguments.push_back(replace_all(replace_all(argument, "{in}", in.string()), "{out}", out.string()));
  }
  std::string program = DVFSLAB_BINARY;
  if (hostile.stdout_to_dev_full) {
    std::string command = "exec " + quoted_for_shell(DVFSLAB_BINARY);
    for (const auto& argument : arguments) command += " " + quoted_for_shell(argument);
    arguments = {"-c", command + " >/dev/full"};
    program = "/bin/sh";
  }
  const auto started = std::chrono::steady_clock::now();
  const ProcessResult result = run_process_with_limit(program, arguments, environment, case_time_limit);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::vector<std::string> violations;
  const auto violated = [&](const std::string& what) { violations.push_back(what); };
  if (result.timed_out) violated("still running after the time limit (a hang)");
  if (!documented_exit_codes.contains(result.exit_code)) {
    violated(
        "exit code " + std::to_string(result.exit_code) + " is not documented" +
        (result.exit_code > 128 ? " (killed by signal " + std::to_string(result.exit_code - 128) + ")" : ""));
  }
  const auto lines = stderr_lines(result.err);
  if (result.err.find("internal error") != std::string::npos) violated("stderr says \"internal error\"");
  if (hostile.must_fail && result.exit_code == 0)
    violated("exit 0: the input was accepted or the output lost");
  if (result.exit_code != 0) {
    if (lines.size() != 1)
      violated("a failure printed " + std::to_string(lines.size()) + " lines on stderr, not 1");
    if (lines.empty() || lines.front().rfind("dvfslab: error: ", 0) != 0) {
      violated("a failure's stderr does not start with \"dvfslab: error: \"");
    }
  } else {
    for (const auto& line : lines) {
      if (line.find("error") != std::string::npos) violated("a success printed an error line: " + line);
    }
  }
  const auto inputs_after = snapshot(in);
  for (const auto& [path, bytes] : inputs_before) {
    const auto after = inputs_after.find(path);
    if (after == inputs_after.end()) {
      violated("input " + path.filename().string() + " was removed");
    } else if (after->second != bytes) {
      violated("input " + path.filename().string() + " was changed (" + std::to_string(bytes.size()) +
               " -> " + std::to_string(after->second.size()) + " bytes)");
    }
  }
  if (hostile.fake_gpu) {
    if (fs::exists(setter_log)) violated("control calls reached the GPU: " + read_bytes(setter_log));
    if (read_bytes(gpu_state) != gpu_state_before) violated("the GPU's state changed");
  }

  for (const auto& violation : violations) ADD_FAILURE() << violation;
  if (!violations.empty()) {
    ADD_FAILURE() << "exit " << result.exit_code << " after " << seconds
                  << " s; stderr: " << result.err.substr(0, 2000);
  }
}

std::string case_name(const ::testing::TestParamInfo<HostileCase>& info) { return info.param.name; }

}  // namespace

void PrintTo(const HostileCase& hostile, std::ostream* out) { *out << hostile.name; }

namespace {

INSTANTIATE_TEST_SUITE_P(Plans, HostileInput, ::testing::ValuesIn(hostile_plan_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Options, HostileInput, ::testing::ValuesIn(hostile_option_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Tables, HostileInput, ::testing::ValuesIn(hostile_table_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Databases, HostileInput, ::testing::ValuesIn(hostile_database_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Markers, HostileInput, ::testing::ValuesIn(hostile_marker_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Outputs, HostileInput, ::testing::ValuesIn(hostile_output_cases()), case_name);

}  // namespace
}  // namespace dvfslab::testing
