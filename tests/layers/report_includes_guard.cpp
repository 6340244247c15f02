// Compiled as part of the report module by the layering test: it must NOT compile,
// because report declares only analysis and common in DEPENDS, and guard is
// neither of them nor below them (a sibling, not a lower layer).
#include "dvfslab/guard.hpp"

int report_reads_a_guard_header() { return static_cast<int>(sizeof(dvfslab::ClockGuard)); }
