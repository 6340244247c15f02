// Compiled as part of the gpu module by the layering test: it must NOT compile,
// because a module sees only its own folder's private headers.
#include "report/escape.hpp"

int gpu_reads_a_report_private_header() { return 0; }
