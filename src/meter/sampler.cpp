#include "meter/sampler.hpp"

#include <chrono>
#include <stdexcept>

namespace dvfslab::meter {

Sampler::Sampler(Clock& clock, double period_s, Tick tick) : tick_(std::move(tick)) {
  if (!(period_s > 0)) throw std::invalid_argument("the sampling period must be positive");
  if (clock.is_virtual()) {
    virtual_clock_ = dynamic_cast<VirtualClock*>(&clock);
    if (virtual_clock_ == nullptr) throw std::logic_error("a virtual Gpu clock must be a VirtualClock");
    timer_ = virtual_clock_->every(period_s, [this](double) { tick_(); });
  } else {
    thread_ = std::thread([this, period_s] { run_thread(period_s); });
  }
}

Sampler::~Sampler() { stop(); }

void Sampler::stop() {
  if (timer_) {
    virtual_clock_->cancel(*timer_);
    timer_.reset();
  }
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
}

void Sampler::run_thread(double period_s) {
  using steady = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(period_s));
  // Deadlines advance from the start time, so a slow tick does not shift the grid;
  // ticks missed while one was slow are skipped, not bunched.
  auto deadline = steady::now() + period;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_until(lock, deadline, [this] { return stopping_; })) {
    lock.unlock();
    tick_();
    lock.lock();
    const auto now = steady::now();
    while (deadline <= now) deadline += period;
  }
}

}  // namespace dvfslab::meter
