// Groups measured rows into cases and settings and summarises each setting over
// its repetitions. Built for millions of rows: one hash lookup per row to find its
// case, then one sort of compact integer keys, then a linear pass.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

// A case key that borrows its strings from the rows, so interning costs no copies.
struct CaseKeyRef {
  std::string_view source;
  std::string_view gpu;
  std::string_view workload;
  bool simulated;
  int batch;
  Mode mode;
  Precision precision;

  bool operator==(const CaseKeyRef&) const = default;
};

CaseKeyRef key_of(const ResultRow& row) {
  const Case& c = row.workload_case;
  return {row.source, row.gpu, c.workload, row.simulated, c.batch, c.mode, c.precision};
}

struct CaseKeyRefHash {
  std::size_t operator()(const CaseKeyRef& key) const noexcept {
    std::size_t hash = std::hash<std::string_view>{}(key.source);
    const auto mix = [&hash](std::size_t value) {
      hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
    };
    mix(std::hash<std::string_view>{}(key.gpu));
    mix(std::hash<std::string_view>{}(key.workload));
    mix(static_cast<std::size_t>(key.batch));
    mix(static_cast<std::size_t>(key.simulated) | (static_cast<std::size_t>(key.mode) << 1) |
        (static_cast<std::size_t>(key.precision) << 3));
    return hash;
  }
};

// An absent knob ranks above every value (see setting_order_before); negating
// makes ascending integer order the setting order.
std::int64_t order_value(const std::optional<int>& knob) {
  return knob ? -static_cast<std::int64_t>(*knob) : -static_cast<std::int64_t>(INT_MAX) - 1;
}

struct SortEntry {
  std::uint32_t case_rank;
  std::int64_t sm;
  std::int64_t mem;
  std::int64_t power_limit;
  std::int64_t profile;  // -1 without one: before any profile, as in setting_order_before
  int repetition;
  std::uint32_t row;

  auto tie() const { return std::tie(case_rank, sm, mem, power_limit, profile, repetition, row); }
  bool same_point(const SortEntry& other) const {
    return case_rank == other.case_rank && sm == other.sm && mem == other.mem &&
           power_limit == other.power_limit && profile == other.profile;
  }
};

void validate(const ResultRow& row, std::size_t index) {
  const auto where = [&] {
    return fmt::format("row {} ({} on {}, {})", index + 1, to_string(row.workload_case), row.gpu,
                       to_string(row.setting));
  };
  if (!(row.time_per_iteration_s > 0) || !std::isfinite(row.time_per_iteration_s)) {
    throw ConfigError(
        fmt::format("{}: time per iteration is {} s; it must be a positive number — fix or drop the row",
                    where(), row.time_per_iteration_s));
  }
  if (!(row.items_per_iteration > 0) || !std::isfinite(row.items_per_iteration)) {
    throw ConfigError(
        fmt::format("{}: items per iteration is {}; it must be positive", where(), row.items_per_iteration));
  }
  if (!(row.mean_power_w >= 0) || !std::isfinite(row.mean_power_w) || !(row.energy_per_iteration_j >= 0) ||
      !std::isfinite(row.energy_per_iteration_j)) {
    throw ConfigError(fmt::format("{}: power {} W / energy {} J must be finite and not negative", where(),
                                  row.mean_power_w, row.energy_per_iteration_j));
  }
}

// Per-repetition samples of one setting, reused between settings to avoid allocations.
struct Samples {
  std::vector<double> time, throughput, power, energy, energy_per_item, edp, ed2p;

  void clear() {
    for (auto* samples : {&time, &throughput, &power, &energy, &energy_per_item, &edp, &ed2p})
      samples->clear();
  }
  void add(const ResultRow& row) {
    const double t = row.time_per_iteration_s;
    const double e = row.energy_per_iteration_j;
    time.push_back(t);
    throughput.push_back(row.items_per_iteration / t);
    power.push_back(row.mean_power_w);
    energy.push_back(e);
    energy_per_item.push_back(e / row.items_per_iteration);
    edp.push_back(e * t);
    ed2p.push_back(e * t * t);
  }
};

PointSummary summarize(const std::vector<ResultRow>& rows, const SortEntry* begin, const SortEntry* end,
                       Samples& samples) {
  samples.clear();
  PointSummary point;
  point.setting = rows[begin->row].setting;
  double sm_sum = 0.0;
  int sm_count = 0;
  for (const SortEntry* entry = begin; entry != end; ++entry) {
    const ResultRow& row = rows[entry->row];
    samples.add(row);
    point.is_default = point.is_default || row.is_default;
    if (row.sm_mhz_mean) {
      sm_sum += *row.sm_mhz_mean;
      ++sm_count;
    }
    point.flags |= row.flags;
  }
  point.repetitions = static_cast<int>(end - begin);
  if (sm_count > 0) point.sm_mhz_mean = sm_sum / sm_count;
  point.time_per_iteration_s = estimate(samples.time);
  point.throughput_items_per_s = estimate(samples.throughput);
  point.mean_power_w = estimate(samples.power);
  point.energy_per_iteration_j = estimate(samples.energy);
  point.energy_per_item_j = estimate(samples.energy_per_item);
  point.edp_j_s = estimate(samples.edp);
  point.ed2p_j_s2 = estimate(samples.ed2p);
  return point;
}

// Adds to `runs` (kept sorted and unique) the runs of rows that repeat another
// run's repetition of the point: the entries are sorted by repetition, so such
// rows are neighbours.
void note_overlapping_runs(const std::vector<ResultRow>& rows, const SortEntry* begin, const SortEntry* end,
                           std::vector<std::int64_t>& runs) {
  const auto note = [&runs](std::int64_t run) {
    const auto at = std::lower_bound(runs.begin(), runs.end(), run);
    if (at == runs.end() || *at != run) runs.insert(at, run);
  };
  for (const SortEntry* entry = begin + 1; entry < end; ++entry) {
    const std::int64_t run = rows[entry->row].run_id;
    const std::int64_t previous_run = rows[(entry - 1)->row].run_id;
    if (entry->repetition == (entry - 1)->repetition && run != previous_run && run != 0 &&
        previous_run != 0) {
      note(previous_run);
      note(run);
    }
  }
}

}  // namespace

std::vector<CaseAnalysis> summarize_points(const std::vector<ResultRow>& rows) {
  if (rows.size() > UINT32_MAX) throw ConfigError("more than 4 billion rows: analyze them in parts");

  // Intern cases; consecutive rows usually share one, so check the last first.
  std::unordered_map<CaseKeyRef, std::uint32_t, CaseKeyRefHash> case_ids;
  std::vector<std::uint32_t> first_row_of_case;
  std::vector<std::uint32_t> case_of_row(rows.size());
  std::optional<CaseKeyRef> last_key;
  std::uint32_t last_id = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    validate(rows[i], i);
    const CaseKeyRef key = key_of(rows[i]);
    if (!last_key || !(key == *last_key)) {
      const auto [it, inserted] =
          case_ids.try_emplace(key, static_cast<std::uint32_t>(first_row_of_case.size()));
      if (inserted) first_row_of_case.push_back(static_cast<std::uint32_t>(i));
      last_key = key;
      last_id = it->second;
    }
    case_of_row[i] = last_id;
  }

  // Rank cases by their full key so the output order does not depend on row order.
  std::vector<std::uint32_t> ids(first_row_of_case.size());
  for (std::uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
  const auto full_key = [&](std::uint32_t id) {
    const ResultRow& row = rows[first_row_of_case[id]];
    return CaseKey{row.source, row.gpu, row.simulated, row.workload_case};
  };
  std::vector<CaseKey> keys;
  keys.reserve(ids.size());
  for (std::uint32_t id : ids) keys.push_back(full_key(id));
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  std::vector<std::uint32_t> rank_of_id(ids.size());
  for (std::uint32_t rank = 0; rank < ids.size(); ++rank) rank_of_id[ids[rank]] = rank;

  std::vector<SortEntry> entries(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Setting& s = rows[i].setting;
    entries[i] = {rank_of_id[case_of_row[i]],
                  order_value(s.sm_mhz),
                  order_value(s.mem_mhz),
                  order_value(s.power_limit_w),
                  s.workload_profile ? *s.workload_profile : -1,
                  rows[i].repetition,
                  static_cast<std::uint32_t>(i)};
  }
  std::sort(entries.begin(), entries.end(),
            [](const SortEntry& a, const SortEntry& b) { return a.tie() < b.tie(); });

  std::vector<CaseAnalysis> cases(ids.size());
  for (std::uint32_t rank = 0; rank < ids.size(); ++rank) {
    cases[rank].key = std::move(keys[ids[rank]]);
    cases[rank].item_unit = rows[first_row_of_case[ids[rank]]].item_unit;
  }
  Samples samples;
  const SortEntry* const all_end = entries.data() + entries.size();
  for (const SortEntry* begin = entries.data(); begin != all_end;) {
    const SortEntry* end = begin;
    while (end != all_end && end->same_point(*begin)) ++end;
    CaseAnalysis& analysis = cases[begin->case_rank];
    analysis.points.push_back(summarize(rows, begin, end, samples));
    note_overlapping_runs(rows, begin, end, analysis.overlapping_runs);
    begin = end;
  }
  return cases;
}

PointSummary per_item_summary(const Setting& setting, const std::vector<double>& energy_per_item_j,
                              double items_per_s, double mean_power_w) {
  PointSummary point;
  point.setting = setting;
  point.is_default = setting.is_default();
  point.repetitions = static_cast<int>(energy_per_item_j.size());
  point.energy_per_item_j = estimate(energy_per_item_j);
  const double energy = point.energy_per_item_j.mean;
  const double time = items_per_s > 0 ? 1.0 / items_per_s : 0.0;
  point.time_per_iteration_s.mean = time;
  point.throughput_items_per_s.mean = items_per_s;
  point.energy_per_iteration_j.mean = energy;
  point.edp_j_s.mean = energy * time;
  point.ed2p_j_s2.mean = energy * time * time;
  point.mean_power_w.mean = mean_power_w;
  return point;
}

}  // namespace dvfslab
