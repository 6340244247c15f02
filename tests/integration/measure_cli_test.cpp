// `dvfslab measure` as users run it: the real binary on a simulated GPU following
// the wall clock, with small shell and Python programs as the measured child.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "scratch_dir.hpp"

extern char** environ;

namespace {

struct Finished {
  int exit_code = -1;  // or 128 + signal
  std::string out;
  std::string err;
};

// Starts the dvfslab binary with its stdout and stderr on pipes; the test may
// signal it before collecting the result.
class DvfslabProcess {
 public:
  explicit DvfslabProcess(const std::vector<std::string>& arguments) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<std::string> argv = {DVFSLAB_BINARY};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> pointers;
    for (auto& a : argv) pointers.push_back(a.data());
    pointers.push_back(nullptr);
    if (::posix_spawn(&pid_, DVFSLAB_BINARY, &actions, nullptr, pointers.data(), environ) != 0) {
      throw std::runtime_error("cannot start " DVFSLAB_BINARY);
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
  }

  void send(int signal) const { ::kill(pid_, signal); }

  Finished finish() {
    Finished result;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    while (open > 0) {
      ::poll(fds, 2, -1);
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buffer[4096];
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          sinks[i]->append(buffer, static_cast<std::size_t>(n));
        } else {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open;
        }
      }
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    return result;
  }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
};

Finished measure(std::vector<std::string> command, std::vector<std::string> options = {}) {
  std::vector<std::string> arguments = {"measure", "--device", "sim:h200"};
  arguments.insert(arguments.end(), options.begin(), options.end());
  arguments.push_back("--");
  arguments.insert(arguments.end(), command.begin(), command.end());
  return DvfslabProcess(arguments).finish();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class MeasureCli : public ::testing::Test {
 protected:
  dvfslab::testing::ScratchDir scratch_;
  const std::filesystem::path& dir_ = scratch_.path();
};

TEST_F(MeasureCli, ProgramNotFoundIsAClearErrorWithCode127) {
  const auto r = measure({"dvfslab-no-such-program-xyz"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(contains(r.err, "command not found: 'dvfslab-no-such-program-xyz'")) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(MeasureCli, ExitCodeAndOutputPassThrough) {
  const auto r = measure({"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "to-stdout\n");
  EXPECT_TRUE(contains(r.err, "to-stderr"));
  EXPECT_TRUE(contains(r.err, "SIMULATED")) << r.err;
  EXPECT_TRUE(contains(r.err, "exited with code 3")) << r.err;
  EXPECT_TRUE(contains(r.err, "energy ")) << r.err;
}

TEST_F(MeasureCli, JsonOwnsStdoutAndTheProgramsStdoutMovesToStderr) {
  const auto r = measure({"sh", "-c", "echo chatter"}, {"--json"});
  EXPECT_EQ(r.exit_code, 0);
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_TRUE(contains(r.err, "chatter"));
  for (const char* key :
       {"duration_s", "energy_j", "energy_integrated_j", "mean_power_w", "peak_power_w", "sm_mhz_mean",
        "mem_mhz_mean", "temperature_c_max", "throttle", "flags", "windows"}) {
    EXPECT_TRUE(json.contains(key)) << key << " missing from " << r.out;
  }
  EXPECT_TRUE(json["simulated"].get<bool>());
  EXPECT_EQ(json["exit"]["code"], 0);
  EXPECT_FALSE(json.contains("iterations"));  // no markers, no iteration figures
}

TEST_F(MeasureCli, CrashingProgramStillGetsItsReport) {
  const auto r = measure(
      {"sh", "-c",
       "echo 'dvfslab:begin work' >&$DVFSLAB_MARK_FD; echo 'dvfslab:iter 4 items 8' >&$DVFSLAB_MARK_FD; "
       "kill -SEGV $$"},
      {"--json"});
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["exit"]["signal"], SIGSEGV);
  EXPECT_EQ(json["exit"]["description"], "killed by SIGSEGV");
  EXPECT_EQ(json["iterations"], 4);
  EXPECT_TRUE(json.contains("energy_j"));
}

TEST_F(MeasureCli, ProgramKilledBySignalGives128PlusSignal) {
  const auto r = measure({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(contains(r.err, "killed by SIGKILL")) << r.err;
}

TEST_F(MeasureCli, InterruptIsForwardedAndPartialResultsArePrinted) {
  const auto ready = dir_ / "ready";
  const std::string script =
      "import os, signal, sys, time\n"
      "fd = int(os.environ['DVFSLAB_MARK_FD'])\n"
      "os.write(fd, b'dvfslab:begin work\\n')\n"
      "os.write(fd, b'dvfslab:iter 5 items 40\\n')\n"
      "try:\n"
      "    open(sys.argv[1], 'w').close()\n"  // inside the try: SIGINT may come at once
      "    time.sleep(600)\n"
      "except KeyboardInterrupt:\n"
      "    print('child got SIGINT', file=sys.stderr)\n"
      "    sys.exit(42)\n";
  DvfslabProcess process(
      {"measure", "--device", "sim:h200", "--json", "--", "python3", "-c", script, ready.string()});
  // Wait until the program runs and has reported; generous, it only bounds a hang.
  for (int i = 0; i < 3000 && !std::filesystem::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(std::filesystem::exists(ready));
  process.send(SIGINT);
  const auto r = process.finish();
  EXPECT_EQ(r.exit_code, 42);
  EXPECT_TRUE(contains(r.err, "child got SIGINT")) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["interrupted_by_signal"], SIGINT);
  EXPECT_EQ(json["iterations"], 5);
  ASSERT_EQ(json["windows"].size(), 1u);
  EXPECT_EQ(json["windows"][0]["name"], "work");
  EXPECT_FALSE(json["windows"][0]["complete"].get<bool>());
}

TEST_F(MeasureCli, MarkersGiveSteadyStateFiguresAndWindows) {
  const std::string script =
      "import os\n"
      "fd = int(os.environ['DVFSLAB_MARK_FD'])\n"
      "os.write(fd, b'dvfslab:begin all\\n')\n"
      "for i in range(10):\n"
      "    os.write(fd, b'dvfslab:iter 1 items 32\\n')\n"
      "os.write(fd, b'dvfslab:iter banana\\n')\n"
      "os.write(fd, b'dvfslab:end nothing-open\\n')\n"
      "os.write(fd, b'dvfslab:end all\\n')\n";
  const auto r = measure({"python3", "-c", script}, {"--json", "--skip-iters", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["skip_iterations"], 3);
  EXPECT_EQ(json["iterations"], 7);
  EXPECT_DOUBLE_EQ(json["items"].get<double>(), 7 * 32.0);
  for (const char* key :
       {"time_per_iteration_s", "items_per_s", "energy_per_iteration_j", "energy_per_item_j"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  ASSERT_EQ(json["windows"].size(), 1u);
  EXPECT_EQ(json["windows"][0]["name"], "all");
  EXPECT_EQ(json["windows"][0]["iterations"], 10);
  EXPECT_TRUE(json["windows"][0]["complete"].get<bool>());
  EXPECT_EQ(json["markers"]["lines"], 14);
  EXPECT_EQ(json["markers"]["malformed"], 1);
  EXPECT_EQ(json["markers"]["rejected"], 1);
}

TEST_F(MeasureCli, TearDownAfterTheLastMarkerIsReportedApartAndAStepIndexGetsOneWarning) {
  // iter values 1, 2, 3, ...: a step index written as iter; then 1 s of tear-down
  // with the marker descriptor open.
  const std::string script =
      "import os, time\n"
      "fd = int(os.environ['DVFSLAB_MARK_FD'])\n"
      "for i in range(1, 11):\n"
      "    os.write(fd, b'dvfslab:iter %d\\n' % i)\n"
      "time.sleep(1.0)\n";
  const auto r = measure({"python3", "-c", script}, {"--skip-iters", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "after loop")) << r.err;
  const auto first = r.err.find("warning: ");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_TRUE(contains(r.err, "dvfslab:step")) << r.err;
  EXPECT_EQ(r.err.find("warning: ", first + 1), std::string::npos) << "warned more than once:\n" << r.err;
}

// The report's job, shorter: 2 s of set-up, then 10 iterations of 0.2 s and 8 items
// each, marked as they end. The steady figures are the loop's; set-up is reported
// beside them (it doubled them: 0.4 s per iteration).
TEST_F(MeasureCli, H5_SetUpBeforeTheFirstMarkerIsReportedApartNotInTheSteadyState) {
  const std::string script =
      "import os, time\n"
      "fd = int(os.environ['DVFSLAB_MARK_FD'])\n"
      "time.sleep(2.0)\n"
      "for i in range(10):\n"
      "    time.sleep(0.2)\n"
      "    os.write(fd, b'dvfslab:iter 1 items 8\\n')\n";
  const auto r = measure({"python3", "-c", script}, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["iterations"], 9);
  const double per_iteration = json["time_per_iteration_s"].get<double>();
  EXPECT_GT(per_iteration, 0.19);
  EXPECT_LT(per_iteration, 0.25) << "set-up in the steady window";
  // The simulated GPU idles throughout: energy per item is that power for 0.2 s / 8.
  const double per_item = json["energy_per_item_j"].get<double>();
  const double truth = json["mean_power_w"].get<double>() * 0.2 / 8.0;
  EXPECT_NEAR(per_item, truth, 0.25 * truth);
  EXPECT_GT(json["setup_s"].get<double>(), 2.1);
  EXPECT_GT(json["setup_energy_j"].get<double>(), 0.0);
  EXPECT_TRUE(json.contains("tail_s"));

  const auto text = measure({"python3", "-c", script});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.err, "before loop")) << text.err;
  EXPECT_TRUE(contains(text.err, "steady state 9 iterations")) << text.err;
}

TEST_F(MeasureCli, IdleBaselineAndTraceFile) {
  const auto trace = dir_ / "trace.csv";
  const auto r = measure({"sleep", "0.3"},
                         {"--json", "--idle-seconds", "0.3", "--sample-ms", "20", "--trace", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_GT(json["idle_power_w"].get<double>(), 0.0);
  EXPECT_TRUE(json.contains("dynamic_energy_j"));
  EXPECT_DOUBLE_EQ(json["sample_period_s"].get<double>(), 0.02);
  std::ifstream file(trace);
  std::string header;
  std::getline(file, header);
  EXPECT_EQ(header.rfind("time_s,power_instant_w", 0), 0u);
  std::size_t rows = 0;
  for (std::string line; std::getline(file, line);) ++rows;
  EXPECT_GE(rows, json["samples"].get<std::size_t>());
}

TEST_F(MeasureCli, BadOptionsAreUsageErrors) {
  EXPECT_EQ(measure({"true"}, {"--sample-ms", "0"}).exit_code, 2);
  EXPECT_EQ(DvfslabProcess({"measure", "--device", "sim:h200"}).finish().exit_code, 2);  // no command
  const auto help = DvfslabProcess({"measure", "--help"}).finish();
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option :
       {"--device", "--json", "--trace", "--skip-iters", "--sample-ms", "--idle-seconds"}) {
    EXPECT_TRUE(contains(help.out, option)) << option;
  }
}

TEST_F(MeasureCli, AReplayedTableCannotMeasureAProgram) {
  const std::string table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";
  const auto r = DvfslabProcess({"measure", "--device", "replay:" + table, "--", "true"}).finish();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "Tesla V100 PCIe is a replayed sweep table")) << r.err;
  EXPECT_TRUE(contains(r.err, "docs/replay.md")) << r.err;
}

TEST_F(MeasureCli, PythonExampleFromTheDocsReportsIterations) {
  const auto r =
      measure({"python3", DVFSLAB_MARKERS_EXAMPLE_PY, "--steps", "6"}, {"--json", "--skip-iters", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["iterations"], 5);
  EXPECT_EQ(json["windows"][0]["name"], "train");
}

TEST_F(MeasureCli, CppExampleFromTheDocsReportsIterations) {
  const auto r = measure({DVFSLAB_MARKERS_EXAMPLE, "4"}, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["iterations"], 4);
  EXPECT_DOUBLE_EQ(json["items"].get<double>(), 4 * 64.0);
  EXPECT_TRUE(json["windows"][0]["complete"].get<bool>());
}

}  // namespace
