// The built-in analysis writers: terminal tables, the JSON document and the HTML page.
#include <ostream>

#include "dvfslab/report.hpp"

namespace dvfslab {
namespace {

void write_tables(const AnalysisOutput& output, std::ostream& out) {
  out << format_analysis_tables(output.analysis) << output.text_after_tables;
}

void write_json(const AnalysisOutput& output, std::ostream& out) {
  nlohmann::json document = to_json(output.analysis, output.points);
  for (const auto& [name, value] : output.json_members.items()) document[name] = value;
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void write_html(const AnalysisOutput& output, std::ostream& out) {
  out << render_html_report(output.analysis, output.html);
}

}  // namespace

WriterRegistry<const AnalysisOutput&>& analysis_writers() {
  static WriterRegistry<const AnalysisOutput&> writers = [] {
    WriterRegistry<const AnalysisOutput&> builtin("analysis");
    builtin.add({"tables", "aligned plain-text tables", write_tables});
    builtin.add({"json", "the analysis as JSON, contract in docs/analysis.md", write_json});
    builtin.add({"html", "the self-contained report page, docs/report.md", write_html});
    return builtin;
  }();
  return writers;
}

}  // namespace dvfslab
