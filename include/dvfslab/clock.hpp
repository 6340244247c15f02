#pragma once
// Time as a Gpu sees it. Real GPUs live on the wall clock; simulated ones on a
// virtual clock that only moves when something advances it, so sweeps on them run
// in milliseconds and tests are deterministic.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace dvfslab {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() const = 0;
  // Waits (wall clock) or advances time (virtual clock) by `seconds`.
  virtual void sleep_for(double seconds) = 0;
  virtual bool is_virtual() const = 0;
};

class WallClock final : public Clock {
 public:
  WallClock();
  double now_s() const override;
  void sleep_for(double seconds) override;
  bool is_virtual() const override { return false; }

 private:
  std::int64_t origin_ns_;
};

// A clock moved by advance(); callbacks registered with every() run at their due
// times, in time order, while it advances. That is how a meter samples a simulated
// GPU without a thread.
class VirtualClock final : public Clock {
 public:
  using Callback = std::function<void(double now_s)>;
  using Handle = std::uint64_t;

  explicit VirtualClock(double start_s = 0.0) : now_s_(start_s) {}
  double now_s() const override { return now_s_; }
  void sleep_for(double seconds) override { advance(seconds); }
  bool is_virtual() const override { return true; }

  void advance(double seconds);
  void advance_to(double time_s);
  // Runs `callback` at now + period, now + 2·period, ... until cancel(handle).
  Handle every(double period_s, Callback callback);
  void cancel(Handle handle);

 private:
  struct Timer {
    Handle handle;
    double period_s;
    double next_s;
    Callback callback;
  };
  double now_s_;
  Handle next_handle_ = 1;
  std::vector<Timer> timers_;
};

}  // namespace dvfslab
