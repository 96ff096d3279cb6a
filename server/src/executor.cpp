#include "executor.hpp"

#include <spdlog/spdlog.h>

#include "errors.hpp"

namespace denoc::server {

namespace {
// lanes kept after they empty, so that a steady caller does not allocate its lane for every call
constexpr std::size_t kIdleLanesKept = 256;
}  // namespace

ComputeExecutor::ComputeExecutor(const ExecutorBounds& bounds) : bounds_(bounds) {
  const unsigned n = std::max(1u, bounds_.threads);
  threads_.reserve(n);
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
}

ComputeExecutor::~ComputeExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ComputeExecutor::submit(const std::string& principal, Work work) {
  enqueue(principal, std::move(work), true);
}

void ComputeExecutor::submitStep(const std::string& principal, Work work) {
  enqueue(principal, std::move(work), false);
}

void ComputeExecutor::enqueue(const std::string& principal, Work work, bool counted) {
  {
    std::lock_guard lock(mutex_);
    const auto it = lanes_.try_emplace(principal).first;
    Lane& lane = it->second;
    if (counted) {
      std::string refusal;
      if (counted_ >= bounds_.queue) {
        refusal = "server busy: " + std::to_string(counted_) +
                  " calls wait for a compute thread, the limit is " + std::to_string(bounds_.queue) +
                  " (--compute-queue, DENOC_COMPUTE_QUEUE)";
      } else if (lane.counted >= bounds_.principal_queue) {
        refusal = "server busy for principal '" + principal + "': " + std::to_string(lane.counted) +
                  " of its calls wait for a compute thread, the limit is " +
                  std::to_string(bounds_.principal_queue) + " (--principal-queue, DENOC_PRINCIPAL_QUEUE)";
      }
      if (!refusal.empty()) {
        if (lane.items.empty() && lanes_.size() > kIdleLanesKept) lanes_.erase(it);
        fail(ErrorCode::ResourceExhausted, refusal + "; retry later");
      }
      ++lane.counted;
      ++counted_;
    }
    lane.items.push_back(Item{std::move(work), counted});
    ++queued_;
    if (!lane.in_turn) {
      lane.in_turn = true;
      turns_.push_back(principal);
    }
  }
  ready_.notify_one();
}

void ComputeExecutor::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !turns_.empty(); });
    if (turns_.empty()) return;  // stopping, and nothing left
    // the principal whose turn it is gives one piece of work, then goes to the back of the line
    std::string principal = std::move(turns_.front());
    turns_.pop_front();
    auto it = lanes_.find(principal);
    Lane& lane = it->second;
    Item item = std::move(lane.items.front());
    lane.items.pop_front();
    --queued_;
    busy_.fetch_add(1, std::memory_order_relaxed);
    if (item.counted) {
      --lane.counted;
      --counted_;
    }
    if (!lane.items.empty()) {
      turns_.push_back(std::move(principal));
    } else {
      lane.in_turn = false;
      if (lanes_.size() > kIdleLanesKept) lanes_.erase(it);
    }
    lock.unlock();
    try {
      item.work();
    } catch (const std::exception& e) {
      spdlog::critical("compute executor: a task threw: {}", e.what());
    } catch (...) {
      spdlog::critical("compute executor: a task threw");
    }
    item.work = nullptr;  // its captures go before the lock is taken again
    busy_.fetch_sub(1, std::memory_order_relaxed);
    lock.lock();
  }
}

std::size_t ComputeExecutor::waiting() const {
  std::lock_guard lock(mutex_);
  return counted_;
}

std::size_t ComputeExecutor::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

std::size_t ComputeExecutor::waitingFor(const std::string& principal) const {
  std::lock_guard lock(mutex_);
  const auto it = lanes_.find(principal);
  return it == lanes_.end() ? 0 : it->second.counted;
}

}  // namespace denoc::server
