#pragma once
// Sweep tables: the CSV layout of the published DVFS measurements
// (source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default; see
// docs/store.md). Reading gives ResultRows; writing gives the same layout back.
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "dvfslab/results.hpp"

namespace dvfslab {

// Reads a sweep table. Quoted fields (RFC 4180, "" for a quote inside) and CRLF line
// ends are accepted; columns beyond the nine known ones are ignored; a blank knob is
// a knob the source did not control. Each row becomes one ResultRow with
// items_per_iteration 1, energy_per_iteration_j = time_s × power_w, batch 0, mode
// train, precision fp32; repetition counts earlier rows of the same (source, gpu,
// workload, setting). A missing column, a wrong field count, a bad value or a name
// (source, gpu, workload) holding a control character such as a line break throws
// ConfigError naming file:line and the column.
std::vector<ResultRow> read_sweep_table(const std::filesystem::path& path);
// The same from a stream; `name` is the file name used in error messages.
std::vector<ResultRow> read_sweep_table(std::istream& in, const std::string& name);
// A table of settings to predict (`model predict --at`): the columns gpu, workload,
// core_mhz, mem_mhz and power_limit_w; source and default are read when present,
// time_s and power_w are ignored (left 0). Errors as read_sweep_table's.
std::vector<ResultRow> read_setting_table(const std::filesystem::path& path);

// The workload key of a row in a sweep table: the workload for imported rows
// (batch 0), otherwise "workload/mode/precision/bBATCH" so that cases stay apart.
std::string sweep_table_workload_key(const ResultRow& row);

// Writes rows in the sweep-table layout, one line per row, numbers in their
// shortest exact form so that reading the output gives the same values back.
// Simulated rows say so in the source column.
void write_sweep_table(const std::vector<ResultRow>& rows, std::ostream& out);

}  // namespace dvfslab
