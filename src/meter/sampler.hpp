#pragma once
// Calls a function periodically on a Gpu's clock: on a VirtualClock as one of its
// timers (no thread, deterministic), on a wall clock from a background thread.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "dvfslab/clock.hpp"

namespace dvfslab::meter {

class Sampler {
 public:
  using Tick = std::function<void()>;
  // Starts at once; the first tick is one period from now.
  Sampler(Clock& clock, double period_s, Tick tick);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Waits for a running tick to finish; no tick starts afterwards.
  void stop();

 private:
  void run_thread(double period_s);

  Tick tick_;
  VirtualClock* virtual_clock_ = nullptr;
  std::optional<VirtualClock::Handle> timer_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace dvfslab::meter
