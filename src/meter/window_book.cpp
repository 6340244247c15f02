#include "meter/window_book.hpp"

#include <algorithm>
#include <stdexcept>

namespace dvfslab::meter {

void WindowBook::open(const std::string& name) {
  if (is_open(name) || is_waiting(name)) throw std::logic_error("meter window '" + name + "' is already open");
  open_.push_back(Window{name, {}, 0, 0.0});
}

void WindowBook::open_after(const std::string& name, std::int64_t warmup_iterations) {
  if (warmup_iterations <= 0) {
    open(name);
    return;
  }
  if (is_open(name) || is_waiting(name)) throw std::logic_error("meter window '" + name + "' is already open");
  waiting_.push_back(Waiting{name, warmup_iterations});
}

Measurement WindowBook::close(const std::string& name) {
  const auto it = std::find_if(open_.begin(), open_.end(), [&](const Window& w) { return w.name == name; });
  if (it == open_.end()) throw std::logic_error("meter window '" + name + "' is not open");
  Measurement m = it->stats.summary();
  m.name = name;
  m.iterations = it->iterations;
  m.items = it->items;
  open_.erase(it);

  m.flags.short_window = m.duration_s < 2.0 * sensor_period_s_;
  if (!m.energy_j) {
    m.flags.energy_estimated = true;
    if (m.energy_integrated_j) {
      m.energy_j = m.energy_integrated_j;
    } else if (m.peak_power_w) {
      // A single reading: its power held over the window is all there is.
      m.energy_j = *m.peak_power_w * m.duration_s;
    }
  }
  if (m.energy_j && m.duration_s > 0) {
    m.mean_power_w = *m.energy_j / m.duration_s;
  } else {
    m.mean_power_w = m.peak_power_w;
  }
  return m;
}

void WindowBook::clear() {
  open_.clear();
  waiting_.clear();
}

bool WindowBook::is_open(const std::string& name) const {
  return std::any_of(open_.begin(), open_.end(), [&](const Window& w) { return w.name == name; });
}

bool WindowBook::is_waiting(const std::string& name) const {
  return std::any_of(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return w.name == name; });
}

std::vector<std::string> WindowBook::open_names() const {
  std::vector<std::string> names;
  for (const auto& window : open_) names.push_back(window.name);
  return names;
}

void WindowBook::add_sample(const Telemetry& sample) {
  for (auto& window : open_) window.stats.add(sample);
}

std::vector<std::string> WindowBook::add_iterations(std::int64_t iterations, double items) {
  for (auto& window : open_) {
    window.iterations += iterations;
    window.items += items;
  }
  std::vector<std::string> due;
  for (auto& waiting : waiting_) {
    waiting.iterations_left -= iterations;
    if (waiting.iterations_left <= 0) due.push_back(waiting.name);
  }
  std::erase_if(waiting_, [](const Waiting& w) { return w.iterations_left <= 0; });
  return due;
}

}  // namespace dvfslab::meter
