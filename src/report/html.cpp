// The self-contained HTML report: tables, charts, data and the Vega runtimes in
// one file that works offline.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "dvfslab/output_file.hpp"
#include "dvfslab/report.hpp"
#include "report/escape.hpp"
#include "report/figure_spec_script.hpp"
#include "report/figures.hpp"
#include "report/page_data.hpp"
#include "report/scripts.hpp"

namespace dvfslab {
namespace {

using report_detail::html_escape;

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { margin-bottom: 0.2rem; }
.meta { color: #555; margin-top: 0; }
.simulated-banner { background: #fff3cd; border: 1px solid #e0b400; padding: 0.5rem 0.8rem; font-weight: 600; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
th { background: #f3f3f3; }
section { border-top: 2px solid #ddd; margin-top: 1.5rem; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; }
.tag { color: #a05a00; font-weight: 700; }
#dvfslab-status { color: #b00020; font-weight: 600; }
)css";

// Records every error before the runtimes load, so the page (and its browser test)
// can report scripts that fail.
constexpr std::string_view kErrorCapture = R"js(
window.dvfslabErrors = [];
window.addEventListener('error', (event) => window.dvfslabErrors.push(String(event.message)));
window.addEventListener('unhandledrejection', (event) => window.dvfslabErrors.push(String(event.reason)));
const dvfslabConsoleError = console.error.bind(console);
console.error = (...parts) => { window.dvfslabErrors.push(parts.join(' ')); dvfslabConsoleError(...parts); };
)js";

// Runs after report/figure_spec_script.cpp's functions.
constexpr std::string_view kRender = R"js(
// The page's interval control sets `show_intervals` on every chart that draws error
// bars; data-shown says which state every chart has finished drawing.
function dvfslabIntervalControl(views) {
  const control = document.getElementById('dvfslab-intervals');
  if (!control) return;
  control.addEventListener('change', async () => {
    const shown = control.checked;
    for (const view of views) await view.signal('show_intervals', shown).runAsync();
    control.dataset.shown = String(shown);
  });
  control.dataset.shown = String(control.checked);
}

(async () => {
  const status = document.getElementById('dvfslab-status');
  const data = JSON.parse(document.getElementById('dvfslab-data').textContent);
  const datasets = dvfslabDatasets(data);
  let rendered = 0;
  const intervalViews = [];
  for (const figure of data.figures) {
    try {
      const spec = dvfslabFigureSpec(data, figure, datasets);
      const embedded = await vegaEmbed('#' + figure.id, spec, {
        mode: 'vega-lite', renderer: 'svg',
        actions: {export: true, source: false, compiled: false, editor: false}});
      if ((spec.params || []).some((param) => param.name === 'show_intervals')) intervalViews.push(embedded.view);
      rendered += 1;
    } catch (error) {
      window.dvfslabErrors.push(figure.id + ': ' + error);
    }
  }
  dvfslabIntervalControl(intervalViews);
  status.dataset.rendered = String(rendered);
  status.dataset.errors = String(window.dvfslabErrors.length);
  status.dataset.done = 'true';
  if (window.dvfslabErrors.length > 0) status.textContent = 'Chart errors: ' + window.dvfslabErrors.join('; ');
})();
)js";

std::string figures_html(const report_detail::FigureGroup& group) {
  std::string html = "<div class=\"figures\">\n";
  for (const auto& figure : group.figures)
    html += fmt::format("<div class=\"figure\" id=\"{}\"></div>\n", figure.id);
  return html + "</div>\n";
}

std::string knob_text(const std::optional<int>& value) { return value ? std::to_string(*value) : "-"; }

std::string setting_text(const Setting& s) {
  return fmt::format("{}/{}/{}", knob_text(s.sm_mhz), knob_text(s.mem_mhz), knob_text(s.power_limit_w));
}

std::string percent_text(const std::optional<double>& value) {
  return value ? fmt::format("{:+.1f} %", *value) : "-";
}

std::string summary_table(const Analysis& analysis) {
  std::string html =
      "<table><tr><th>GPU</th><th>Source</th><th>Mode</th><th>Cases</th><th>Networks</th><th>Energy saving "
      "range</th>"
      "<th>Geomean saving</th><th>Geomean time change</th><th>Geomean power change</th></tr>\n";
  for (const GpuModeSummary& s : analysis.summary) {
    const auto& means = s.across_workloads;
    html += fmt::format(
        "<tr><td>{}{}</td><td class=\"text\">{}</td><td "
        "class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        s.simulated ? "<span class=\"tag\">SIMULATED</span> " : "", html_escape(s.gpu), html_escape(s.source),
        to_string(s.mode),
        s.cases_without_optimum > 0 ? fmt::format("{} ({} without optimum)", s.cases, s.cases_without_optimum)
                                    : std::to_string(s.cases),
        s.workloads,
        s.energy_saving_min_pct
            ? fmt::format("{:.1f}–{:.1f} %", *s.energy_saving_min_pct, *s.energy_saving_max_pct)
            : "-",
        means ? percent_text(means->energy_saving_pct) : "-",
        means ? percent_text(means->time_change_pct) : "-",
        means ? percent_text(means->power_change_pct) : "-");
  }
  return html + "</table>\n";
}

std::string cases_table(const report_detail::FigureGroup& group) {
  std::string html =
      "<table><tr><th>Batch</th><th>Settings</th><th>Baseline</th><th>Optimum</th><th>Energy saving</th>"
      "<th>Time change</th><th>Power change</th><th>Energy per item at optimum (J)</th></tr>\n";
  for (const CaseAnalysis* c : group.cases) {
    const int batch = c->key.workload_case.batch;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{} "
        "({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        batch > 0 ? std::to_string(batch) : "-", c->points.size(),
        setting_text(c->points[c->baseline].setting), to_string(c->baseline_kind),
        c->optimum ? setting_text(c->points[*c->optimum].setting) : "none meets the objective",
        percent_text(c->energy_saving_pct), percent_text(c->time_change_pct),
        percent_text(c->power_change_pct),
        c->optimum ? fmt::format("{:.4g}", c->points[*c->optimum].energy_per_item_j.mean) : "-");
  }
  return html + "</table>\n";
}

// A search's probes of the group's cases, in the order measured; "" when none was searched.
std::string probes_table(const report_detail::FigureGroup& group,
                         const std::map<std::pair<CaseKey, Setting>, int>& probe_order) {
  std::string rows;
  for (const CaseAnalysis* c : group.cases) {
    std::vector<std::pair<int, const PointSummary*>> probed;
    for (const PointSummary& point : c->points) {
      if (const auto it = probe_order.find({c->key, point.setting}); it != probe_order.end())
        probed.emplace_back(it->second, &point);
    }
    std::sort(probed.begin(), probed.end());
    const int batch = c->key.workload_case.batch;
    for (const auto& [order, point] : probed) {
      rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4g}</td></tr>\n",
                          batch > 0 ? std::to_string(batch) : "-", order, setting_text(point->setting),
                          point->repetitions, point->energy_per_item_j.mean);
    }
  }
  if (rows.empty()) return "";
  return "<p>Search probes, in the order measured (the numbers on the charts' points):</p>\n<table "
         "class=\"probes\"><tr><th>Batch</th><th>Probe</th><th>Setting</th><th>Repetitions</th><th>Energy "
         "per "
         "item (J)</th></tr>\n" +
         rows + "</table>\n";
}

// Whether any chart has error bars to show: some point was measured more than once.
bool has_intervals(const std::vector<report_detail::FigureGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(), [](const report_detail::FigureGroup& group) {
    return group.data["columns"].contains("energy_per_item_j_ci") ||
           group.data["columns"].contains("energy_ratio_ci");
  });
}

nlohmann::json raw_row_json(const ResultRow& row) {
  const Case& wc = row.workload_case;
  return {{"source", row.source},
          {"gpu", row.gpu},
          {"simulated", row.simulated},
          {"workload", wc.workload},
          {"batch", wc.batch},
          {"mode", to_string(wc.mode)},
          {"precision", to_string(wc.precision)},
          {"setting", setting_text(row.setting)},
          {"repetition", row.repetition},
          {"default", row.is_default},
          {"time_per_iteration_s", row.time_per_iteration_s},
          {"items_per_iteration", row.items_per_iteration},
          {"mean_power_w", row.mean_power_w},
          {"energy_per_iteration_j", row.energy_per_iteration_j}};
}

std::string raw_rows_section(const HtmlReportOptions& options) {
  std::string html = fmt::format(
      "<section>\n<details id=\"raw-rows\"><summary>Measured rows: the first {} of {} (the charts and tables "
      "use "
      "every row)</summary>\n<table><tr><th>GPU</th><th>Workload</th><th>Batch</th><th>Setting</th>"
      "<th>Repetition</th><th>Time per iteration (s)</th><th>Mean power (W)</th><th>Energy per iteration "
      "(J)</th>"
      "</tr>\n",
      options.raw_rows.size(), std::max(options.measured_rows, options.raw_rows.size()));
  for (const ResultRow& row : options.raw_rows) {
    html += fmt::format(
        "<tr><td>{}{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.6g}</td>"
        "<td>{:.6g}</td><td>{:.6g}</td></tr>\n",
        row.simulated ? "<span class=\"tag\">SIMULATED</span> " : "", html_escape(row.gpu),
        html_escape(row.workload_case.workload),
        row.workload_case.batch > 0 ? std::to_string(row.workload_case.batch) : "-",
        setting_text(row.setting), row.repetition, row.time_per_iteration_s, row.mean_power_w,
        row.energy_per_iteration_j);
  }
  return html + "</table>\n</details>\n</section>\n";
}

}  // namespace

std::string render_html_report(const Analysis& analysis, const HtmlReportOptions& options) {
  const auto scripts = report_detail::required_report_scripts();
  const auto groups = report_detail::report_figure_groups(analysis, options);
  const bool any_simulated = std::any_of(analysis.cases.begin(), analysis.cases.end(),
                                         [](const CaseAnalysis& c) { return c.key.simulated; });
  std::size_t settings = 0;
  for (const CaseAnalysis& c : analysis.cases) settings += c.points.size();
  const bool detailed = settings <= max_report_detailed_points;

  std::size_t figure_count = 0;
  for (const auto& group : groups) figure_count += group.figures.size();
  nlohmann::json templates = nlohmann::json::array();
  nlohmann::json data = {{"figures", report_detail::figures_json(groups, templates)},
                         {"templates", std::move(templates)},
                         {"groups", report_detail::groups_json(groups)},
                         {"analysis", to_json(analysis, detailed)}};
  if (!options.raw_rows.empty()) {
    nlohmann::json raw = nlohmann::json::array();
    for (const ResultRow& row : options.raw_rows) raw.push_back(raw_row_json(row));
    data["raw_rows"] = std::move(raw);
  }

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>dvfslab report{}</title>\n", any_simulated ? " (SIMULATED data)" : "");
  html += fmt::format("<style>{}</style>\n<script>{}</script>\n", kStyle, kErrorCapture);
  for (const auto& script : scripts) {
    html += fmt::format("<script data-runtime=\"{}\">{}</script>\n", html_escape(script.name),
                        report_detail::javascript_for_script(script.text));
  }
  html += "</head>\n<body>\n<h1>dvfslab report</h1>\n";
  html += fmt::format(
      "<p class=\"meta\">dvfslab {} · objective <b>{}</b> · {} cases · {} settings · {} charts. Each point "
      "is one "
      "setting, the mean of its repetitions. Settings are written core MHz / memory MHz / power limit W; '-' "
      "= not "
      "controlled. Each chart's menu exports SVG or PNG.{}</p>\n",
      DVFSLAB_VERSION, html_escape(to_string(analysis.objective)), analysis.cases.size(), settings,
      figure_count,
      detailed ? ""
               : fmt::format(" The page's data lists no per-setting statistics above {} settings: `dvfslab "
                             "analyze --json --points` gives them.",
                             max_report_detailed_points));
  if (any_simulated) {
    html +=
        "<p class=\"simulated-banner\">This report contains SIMULATED data: numbers from a simulated GPU, "
        "not "
        "measurements. Those charts and rows say SIMULATED.</p>\n";
  }
  html += fmt::format("<div id=\"dvfslab-status\" data-expected=\"{}\"></div>\n", figure_count);
  if (has_intervals(groups)) {
    html +=
        "<p class=\"controls\"><label><input type=\"checkbox\" id=\"dvfslab-intervals\" checked> error "
        "bars: the 95 % confidence interval of each mean over its repetitions</label></p>\n";
  }
  html += "<h2>Summary per GPU × mode</h2>\n" + summary_table(analysis);
  for (const auto& group : groups) {
    if (group.kind == "summary") html += figures_html(group);
  }
  for (const auto& group : groups) {
    if (group.kind == "summary") continue;
    if (group.kind == "normalised") {
      html += fmt::format("<section class=\"normalised\">\n<h2>{}{}</h2>\n",
                          group.simulated ? "<span class=\"tag\">SIMULATED</span> " : "",
                          html_escape(group.heading));
      for (const auto& note : group.notes) html += "<p class=\"note\">" + html_escape(note) + "</p>\n";
      html += figures_html(group) + "</section>\n";
      continue;
    }
    html += fmt::format("<section>\n<h2>{}{}</h2>\n",
                        group.simulated ? "<span class=\"tag\">SIMULATED</span> " : "",
                        html_escape(group.heading));
    html +=
        cases_table(group) + probes_table(group, options.probe_order) + figures_html(group) + "</section>\n";
  }
  if (!options.raw_rows.empty()) html += raw_rows_section(options);
  html += fmt::format("<script type=\"application/json\" id=\"dvfslab-data\">{}</script>\n",
                      report_detail::json_for_script(data));
  html += fmt::format("<script>{}{}</script>\n</body>\n</html>\n",
                      report_detail::javascript_for_script(report_detail::figure_spec_script()), kRender);
  return html;
}

void write_html_report(const Analysis& analysis, const std::filesystem::path& path,
                       const std::vector<std::filesystem::path>& inputs, const HtmlReportOptions& options) {
  const std::string html = render_html_report(analysis, options);
  OutputFile out(path, inputs);
  out.stream() << html;
  out.commit();
}

}  // namespace dvfslab
