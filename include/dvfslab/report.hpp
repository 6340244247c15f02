#pragma once
// Presenting an analysis: aligned terminal tables and the self-contained HTML report.
#include <filesystem>
#include <string>

#include "dvfslab/analysis.hpp"

namespace dvfslab {

// The per-case table (baseline, optimum, changes), the per-network geometric means
// and the per-GPU × mode summary, as aligned plain text. Simulated data is marked.
std::string format_analysis_tables(const Analysis& analysis);

}  // namespace dvfslab
