#pragma once
// Presenting an analysis: aligned terminal tables and the self-contained HTML report.
#include <filesystem>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"

namespace dvfslab {

// The per-case table (baseline, optimum, changes), the per-network geometric means
// and the per-GPU × mode summary, as aligned plain text. Simulated data is marked.
std::string format_analysis_tables(const Analysis& analysis);

// The HTML report as one self-contained page: per GPU × workload the study's
// figures, the Pareto plot and the optimum/savings table, with the data as JSON and
// the Vega, Vega-Lite and vega-embed runtimes embedded, so it works offline (see
// docs/report.md). Throws NotSupportedError when the build had no runtimes.
std::string render_html_report(const Analysis& analysis);
// Writes render_html_report() to `path` through an OutputFile (atomically, never
// over one of `inputs`); throws Error when it cannot.
void write_html_report(const Analysis& analysis, const std::filesystem::path& path,
                       const std::vector<std::filesystem::path>& inputs = {});

}  // namespace dvfslab
