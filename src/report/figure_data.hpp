#pragma once
// A figure group's points as the page holds them: columns, texts written once
// (the layout is described at FigureGroup::data in report/figures.hpp).
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"
#include "report/figure_shape.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {

nlohmann::json data_columns(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape,
                            const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
                            const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted,
                            const MeasuredClocks& measured);

}  // namespace dvfslab::report_detail
