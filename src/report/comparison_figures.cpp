// The figures across cases: the summary and each GPU's normalised figures.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "report/figures.hpp"
#include "report/normalised_charts.hpp"
#include "report/normalised_data.hpp"

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

// The palette's colours: more series than these cannot be told apart by colour.
constexpr std::size_t kMostColours = 10;

}  // namespace

std::vector<FigureGroup> build_comparison_groups(
    const Analysis& analysis, int first_figure_id,
    const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
    const std::map<std::pair<CaseKey, Setting>, double>& measured_sm_mhz,
    const std::map<std::pair<CaseKey, Setting>, double>& measured_mem_mhz) {
  const MeasuredClocks measured{measured_sm_mhz, measured_mem_mhz};
  int next_id = first_figure_id;
  std::vector<FigureGroup> groups;
  const auto add = [&](FigureGroup& group, json spec, const std::string& subtitle, json select = nullptr) {
    const std::string prefix = group.simulated ? "SIMULATED — " : "";
    spec["title"] = {{"text", prefix + spec["title"].get<std::string>()}, {"subtitle", subtitle}};
    group.figures.push_back({fmt::format("figure-{}", next_id++), std::move(spec), std::move(select)});
  };

  FigureGroup summary;
  summary.kind = "summary";
  const std::optional<std::string> one_gpu = summary_gpu(analysis);
  summary.heading = one_gpu ? fmt::format("The optimum against the default per mode × network on {}", *one_gpu)
                            : "The optimum against the default per GPU × mode × network";
  summary.data_name = "summary";
  summary.data = summary_data(analysis);
  summary.simulated = std::any_of(analysis.cases.begin(), analysis.cases.end(),
                                  [](const CaseAnalysis& c) { return c.key.simulated; });
  const std::size_t summary_rows = summary.data["columns"]["row"].size();
  if (summary_rows > 0) {
    add(summary, savings_chart("energy saving and slowdown of the optimum", summary.data_name, summary_rows),
        one_gpu ? fmt::format("{} · geometric mean over each network's batch sizes", *one_gpu)
                : "geometric mean over each network's batch sizes");
    groups.push_back(std::move(summary));
  }

  using GpuKey = std::tuple<std::string, std::string, bool>;
  std::map<GpuKey, std::vector<const CaseAnalysis*>> per_gpu;
  for (const CaseAnalysis& c : analysis.cases)
    per_gpu[GpuKey{c.key.source, c.key.gpu, c.key.simulated}].push_back(&c);
  for (const auto& [key, gpu_cases] : per_gpu) {
    NormalisedData normalised = normalised_data(gpu_cases, measured, probe_order);
    FigureGroup group;
    group.kind = "normalised";
    group.simulated = std::get<2>(key);
    group.heading = fmt::format("{} · relative to each case's default", std::get<1>(key));
    group.data_name = fmt::format("normalised-{}", groups.size());
    group.cases = normalised.cases;
    if (!normalised.left_out.empty()) {
      group.notes.push_back(fmt::format(
          "Left out of these figures, having no measurement at the default setting to divide by: {}.",
          fmt::join(normalised.left_out, "; ")));
    }
    if (normalised.cases.empty()) {
      // Nothing to plot: the page names the cases left out, without an empty chart.
      group.data = {{"labels", json::array()}, {"columns", json::object()}, {"label_columns", json::array()}};
      groups.push_back(std::move(group));
      continue;
    }
    group.data = std::move(normalised.data);
    std::map<std::string, std::vector<const CaseAnalysis*>> networks;
    for (const CaseAnalysis* c : normalised.cases) networks[network_label(*c)].push_back(c);
    // Per network its training cases by batch size, then its inference cases.
    for (auto& [network, cases] : networks) {
      std::stable_sort(cases.begin(), cases.end(), [](const CaseAnalysis* a, const CaseAnalysis* b) {
        return std::pair{a->key.workload_case.mode, a->key.workload_case.batch} <
               std::pair{b->key.workload_case.mode, b->key.workload_case.batch};
      });
    }
    for (const auto& [network, cases] : networks) {
      const Knob knob = normalised.network_knob[network];
      const std::string versus = std::string(" vs ") + info(knob).title;
      if (cases.size() > 1) {
        for (const Ratio& ratio : {kEnergyRatio, kTimeRatio, kPowerRatio}) {
          add(group,
              normalised_network_chart(std::string(ratio.name) + " relative to the default" + versus,
                                       group.data_name, knob, ratio, cases.size()),
              fmt::format("{} · {}", std::get<1>(key), network), {{"field", "network"}, {"equal", network}});
        }
      }
      for (const CaseAnalysis* c : cases) {
        add(group,
            normalised_case_chart("energy, time and power relative to the default" + versus, group.data_name,
                                  knob),
            fmt::format("{} · {}", std::get<1>(key), case_label(*c)),
            {{"field", "case"}, {"equal", case_label(*c)}});
      }
    }
    const std::size_t case_count = normalised.cases.size();
    const std::size_t network_count = networks.size();
    const bool by_case = case_count <= kMostColours;
    const bool by_network = !by_case && network_count <= kMostColours;
    add(group,
        normalised_pareto_chart("Pareto fronts of every case, relative to its default", group.data_name,
                                by_case ? "case" : "network",
                                by_case      ? case_count
                                : by_network ? network_count
                                             : 0),
        std::get<1>(key));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace dvfslab::report_detail
