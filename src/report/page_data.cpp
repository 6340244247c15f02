#include "report/page_data.hpp"

#include <map>
#include <string>

#include "report/figure_style.hpp"

namespace dvfslab::report_detail {

std::vector<FigureGroup> report_figure_groups(const Analysis& analysis, const HtmlReportOptions& options) {
  auto groups =
      build_figure_groups(analysis, options.probe_order, options.predicted_energy, options.prediction_label,
                          options.measured_sm_mhz, options.measured_mem_mhz);
  std::size_t point_figures = 0;
  for (const auto& group : groups) point_figures += group.figures.size();
  for (auto& group : build_comparison_groups(analysis, static_cast<int>(point_figures), options.probe_order,
                                             options.measured_sm_mhz, options.measured_mem_mhz))
    groups.push_back(std::move(group));
  for (auto& group : groups) {
    for (auto& figure : group.figures) apply_figure_style(figure.spec, options.style);
  }
  return groups;
}

nlohmann::json figures_json(const std::vector<FigureGroup>& groups, nlohmann::json& templates) {
  std::map<std::string, std::size_t> template_of;
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& group : groups) {
    for (const auto& figure : group.figures) {
      nlohmann::json shape = figure.spec;
      shape.erase("title");
      shape.erase("data");
      const auto [slot, added] = template_of.try_emplace(shape.dump(), templates.size());
      if (added) templates.push_back(std::move(shape));
      figures.push_back({{"id", figure.id},
                         {"template", slot->second},
                         {"title", figure.spec["title"]},
                         {"data", group.data_name}});
      if (!figure.select.is_null()) figures.back()["select"] = figure.select;
    }
  }
  return figures;
}

nlohmann::json groups_json(const std::vector<FigureGroup>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& group : groups) {
    // A GPU without a case to normalise has only its note: no chart reads its data.
    if (group.figures.empty()) continue;
    out.push_back(
        {{"name", group.data_name}, {"labels", group.data["labels"]}, {"columns", group.data["columns"]}});
    if (group.data.contains("label_columns")) out.back()["label_columns"] = group.data["label_columns"];
  }
  return out;
}

}  // namespace dvfslab::report_detail
