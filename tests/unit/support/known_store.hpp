#pragma once
// A small database whose every byte of export is known: two sweep runs (one with a
// drift check, throttle reasons that differ between rows, absent values, a name
// that needs CSV quoting) and one import run, with the time stamps, host and
// version pinned so the export can be compared with tests/data/export/.
#include <filesystem>

#include "dvfslab/store.hpp"
#include "store/sqlite.hpp"
#include "unit/store_fixtures.hpp"

namespace dvfslab::testing {

inline void write_known_store(const std::filesystem::path& path) {
  Store store(path);
  const std::int64_t first = store.begin_run(sweep_run());
  store.record(first, point_record(1005, 0, 0), measurement_at(1005));
  Measurement hot = measurement_at(1380);
  hot.throttle_fraction = {{"sw_thermal_slowdown", 0.5}, {"hw_slowdown", 0.125}};
  hot.peak_power_w.reset();
  hot.temperature_c_min.reset();
  hot.flags.thermal_throttle = true;
  store.record(first, point_record(1380, 0, 1), hot);
  PointRecord drift = point_record(1380, 0, 2);
  drift.role = RecordRole::drift;
  drift.is_default = true;
  store.record(first, drift, measurement_at(1380));
  store.finish_run(first);

  RunInfo other = sweep_run("[plan]\nname = \"a, \\\"quoted\\\" plan\"\n");
  other.source = "lab, \"B\"";
  other.gpu.simulated = false;
  const std::int64_t second = store.begin_run(other);
  PointRecord odd = point_record(945, 1, 0);
  odd.point.workload_case = Case{"bert, \"large\"", 8, Mode::infer, Precision::fp16};
  odd.point.setting.mem_mhz = 877;
  odd.point.setting.power_limit_w = 250;
  odd.effective_sm_mhz.reset();
  Measurement plain;
  plain.name = "bert";
  plain.duration_s = 1.0 / 3.0;
  plain.iterations = 0;
  plain.items = 0.1;
  plain.samples = 0;
  store.record(second, odd, plain);

  RunInfo imported = sweep_run("import");
  imported.kind = RunKind::import;
  imported.source = "published";
  imported.gpu.backend = "import";
  const std::int64_t third = store.begin_run(imported);
  store.finish_run(third, RunStatus::interrupted);

  store.connection().execute(
      "UPDATE runs SET started_at = '2026-01-02T03:04:05Z', host = 'known-host', dvfslab_version = "
      "'0.0.0-test';"
      "UPDATE runs SET finished_at = '2026-01-02T04:05:06Z' WHERE finished_at IS NOT NULL;"
      "UPDATE measurements SET recorded_at = '2026-01-02T03:30:00Z'");
}

}  // namespace dvfslab::testing
