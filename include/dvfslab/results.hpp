#pragma once
// One measured (case, setting, repetition) as analysis sees it: the common form of
// our own sweeps read from the store and of published sweep tables imported from CSV.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/types.hpp"

namespace dvfslab {

struct ResultRow {
  std::string source;       // "dvfslab" or the sweep table's source column
  std::string gpu;          // GPU name ("NVIDIA H200", "Tesla V100")
  bool simulated = false;   // measured on a simulated GPU
  Case workload_case;       // batch 0 / default mode and precision when a table has none
  std::string item_unit;    // "images", "tokens"; "" when unknown
  Setting setting;          // the knobs as requested; absent = not controlled
  bool is_default = false;  // the vendor-default setting
  int repetition = 0;
  double time_per_iteration_s = 0;  // sweep tables: seconds per unit of work
  double items_per_iteration = 1;   // sweep tables: 1 (one unit of work)
  double mean_power_w = 0;
  double energy_per_iteration_j = 0;  // time × power for sweep tables; the meter's energy otherwise
  std::optional<double> sm_mhz_mean;  // effective clock as measured, when known
  MeasurementFlags flags;
  std::int64_t run_id = 0;  // the database run that measured it; 0 for a sweep table read directly
};

}  // namespace dvfslab
