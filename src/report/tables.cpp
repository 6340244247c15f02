// Aligned plain-text tables of an analysis for the terminal.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dvfslab/report.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {
namespace {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string render() const {
    std::vector<std::size_t> widths(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
    }
    std::string out;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      std::string line;
      for (std::size_t i = 0; i < rows_[r].size(); ++i) {
        const std::string& cell = rows_[r][i];
        line += cell + std::string(widths[i] - display_width(cell) + (i + 1 < rows_[r].size() ? 2 : 0), ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + '\n';
      if (r == 0) {
        std::size_t total = 0;
        for (std::size_t w : widths) total += w + 2;
        out += std::string(total - 2, '-') + '\n';
      }
    }
    return out;
  }

 private:
  // Counts UTF-8 code points, so "–" and "×" take one column.
  static std::size_t display_width(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(
        text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
  }
  std::vector<std::vector<std::string>> rows_;
};

std::string knob_text(const std::optional<int>& value) { return value ? std::to_string(*value) : "-"; }

std::string setting_text(const Setting& setting) {
  std::string text = fmt::format("{}/{}/{}", knob_text(setting.sm_mhz), knob_text(setting.mem_mhz),
                                 knob_text(setting.power_limit_w));
  if (setting.workload_profile) text += " profile " + workload_power_profile_name(*setting.workload_profile);
  return text;
}

std::string percent_text(const std::optional<double>& value) {
  return value ? fmt::format("{:+.1f} %", *value) : "-";
}

std::string gpu_text(const std::string& gpu, bool simulated) {
  return simulated ? gpu + " [SIMULATED]" : gpu;
}

// Each measured workload power profile against the baseline and the tuned
// optimum; empty when no case measured one.
std::string profile_table(const Analysis& analysis) {
  TextTable profiles({"GPU", "Workload", "Batch", "Mode", "Profile", "Energy saving", "Time change",
                      "Tuned optimum", "Tuned vs profile: energy", "time"});
  bool any = false;
  for (const CaseAnalysis& c : analysis.cases) {
    const Case& wc = c.key.workload_case;
    for (const ProfileComparison& p : c.profiles) {
      any = true;
      profiles.add({gpu_text(c.key.gpu, c.key.simulated), wc.workload,
                    wc.batch > 0 ? std::to_string(wc.batch) : "-",
                    fmt::format("{} {}", to_string(wc.mode), to_string(wc.precision)),
                    workload_power_profile_name(*c.points[p.point].setting.workload_profile),
                    percent_text(p.energy_saving_pct), percent_text(p.time_change_pct),
                    c.tuned_optimum ? setting_text(c.points[*c.tuned_optimum].setting) : "none meets the objective",
                    percent_text(p.tuned_energy_saving_pct), percent_text(p.tuned_time_change_pct)});
    }
  }
  if (!any) return {};
  return "\nWorkload power profiles: against the baseline, and the tuned optimum (best setting without a "
         "profile) against each profile (positive energy = the tuned setting uses less)\n" +
         profiles.render();
}

}  // namespace

std::string format_analysis_tables(const Analysis& analysis) {
  std::string out =
      fmt::format("Objective: {} ({}). Settings are SM/memory MHz / power limit W; '-' = not controlled.\n",
                  to_string(analysis.objective), describe(analysis.objective));
  if (std::any_of(analysis.cases.begin(), analysis.cases.end(),
                  [](const CaseAnalysis& c) { return c.key.simulated; })) {
    out += "Rows marked [SIMULATED] come from a simulated GPU, not from a measurement.\n";
  }

  TextTable cases({"GPU", "Workload", "Batch", "Mode", "Settings", "Baseline", "Optimum", "Energy saving",
                   "Time change", "Power change"});
  for (const CaseAnalysis& c : analysis.cases) {
    const Case& wc = c.key.workload_case;
    const std::string baseline =
        setting_text(c.points[c.baseline].setting) +
        (c.baseline_kind == BaselineKind::vendor_default ? " (default)" : " (highest)");
    cases.add(
        {gpu_text(c.key.gpu, c.key.simulated), wc.workload, wc.batch > 0 ? std::to_string(wc.batch) : "-",
         fmt::format("{} {}", to_string(wc.mode), to_string(wc.precision)), std::to_string(c.points.size()),
         baseline, c.optimum ? setting_text(c.points[*c.optimum].setting) : "none meets the objective",
         percent_text(c.energy_saving_pct), percent_text(c.time_change_pct),
         percent_text(c.power_change_pct)});
  }
  out += "\nPer case: optimum against baseline\n" + cases.render();
  out += profile_table(analysis);

  TextTable networks({"GPU", "Workload", "Mode", "Batches", "Energy saving", "Time change", "Power change"});
  for (const WorkloadAggregate& w : analysis.workloads) {
    std::vector<std::string> batch_texts;
    for (int batch : w.batches) batch_texts.push_back(batch > 0 ? std::to_string(batch) : "-");
    const std::string batches = fmt::format("{}", fmt::join(batch_texts, ","));
    networks.add({gpu_text(w.gpu, w.simulated), w.workload,
                  fmt::format("{} {}", to_string(w.mode), to_string(w.precision)), batches,
                  percent_text(w.across_batches.energy_saving_pct),
                  percent_text(w.across_batches.time_change_pct),
                  percent_text(w.across_batches.power_change_pct)});
  }
  out += "\nPer network: geometric mean across batch sizes\n" + networks.render();

  TextTable summary({"GPU", "Mode", "Cases", "Networks", "Saving range", "Geomean saving", "Geomean time",
                     "Geomean power"});
  for (const GpuModeSummary& s : analysis.summary) {
    const std::string range =
        s.energy_saving_min_pct
            ? fmt::format("{:.1f}–{:.1f} %", *s.energy_saving_min_pct, *s.energy_saving_max_pct)
            : "-";
    const std::string cases_text =
        s.cases_without_optimum > 0 ? fmt::format("{} ({} without optimum)", s.cases, s.cases_without_optimum)
                                    : std::to_string(s.cases);
    const auto& means = s.across_workloads;
    summary.add({gpu_text(s.gpu, s.simulated), std::string(to_string(s.mode)), cases_text,
                 std::to_string(s.workloads), range, means ? percent_text(means->energy_saving_pct) : "-",
                 means ? percent_text(means->time_change_pct) : "-",
                 means ? percent_text(means->power_change_pct) : "-"});
  }
  out += "\nSummary per GPU × mode: range over cases, geometric mean across networks\n" + summary.render();
  return out;
}

}  // namespace dvfslab
