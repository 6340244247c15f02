#pragma once
// Shared helpers of the store tests: realistic records (and, through
// scratch_dir.hpp, a scratch directory).
#include <filesystem>
#include <string>

#include "dvfslab/store.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {

inline RunInfo sweep_run(const std::string& plan = "[plan]\nsm = [1005, 1380]\n", int shard_index = 0,
                         int shard_count = 1) {
  RunInfo run;
  run.gpu.name = "Tesla V100-SXM2-16GB";
  run.gpu.uuid = "GPU-sim-v100-0";
  run.gpu.driver_version = "550.54";
  run.gpu.simulated = true;
  run.gpu.backend = "sim";
  run.plan_text = plan;
  run.plan_hash = plan_hash(plan);
  run.shard_index = shard_index;
  run.shard_count = shard_count;
  return run;
}

inline PointRecord point_record(int sm_mhz, int repetition, int order_index) {
  PointRecord record;
  record.point.workload_case = Case{"resnet50", 64, Mode::train, Precision::fp32};
  record.point.setting.sm_mhz = sm_mhz;
  record.point.repetition = repetition;
  record.order_index = order_index;
  record.item_unit = "images";
  record.effective_sm_mhz = sm_mhz;
  return record;
}

// A measurement whose numbers depend on the clock, so rows can be told apart.
inline Measurement measurement_at(int sm_mhz) {
  Measurement m;
  m.name = "resnet50";
  m.duration_s = 2.0 + 1000.0 / sm_mhz;
  m.iterations = 20;
  m.items = 20 * 64;
  m.energy_j = 250.0 * m.duration_s;
  m.energy_integrated_j = 249.5 * m.duration_s;
  m.mean_power_w = 250.0;
  m.peak_power_w = 280.0;
  m.sm_mhz_mean = sm_mhz - 0.5;
  m.sm_mhz_min = sm_mhz - 15;
  m.mem_mhz_mean = 877.0;
  m.temperature_c_min = 41.0;
  m.temperature_c_max = 63.5;
  m.throttle_fraction = {{"sw_power_cap", 0.25}};
  m.samples = 40;
  m.flags.power_throttle = true;
  return m;
}

}  // namespace dvfslab::testing
