#include "meter/window_book.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dvfslab::meter {

void WindowBook::open(const std::string& name) {
  if (is_open(name) || is_waiting(name))
    throw std::logic_error("meter window '" + name + "' is already open");
  const std::uint64_t order = next_order_++;
  open_.emplace(name, Window{order, totals_.now(), std::nullopt, std::nullopt});
  order_.emplace(order, name);
}

void WindowBook::open_after(const std::string& name, std::int64_t warmup_iterations) {
  if (warmup_iterations <= 0) {
    open(name);
    return;
  }
  if (is_open(name) || is_waiting(name))
    throw std::logic_error("meter window '" + name + "' is already open");
  const std::int64_t done = totals_.now().iterations;
  const std::int64_t most = std::numeric_limits<std::int64_t>::max();
  const std::int64_t opens_at = warmup_iterations > most - done ? most : done + warmup_iterations;
  waiting_.emplace(name, opens_at);
  due_at_.emplace(opens_at, name);
}

Measurement WindowBook::finish(const std::string& name, Measurement m) const {
  m.name = name;
  m.flags.short_window = m.duration_s < 2.0 * sensor_period_s_;
  if (!m.energy_j) {
    m.flags.energy_estimated = true;
    m.energy_error_j.reset();
    if (m.energy_integrated_j) {
      m.energy_j = m.energy_integrated_j;
    } else if (m.peak_power_w) {
      // A single reading: its power held over the window is all there is.
      m.energy_j = *m.peak_power_w * m.duration_s;
    }
    // Power read within a sensor period or two may lag a load that started or
    // stopped since: only the cap bounds what was drawn.
    if (m.flags.short_window && power_cap_w_ && m.energy_j) {
      const double most = *power_cap_w_ * m.duration_s;
      m.energy_j = std::clamp(*m.energy_j, 0.0, most);
      m.energy_error_j = std::max(*m.energy_j, most - *m.energy_j);
    }
  }
  if (m.energy_j && m.duration_s > 0) {
    m.mean_power_w = *m.energy_j / m.duration_s;
  } else {
    m.mean_power_w = m.peak_power_w;
  }
  return m;
}

Measurement WindowBook::close(const std::string& name) {
  const auto it = open_.find(name);
  if (it == open_.end()) throw std::logic_error("meter window '" + name + "' is not open");
  Measurement m = finish(name, totals_.since(it->second.begin));
  order_.erase(it->second.order);
  open_.erase(it);
  return m;
}

void WindowBook::mark(const std::string& name) {
  const auto it = open_.find(name);
  if (it == open_.end()) throw std::logic_error("meter window '" + name + "' is not open");
  it->second.marked = totals_.since(it->second.begin);
  it->second.mark = totals_.now();
}

Measurement WindowBook::close_at_mark(const std::string& name, Measurement* after) {
  const auto it = open_.find(name);
  if (it == open_.end()) throw std::logic_error("meter window '" + name + "' is not open");
  const Window& window = it->second;
  const Snapshot& mark = window.mark ? *window.mark : window.begin;
  Measurement m;
  if (window.marked) {
    m = *window.marked;
    // Both ends with what is known now about when the counter updates.
    if (const auto energy = totals_.energy_between(window.begin, mark)) {
      m.energy_j = energy->energy_j;
      m.energy_error_j = energy->error_j;
    }
  } else {
    m.samples = 1;  // never marked: the window ends where it began
  }
  if (after) *after = finish(name, totals_.since(mark));
  m = finish(name, std::move(m));
  order_.erase(window.order);
  open_.erase(it);
  return m;
}

void WindowBook::clear() {
  open_.clear();
  order_.clear();
  waiting_.clear();
  due_at_.clear();
}

bool WindowBook::is_open(const std::string& name) const { return open_.count(name) > 0; }

bool WindowBook::is_waiting(const std::string& name) const { return waiting_.count(name) > 0; }

std::vector<std::string> WindowBook::open_names() const {
  std::vector<std::string> names;
  names.reserve(order_.size());
  for (const auto& [order, name] : order_) names.push_back(name);
  return names;
}

void WindowBook::add_sample(const Telemetry& sample, SampleKind kind) { totals_.add(sample, kind); }

std::vector<std::string> WindowBook::add_iterations(std::int64_t iterations, double items) {
  totals_.add_iterations(iterations, items);
  std::vector<std::string> due;
  const std::int64_t done = totals_.now().iterations;
  while (!due_at_.empty() && due_at_.begin()->first <= done) {
    due.push_back(due_at_.begin()->second);
    waiting_.erase(due_at_.begin()->second);
    due_at_.erase(due_at_.begin());
  }
  return due;
}

}  // namespace dvfslab::meter
