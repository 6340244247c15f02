#pragma once
// The JavaScript functions that build each figure's Vega-Lite specification from the
// report's data: dvfslabDatasets(data) and dvfslabFigureSpec(data, figure, datasets).
#include <string_view>

namespace dvfslab::report_detail {

std::string_view figure_spec_script();

}  // namespace dvfslab::report_detail
