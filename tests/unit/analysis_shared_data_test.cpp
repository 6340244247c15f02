// Every published sweep table in the shared data directory is read by the product
// (read_sweep_table, as `dvfslab import` and `analyze FILE.csv` do) and analyzed,
// and each case's baseline, optimum and saving is checked against an independent
// computation: a plain loop over the CSV rows that shares no code with the product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "dvfslab/analysis.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

// ------------------------------------------------------------ the test's own CSV reading

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  return fields;
}

struct CsvRow {
  std::string source, gpu, workload;
  double core = 0, mem = 0, limit = 0;  // +inf when blank: "not controlled" ranks on top
  std::string core_text, mem_text, limit_text;
  double time = 0, power = 0;
  bool is_default = false;
};

std::vector<CsvRow> read_csv(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t source = column("source"), gpu = column("gpu"), workload = column("workload"),
                    core = column("core_mhz"), mem = column("mem_mhz"), limit = column("power_limit_w"),
                    time = column("time_s"), power = column("power_w"), is_default = column("default");
  const auto number_or_top = [](const std::string& text) {
    return text.empty() ? std::numeric_limits<double>::infinity() : std::stod(text);
  };
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = split_csv_line(line);
    rows.push_back({f[source], f[gpu], f[workload], number_or_top(f[core]), number_or_top(f[mem]),
                    number_or_top(f[limit]), f[core], f[mem], f[limit], std::stod(f[time]),
                    std::stod(f[power]), f[is_default] == "1"});
  }
  return rows;
}

// ------------------------------------------------------------ independent expectation

struct Expected {
  const CsvRow* baseline = nullptr;
  const CsvRow* optimum = nullptr;
  double saving_pct = 0;
  double time_change_pct = 0;
};

bool higher_setting(const CsvRow& a, const CsvRow& b) {
  if (a.core != b.core) return a.core > b.core;
  if (a.mem != b.mem) return a.mem > b.mem;
  return a.limit > b.limit;
}

std::map<std::string, Expected> expected_by_case(const std::vector<CsvRow>& rows) {
  std::map<std::string, std::vector<const CsvRow*>> groups;
  for (const CsvRow& r : rows) groups[r.source + "|" + r.gpu + "|" + r.workload].push_back(&r);
  std::map<std::string, Expected> expected;
  for (const auto& [key, group] : groups) {
    Expected e;
    const bool has_default =
        std::any_of(group.begin(), group.end(), [](const CsvRow* r) { return r->is_default; });
    for (const CsvRow* r : group) {
      if (has_default && !r->is_default) continue;
      if (!e.baseline || higher_setting(*r, *e.baseline)) e.baseline = r;
    }
    for (const CsvRow* r : group) {
      if (!e.optimum) {
        e.optimum = r;
        continue;
      }
      const double energy = r->time * r->power, best = e.optimum->time * e.optimum->power;
      if (energy < best ||
          (energy == best &&
           (r->time < e.optimum->time || (r->time == e.optimum->time && higher_setting(*r, *e.optimum))))) {
        e.optimum = r;
      }
    }
    const double base_energy = e.baseline->time * e.baseline->power;
    e.saving_pct = 100.0 * (base_energy - e.optimum->time * e.optimum->power) / base_energy;
    e.time_change_pct = 100.0 * (e.optimum->time / e.baseline->time - 1.0);
    expected[key] = e;
  }
  return expected;
}

std::optional<int> knob(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<int>(std::stoi(text));
}

std::vector<fs::path> shared_tables() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(DVFSLAB_SHARED_DATA_DIR))) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SharedSweepTables, AllSevenArePresent) { EXPECT_EQ(shared_tables().size(), 7u); }

TEST(SharedSweepTables, OptimumAndSavingMatchAnIndependentComputation) {
  for (const fs::path& file : shared_tables()) {
    SCOPED_TRACE(file.filename().string());
    const std::vector<CsvRow> csv = read_csv(file);
    const auto expected = expected_by_case(csv);
    const Analysis analysis = analyze(read_sweep_table(file));
    ASSERT_EQ(analysis.cases.size(), expected.size());
    double lowest = 1e300, highest = -1e300;
    for (const CaseAnalysis& c : analysis.cases) {
      const std::string key = c.key.source + "|" + c.key.gpu + "|" + c.key.workload_case.workload;
      SCOPED_TRACE(key);
      ASSERT_TRUE(expected.count(key));
      const Expected& e = expected.at(key);
      const Setting& baseline = c.points[c.baseline].setting;
      EXPECT_EQ(baseline.sm_mhz, knob(e.baseline->core_text));
      EXPECT_EQ(baseline.mem_mhz, knob(e.baseline->mem_text));
      EXPECT_EQ(baseline.power_limit_w, knob(e.baseline->limit_text));
      EXPECT_EQ(c.baseline_kind == BaselineKind::vendor_default, e.baseline->is_default);
      ASSERT_TRUE(c.optimum);
      const Setting& optimum = c.points[*c.optimum].setting;
      EXPECT_EQ(optimum.sm_mhz, knob(e.optimum->core_text));
      EXPECT_EQ(optimum.mem_mhz, knob(e.optimum->mem_text));
      EXPECT_EQ(optimum.power_limit_w, knob(e.optimum->limit_text));
      EXPECT_NEAR(*c.energy_saving_pct, e.saving_pct, 1e-9);
      EXPECT_NEAR(*c.time_change_pct, e.time_change_pct, 1e-9);
      lowest = std::min(lowest, e.saving_pct);
      highest = std::max(highest, e.saving_pct);
    }
    // Sweep tables hold one mode, so each GPU has one summary whose range spans its cases.
    for (const GpuModeSummary& s : analysis.summary) {
      double low = 1e300, high = -1e300;
      for (const auto& [key, e] : expected) {
        if (e.baseline->gpu == s.gpu) {
          low = std::min(low, e.saving_pct);
          high = std::max(high, e.saving_pct);
        }
      }
      EXPECT_NEAR(*s.energy_saving_min_pct, low, 1e-9);
      EXPECT_NEAR(*s.energy_saving_max_pct, high, 1e-9);
    }
    RecordProperty(file.filename().string(),
                   std::to_string(lowest) + " to " + std::to_string(highest) + " %");
  }
}

TEST(SharedSweepTables, ParetoFrontierMatchesABruteForceDominanceCheck) {
  for (const fs::path& file : shared_tables()) {
    SCOPED_TRACE(file.filename().string());
    const Analysis analysis = analyze(read_sweep_table(file));
    for (const CaseAnalysis& c : analysis.cases) {
      std::vector<std::size_t> brute;
      for (std::size_t i = 0; i < c.points.size(); ++i) {
        const double ti = c.points[i].time_per_iteration_s.mean, ei = c.points[i].energy_per_iteration_j.mean;
        bool dominated = false;
        for (std::size_t j = 0; j < c.points.size() && !dominated; ++j) {
          const double tj = c.points[j].time_per_iteration_s.mean,
                       ej = c.points[j].energy_per_iteration_j.mean;
          const bool better = tj <= ti && ej <= ei && (tj < ti || ej < ei);
          const bool earlier_equal = tj == ti && ej == ei && j < i;
          dominated = better || earlier_equal;
        }
        if (!dominated) brute.push_back(i);
      }
      std::vector<std::size_t> frontier = c.pareto;
      std::sort(frontier.begin(), frontier.end());
      EXPECT_EQ(frontier, brute) << c.key.workload_case.workload;
    }
  }
}

}  // namespace
}  // namespace dvfslab
