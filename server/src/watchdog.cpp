#include "watchdog.hpp"

#include <algorithm>
#include <vector>

namespace denoc::server {

Watchdog::Watchdog(std::chrono::milliseconds tick) : tick_(tick), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::add(Watched* w) {
  std::lock_guard lock(mutex_);
  items_.insert(w);
}

void Watchdog::remove(Watched* w) {
  std::lock_guard lock(mutex_);
  items_.erase(w);
}

std::size_t Watchdog::size() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

std::chrono::milliseconds Watchdog::tickFor(std::chrono::milliseconds a, std::chrono::milliseconds b) {
  return std::clamp(std::min(a, b) / 8, std::chrono::milliseconds(5), std::chrono::milliseconds(500));
}

void Watchdog::loop() {
  std::vector<Watched*> batch;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, tick_, [this] { return stopping_; });
    if (stopping_) break;
    batch.assign(items_.begin(), items_.end());
    for (Watched* w : batch) w->ref();
    lock.unlock();
    const auto now = Watched::Clock::now();
    for (Watched* w : batch) {
      w->check(now);
      w->unref();
    }
    batch.clear();
    lock.lock();
  }
}

}  // namespace denoc::server
