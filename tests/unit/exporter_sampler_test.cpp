// The exporter's sampler and HTTP server: a scrape is answered from the latest
// pass while a GPU read is stuck, a GPU whose read fails keeps its last reading,
// and the server serves /metrics in Prometheus's text format (gzip when asked) and
// stops when destroyed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dvfslab/clock.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"
#include "fixed_controls_gpu.hpp"

namespace dvfslab {
namespace {

using namespace std::chrono_literals;

// A GPU whose energy counter counts its reads (1 J each), and whose reads can be
// held up (a slow NVML call) or made to fail (a lost GPU).
class ControlledReadGpu final : public testing::FixedControlsGpu {
 public:
  explicit ControlledReadGpu(std::string uuid) {
    identity_.name = "controlled read test GPU";
    identity_.uuid = std::move(uuid);
    identity_.backend = "test";
  }

  const GpuIdentity& identity() const override { return identity_; }
  Clock& clock() override { return clock_; }

  Telemetry read_telemetry() override {
    std::unique_lock lock(mutex_);
    if (hold_up_) {
      stuck_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !hold_up_; });
    }
    if (fail_) throw GpuLostError("the test GPU fell off the bus");
    Telemetry t;
    t.energy_j = static_cast<double>(++reads_);
    t.power_instant_w = 100.0;
    return t;
  }

  // Holds up the next read and waits until one is stuck in it.
  bool hold_up_reads() {
    std::unique_lock lock(mutex_);
    hold_up_ = true;
    stuck_ = false;
    return changed_.wait_for(lock, 10s, [this] { return stuck_; });
  }
  void let_go() {
    std::lock_guard lock(mutex_);
    hold_up_ = false;
    changed_.notify_all();
  }
  void fail_reads() {
    std::lock_guard lock(mutex_);
    fail_ = true;
  }

 private:
  GpuIdentity identity_;
  WallClock clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hold_up_ = false;
  bool stuck_ = false;
  bool fail_ = false;
  int reads_ = 0;
};

struct TestGpus {
  std::vector<std::unique_ptr<Gpu>> owned;
  std::vector<ControlledReadGpu*> gpus;
};

TestGpus test_gpus(int count) {
  TestGpus result;
  for (int i = 0; i < count; ++i) {
    auto gpu = std::make_unique<ControlledReadGpu>("GPU-test-" + std::to_string(i));
    result.gpus.push_back(gpu.get());
    result.owned.push_back(std::move(gpu));
  }
  return result;
}

// Waits (bounded) until the sampler has published pass `passes`.
bool wait_for_pass(const GpuSampler& sampler, std::uint64_t passes) {
  for (int i = 0; i < 1000; ++i) {
    if (sampler.latest()->passes >= passes) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(ExporterSampler, TheFirstPassIsTakenBeforeTheConstructorReturns) {
  TestGpus gpus = test_gpus(2);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  const auto snapshot = sampler.latest();
  EXPECT_EQ(snapshot->passes, 1u);
  ASSERT_EQ(snapshot->gpus.size(), 2u);
  EXPECT_EQ(snapshot->gpus[1].identity.uuid, "GPU-test-1");
  EXPECT_EQ(snapshot->gpus[1].telemetry.energy_j, 1.0);
  EXPECT_GT(snapshot->gpus[1].unix_time_s, 0.0);
}

TEST(ExporterSampler, AScrapeWhileAGpuReadIsStuckIsAnsweredFromTheLastPass) {
  TestGpus gpus = test_gpus(2);
  ControlledReadGpu& slow = *gpus.gpus[1];
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{10ms, {}});
  MetricsServer server(parse_listen_address("127.0.0.1:0"), sampler);
  ASSERT_TRUE(slow.hold_up_reads());  // the sampler is now inside GPU 1's read
  const std::uint64_t passes_before = sampler.latest()->passes;

  // Bounded so that a scrape that does wait fails the test instead of hanging it.
  auto scrape = std::async(std::launch::async, [&server] {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(30, 0);
    return client.Get("/metrics");
  });
  const bool answered = scrape.wait_for(20s) == std::future_status::ready;
  slow.let_go();
  ASSERT_TRUE(answered) << "the scrape waited for the stuck GPU read";
  const httplib::Result result = scrape.get();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_NE(result->body.find("dvfslab_gpu_energy_joules_total{uuid=\"GPU-test-1\""), std::string::npos)
      << result->body;
  EXPECT_NE(result->body.find(fmt::format("dvfslab_exporter_sampling_passes_total {}", passes_before)),
            std::string::npos)
      << result->body;
  EXPECT_TRUE(wait_for_pass(sampler, passes_before + 1));  // and the sampler goes on once the read returns
}

TEST(ExporterSampler, AGpuWhoseReadFailsKeepsItsLastReadingAndTheOthersGoOn) {
  TestGpus gpus = test_gpus(2);
  ControlledReadGpu& lost = *gpus.gpus[0];
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{10ms, {}});
  ASSERT_TRUE(wait_for_pass(sampler, 2));
  ASSERT_TRUE(lost.hold_up_reads());
  lost.fail_reads();
  const double last_energy = *sampler.latest()->gpus[0].telemetry.energy_j;
  const std::uint64_t passes = sampler.latest()->passes;
  lost.let_go();
  ASSERT_TRUE(wait_for_pass(sampler, passes + 2));
  const auto snapshot = sampler.latest();
  EXPECT_GE(snapshot->read_errors, 1u);
  EXPECT_EQ(snapshot->gpus[0].telemetry.energy_j, last_energy);
  EXPECT_GT(*snapshot->gpus[1].telemetry.energy_j, static_cast<double>(passes));
}

TEST(ExporterServer, ServesMetricsInPrometheusTextFormatAndNothingElse) {
  TestGpus gpus = test_gpus(1);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  MetricsServer server(parse_listen_address("localhost:0"), sampler);
  httplib::Client client("127.0.0.1", server.port());
  const httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics->body.find("# TYPE dvfslab_gpu_energy_joules_total counter"), std::string::npos);
  const httplib::Result head = client.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty()) << head->body;
  const httplib::Result other = client.Get("/");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

// Prometheus asks for gzip; a scrape of many GPUs is then a few kilobytes.
TEST(ExporterServer, CompressesAScrapeThatAcceptsGzip) {
  TestGpus gpus = test_gpus(1);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  MetricsServer server(parse_listen_address("127.0.0.1:0"), sampler);
  httplib::Client client("127.0.0.1", server.port());
  client.set_decompress(false);
  const httplib::Result metrics = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Encoding"), "gzip");
}

// The destructor's stop must end the server even when it comes before the
// listening thread has begun to listen (else this test hangs).
// Being destroyed is not "stopped serving": the callback is for failures only.
TEST(ExporterServer, AServerDestroyedAsSoonAsItIsMadeStops) {
  TestGpus gpus = test_gpus(1);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  std::atomic<int> stopped_serving{0};
  for (int i = 0; i < 50; ++i)
    MetricsServer server(parse_listen_address("127.0.0.1:0"), sampler,
                         [&stopped_serving] { ++stopped_serving; });
  EXPECT_EQ(stopped_serving.load(), 0);
}

// The listening socket of this process bound to `port`, or -1.
int listening_socket_on(int port) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in address{};
    socklen_t length = sizeof address;
    int listening = 0;
    socklen_t option_length = sizeof listening;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
        address.sin_family == AF_INET && ntohs(address.sin_port) == port &&
        ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &option_length) == 0 && listening)
      return fd;
  }
  return -1;
}

// accept() failing for good ends httplib's listening loop without a word; the
// server must say so rather than leave an exporter that serves nothing.
TEST(ExporterServer, AServerWhoseListeningSocketFailsCallsBack) {
  TestGpus gpus = test_gpus(1);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  std::promise<void> stopped_serving;
  MetricsServer server(parse_listen_address("127.0.0.1:0"), sampler,
                       [&stopped_serving] { stopped_serving.set_value(); });
  const int socket = listening_socket_on(server.port());
  ASSERT_GE(socket, 0);
  ASSERT_EQ(::shutdown(socket, SHUT_RDWR), 0);  // accept() now fails with EINVAL
  EXPECT_EQ(stopped_serving.get_future().wait_for(30s), std::future_status::ready);
}

TEST(ExporterServer, APortInUseIsOneConfigErrorNamingTheAddress) {
  TestGpus gpus = test_gpus(1);
  GpuSampler sampler(std::move(gpus.owned), SamplerOptions{std::chrono::milliseconds(3600 * 1000), {}});
  MetricsServer first(parse_listen_address("127.0.0.1:0"), sampler);
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  try {
    MetricsServer second(parse_listen_address(address), sampler);
    FAIL() << "a second server listened on " << address;
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot listen on " + address), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dvfslab
