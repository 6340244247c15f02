#pragma once
// A fake node of four H200s whose control state outlives each dvfslab process,
// found as an administrator left them (restoring must put back 450 W): the
// fixture of the tests that run jobs on several GPUs through the real binary, and
// the short power-limit search several of them run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {

// `dvfslab search` of the default and three settings of `knobs` on `device` with
// 0.3 s windows, one each, recorded in `database` (the job follows the caller's options).
inline std::vector<std::string> short_grid_search_arguments(const std::string& device, const std::string& knobs,
                                                            const std::string& database) {
  return {"search", "--device",   device, "--workload", "loop", "--knobs", knobs, "--strategy",
          "grid",   "--budget",   "4",    "--duration", "0.3",  "--settle", "0",  "--repetitions",
          "1",      "--max-repetitions", "1", "--db",   database};
}

// A job of one iteration of 8 items every 20 ms; with READY set it first creates
// that file, so a test knows the job has taken its GPUs and applied its first setting.
inline const char* const marker_loop =
    "if [ -n \"${READY:-}\" ]; then touch \"$READY\"; fi; "
    "while :; do sleep 0.02; echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; done";

class FakeNodeTest : public ::testing::Test {
 protected:
  static constexpr int kGpus = 4;

  ScratchDir dir;
  EnvironmentChanges environment = fake_nvml_environment(
      "h200,h200,h200,h200", {{"DVFSLAB_FAKE_NVML_LOG", (dir / "setters.log").string()},
                              {"DVFSLAB_FAKE_NVML_STATE", (dir / "gpu-state.json").string()},
                              {"DVFSLAB_STATE_DIR", (dir / "state").string()},
                              {"DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt}});

  void SetUp() override {
    const nlohmann::json controls = controls_an_administrator_left();
    nlohmann::json devices = nlohmann::json::array();
    for (int index = 0; index < kGpus; ++index) devices.push_back({{"index", index}, {"controls", controls}});
    std::ofstream(dir / "gpu-state.json") << nlohmann::json{{"devices", devices}};
  }

  // Every GPU's control state as the last process left it, by index.
  nlohmann::json controls() const {
    // Kept in a variable: a range-for over a member of parse()'s temporary would
    // iterate a destroyed object.
    const nlohmann::json document = nlohmann::json::parse(std::ifstream(dir / "gpu-state.json"));
    nlohmann::json all = nlohmann::json::array();
    for (const nlohmann::json& device : document.at("devices")) all.push_back(device.at("controls"));
    return all;
  }

  // The state `dvfslab info` finds: every GPU at 450 W.
  nlohmann::json found_state() {
    const ProcessResult info = run_dvfslab({"info"}, environment);
    EXPECT_EQ(info.exit_code, 0) << info.err;
    const nlohmann::json found = controls();
    EXPECT_EQ(found.size(), static_cast<std::size_t>(kGpus));
    for (const nlohmann::json& gpu : found) EXPECT_EQ(gpu.at("power_limit_w"), 450.0);
    return found;
  }

  std::vector<std::string> setter_log() const {
    std::vector<std::string> lines;
    std::ifstream in(dir / "setters.log");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  // The log's lines about one device from line `from` on, in order, without their
  // ` device=N` field.
  std::vector<std::string> calls_on(int device, std::size_t from = 0) const {
    const std::string mark = " device=" + std::to_string(device);
    std::vector<std::string> lines;
    const std::vector<std::string> log = setter_log();
    for (std::size_t i = from; i < log.size(); ++i) {
      std::string line = log[i];
      const std::size_t at = line.find(mark);
      if (at == std::string::npos || (at + mark.size() != line.size() && line[at + mark.size()] != ' '))
        continue;
      lines.push_back(line.erase(at, mark.size()));
    }
    return lines;
  }

  std::size_t journal_count() const {
    if (!std::filesystem::exists(dir / "state")) return 0;
    return static_cast<std::size_t>(std::count_if(
        std::filesystem::directory_iterator(dir / "state"), std::filesystem::directory_iterator(),
        [](const auto& entry) { return entry.path().filename().string().starts_with("journal-"); }));
  }

  // short_grid_search_arguments over power limits on `device` with `options`, of
  // marker_loop, with clock changes allowed and JSON out; `extra` adds to the environment.
  ProcessResult search(const std::string& device, const std::vector<std::string>& options = {},
                       EnvironmentChanges extra = {}) {
    EnvironmentChanges env = environment;
    for (auto& [name, value] : extra) env[name] = std::move(value);
    std::vector<std::string> arguments =
        short_grid_search_arguments(device, "pl", (dir / "search.sqlite").string());
    arguments.insert(arguments.end(), {"--json", "--allow-clock-changes"});
    arguments.insert(arguments.end(), options.begin(), options.end());
    arguments.insert(arguments.end(), {"--", "bash", "-c", marker_loop});
    return run_dvfslab(arguments, env);
  }

  std::string uuid_of(int device) {
    const ProcessResult info = run_dvfslab({"info", "--device", "all", "--json"}, environment);
    EXPECT_EQ(info.exit_code, 0) << info.err;
    const nlohmann::json document = nlohmann::json::parse(info.out);
    return document.at("devices").at(static_cast<std::size_t>(device)).at("uuid").get<std::string>();
  }
};

}  // namespace dvfslab::testing
