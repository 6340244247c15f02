// Compiled as part of the report module by the layering test: it must compile,
// which shows that the sibling include fails for its module and nothing else.
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "report/escape.hpp"

int report_reads_a_declared_dependency() { return static_cast<int>(dvfslab::ExitCode::usage); }
