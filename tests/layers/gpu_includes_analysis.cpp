// Compiled as part of the gpu module by the layering test: it must NOT compile,
// because analysis is a higher layer than gpu (docs/architecture.md#layers).
#include "dvfslab/analysis.hpp"

int gpu_reads_an_analysis_header() { return static_cast<int>(sizeof(dvfslab::ResultRow)); }
