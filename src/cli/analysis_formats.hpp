#pragma once
// The analysis formats `analyze --format` and `report --format` offer.
#include "dvfslab/report.hpp"

namespace dvfslab::cli {

// analysis_writers() with the commands that apply each optimum (slurm, nvidia-smi)
// added the first time it is called.
const WriterRegistry<const AnalysisOutput&>& cli_analysis_writers();

}  // namespace dvfslab::cli
