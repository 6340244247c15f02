// Keeping a tuned job in the database: its probe windows as measurements (so that
// `analyze` and `report` read them like a sweep's), the whole report beside them.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <utility>

#include "dvfslab/store.hpp"
#include "dvfslab/tune_job.hpp"

namespace dvfslab {

std::string tune_phase_workload(const std::string& job, int phase) {
  return fmt::format("tune:{} phase {}", job, phase);
}

std::int64_t store_tune_report(Store& store, const GpuIdentity& gpu, const std::string& job,
                               const TuneReport& report) {
  RunInfo run;
  run.source = "dvfslab tune";
  run.gpu = gpu;
  run.plan_text = "# dvfslab tune report (docs/tune.md)\n" + to_json(report).dump(2);
  run.plan_hash = plan_hash(run.plan_text);
  const std::int64_t run_id = store.begin_run(run);
  // Each phase is a case of its own (phases are different work, whose figures must
  // not be averaged together); a setting probed again in a phase is its next repetition.
  std::map<std::pair<int, Setting>, int> windows_of_setting;
  int order = 0;
  for (const ProbeRecord& probe : report.probes) {
    PointRecord record;
    const int repetition = windows_of_setting[{probe.phase, probe.setting}]++;
    record.point = Point{Case{tune_phase_workload(job, probe.phase), 1, Mode::train, Precision::fp32},
                         probe.setting, repetition};
    record.order_index = order++;
    record.is_default = probe.setting.is_default();
    record.item_unit = probe.figures.items > 0 ? "items" : "iterations";
    Measurement m;
    m.name = "probe";
    m.duration_s = probe.figures.duration_s;
    m.energy_j = probe.figures.energy_j;
    m.iterations = probe.figures.iterations;
    m.items = probe.figures.items > 0 ? probe.figures.items : static_cast<double>(probe.figures.iterations);
    if (probe.figures.duration_s > 0) m.mean_power_w = probe.figures.energy_j / probe.figures.duration_s;
    store.record(run_id, record, m);
  }
  store.finish_run(run_id);
  return run_id;
}

}  // namespace dvfslab
