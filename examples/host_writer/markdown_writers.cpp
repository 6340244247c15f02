// A host program adding output formats of its own (docs/library.md, "Output
// writers"): a Markdown export of a database and a Markdown summary of its
// analysis, registered by name beside the built-in formats and then used by name,
// as `dvfslab export --format` and `analyze --format` use theirs.
//
// Usage: host_writer_example SWEEP_TABLE.csv DATABASE   (the database is made anew)
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <ostream>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/store_tools.hpp"

namespace {

// One Markdown row per plan point of the database.
void write_markdown_rows(dvfslab::Store& store, std::ostream& out) {
  out << "| gpu | case | setting | energy per iteration (J) |\n| --- | --- | --- | --- |\n";
  for (const dvfslab::ResultRow& row : store.result_rows()) {
    out << "| " << row.gpu << " | " << dvfslab::to_string(row.workload_case) << " | "
        << dvfslab::to_string(row.setting) << " | " << row.energy_per_iteration_j << " |\n";
  }
}

// Each case's optimum and saving, as a Markdown list.
void write_markdown_summary(const dvfslab::AnalysisOutput& output, std::ostream& out) {
  out << "Optima (" << dvfslab::to_string(output.analysis.objective) << "):\n";
  for (const dvfslab::CaseAnalysis& entry : output.analysis.cases) {
    out << "- " << entry.key.gpu << ", " << dvfslab::to_string(entry.key.workload_case) << ": ";
    if (!entry.optimum || !entry.energy_saving_pct) {
      out << "no optimum\n";
      continue;
    }
    out << dvfslab::to_string(entry.points.at(*entry.optimum).setting) << ", " << *entry.energy_saving_pct
        << " % less energy\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: host_writer_example SWEEP_TABLE.csv DATABASE\n");
    return 2;
  }
  try {
    // Registered once, at start-up, before anything writes.
    dvfslab::store_writers().add({"markdown", "a Markdown table of the plan points", write_markdown_rows});
    dvfslab::analysis_writers().add(
        {"markdown", "each case's optimum as a Markdown list", write_markdown_summary});
    std::printf("export formats: %s\n", dvfslab::store_writers().choices().c_str());
    std::printf("analysis formats: %s\n", dvfslab::analysis_writers().choices().c_str());

    std::filesystem::remove(argv[2]);  // a fresh database each time
    dvfslab::Store store(argv[2]);
    dvfslab::import_sweep_table(store, argv[1]);
    dvfslab::export_store(store, "markdown", std::cout);
    const dvfslab::Analysis analysis =
        dvfslab::analyze(store.result_rows(), dvfslab::parse_objective("energy"));
    dvfslab::analysis_writers().find("markdown").write(dvfslab::AnalysisOutput(analysis), std::cout);

    // A name is taken once: a second "markdown" is refused with one clear error.
    dvfslab::store_writers().add({"markdown", "again", write_markdown_rows});
    std::printf("a second markdown writer was accepted\n");
    return 1;
  } catch (const dvfslab::Error& e) {
    std::printf("refused: %s\n", e.what());
    return 0;
  }
}
