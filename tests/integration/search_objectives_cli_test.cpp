// Every registered objective through `dvfslab search --strategy auto` on a
// replayed table: an objective reaches the command line, the strategies and the
// analysis from its registry row alone, so a new row is covered here unchanged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

const std::string power_limit_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-dnn-power-limit.csv";

nlohmann::json search(const testing::ScratchDir& scratch, const std::string& strategy,
                      const ObjectiveDefinition& definition, const std::string& objective) {
  const std::string db = (scratch / (strategy + "-" + std::string(definition.name) + ".sqlite")).string();
  const auto result = testing::run_dvfslab({"search", "--device", "replay:" + power_limit_table, "--workload",
                                            "cifar100/shufflenetv2/b1024/adam", "--knobs", "pl", "--strategy",
                                            strategy, "--objective", objective, "--db", db, "--json"});
  EXPECT_EQ(result.exit_code, 0) << strategy << " " << objective << ": " << result.err;
  return result.exit_code == 0 ? nlohmann::json::parse(result.out) : nlohmann::json{};
}

// Not the grid's optimum for every objective: on this table auto stops at 150 W
// under ED²P where the grid's is 200 W (as before objectives were carried as values).
TEST(SearchObjectivesCli, AutoSearchesEveryRegisteredObjectiveOnAReplayedTableInFewerProbesThanTheGrid) {
  testing::ScratchDir scratch;
  for (const ObjectiveDefinition& definition : objectives()) {
    const std::string objective(definition.example.empty() ? definition.name : definition.example);
    const nlohmann::json grid = search(scratch, "grid", definition, objective);
    const nlohmann::json found = search(scratch, "auto", definition, objective);
    if (grid.is_null() || found.is_null()) continue;
    EXPECT_EQ(found["objective"], to_string(parse_objective(objective))) << objective;
    EXPECT_EQ(found["strategy"], "auto") << objective;
    EXPECT_FALSE(found["optimum"].is_null()) << objective << "\n" << found.dump(1);
    EXPECT_LT(found["probes"].size(), grid["probes"].size()) << objective;
  }
}

}  // namespace
}  // namespace dvfslab
