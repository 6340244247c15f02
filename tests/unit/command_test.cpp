// MarkedChild and the command workload against small shell programs: start
// errors, exit statuses, the marker pipe and how iterations are handed out.
#include <gtest/gtest.h>

#include <csignal>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

ChildExit run_to_end(MarkedChild& child, std::vector<Marker>* markers = nullptr) {
  while (true) {
    auto found = child.poll(1.0);
    if (markers) markers->insert(markers->end(), found.begin(), found.end());
    if (auto exit = child.try_wait()) {
      auto rest = child.drain();
      if (markers) markers->insert(markers->end(), rest.begin(), rest.end());
      return *exit;
    }
  }
}

TEST(MarkedChild, MissingProgramIsExitCode127) {
  try {
    MarkedChild child({"dvfslab-no-such-program-xyz"});
    FAIL() << "started a program that does not exist";
  } catch (const CommandStartError& e) {
    EXPECT_EQ(e.code(), ExitCode::command_not_found);
    EXPECT_NE(std::string(e.what()).find("command not found"), std::string::npos);
  }
}

TEST(MarkedChild, NonExecutableFileIsExitCode126) {
  try {
    MarkedChild child({"/etc/hostname"});
    FAIL() << "executed a data file";
  } catch (const CommandStartError& e) {
    EXPECT_EQ(e.code(), ExitCode::command_not_executable);
  }
}

TEST(MarkedChild, EmptyCommandIsAUsageError) { EXPECT_THROW(MarkedChild({}), UsageError); }

TEST(MarkedChild, ReportsExitCodeAndSignal) {
  MarkedChild exits({"sh", "-c", "exit 7"});
  const ChildExit code = run_to_end(exits);
  EXPECT_FALSE(code.signaled);
  EXPECT_EQ(code.shell_code(), 7);
  EXPECT_EQ(code.describe(), "exited with code 7");

  MarkedChild killed({"sh", "-c", "kill -SEGV $$"});
  const ChildExit signal = run_to_end(killed);
  EXPECT_TRUE(signal.signaled);
  EXPECT_EQ(signal.shell_code(), 128 + SIGSEGV);
  EXPECT_EQ(signal.describe(), "killed by SIGSEGV");
}

TEST(MarkedChild, MarkersArriveThroughTheNamedDescriptor) {
  setenv(mark_fd_environment_variable, "999", 1);  // an inherited value is replaced
  MarkedChild child(
      {"sh", "-c",
       "echo 'dvfslab:begin w' >&$DVFSLAB_MARK_FD; echo 'dvfslab:iter 2 items 64' >&$DVFSLAB_MARK_FD;"
       "echo 'not a marker' >&$DVFSLAB_MARK_FD; printf 'dvfslab:end w' >&$DVFSLAB_MARK_FD"});
  unsetenv(mark_fd_environment_variable);
  std::vector<Marker> markers;
  EXPECT_EQ(run_to_end(child, &markers).shell_code(), 0);
  ASSERT_EQ(markers.size(), 3u);
  EXPECT_EQ(markers[0].kind, Marker::Kind::begin);
  EXPECT_EQ(markers[1].iterations, 2);
  EXPECT_EQ(markers[1].items, 64.0);
  EXPECT_EQ(markers[2].kind, Marker::Kind::end);
  EXPECT_EQ(child.markers().malformed(), 1u);
  EXPECT_TRUE(child.markers_closed());
}

TEST(MarkedChild, DestructorStopsARunningProgram) {
  pid_t pid = 0;
  {
    MarkedChild child({"sleep", "600"});
    pid = child.pid();
  }
  // Reaped: the pid no longer names our child.
  EXPECT_NE(::kill(pid, 0), 0);
}

TEST(CommandWorkload, CountsReportedIterationsByArrivalTime) {
  auto workload = make_command_workload(
      {"sh", "-c",
       "i=0; while [ $i -lt 12 ]; do echo 'dvfslab:iter 3 items 96' >&$DVFSLAB_MARK_FD; i=$((i+1)); done"},
      Case{"cmd", 32, Mode::train, Precision::bf16}, "images");
  EXPECT_EQ(workload->item_unit(), "images");
  EXPECT_EQ(workload->workload_case().batch, 32);
  EXPECT_TRUE(workload->runs_by_itself());
  EXPECT_DOUBLE_EQ(workload->items_per_iteration(), 1.0);  // nothing reported yet
  workload->prepare();
  try {
    workload->follow_until(1e9);  // the program ends long before
    FAIL() << "followed past the program's end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with code 0"), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(workload->items_per_iteration(), 32.0);
  const CompletedWork all = workload->completed_between(-1e9, 1e9);
  EXPECT_EQ(all.iterations, 36);
  EXPECT_DOUBLE_EQ(all.items, 36 * 32.0);
  EXPECT_EQ(workload->completed_between(1e9, 2e9).iterations, 0);
}

TEST(CommandWorkload, NeedsACommand) { EXPECT_THROW(make_command_workload({}, Case{}), ConfigError); }

}  // namespace
}  // namespace dvfslab
