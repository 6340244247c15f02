// `dvfslab exporter` through the real binary on the fake NVML: /metrics over HTTP
// with each GPU's energy counter as the fake answered it, the setting a
// `dvfslab hold` applied (knob, process, user), a Slurm job's energy, SIGTERM, a
// process with much thread-local storage, and one-line errors for a bad --listen
// and a port in use.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "background_process.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

class ExporterCli : public ::testing::Test {
 protected:
  ScratchDir dir;
  EnvironmentChanges environment =
      fake_nvml_environment("h200,h200", {{"DVFSLAB_FAKE_NVML_ENERGY_LOG", (dir / "energy.log").string()},
                                          {"DVFSLAB_FAKE_NVML_STATE", (dir / "gpu-state.json").string()},
                                          {"DVFSLAB_STATE_DIR", (dir / "state").string()}});

  std::string file_text(const std::string& name) const {
    std::ifstream in(dir / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Starts the exporter on a free loopback port; returns the port it printed.
  std::optional<int> start_exporter(std::unique_ptr<BackgroundProcess>& process) {
    process = std::make_unique<BackgroundProcess>(
        DVFSLAB_BINARY, std::vector<std::string>{"exporter", "--listen", "127.0.0.1:0", "--interval", "0.1"},
        environment, (dir / "exporter.err").string());
    const std::optional<std::string> line = process->read_line_with("/metrics");
    std::smatch port;
    if (!line || !std::regex_search(*line, port, std::regex("http://127\\.0\\.0\\.1:([0-9]+)/metrics")))
      return std::nullopt;
    return std::stoi(port[1]);
  }

  // The energy counter values the fake answered for GPU `index`, in joules.
  std::set<double> energy_answered(int index) const {
    std::set<double> values;
    std::ifstream in(dir / "energy.log");
    std::string word;
    int gpu = 0;
    long long millijoules = 0;
    double read_at_s = 0;
    while (in >> word >> gpu >> millijoules >> read_at_s)
      if (gpu == index) values.insert(static_cast<double>(millijoules) / 1000.0);
    return values;
  }
};

// The value of the series of `metric` whose labels include `label_text`.
std::optional<double> sample_value(const std::string& body, const std::string& metric,
                                   const std::string& label_text) {
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(metric + "{") && line.find(label_text) != std::string::npos)
      return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

TEST_F(ExporterCli, ServesEachGpusEnergyCounterAsTheFakeAnsweredItAndStopsOnSigterm) {
  std::unique_ptr<BackgroundProcess> exporter;
  const std::optional<int> port = start_exporter(exporter);
  ASSERT_TRUE(port) << file_text("exporter.err");
  httplib::Client client("127.0.0.1", *port);
  const httplib::Result scrape = client.Get("/metrics");
  ASSERT_TRUE(scrape) << file_text("exporter.err");
  ASSERT_EQ(scrape->status, 200);

  const ProcessResult info = run_dvfslab({"info", "--device", "all", "--json"}, environment);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json gpus = nlohmann::json::parse(info.out).at("devices");
  ASSERT_EQ(gpus.size(), 2u);
  for (int index = 0; index < 2; ++index) {
    const std::string uuid = gpus.at(index).at("uuid");
    const std::string labels = "uuid=\"" + uuid + "\",index=\"" + std::to_string(index) + "\"";
    const std::optional<double> energy =
        sample_value(scrape->body, "dvfslab_gpu_energy_joules_total", labels);
    ASSERT_TRUE(energy) << scrape->body;
    EXPECT_TRUE(energy_answered(index).contains(*energy)) << "GPU " << index << " energy " << *energy;
    EXPECT_TRUE(sample_value(scrape->body, "dvfslab_gpu_power_watts", labels)) << scrape->body;
    EXPECT_TRUE(sample_value(scrape->body, "dvfslab_gpu_sm_clock_hertz", labels)) << scrape->body;
    EXPECT_EQ(sample_value(scrape->body, "dvfslab_gpu_power_limit_watts", labels), 700.0) << scrape->body;
  }
  EXPECT_NE(scrape->body.find("# TYPE dvfslab_gpu_energy_joules_total counter"), std::string::npos);

  exporter->send(SIGTERM);
  EXPECT_EQ(exporter->wait(), 0) << file_text("exporter.err");
  EXPECT_FALSE(client.Get("/metrics")) << "still serving after SIGTERM";
}

TEST_F(ExporterCli, ShowsTheSettingAHoldAppliedWithItsProcessAndUser) {
  auto hold = std::make_unique<BackgroundProcess>(
      DVFSLAB_BINARY,
      std::vector<std::string>{"hold", "--device", "1", "--power-limit", "500", "--allow-clock-changes"},
      environment, (dir / "hold.err").string());
  ASSERT_TRUE(hold->wait_for_line("holding")) << file_text("hold.err");
  std::unique_ptr<BackgroundProcess> exporter;
  const std::optional<int> port = start_exporter(exporter);
  ASSERT_TRUE(port) << file_text("exporter.err");
  const httplib::Result scrape = httplib::Client("127.0.0.1", *port).Get("/metrics");
  ASSERT_TRUE(scrape);

  const std::string holder = "pid=\"" + std::to_string(hold->pid()) + "\",user=\"" +
                             std::string(::getpwuid(::getuid())->pw_name) + "\"";
  EXPECT_EQ(sample_value(scrape->body, "dvfslab_gpu_setting_changed", "index=\"1\""), 1.0) << scrape->body;
  EXPECT_NE(scrape->body.find("knob=\"power_limit\"," + holder), std::string::npos) << scrape->body;
  EXPECT_FALSE(sample_value(scrape->body, "dvfslab_gpu_setting_changed", "index=\"0\"")) << scrape->body;
  EXPECT_EQ(sample_value(scrape->body, "dvfslab_gpu_power_limit_watts", "index=\"1\""), 500.0)
      << scrape->body;

  exporter->send(SIGINT);
  EXPECT_EQ(exporter->wait(), 0);
  hold->send(SIGTERM);
  hold->wait();
}

TEST_F(ExporterCli, CountsTheEnergyOfTheSlurmJobWhoseProcessIsAloneOnAGpu) {
  BackgroundProcess job("/bin/sleep", {"60"}, {{"SLURM_JOB_ID", "4242"}}, (dir / "job.err").string());
  // GPU 0 is shared by two jobs: its energy cannot be given to either.
  BackgroundProcess first_sharer("/bin/sleep", {"60"}, {{"SLURM_JOB_ID", "1"}}, (dir / "first.err").string());
  BackgroundProcess second_sharer("/bin/sleep", {"60"}, {{"SLURM_JOB_ID", "2"}},
                                  (dir / "second.err").string());
  std::ofstream(dir / "processes") << "1:" << job.pid() << "\n0:" << first_sharer.pid()
                                   << "\n0:" << second_sharer.pid() << "\n";
  environment["DVFSLAB_FAKE_NVML_PROCESSES_FILE"] = (dir / "processes").string();
  std::unique_ptr<BackgroundProcess> exporter;
  const std::optional<int> port = start_exporter(exporter);
  ASSERT_TRUE(port) << file_text("exporter.err");
  httplib::Client client("127.0.0.1", *port);
  // The job's energy is the counter's rise between readings: wait (bounded) for a rise.
  std::string body;
  std::optional<double> job_energy;
  for (int attempt = 0; attempt < 100 && !(job_energy && *job_energy > 0); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const httplib::Result scrape = client.Get("/metrics");
    ASSERT_TRUE(scrape);
    body = scrape->body;
    job_energy = sample_value(body, "dvfslab_job_energy_joules_total",
                              "index=\"1\",name=\"NVIDIA H200\",job_id=\"4242\"");
  }
  ASSERT_TRUE(job_energy && *job_energy > 0) << body;
  EXPECT_FALSE(sample_value(body, "dvfslab_job_energy_joules_total", "index=\"0\"")) << body;
  // The GPU's counter less the job's energy is the counter when the exporter first saw the job: a value the
  // fake answered.
  const std::optional<double> counter = sample_value(body, "dvfslab_gpu_energy_joules_total", "index=\"1\"");
  ASSERT_TRUE(counter);
  const std::set<double> answered = energy_answered(1);
  EXPECT_TRUE(std::any_of(answered.begin(), answered.end(),
                          [&](double value) { return std::abs(*counter - *job_energy - value) < 1e-6; }))
      << "counter " << *counter << " J, job " << *job_energy << " J";
  exporter->send(SIGTERM);
  EXPECT_EQ(exporter->wait(), 0);
}

// A prolog's record of what it applied for job 4242 on GPU 1 (written as `dvfslab
// slurm prolog` writes it), with a journal that holds the change (a hold's): the
// expected saving and time change, and the job's estimated saving from its energy.
TEST_F(ExporterCli, ServesThePrologsExpectedSavingAndTheJobsEstimatedSavingWhileTheChangeIsHeld) {
  auto hold = std::make_unique<BackgroundProcess>(
      DVFSLAB_BINARY,
      std::vector<std::string>{"hold", "--device", "1", "--power-limit", "500", "--allow-clock-changes"},
      environment, (dir / "hold.err").string());
  ASSERT_TRUE(hold->wait_for_line("holding")) << file_text("hold.err");
  const ProcessResult info = run_dvfslab({"info", "--device", "all", "--json"}, environment);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const std::string uuid = nlohmann::json::parse(info.out).at("devices").at(1).at("uuid");
  const std::string other_uuid = nlohmann::json::parse(info.out).at("devices").at(0).at("uuid");
  const auto write_record = [&](const std::string& gpu_uuid) {
    std::ofstream(dir / "state" / ("applied-" + gpu_uuid + ".json")) << nlohmann::json{
        {"format", "dvfslab-applied-setting"},
        {"version", 1},
        {"job_id", "4242"},
        {"user", "alice"},
        {"gpu_uuid", gpu_uuid},
        {"tag", "resnet50-train-bf16-b128"},
        {"setting", {{"sm_mhz", nullptr}, {"mem_mhz", nullptr}, {"power_limit_w", 500}}},
        {"expected_energy_saving", 0.2},
        {"expected_time_change", 0.05}}.dump();
  };
  write_record(uuid);
  write_record(other_uuid);  // GPU 0 has no journal: a stale record, not served
  BackgroundProcess job("/bin/sleep", {"60"}, {{"SLURM_JOB_ID", "4242"}}, (dir / "job.err").string());
  std::ofstream(dir / "processes") << "1:" << job.pid() << "\n";
  environment["DVFSLAB_FAKE_NVML_PROCESSES_FILE"] = (dir / "processes").string();
  std::unique_ptr<BackgroundProcess> exporter;
  const std::optional<int> port = start_exporter(exporter);
  ASSERT_TRUE(port) << file_text("exporter.err");
  httplib::Client client("127.0.0.1", *port);
  const std::string labels =
      "index=\"1\",name=\"NVIDIA H200\",job_id=\"4242\",tag=\"resnet50-train-bf16-b128\"";
  std::string body;
  std::optional<double> estimate;
  for (int attempt = 0; attempt < 100 && !(estimate && *estimate > 0); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const httplib::Result scrape = client.Get("/metrics");
    ASSERT_TRUE(scrape);
    body = scrape->body;
    estimate = sample_value(body, "dvfslab_job_estimated_energy_saved_joules_total", labels);
  }
  ASSERT_TRUE(estimate && *estimate > 0) << body;
  EXPECT_EQ(sample_value(body, "dvfslab_gpu_applied_expected_energy_saving_ratio", labels), 0.2) << body;
  EXPECT_EQ(sample_value(body, "dvfslab_gpu_applied_expected_time_change_ratio", labels), 0.05) << body;
  const std::optional<double> job_energy = sample_value(body, "dvfslab_job_energy_joules_total",
                                                        "index=\"1\",name=\"NVIDIA H200\",job_id=\"4242\"");
  ASSERT_TRUE(job_energy) << body;
  EXPECT_NEAR(*estimate, *job_energy * 0.2 / 0.8, 1e-6 * *job_energy) << body;
  EXPECT_FALSE(sample_value(body, "dvfslab_gpu_applied_expected_energy_saving_ratio", "index=\"0\"")) << body;
  EXPECT_NE(body.find("# TYPE dvfslab_job_estimated_energy_saved_joules_total counter"), std::string::npos);
  exporter->send(SIGTERM);
  EXPECT_EQ(exporter->wait(), 0);
  hold->send(SIGTERM);
  hold->wait();
}

TEST_F(ExporterCli, ABadListenAddressIsOneLineAndExitCode3) {
  for (const std::string bad : {"9402", "127.0.0.1:99999", "example.org:80"}) {
    const ProcessResult result = run_dvfslab({"exporter", "--listen", bad}, environment);
    EXPECT_EQ(result.exit_code, 3) << bad;
    EXPECT_TRUE(result.err.starts_with("dvfslab: error: --listen '" + bad + "'")) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

// A preloaded library of 96 KB of thread-local storage leaves a 100 KB thread stack
// too small to start (as OpenBLAS's 60 KB, loaded with LibTorch, did with the rest):
// the server's threads have the default stack, so the exporter starts and serves.
// Under civetweb, whose threads had 100 KB stacks, it exited with "cannot listen".
TEST_F(ExporterCli, ServesMetricsWhenTheProcessHoldsMuchThreadLocalStorage) {
  environment["LD_PRELOAD"] = DVFSLAB_BIG_THREAD_STORAGE;
  // AddressSanitizer would refuse a preloaded library ahead of its runtime.
  environment["ASAN_OPTIONS"] = "verify_asan_link_order=0";
  std::unique_ptr<BackgroundProcess> exporter;
  const std::optional<int> port = start_exporter(exporter);
  ASSERT_TRUE(port) << file_text("exporter.err");
  const httplib::Result scrape = httplib::Client("127.0.0.1", *port).Get("/metrics");
  ASSERT_TRUE(scrape) << file_text("exporter.err");
  EXPECT_EQ(scrape->status, 200);
  EXPECT_NE(scrape->body.find("# TYPE dvfslab_gpu_energy_joules_total counter"), std::string::npos)
      << scrape->body;
  exporter->send(SIGTERM);
  EXPECT_EQ(exporter->wait(), 0) << file_text("exporter.err");
}

TEST_F(ExporterCli, APortInUseIsOneLineNamingTheAddress) {
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(taken, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t size = sizeof address;
  ASSERT_EQ(::getsockname(taken, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const std::string where = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));

  const ProcessResult result = run_dvfslab({"exporter", "--listen", where}, environment);
  ::close(taken);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_TRUE(result.err.starts_with("dvfslab: error: cannot listen on " + where)) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST_F(ExporterCli, HelpExplainsTheEndpointTheFlagsAndWhereTheMetricsAreDocumented) {
  const ProcessResult help = run_dvfslab({"exporter", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* text : {"/metrics", "--listen", "--interval", "--device", "--state-dir", "docs/fleet.md",
                           "127.0.0.1:9402", "never wait for the driver"})
    EXPECT_NE(help.out.find(text), std::string::npos) << text << " missing from\n" << help.out;
}

}  // namespace
}  // namespace dvfslab::testing
