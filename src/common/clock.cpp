#include "dvfslab/clock.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace dvfslab {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WallClock::WallClock() : origin_ns_(steady_ns()) {}

double WallClock::now_s() const { return static_cast<double>(steady_ns() - origin_ns_) * 1e-9; }

void WallClock::sleep_for(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void VirtualClock::advance(double seconds) { advance_to(now_s_ + std::max(0.0, seconds)); }

void VirtualClock::advance_to(double time_s) {
  // Fire due timers one at a time in time order; a callback may register or cancel
  // timers, so the list is searched afresh each round.
  while (true) {
    auto due = std::min_element(timers_.begin(), timers_.end(),
                                [](const Timer& a, const Timer& b) { return a.next_s < b.next_s; });
    if (due == timers_.end() || due->next_s > time_s) break;
    now_s_ = std::max(now_s_, due->next_s);
    due->next_s += due->period_s;
    Callback callback = due->callback;
    callback(now_s_);
  }
  now_s_ = std::max(now_s_, time_s);
}

VirtualClock::Handle VirtualClock::every(double period_s, Callback callback) {
  if (!(period_s > 0)) throw std::invalid_argument("VirtualClock::every needs a positive period");
  const Handle handle = next_handle_++;
  timers_.push_back(Timer{handle, period_s, now_s_ + period_s, std::move(callback)});
  return handle;
}

void VirtualClock::cancel(Handle handle) {
  std::erase_if(timers_, [handle](const Timer& t) { return t.handle == handle; });
}

}  // namespace dvfslab
