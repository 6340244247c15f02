// dvfslab slurm prolog / epilog as slurmd runs them, without a Slurm: the job's
// variables set by the test, a stand-in squeue answering the job's comment, the
// fake NVML as the node's GPUs. Whatever keeps the prolog from applying leaves the
// job's GPUs as they are, exits 0 and says why in its log; tests/slurm/prolog_test.py
// runs the same commands as a real cluster's Prolog and Epilog.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "integration/fake_nvml_env.hpp"
#include "integration/run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using testing::run_dvfslab;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  std::ofstream(path, std::ios::binary) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

// The fake H200's optimum: a locked SM clock and a power limit.
// The tag's entry carries what the analysis expects of it (version 2).
constexpr const char* h200_table = R"({"format": "dvfslab-optimum-table", "version": 2, "objective": "energy",
  "gpus": [{"gpu": "NVIDIA H200", "simulated": false,
            "default": {"sm_mhz": 1200, "mem_mhz": null, "power_limit_w": 400},
            "workloads": {"bert-train-bf16-b32": {"sm_mhz": 1500, "mem_mhz": 2201, "power_limit_w": 500,
                                                  "expected_energy_saving": 0.158,
                                                  "expected_time_change": 0.04}}}]})";

class SlurmPrologCli : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(bin_);
    write_file(table_, h200_table);
    comment("");
  }

  // squeue's stand-in prints `text` as the job's comment (squeue --format=%k).
  void comment(const std::string& text) const {
    write_file(bin_ / "squeue", "#!/bin/sh\necho '" + text + "'\n", true);
  }

  testing::EnvironmentChanges job_environment(const std::string& job_gpus,
                                              testing::EnvironmentChanges extra = {}) {
    extra["PATH"] = bin_.string();
    extra["SLURM_JOB_ID"] = "42";
    extra["SLURM_JOB_USER"] = "alice";
    extra["SLURM_JOB_GPUS"] = job_gpus;
    extra["DVFSLAB_FAKE_NVML_LOG"] = setter_log_.string();
    extra["DVFSLAB_FAKE_NVML_STATE"] = (scratch_ / "state.json").string();
    return testing::fake_nvml_environment("h200,v100", std::move(extra));
  }

  testing::ProcessResult prolog(const std::string& job_gpus, testing::EnvironmentChanges extra = {}) {
    return run_dvfslab({"slurm", "prolog", "--table", table_.string(), "--state-dir", journals_.string(),
                        "--log", job_log_.string()},
                       job_environment(job_gpus, std::move(extra)));
  }

  testing::ProcessResult epilog(const std::string& job_gpus) {
    return run_dvfslab({"slurm", "epilog", "--state-dir", journals_.string(), "--log", job_log_.string()},
                       job_environment(job_gpus));
  }

  std::string setter_calls() const { return testing::read_setter_log(setter_log_); }
  // Journals and the prolog's applied records alike: the epilog leaves neither.
  bool journal_left() const { return fs::exists(journals_) && !fs::is_empty(journals_); }
  fs::path applied_record_of_gpu_0() const {
    for (const auto& entry : fs::directory_iterator(journals_))
      if (entry.path().filename().string().starts_with("applied-")) return entry.path();
    return {};
  }

  // The job runs on its GPUs as they are: exit 0, no setter call, no journal, and
  // the log line says why.
  void expect_untouched(const testing::ProcessResult& result, const std::string& why) {
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(setter_calls(), "");
    EXPECT_FALSE(journal_left());
    EXPECT_NE(read_file(job_log_).find(why), std::string::npos) << read_file(job_log_);
  }

  testing::ScratchDir scratch_;
  const fs::path bin_ = scratch_ / "bin";
  const fs::path table_ = scratch_ / "optimum-table.json";
  const fs::path journals_ = scratch_ / "journals";
  const fs::path job_log_ = scratch_ / "jobs.log";
  const fs::path setter_log_ = scratch_ / "setters.log";
};

TEST_F(SlurmPrologCli, TheTaggedOptimumIsLockedAndTheEpilogPutsTheGpuBack) {
  comment("nightly dvfslab=bert-train-bf16-b32");
  const auto applied = prolog("0");
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(setter_calls(),
            "nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1500 max_mhz=1500\n"
            "nvmlDeviceSetMemoryLockedClocks device=0 min_mhz=2201 max_mhz=2201\n"
            "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=500000\n");
  EXPECT_TRUE(journal_left()) << "the setting is handed to the journal for the epilog";
  // Beside the journal, the record the exporter reads: what was applied for which job.
  const nlohmann::json record = nlohmann::json::parse(read_file(applied_record_of_gpu_0()));
  EXPECT_EQ(record.at("job_id"), "42");
  EXPECT_EQ(record.at("user"), "alice");
  EXPECT_EQ(record.at("tag"), "bert-train-bf16-b32");
  EXPECT_EQ(record.at("setting"),
            (nlohmann::json{{"sm_mhz", 1500}, {"mem_mhz", 2201}, {"power_limit_w", 500}}));
  EXPECT_EQ(record.at("expected_energy_saving"), 0.158);
  EXPECT_EQ(record.at("expected_time_change"), 0.04);

  const auto restored = epilog("0");
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_FALSE(journal_left());
  EXPECT_NE(setter_calls().find("nvmlDeviceResetGpuLockedClocks device=0\n"
                                "nvmlDeviceResetMemoryLockedClocks device=0\n"
                                "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000\n"),
            std::string::npos)
      << setter_calls();
  EXPECT_NE(read_file(job_log_).find("dvfslab slurm epilog: job 42: GPU 0 (NVIDIA H200"), std::string::npos);
}

TEST_F(SlurmPrologCli, AMissingTableLeavesTheJobsGpusAsTheyAre) {
  fs::remove(table_);
  expect_untouched(prolog("0"), "does not exist");
}

TEST_F(SlurmPrologCli, AMalformedTableLeavesTheJobsGpusAsTheyAre) {
  write_file(table_, R"({"format": "dvfslab-optimum-table", "version": 1, "objective": "energy",
    "gpus": [{"gpu": "NVIDIA H200", "simulated": false, "default": {"sm_clock": 1200}, "workloads": {}}]})");
  expect_untouched(prolog("0"), "unknown key 'sm_clock'");
  write_file(table_, "{not json");
  expect_untouched(prolog("0"), "not JSON");
}

TEST_F(SlurmPrologCli, AGpuModelTheTableLacksIsLeftAlone) {
  expect_untouched(prolog("1"), "the table has no optimum for Tesla V100");
}

TEST_F(SlurmPrologCli, OptedOutJobsAndJobsWithoutGpusAreNotTouched) {
  comment("dvfslab=off");
  expect_untouched(prolog("0"), "opted out");
  comment("");
  expect_untouched(prolog(""), "no GPUs: nothing to do");
  EXPECT_EQ(epilog("").exit_code, 0);
}

TEST_F(SlurmPrologCli, AnUnreadableCommentOrGpuListLeavesTheGpusAsTheyAre) {
  write_file(bin_ / "squeue", "#!/bin/sh\necho 'slurm_load_jobs error: Socket timed out' >&2\nexit 1\n",
             true);
  expect_untouched(prolog("0"), "squeue could not read the job's comment");
  comment("dvfslab=off dvfslab=bert");
  expect_untouched(prolog("0"), "more than one dvfslab= word");
  expect_untouched(prolog("NoDevFiles"), "names no GPU");
}

TEST_F(SlurmPrologCli, ARefusedSettingIsALogLineAndNothingStaysChanged) {
  const auto result = prolog("0", {{"DVFSLAB_FAKE_NVML_NO_PERMISSION", "1"}});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(journal_left());
  EXPECT_NE(read_file(job_log_).find("not applied, GPUs left as they are"), std::string::npos)
      << read_file(job_log_);
}

TEST_F(SlurmPrologCli, OutsideSlurmBothSayInOneLineWhoRunsThem) {
  auto environment = job_environment("0");
  environment["SLURM_JOB_ID"] = std::nullopt;
  for (const char* stage : {"prolog", "epilog"}) {
    const auto result = run_dvfslab({"slurm", stage}, environment);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_NE(result.err.find("SLURM_JOB_ID is not set"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace dvfslab
