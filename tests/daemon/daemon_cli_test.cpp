// `dvfslab daemon` as root on two fake H200s, its clients an unprivileged user made
// by the test: what the policy allows works, everything else is refused with a clear
// message before any setter call, and every GPU of a lease is restored when its
// client goes, however it goes — and after a kill -9 of the daemon, at its next start.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <memory>

#include "daemon/daemon_test_support.hpp"

namespace dvfslab::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(DaemonTest, MinimalPolicyGivesTheUserControlOfEveryGpuAndClosingTheConnectionRestoresIt) {
  auto daemon = start_daemon("[[rule]]\nusers = [\"" + test_user_name + "\"]\ngpus = \"all\"\n");
  const std::filesystem::path socket = daemon->socket();
  struct stat status {};
  ASSERT_EQ(::stat(socket.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0666u) << "without socket_group the policy alone decides who is served";

  const ChildResult client = run_as(user, [&](std::string& report) {
    DaemonConnection connection(socket);
    const nlohmann::json hello = connection.request({{"op", "hello"}});
    report += hello.dump() + "\n";
    connection.request(lease_request({"0", "1"}));
    const nlohmann::json applied =
        connection.request({{"op", "apply"},
                            {"settings",
                             {{{"gpu", "0"}, {"sm_mhz", 1200}, {"mem_mhz", 2201}, {"power_limit_w", 400}},
                              {{"gpu", "1"}, {"sm_mhz", 1500}}}}});
    report += applied.dump() + "\n";
    return 0;
  });
  ASSERT_EQ(client.exit_code, 0) << client.report << daemon->error();
  EXPECT_NE(client.report.find("\"access\":\"control\""), std::string::npos) << client.report;
  EXPECT_NE(client.report.find("\"user\":\"" + test_user_name + "\""), std::string::npos) << client.report;
  EXPECT_NE(client.report.find("\"sm_mhz\":1200"), std::string::npos) << client.report;

  // The client has exited: both GPUs read as the administrator left them.
  EXPECT_TRUE(wait_for_controls(0, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 0);
  EXPECT_TRUE(wait_for_controls(1, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 1);
  const std::string setters = read_setter_log(setter_log());
  EXPECT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1200 max_mhz=1200"),
            std::string::npos);
  EXPECT_NE(setters.find("nvmlDeviceSetPowerManagementLimit device=0 limit_mw=450000"), std::string::npos)
      << "restored to the administrator's 450 W, not the 700 W default:\n"
      << setters;
  ASSERT_TRUE(wait_for_audit(*daemon, "request=disconnect gpu=-")) << daemon->audit();
  const std::string audit = daemon->audit();
  EXPECT_NE(audit.find("user=" + test_user_name), std::string::npos) << audit;
  EXPECT_NE(audit.find("request=apply sm=1200 mem=2201 pl=400 gpu=GPU-"), std::string::npos) << audit;
  EXPECT_NE(audit.find("before=\"sm_lock=none mem_lock=none app=1980/3201 pl=450W\" after=\"sm_lock=none "
                       "mem_lock=none app=1980/3201 pl=400W\" result=ok"),
            std::string::npos)
      << "NVML cannot read locks back, so only the power limit shows:\n"
      << audit;
  EXPECT_NE(audit.find("request=disconnect restore"), std::string::npos) << audit;
  EXPECT_NE(audit.find("after=\"sm_lock=none mem_lock=none app=1980/3201 pl=450W\" result=ok"),
            std::string::npos)
      << audit;
}

TEST_F(DaemonTest, SocketGroupMakesTheSocketGroupOwnedWithMode0660) {
  auto daemon =
      start_daemon("[daemon]\nsocket_group = \"" + test_user_name + "\"\n" + policy_for("gpus = \"all\"\n"));
  struct stat status {};
  ASSERT_EQ(::stat(daemon->socket().c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0660u);
  EXPECT_EQ(status.st_gid, user.gid);
}

TEST_F(DaemonTest, AUserThePolicyDoesNotNameIsRefusedWithoutASetterCall) {
  const TestUser stranger = ensure_test_user(stranger_user_name);
  auto daemon = start_daemon(policy_for("gpus = \"all\"\n"));
  const std::filesystem::path socket = daemon->socket();
  const ChildResult client = run_as(stranger, [&](std::string& report) {
    DaemonConnection connection(socket);
    report = outcome(connection, lease_request({"0"}));
    return 0;
  });
  EXPECT_NE(client.report.find("user " + stranger_user_name + " (uid " + std::to_string(stranger.uid) +
                               ") is not named in the policy"),
            std::string::npos)
      << client.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
  EXPECT_NE(daemon->audit().find("user=" + stranger_user_name + " pid="), std::string::npos);
}

TEST_F(DaemonTest, AValueOutsideThePolicysBoundsIsRefusedWithoutASetterCall) {
  auto daemon =
      start_daemon(policy_for("gpus = \"all\"\nsm_mhz = [1000, 1500]\npower_limit_w = [300, 600]\n"));
  const std::filesystem::path socket = daemon->socket();
  const ChildResult client = run_as(user, [&](std::string& report) {
    DaemonConnection connection(socket);
    connection.request(lease_request({"0"}));
    report += outcome(connection, apply_request("0", 1800, std::nullopt, std::nullopt)) + "\n";
    report += outcome(connection, apply_request("0", std::nullopt, std::nullopt, 650)) + "\n";
    return 0;
  });
  EXPECT_NE(client.report.find("SM clock 1800 MHz on GPU 0 (GPU-"), std::string::npos) << client.report;
  EXPECT_NE(client.report.find("is outside what the policy allows you: 1000–1500 MHz"), std::string::npos)
      << client.report;
  EXPECT_NE(client.report.find("power limit 650 W on GPU 0"), std::string::npos) << client.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
}

TEST_F(DaemonTest, AGpuOutsideTheAllowedSetIsRefusedWithoutASetterCall) {
  auto daemon = start_daemon(policy_for("gpus = [0]\n"));
  const std::filesystem::path socket = daemon->socket();
  const ChildResult client = run_as(user, [&](std::string& report) {
    DaemonConnection connection(socket);
    report += outcome(connection, lease_request({"1"})) + "\n";
    report += outcome(connection, lease_request({"0", "1"})) + "\n";
    report += outcome(connection, lease_request({"7"})) + "\n";
    return 0;
  });
  EXPECT_NE(client.report.find("the policy does not let user " + test_user_name + " change GPU 1 (GPU-"),
            std::string::npos)
      << client.report;
  EXPECT_NE(client.report.find("no GPU '7' here; the daemon serves 0 (GPU-"), std::string::npos)
      << client.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
}

TEST_F(DaemonTest, ASecondClientOnALeasedGpuIsRefusedWithoutASetterCall) {
  auto daemon = start_daemon(policy_for("gpus = \"all\"\n"));
  const std::filesystem::path socket = daemon->socket();
  UserChild holder(user, [&](const auto& ready) {
    DaemonConnection connection(socket);
    connection.request(lease_request({"1"}));
    ready("leased");
  });
  ASSERT_EQ(holder.wait_until_ready(), "leased");
  const ChildResult second = run_as(user, [&](std::string& report) {
    DaemonConnection connection(socket);
    report = outcome(connection, lease_request({"0", "1"}));
    return 0;
  });
  EXPECT_NE(second.report.find("is leased by user " + test_user_name + " (uid " + std::to_string(user.uid) +
                               ", pid " + std::to_string(holder.pid()) + ")"),
            std::string::npos)
      << second.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
}

TEST_F(DaemonTest, KillNineOfTheClientMidLeaseRestoresWithinOneSecond) {
  auto daemon = start_daemon(policy_for("gpus = \"all\"\n"));
  const std::filesystem::path socket = daemon->socket();
  UserChild client(user, [&](const auto& ready) {
    DaemonConnection connection(socket);
    connection.request(lease_request({"0"}));
    connection.request(apply_request("0", 1005, 2201, 300));
    ready("applied");
  });
  ASSERT_EQ(client.wait_until_ready(), "applied");
  ASSERT_EQ(fake_gpu_controls(state_file(), 0).at("power_limit_w"), 300.0);
  client.kill_now();
  const auto restored_after = wait_for_controls(0, controls_an_administrator_left(), 1000ms);
  EXPECT_TRUE(restored_after) << fake_gpu_controls(state_file(), 0);
  ASSERT_TRUE(wait_for_audit(*daemon, "request=disconnect gpu=-")) << daemon->audit();
  EXPECT_FALSE(restore_journal_in(daemon->state_dir())) << "the journal goes once the GPU is restored";
  EXPECT_NE(daemon->audit().find("request=disconnect restore gpu=GPU-"), std::string::npos)
      << daemon->audit();
}

TEST_F(DaemonTest, KillNineOfTheDaemonThenItsRestartRestoresBeforeAcceptingClients) {
  auto daemon = start_daemon(policy_for("gpus = \"all\"\n"));
  const std::filesystem::path socket = daemon->socket();
  UserChild client(user, [&](const auto& ready) {
    DaemonConnection connection(socket);
    connection.request(lease_request({"0", "1"}));
    connection.request(
        {{"op", "apply"},
         {"settings", {{{"gpu", "0"}, {"sm_mhz", 1200}}, {{"gpu", "1"}, {"power_limit_w", 250}}}}});
    ready("applied");
  });
  ASSERT_EQ(client.wait_until_ready(), "applied");
  daemon->kill_now();
  ASSERT_NE(fake_gpu_controls(state_file(), 1), controls_an_administrator_left())
      << "the kill left it changed";
  ASSERT_TRUE(restore_journal_in(daemon->state_dir()));

  // The stale socket is still there: a client that connects now must find nobody.
  EXPECT_THROW(DaemonConnection{socket}, Error);
  ASSERT_TRUE(daemon->start()) << daemon->error();
  // "listening" is printed after the recovery and before the first accept.
  EXPECT_EQ(fake_gpu_controls(state_file(), 0), controls_an_administrator_left());
  EXPECT_EQ(fake_gpu_controls(state_file(), 1), controls_an_administrator_left());
  EXPECT_FALSE(restore_journal_in(daemon->state_dir()));
  EXPECT_NE(daemon->audit().find("request=recover journal of process"), std::string::npos) << daemon->audit();
}

// A client leases GPU 0 and sets 350 W; SIGTERM must restore it and stop the daemon.
class DaemonSigtermTest : public DaemonTest {
 protected:
  void expect_sigterm_restores_a_lease(DaemonUnderTest& daemon) {
    const std::filesystem::path socket = daemon.socket();
    UserChild client(user, [&](const auto& ready) {
      DaemonConnection connection(socket);
      connection.request(lease_request({"0"}));
      connection.request(apply_request("0", std::nullopt, std::nullopt, 350));
      ready("applied");
    });
    ASSERT_EQ(client.wait_until_ready(), "applied");
    EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.error();
    EXPECT_EQ(fake_gpu_controls(state_file(), 0), controls_an_administrator_left());
    EXPECT_FALSE(std::filesystem::exists(socket));
    EXPECT_NE(daemon.audit().find("request=shutdown restore"), std::string::npos) << daemon.audit();
  }
};

TEST_F(DaemonSigtermTest, SigtermRestoresEveryLeaseAndStops) {
  auto daemon = start_daemon(policy_for("gpus = \"all\"\n"));
  expect_sigterm_restores_a_lease(*daemon);
}

// A library may start threads before main (OpenBLAS does, loaded with LibTorch).
// A signal sent to the process goes to any thread that does not block it; the
// daemon must still catch it and restore every lease.
TEST_F(DaemonSigtermTest, SigtermRestoresEveryLeaseWhenALibraryStartedAThreadBeforeMain) {
  EnvironmentChanges preloaded = environment();
  preloaded["LD_PRELOAD"] = DVFSLAB_THREAD_AT_LOAD;
  // AddressSanitizer would refuse a preloaded library ahead of its runtime.
  preloaded["ASAN_OPTIONS"] = "verify_asan_link_order=0";
  DaemonUnderTest daemon(dir.path(), policy_for("gpus = \"all\"\n"), preloaded, {});
  ASSERT_TRUE(daemon.start()) << daemon.error();
  expect_sigterm_restores_a_lease(daemon);
}

TEST(ThreadAtLoad, LoadingTheLibraryStartsOneThread) {
  const auto threads = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                         std::filesystem::directory_iterator{});
  };
  const auto before = threads();
  void* library = ::dlopen(DVFSLAB_THREAD_AT_LOAD, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();
  EXPECT_EQ(threads(), before + 1);
}

TEST_F(DaemonTest, UnderSocketActivationItServesTheSocketSystemdPasses) {
  const std::filesystem::path activate = "/usr/bin/systemd-socket-activate";
  if (!std::filesystem::exists(activate)) GTEST_SKIP() << "no " << activate << " (systemd) to pass a socket";
  std::ofstream(dir / "policy.toml") << "[[rule]]\nusers = [\"root\"]\ngpus = \"all\"\n";
  const std::filesystem::path socket = dir / "activated.sock";
  // systemd-socket-activate listens, and starts the daemon at the first connection
  // with the socket as file descriptor 3 (LISTEN_FDS=1), as dvfslabd.socket does.
  std::vector<std::string> arguments = {"--listen", socket.string()};
  for (const char* name : {"DVFSLAB_NVML_LIBRARY", "DVFSLAB_FAKE_NVML_GPUS", "DVFSLAB_FAKE_NVML_UUID_SALT",
                           "DVFSLAB_FAKE_NVML_STATE", "DVFSLAB_FAKE_NVML_LOG"})
    arguments.insert(arguments.end(), {"-E", name});  // it passes on only the variables named
  arguments.insert(arguments.end(),
                   {DVFSLAB_BINARY, "daemon", "--policy", (dir / "policy.toml").string(), "--state-dir",
                    (dir / "state").string(), "--audit-log", (dir / "audit.log").string()});
  BackgroundProcess activator(activate.string(), arguments, environment(), (dir / "daemon.err").string());
  // The socket's file appears at bind(), a moment before listen(): wait for a
  // connection that succeeds, not for the file (a connect in between is refused).
  std::unique_ptr<DaemonConnection> connection;
  const auto start = std::chrono::steady_clock::now();
  while (!connection) {
    try {
      connection = std::make_unique<DaemonConnection>(socket);
    } catch (const Error&) {
      if (std::chrono::steady_clock::now() - start > 10s) throw;
      std::this_thread::sleep_for(10ms);
    }
  }
  connection->request(lease_request({"0"}));
  connection->request(apply_request("0", 1200, std::nullopt, 500));
  EXPECT_EQ(fake_gpu_controls(state_file(), 0).at("power_limit_w"), 500.0);
  connection.reset();
  EXPECT_TRUE(activator.wait_for_line("listening on the socket systemd passed (file descriptor 3)"))
      << file_text(dir / "daemon.err");
  EXPECT_TRUE(wait_for_controls(0, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 0);
  activator.send(SIGTERM);
  EXPECT_EQ(activator.wait(), 0) << file_text(dir / "daemon.err");
}

TEST_F(DaemonTest, AnInvalidPolicyStopsTheDaemonWithOneLineNamingThePlace) {
  std::ofstream(dir / "bad.toml") << "[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nsm_mhz = [1500, 1000]\n";
  const ProcessResult result =
      run_dvfslab({"daemon", "--socket", (dir / "s.sock").string(), "--policy", (dir / "bad.toml").string()},
                  environment());
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.err,
            "dvfslab: error: " + (dir / "bad.toml").string() +
                ":4:10: 'sm_mhz' must be [min, max] with 0 < min <= max (MHz); got [1500, 1000]\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "s.sock"));
}

}  // namespace
}  // namespace dvfslab::testing
