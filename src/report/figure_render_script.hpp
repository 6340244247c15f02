#pragma once
// The node program that draws the figure files: node render.js WORK OUT reads
// WORK/{vega.min.js, vega-lite.min.js, figure_spec.js, data.json} (data.json is the
// page's data, each figure with a `file` name) and writes OUT/<file>.svg for each.
// On failure it exits 1 with one line naming the figure on its error output.
#include <string_view>

namespace dvfslab::report_detail {

std::string_view figure_render_script();

}  // namespace dvfslab::report_detail
