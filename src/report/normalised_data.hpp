#pragma once
// The data of the figures that compare cases on one scale: each point relative to its
// case's default setting (default = 1.0), and the summary of every network's optimum
// against its default. Laid out like a group's data (report/figures.hpp): texts in
// `labels`, one column per field, and `label_columns` naming the columns that hold
// indices into `labels`.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "report/figure_shape.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {

// "resnet50 fp32": one network, whose modes and batch sizes one overlaid figure compares.
std::string network_label(const CaseAnalysis& c);
// "resnet50 train fp32 · batch 64": one case.
std::string case_label(const CaseAnalysis& c);

struct NormalisedData {
  // Per point of every case with a measured default: case, network and series (labels),
  // x and marker_x (the network's varied knob, and where a marker stands), the ratios
  // energy_ratio, time_ratio, power_ratio to the case's default and their intervals'
  // half-widths (<ratio>_ci, where measured more than once), baseline, optimum and
  // pareto (0 or 1), and where points are off the knob's axis: outside and the notes
  // network_clip_note, case_clip_note and gpu_clip_note, each on the first point of the
  // figure that needs it.
  nlohmann::json data;
  std::vector<const CaseAnalysis*> cases;  // those plotted, in the order given
  std::map<std::string, Knob> network_knob;
  // The cases without a measured default (a sweep that never ran the vendor default):
  // dividing by another setting would put a different 1.0 on the same axis.
  std::vector<std::string> left_out;
};

// The cases of one GPU. A case's baseline counts as its default only where a
// measurement was marked as the vendor default (BaselineKind::vendor_default); a
// case of one setting, its default, is not plotted (it would be 1.0 everywhere).
// `probe_order` (HtmlReportOptions::probe_order) lets a note call the points it
// leaves out probes, as the other charts' notes do.
NormalisedData normalised_data(const std::vector<const CaseAnalysis*>& gpu_cases,
                               const MeasuredClocks& measured,
                               const std::map<std::pair<CaseKey, Setting>, int>& probe_order = {});

// One row per GPU × mode × network whose cases have an optimum: row (the label),
// mode, energy_saving_pct and slowdown_pct (the geometric means over its batch sizes,
// WorkloadAggregate::across_batches, as `dvfslab analyze` reports them) and cases.
// Empty columns where no case has an optimum.
nlohmann::json summary_data(const Analysis& analysis);
// The GPU name of every row of the summary, when they share one GPU (a simulated
// GPU and a real one of the same name are two): the rows then leave it out and the
// figure names it once (its title already says SIMULATED).
std::optional<std::string> summary_gpu(const Analysis& analysis);

}  // namespace dvfslab::report_detail
