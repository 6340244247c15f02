// A database holding a measurement metered on several GPUs, through the real
// `dvfslab merge` and `dvfslab export`: each GPU's figures survive the merge and
// appear in the JSON export; the CSV keeps one row per measurement.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/store.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

struct Result {
  int exit_code;
  std::string out;
  std::string err;
};

Result run_dvfslab(const fs::path& dir, const std::string& arguments) {
  const fs::path out = dir / "stdout.txt";
  const fs::path err = dir / "stderr.txt";
  const std::string command =
      quoted(DVFSLAB_BINARY) + " " + arguments + " >" + quoted(out.string()) + " 2>" + quoted(err.string());
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
}

// The job's window on two GPUs, as the meter reports it: totals at the top.
Measurement two_gpu_window() {
  Measurement job;
  job.name = "steady";
  job.duration_s = 4.0;
  job.iterations = 10;
  job.items = 320;
  job.samples = 80;
  for (int i = 0; i < 2; ++i) {
    GpuMeasurement gpu;
    gpu.index = i;
    gpu.uuid = "GPU-fake-" + std::to_string(i);
    gpu.name = "NVIDIA H200";
    gpu.measurement.name = job.name;
    gpu.measurement.duration_s = job.duration_s;
    gpu.measurement.iterations = job.iterations;
    gpu.measurement.items = job.items;
    gpu.measurement.samples = job.samples;
    gpu.measurement.energy_j = 1000.0 + 200.0 * i;
    gpu.measurement.mean_power_w = *gpu.measurement.energy_j / job.duration_s;
    job.gpus.push_back(gpu);
  }
  job.energy_j = 2200.0;
  job.mean_power_w = 550.0;
  return job;
}

TEST(StoreMultiGpuCli, MergeKeepsAndJsonExportShowsEachGpusFigures) {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path();
  {
    Store store(dir / "shard.sqlite");
    RunInfo run;
    run.gpu.name = "NVIDIA H200";
    run.gpu.uuid = "GPU-fake-0";
    run.plan_text = "plan";
    run.plan_hash = plan_hash(run.plan_text);
    const std::int64_t id = store.begin_run(run);
    PointRecord record;
    record.point.workload_case.workload = "ddp";
    record.point.setting.sm_mhz = 1200;
    store.record(id, record, two_gpu_window());
    store.finish_run(id);
  }
  const Result merge = run_dvfslab(
      dir, "merge " + quoted((dir / "all.sqlite").string()) + " " + quoted((dir / "shard.sqlite").string()));
  ASSERT_EQ(merge.exit_code, 0) << merge.err;

  const Result json = run_dvfslab(dir, "export --format json " + quoted((dir / "all.sqlite").string()));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json document = nlohmann::json::parse(json.out);
  ASSERT_EQ(document["measurements"].size(), 1u);
  const nlohmann::json& measurement = document["measurements"][0];
  EXPECT_EQ(measurement["energy_j"], 2200.0);
  const nlohmann::json& gpus = measurement["gpus"];
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["uuid"], "GPU-fake-0");
  EXPECT_EQ(gpus[1]["uuid"], "GPU-fake-1");
  EXPECT_EQ(gpus[1]["index"], 1);
  EXPECT_EQ(gpus[0]["energy_j"].get<double>() + gpus[1]["energy_j"].get<double>(), 2200.0);
  EXPECT_EQ(gpus[1]["mean_power_w"], 300.0);

  const Result csv = run_dvfslab(dir, "export --format csv " + quoted((dir / "all.sqlite").string()));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2) << csv.out;  // the header and the job's row
}

}  // namespace
}  // namespace dvfslab
