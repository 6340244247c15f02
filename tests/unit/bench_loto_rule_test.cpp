// The benchmarks' leave-one-table-out rule (bench/loto.hpp): the best admissible
// candidate by mean merit over the tables, the default (declared first) kept against
// a lead that one table's luck could make.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "bench/loto.hpp"

namespace dvfslab::bench {
namespace {

using Merits = std::map<std::string, std::vector<double>>;  // candidate → merit per table

const std::vector<std::string> six_tables{"a", "b", "c", "d", "e", "f"};

std::string chosen(const Merits& merits, const std::vector<std::string>& candidates,
                   const std::map<std::string, double>& cost = {},
                   const std::map<std::string, bool>& admissible = {}) {
  const auto score = [&](const std::string& candidate, const std::string& table) {
    const std::size_t index = static_cast<std::size_t>(table[0] - 'a');
    return TableScore{merits.at(candidate).at(index), cost.count(candidate) ? cost.at(candidate) : 0.0,
                      admissible.count(candidate) ? admissible.at(candidate) : true};
  };
  std::vector<std::string> tables(six_tables.begin(), six_tables.begin() + merits.begin()->second.size());
  return choose_on(tables, candidates, score);
}

TEST(BenchLotoRule, OneSmallTablesLuckDoesNotTakeTheChoiceFromTheDefault) {
  // One curve of a five-curve table moves its share by 20 points: the challenger's
  // mean lead (3.3 points) is one standard error of the table-by-table differences.
  const Merits merits{{"default", {100, 95, 90, 100, 98, 80}}, {"challenger", {100, 95, 90, 100, 98, 100}}};
  EXPECT_EQ(chosen(merits, {"default", "challenger"}), "default");
}

TEST(BenchLotoRule, ALeadOnEveryTableIsClearAndTakesTheChoice) {
  const Merits merits{{"default", {90, 92, 88, 95, 91, 85}}, {"challenger", {92, 93, 91, 96, 94, 86}}};
  EXPECT_EQ(chosen(merits, {"default", "challenger"}), "challenger");
}

TEST(BenchLotoRule, TheClearLeaderIsChosenWhenTheBestMeanIsNotClear) {
  const Merits merits{{"default", {90, 90, 90, 90, 90, 60}},
                      {"lucky", {90, 90, 90, 90, 90, 100}},
                      {"steady", {93, 92, 94, 93, 92, 62}}};
  EXPECT_EQ(chosen(merits, {"default", "lucky", "steady"}), "steady");
}

TEST(BenchLotoRule, EqualMeritsStillPartByCost) {
  const Merits merits{{"default", {90, 95}}, {"cheaper", {95, 90}}};
  EXPECT_EQ(chosen(merits, {"default", "cheaper"}, {{"default", 10}, {"cheaper", 5}}), "cheaper");
}

TEST(BenchLotoRule, AnInadmissibleDefaultGivesWayToTheBestAdmissible) {
  const Merits merits{{"default", {100, 100, 100}}, {"within_budget", {80, 99, 90}}, {"worse", {70, 70, 70}}};
  EXPECT_EQ(chosen(merits, {"default", "within_budget", "worse"}, {}, {{"default", false}}), "within_budget");
  // Within the budget, the same lead of the default's would not be given up.
  EXPECT_EQ(chosen(merits, {"default", "within_budget", "worse"}), "default");
}

TEST(BenchLotoRule, OneTableGivesNoSpreadToJudgeALeadBy) {
  const Merits merits{{"default", {80}}, {"challenger", {100}}};
  EXPECT_EQ(chosen(merits, {"default", "challenger"}), "default");
}

TEST(BenchLotoRule, EachTableIsLeftOutInTurn) {
  // The challenger leads clearly on a–e but not once f is among the tables.
  const Merits merits{{"default", {90, 90, 90, 90, 90, 100}}, {"challenger", {92, 93, 92, 93, 92, 60}}};
  const auto score = [&](const std::string& candidate, const std::string& table) {
    return TableScore{merits.at(candidate).at(static_cast<std::size_t>(table[0] - 'a')), 0, true};
  };
  const LotoChoices choices = leave_one_table_out(six_tables, {"default", "challenger"}, score);
  EXPECT_EQ(choices.in_sample, "default");
  EXPECT_EQ(choices.held_out.at("f"), "challenger");
  for (const std::string table : {"a", "b", "c", "d", "e"}) EXPECT_EQ(choices.held_out.at(table), "default");
}

}  // namespace
}  // namespace dvfslab::bench
