// How fast the daemon restores a GPU when its client is killed: TRIALS times (1000
// by default) a client, running as an unprivileged user, takes a lease on a fake
// H200 left by an administrator at a non-default state (power limit 450 W,
// application clocks 1755/3201 MHz), applies random clocks and power limits in a
// loop, and is killed with SIGKILL at a random moment (0–15 ms after it starts:
// before it connects, holding a lease, or in the middle of a change). The latency
// is from the kill to the daemon's audit line saying the connection ended, which it
// writes after every GPU of the lease is back; then the GPU must read exactly as
// the administrator left it. Prints p50, p99 and the maximum; exits 1 when a trial
// leaves the GPU changed or takes over 1 s. Needs root (the daemon runs as root).
//   daemon_restore_bench [TRIALS] [SEED]
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "daemon/daemon_harness.hpp"
#include "dvfslab/daemon.hpp"

namespace {

using dvfslab::testing::TestUser;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* usage =
    "usage: daemon_restore_bench [TRIALS] [SEED]\n"
    "  Kills a daemon client with SIGKILL at a random moment TRIALS times (default 1000, seed 1) and prints\n"
    "  the restore latency (p50, p99, max); exits 1 if a GPU is left changed or a restore takes over 1 s.\n"
    "  Runs as root, on the fake NVML.\n";

const nlohmann::json administrator_state = {
    {"locked_sm_min_mhz", nullptr},  {"locked_sm_max_mhz", nullptr},     {"locked_mem_min_mhz", nullptr},
    {"locked_mem_max_mhz", nullptr}, {"application_graphics_mhz", 1755}, {"application_memory_mhz", 3201},
    {"power_limit_w", 450.0}};

// The client: lease GPU 0 and change it at random until killed.
[[noreturn]] void run_client(const TestUser& user, const std::filesystem::path& socket, unsigned seed) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(120);
  std::mt19937 random(seed);
  try {
    dvfslab::DaemonConnection connection(socket);
    connection.request({{"op", "lease"}, {"gpus", {"0"}}});
    for (;;) {
      const int sm = 1980 - 15 * std::uniform_int_distribution<int>(0, 100)(random);
      const int mem = std::uniform_int_distribution<int>(0, 1)(random) == 0 ? 2201 : 3201;
      const int watts = 200 + 10 * std::uniform_int_distribution<int>(0, 50)(random);
      connection.request(
          {{"op", "apply"},
           {"settings", {{{"gpu", "0"}, {"sm_mhz", sm}, {"mem_mhz", mem}, {"power_limit_w", watts}}}}});
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "client: {}\n", e.what());
  }
  ::_exit(1);
}

// New lines of the audit log, read from where the last call stopped.
class AuditTail {
 public:
  explicit AuditTail(const std::filesystem::path& file) : file_(file) {}
  bool saw(const std::string& text) {
    const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::lseek(fd, static_cast<off_t>(offset_), SEEK_SET);
    char buffer[65536];
    for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) {
      pending_.append(buffer, static_cast<std::size_t>(got));
      offset_ += static_cast<std::size_t>(got);
    }
    ::close(fd);
    const bool found = pending_.find(text) != std::string::npos;
    if (found)
      pending_.clear();
    else if (const auto last_line = pending_.rfind('\n'); last_line != std::string::npos)
      pending_.erase(0, last_line + 1);
    return found;
  }

 private:
  std::filesystem::path file_;
  std::size_t offset_ = 0;
  std::string pending_;
};

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[rank];
}

}  // namespace

int main(int argc, char** argv) {
  if (auto code = dvfslab::bench::usage_exit(argc, argv, usage, 0, 2)) return *code;
  const int trials = argc > 1 ? std::atoi(argv[1]) : 1000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1u;
  if (trials <= 0) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (!dvfslab::testing::running_as_root()) {
    fmt::print(stderr, "daemon_restore_bench: skipped: the daemon runs as root; run this as root\n");
    return 77;
  }
  char dir_template[] = "/tmp/dvfslab-daemon-bench-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(dir_template);
  std::filesystem::permissions(dir, std::filesystem::perms(0755));
  const TestUser user = dvfslab::testing::ensure_test_user("dvfslab-test");
  const std::filesystem::path state_file = dir / "gpu-state.json";
  dvfslab::testing::write_fake_gpu_state(state_file, 1, administrator_state);
  dvfslab::testing::DaemonUnderTest daemon(
      dir, "[[rule]]\nusers = [\"dvfslab-test\"]\ngpus = \"all\"\n",
      {{"DVFSLAB_NVML_LIBRARY", DVFSLAB_FAKE_NVML},
       {"DVFSLAB_FAKE_NVML_GPUS", "h200"},
       {"DVFSLAB_FAKE_NVML_STATE", state_file.string()},
       {"DVFSLAB_FAKE_NVML_UUID_SALT", fmt::format("daemon-bench-{}", ::getpid())},
       {"CUDA_VISIBLE_DEVICES", std::nullopt},
       {"NVIDIA_VISIBLE_DEVICES", std::nullopt}});
  if (!daemon.start()) {
    fmt::print(stderr, "daemon_restore_bench: the daemon did not start: {}", daemon.error());
    return 1;
  }
  AuditTail audit(dir / "audit.log");
  std::mt19937 random(seed);
  std::vector<double> latencies_ms;
  int changed_at_kill = 0, failures = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 15000)(random));
    const unsigned client_seed = static_cast<unsigned>(random());
    const pid_t pid = ::fork();
    if (pid == 0) run_client(user, daemon.socket(), client_seed);
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
    const auto killed = SteadyClock::now();
    ::waitpid(pid, nullptr, 0);
    if (dvfslab::testing::fake_gpu_controls(state_file, 0) != administrator_state) ++changed_at_kill;
    // A client killed before it connected leaves no line: after 1 s the trial counts
    // only when the GPU is as found.
    const std::string ended = fmt::format("pid={} request=disconnect ", pid);
    bool seen = false;
    while (!(seen = audit.saw(ended)) && SteadyClock::now() - killed < std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    const double latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - killed).count();
    const bool as_found = dvfslab::testing::fake_gpu_controls(state_file, 0) == administrator_state;
    if (seen) latencies_ms.push_back(latency_ms);
    if (!as_found || (seen && latency_ms > 1000.0)) {
      ++failures;
      fmt::print(stderr, "trial {}: {} after {:.1f} ms\n", trial, as_found ? "too slow" : "GPU left changed",
                 latency_ms);
    }
  }
  daemon.stop(SIGTERM);
  std::filesystem::remove_all(dir);
  fmt::print(
      "daemon restore after SIGKILL of the client: {} trials (seed {}), {} killed while connected, "
      "{} with the GPU changed at the kill\n",
      trials, seed, latencies_ms.size(), changed_at_kill);
  if (!latencies_ms.empty())
    fmt::print("restore latency: p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms\n",
               percentile(latencies_ms, 0.5), percentile(latencies_ms, 0.99),
               *std::max_element(latencies_ms.begin(), latencies_ms.end()));
  fmt::print("GPU as found after every trial: {}\n",
             failures == 0 ? "yes" : fmt::format("NO ({} failures)", failures));
  return failures == 0 ? 0 : 1;
}
