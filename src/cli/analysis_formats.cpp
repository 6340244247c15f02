#include "cli/analysis_formats.hpp"

#include "dvfslab/optimum_table.hpp"
#include "dvfslab/slurm.hpp"

namespace dvfslab::cli {

const WriterRegistry<const AnalysisOutput&>& cli_analysis_writers() {
  static WriterRegistry<const AnalysisOutput&>& writers = []() -> WriterRegistry<const AnalysisOutput&>& {
    WriterRegistry<const AnalysisOutput&>& all = analysis_writers();
    for (AnalysisWriter& writer : slurm::optimum_command_writers()) all.add(std::move(writer));
    all.add(slurm::optimum_table_writer());
    return all;
  }();
  return writers;
}

}  // namespace dvfslab::cli
