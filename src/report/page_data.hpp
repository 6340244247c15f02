#pragma once
// What the page and the figure files are drawn from: every figure group of a report,
// in the style asked for, and their data and specifications as the page embeds them.
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/report.hpp"
#include "report/figures.hpp"

namespace dvfslab::report_detail {

// The figures of every GPU × workload, then those across cases (figures.hpp), in
// `options.style`.
std::vector<FigureGroup> report_figure_groups(const Analysis& analysis, const HtmlReportOptions& options);

// The figures' specifications as a few shared templates (those of one kind of chart
// differ only in title and data), so a page of thousands of charts stays small: one
// entry per figure {id, template, title, data[, select]}, its template added to
// `templates` unless an equal one is there.
nlohmann::json figures_json(const std::vector<FigureGroup>& groups, nlohmann::json& templates);

// The data sets the figures plot, one per group that has figures: {name, labels,
// columns[, label_columns]}.
nlohmann::json groups_json(const std::vector<FigureGroup>& groups);

}  // namespace dvfslab::report_detail
