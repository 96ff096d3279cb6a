#include "batch_loop.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "errors.hpp"

namespace denoc::server {

Data& workspace(const std::shared_ptr<const Model>& model, std::size_t slots) {
  struct Slot {
    std::shared_ptr<const Model> model;
    std::unique_ptr<Data> data;
  };
  thread_local std::vector<Slot> cache;
  for (std::size_t i = 0; i < cache.size(); ++i) {
    if (cache[i].model.get() == model.get()) {
      if (i != 0) std::swap(cache[0], cache[i]);
      return *cache[0].data;
    }
  }
  if (cache.size() >= std::max<std::size_t>(1, slots)) cache.pop_back();
  cache.insert(cache.begin(), Slot{model, std::make_unique<Data>(*model)});
  return *cache[0].data;
}

namespace {

[[noreturn]] void stopped(std::uint64_t done, std::uint64_t count) {
  fail(ErrorCode::Cancelled, "stopped after " + std::to_string(done) + " of " + std::to_string(count) +
                                 " states: the call was cancelled (by the client, or its deadline passed)");
}

}  // namespace

void forEachState(BatchPool* pool, const std::shared_ptr<const Model>& model, std::uint32_t count,
                  std::size_t workspaces, const PerState& per_state, const StopCondition& stop) {
  const long n = model->n;
  // the stop condition is asked every `every` states (a power of two), about 2000 n^2-sized units of work
  std::uint32_t every = 1;
  while (every * 2 <= static_cast<std::uint32_t>(std::clamp(2048 / std::max(1L, n * n), 1L, 64L))) every *= 2;
  const std::uint32_t mask = every - 1;
  // chunks of about 16000 n^2-sized units of work (about 100 us of inverse dynamics at n = 7)
  const std::size_t grain = static_cast<std::size_t>(std::clamp(16384 / std::max(1L, n * n), 4L, 1024L));
  if (!pool || pool->threads() < 2 || count < 2 * grain) {
    Data& d = workspace(model, workspaces);
    for (std::uint32_t k = 0; k < count; ++k) {
      if ((k & mask) == 0 && k != 0 && stop.stopRequested()) stopped(k, count);
      per_state(k, d);
    }
    return;
  }
  std::atomic<std::uint64_t> done{0};
  pool->run(model, count, grain, [&](std::size_t begin, std::size_t end, Data& d) {
    std::size_t k = begin;
    for (; k < end; ++k) {
      if (((k - begin) & mask) == 0 && stop.stopRequested()) break;
      per_state(static_cast<std::uint32_t>(k), d);
    }
    done.fetch_add(k - begin, std::memory_order_relaxed);
  });
  if (done.load() < count) stopped(done.load(), count);
}

}  // namespace denoc::server
