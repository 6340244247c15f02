#include "report/figure_shape.hpp"

#include <fmt/format.h>

#include <utility>

namespace dvfslab::report_detail {

KnobInfo info(Knob knob) {
  switch (knob) {
    case Knob::sm: return {"sm_mhz", "core clock (MHz)"};
    case Knob::mem: return {"mem_mhz", "memory clock (MHz)"};
    case Knob::power_limit: return {"power_limit_w", "power limit (W)"};
    case Knob::none: return {"setting", "setting"};
  }
  return {"setting", "setting"};
}

std::optional<int> knob_value(const Setting& s, Knob knob) {
  switch (knob) {
    case Knob::sm: return s.sm_mhz;
    case Knob::mem: return s.mem_mhz;
    case Knob::power_limit: return s.power_limit_w;
    case Knob::none: return std::nullopt;
  }
  return std::nullopt;
}

GroupShape shape_of(const std::vector<const CaseAnalysis*>& cases) {
  GroupShape shape;
  for (const CaseAnalysis* c : cases) {
    shape.batches.insert(c->key.workload_case.batch);
    for (const PointSummary& p : c->points) {
      if (p.setting.sm_mhz) shape.sm.insert(*p.setting.sm_mhz);
      if (p.setting.mem_mhz) shape.mem.insert(*p.setting.mem_mhz);
      if (p.setting.power_limit_w) shape.power_limit.insert(*p.setting.power_limit_w);
    }
  }
  // The first knob that varies; else the first that was controlled at all.
  for (std::size_t minimum : {std::size_t{2}, std::size_t{1}}) {
    if (shape.primary != Knob::none) break;
    if (shape.sm.size() >= minimum)
      shape.primary = Knob::sm;
    else if (shape.power_limit.size() >= minimum)
      shape.primary = Knob::power_limit;
    else if (shape.mem.size() >= minimum)
      shape.primary = Knob::mem;
  }
  shape.memory_figures = shape.primary == Knob::sm && shape.sm.size() >= 2 && shape.mem.size() >= 2;
  return shape;
}

std::string batch_label(int batch) { return batch > 0 ? std::to_string(batch) : "-"; }

std::string series_label(const GroupShape& shape, int batch, const Setting& s, Knob x) {
  std::string label;
  const auto add = [&label](const std::string& part) { label += (label.empty() ? "" : " · ") + part; };
  if (shape.batches.size() > 1) add("batch " + batch_label(batch));
  // A knob left uncontrolled has no number to show: "mem not set", not "mem - MHz".
  const auto knob_part = [](const char* name, const std::optional<int>& value, const char* unit) {
    return value ? fmt::format("{} {} {}", name, *value, unit) : fmt::format("{} not set", name);
  };
  if (x != Knob::sm && shape.sm.size() > 1) add(knob_part("core", s.sm_mhz, "MHz"));
  if (x != Knob::mem && shape.mem.size() > 1) add(knob_part("mem", s.mem_mhz, "MHz"));
  if (x != Knob::power_limit && shape.power_limit.size() > 1) add(knob_part("limit", s.power_limit_w, "W"));
  return label.empty()
             ? (shape.batches.size() == 1 && batch_label(batch) != "-" ? "batch " + batch_label(batch)
                                                                       : "measured")
             : label;
}

SeriesStyle series_style(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape, Knob x) {
  SeriesStyle style;
  std::set<std::string> labels;
  for (const CaseAnalysis* c : cases) {
    for (const PointSummary& p : c->points)
      labels.insert(series_label(shape, c->key.workload_case.batch, p.setting, x));
  }
  style.count = labels.size();
  std::size_t most = 1;
  for (const auto& [knob, values] : {std::pair{Knob::sm, &shape.sm}, std::pair{Knob::mem, &shape.mem},
                                     std::pair{Knob::power_limit, &shape.power_limit}}) {
    if (knob != x && values->size() > most) {
      most = values->size();
      style.knob = knob;
    }
  }
  return style;
}

}  // namespace dvfslab::report_detail
