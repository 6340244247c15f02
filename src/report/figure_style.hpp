#pragma once
// How the figures look: as on screen (the charts' own sizes), or sized and set for a
// two-column paper.
#include <nlohmann/json.hpp>

#include "dvfslab/report.hpp"

namespace dvfslab::report_detail {

// The paper style (docs/report.md, "Figures for a paper"): every plot area scaled by
// kPaperScale (a 340 × 220 px plot becomes 190 × 123), text at 8 px (9 px for the
// title), the legend under the plot, and DejaVu Sans, which Debian's fonts-dejavu-core
// installs, so the PDF embeds the font the SVG names.
inline constexpr double kPaperScale = 190.0 / 340.0;
inline constexpr int kPaperTextSize = 8;
inline constexpr int kPaperTitleSize = 9;

// Applies `style` to a Vega-Lite specification; the screen style leaves it as it is.
void apply_figure_style(nlohmann::json& spec, FigureStyle style);

}  // namespace dvfslab::report_detail
