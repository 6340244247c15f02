// The JavaScript that turns the report's data (columns per group, shared templates)
// into each figure's Vega-Lite specification: used by the page and by the figure
// files' renderer alike, so both draw the same charts.
#include "report/figure_spec_script.hpp"

namespace dvfslab::report_detail {

std::string_view figure_spec_script() {
  return R"js(
// Each group's points arrive as columns (see report/figures.hpp); the charts want one
// record per point.
// Legends sort by the labels' rank in numeric order ("batch 128" before "batch 1024").
function dvfslabNumericRanks(labels) {
  const collator = new Intl.Collator('en', {numeric: true});
  const order = labels.map((_, i) => i).sort((a, b) => collator.compare(labels[a], labels[b]));
  const ranks = new Array(labels.length);
  order.forEach((label, rank) => { ranks[label] = rank; });
  return ranks;
}

function dvfslabRecords(group) {
  const c = group.columns, labels = group.labels, records = [];
  const knob = (value) => (value === null ? '-' : String(value));
  const rank = dvfslabNumericRanks(labels);
  for (let i = 0; i < c.time_s.length; ++i) {
    records.push({
      batch: labels[c.batch[i]], series: labels[c.series[i]], memory_series: labels[c.memory_series[i]],
      batch_rank: rank[c.batch[i]], series_rank: rank[c.series[i]], memory_series_rank: rank[c.memory_series[i]],
      outside: c.outside ? c.outside[i] === 1 : false,
      marker_sm_mhz: c.marker_sm_mhz ? c.marker_sm_mhz[i] : c.sm_mhz[i],
      marker_mem_mhz: c.marker_mem_mhz ? c.marker_mem_mhz[i] : c.mem_mhz[i],
      clip_note: c.clip_note && c.clip_note[i] !== null ? labels[c.clip_note[i]] : null,
      sm_mhz: c.sm_mhz[i], mem_mhz: c.mem_mhz[i], power_limit_w: c.power_limit_w[i],
      setting: knob(c.sm_mhz[i]) + '/' + knob(c.mem_mhz[i]) + '/' + knob(c.power_limit_w[i]),
      time_s: c.time_s[i], power_w: c.power_w[i], throughput: c.throughput[i],
      energy_per_item_j: c.energy_per_item_j[i], repetitions: c.repetitions[i],
      pareto: c.pareto[i] === 1, baseline: c.baseline[i] === 1, optimum: c.optimum[i] === 1,
      probe: c.probe[i],
      predicted: c.predicted_energy ? c.predicted_energy[i] : null,
      predicted_low: c.predicted_energy ? c.predicted_energy_low[i] : null,
      predicted_high: c.predicted_energy ? c.predicted_energy_high[i] : null});
    // Each mean's 95 % interval, where it has one: the error bars' ends.
    const record = records[records.length - 1];
    for (const metric of ['time_s', 'power_w', 'throughput', 'energy_per_item_j']) {
      const halfWidth = c[metric + '_ci'] ? c[metric + '_ci'][i] : null;
      record[metric + '_low'] = halfWidth === null ? null : record[metric] - halfWidth;
      record[metric + '_high'] = halfWidth === null ? null : record[metric] + halfWidth;
    }
  }
  return records;
}

// The data of the figures across cases (report/normalised_data.hpp): every column
// as a field, label columns as their texts (with <column>_rank for numeric legend
// order), and each <field>_ci half-width as <field>_low and <field>_high.
function dvfslabColumnRecords(group) {
  const c = group.columns, labels = group.labels, rank = dvfslabNumericRanks(labels);
  const labelled = new Set(group.label_columns), names = Object.keys(c), records = [];
  const count = names.length === 0 ? 0 : c[names[0]].length;
  for (let i = 0; i < count; ++i) {
    const record = {};
    for (const name of names) {
      const value = c[name][i];
      if (labelled.has(name)) {
        record[name] = value === null ? null : labels[value];
        record[name + '_rank'] = value === null ? null : rank[value];
      } else if (!name.endsWith('_ci')) {
        record[name] = value;
      }
    }
    for (const name of names.filter((n) => n.endsWith('_ci'))) {
      const field = name.slice(0, -3), halfWidth = c[name][i];
      record[field + '_low'] = halfWidth === null ? null : record[field] - halfWidth;
      record[field + '_high'] = halfWidth === null ? null : record[field] + halfWidth;
    }
    records.push(record);
  }
  return records;
}


// Every group's records, by data set name.
function dvfslabDatasets(data) {
  const datasets = {};
  for (const group of data.groups)
    datasets[group.name] = group.label_columns ? dvfslabColumnRecords(group) : dvfslabRecords(group);
  return datasets;
}

// One figure's full Vega-Lite specification: charts of one kind share a template,
// each adds its title and data set, and a figure of some of its data set's points
// (one case, one network) selects them first.
function dvfslabFigureSpec(data, figure, datasets) {
  const spec = JSON.parse(JSON.stringify(data.templates[figure.template]));
  spec.title = figure.title;
  spec.data = {name: figure.data};
  if (figure.select) spec.transform = [{filter: figure.select}, ...(spec.transform || [])];
  spec.datasets = {[figure.data]: datasets[figure.data]};
  return spec;
}
)js";
}

}  // namespace dvfslab::report_detail
