#include "meter/counter_steps.hpp"

#include <algorithm>
#include <cmath>

namespace dvfslab::meter {
namespace {

std::optional<double> power_of(const Telemetry& sample) {
  return sample.power_instant_w ? sample.power_instant_w : sample.power_average_w;
}

// How far the mean power between two updates may be from the reading at the first
// before the extrapolation with that reading counts as disproved.
bool powers_agree(double a_w, double b_w) { return std::abs(a_w - b_w) <= 1.0 + 0.02 * std::max(a_w, b_w); }

}  // namespace

void CounterSteps::step_seen(double low_s, double high_s) {
  if (phase_low_s_ && phase_high_s_) {
    // Carry what earlier updates taught about the phase over to this one.
    const double periods = std::round((high_s - *phase_high_s_) / period_s_);
    const double low = std::max(low_s, *phase_low_s_ + periods * period_s_);
    const double high = std::min(high_s, *phase_high_s_ + periods * period_s_);
    // Disagreement means the period is not what we assumed: trust the new step alone.
    if (low < high) {
      low_s = low;
      high_s = high;
    }
  }
  phase_low_s_ = low_s;
  phase_high_s_ = high_s;
}

void CounterSteps::update_latest_from_phase() {
  if (updates_.empty() || !phase_low_s_ || !phase_high_s_) return;
  updates_.back().low_s = *phase_low_s_;
  updates_.back().high_s = *phase_high_s_;
}

void CounterSteps::observe(const Telemetry& sample, SampleKind kind) {
  if (kind == SampleKind::held) {
    // It did not look at the counter: it says neither that the counter stepped nor
    // that it did not by this time.
    if (latest_) latest_->time_s = std::max(latest_->time_s, sample.time_s);
    return;
  }
  const std::optional<double> power = power_of(sample);
  const double now = sample.time_s;
  const bool later = !last_time_s_ || now > *last_time_s_;
  if (sample.energy_j && later) {
    if (!latest_ || *sample.energy_j != latest_->counter_j) {
      CounterReading reading;
      reading.counter_j = *sample.energy_j;
      // Several updates may lie between two readings; the latest is within a period of now.
      reading.update_low_s = last_time_s_ ? std::max(*last_time_s_, now - period_s_) : now - period_s_;
      reading.update_high_s = now;
      if (latest_ && power && power_w_) reading.power_change_w = std::abs(*power - *power_w_);
      // Updates a period apart are seen at least a period minus the previous step's
      // interval apart (with a tenth of slack for a period known only roughly).
      if (latest_ && now - latest_->update_high_s <
                         0.9 * (period_s_ - (latest_->update_high_s - latest_->update_low_s))) {
        continuous_ = true;
      }
      updates_.push_back(Update{reading.update_low_s, reading.update_high_s, reading.counter_j});
      reading.update = updates_.size() - 1;
      if (latest_) {
        step_seen(reading.update_low_s, reading.update_high_s);
        update_latest_from_phase();
      }
      latest_ = reading;
    } else if (phase_low_s_ && phase_high_s_ && last_time_s_) {
      // No update in (last, now]: the next one, a period after the latest, is still to come.
      const double next_low = *phase_low_s_ + period_s_;
      const double next_high = *phase_high_s_ + period_s_;
      double low = next_low, high = next_high;
      if (*last_time_s_ <= next_low && now > next_low) low = std::min(now, next_high);
      if (*last_time_s_ > next_low && *last_time_s_ < next_high && now >= next_high) high = *last_time_s_;
      if (low < high) {
        phase_low_s_ = low - period_s_;
        phase_high_s_ = high - period_s_;
        update_latest_from_phase();
      }
    }
  }
  if (later) last_time_s_ = now;
  if (power) power_w_ = power;
  if (latest_) {
    latest_->time_s = now;
    latest_->read_s = now;
    latest_->power_w = power_w_.value_or(0.0);
  }
}

std::optional<EnergyRange> CounterSteps::range_at(double time_s) const {
  if (!power_cap_w_ || continuous_) return std::nullopt;
  // The last update surely at or before `time_s`, and the one after it.
  const auto next = std::upper_bound(updates_.begin(), updates_.end(), time_s,
                                     [](double t, const Update& update) { return t < update.high_s; });
  if (next == updates_.begin()) return std::nullopt;
  const Update& last = *(next - 1);
  const double cap = *power_cap_w_;
  EnergyRange range{last.counter_j, last.counter_j + cap * std::max(0.0, time_s - last.low_s)};
  if (next != updates_.end()) {
    range.low_j = std::max(range.low_j, next->counter_j - cap * std::max(0.0, next->high_s - time_s));
    range.high_j = std::min(range.high_j, next->counter_j + cap * std::max(0.0, time_s - next->low_s));
  }
  return range;
}

std::optional<EnergyRange> CounterSteps::range_between(double from_s, double to_s) const {
  const auto from = range_at(from_s);
  const auto to = range_at(to_s);
  if (!from || !to) return std::nullopt;
  const EnergyRange range{std::max(0.0, to->low_j - from->high_j),
                          std::min(*power_cap_w_ * std::max(0.0, to_s - from_s), to->high_j - from->low_j)};
  // Empty when the GPU drew more than its cap (a transient): the cap is no bound then.
  if (!(range.low_j <= range.high_j)) return std::nullopt;
  return range;
}

EnergyEstimate CounterSteps::estimate(const CounterReading& reading) const {
  // A held reading saw nothing after read_s: it extrapolates with the latest power,
  // and its error covers any power from none to twice that over what it did not see.
  if (continuous_) {
    const double held_s = reading.time_s - reading.read_s;
    return EnergyEstimate{reading.counter_j + reading.power_w * held_s, reading.power_w * held_s};
  }
  double low = reading.update_low_s, high = reading.update_high_s;
  if (phase_low_s_ && phase_high_s_) {
    // The update nearest to the reading's own step interval, on the learnt phase.
    const double periods = std::round((high - *phase_high_s_) / period_s_);
    const double phase_low = std::max(low, *phase_low_s_ + periods * period_s_);
    const double phase_high = std::min(high, *phase_high_s_ + periods * period_s_);
    if (phase_low < phase_high) {
      low = phase_low;
      high = phase_high;
    }
  }
  const double update_s = 0.5 * (low + high);
  const double half_width_s = 0.5 * (high - low);
  const double since_update_s = std::max(0.0, reading.time_s - update_s);
  EnergyEstimate estimate;
  estimate.energy_j = reading.counter_j + reading.power_w * since_update_s;
  // The update instant is known to +-half_width; the power since the update is
  // taken to be the latest reading, which moved by power_change at the update.
  // The next update comes a period after the latest at the earliest: a held reading
  // before it holds what a read would have returned, one after it may miss a change.
  const double unseen_s = std::max(0.0, reading.time_s - std::max(reading.read_s, low + period_s_));
  estimate.error_j = reading.power_w * half_width_s +
                     reading.power_change_w * (since_update_s + half_width_s) + reading.power_w * unseen_s;
  // With the next update known, the counter's growth up to it says whether the
  // power held at the reading's. When it did not (a load started or stopped before
  // that update, and perhaps before the reading), only the range is sure.
  if (reading.update + 1 < updates_.size()) {
    const Update& next = updates_[reading.update + 1];
    const double next_s = 0.5 * (next.low_s + next.high_s);
    const auto range = range_at(reading.time_s);
    if (range && next_s > update_s &&
        !powers_agree((next.counter_j - reading.counter_j) / (next_s - update_s), reading.power_w)) {
      estimate.energy_j = std::clamp(estimate.energy_j, range->low_j, range->high_j);
      estimate.error_j = std::max(estimate.energy_j - range->low_j, range->high_j - estimate.energy_j);
    }
  }
  return estimate;
}

}  // namespace dvfslab::meter
