// What every batch function of the core shares beside the pool (batch.cpp): its first checks, and the
// state-by-state driver for the batch functions whose states have no SIMD kernel (planning_batch.cpp), with
// the same chunking, workspaces, stop polling and error rules as the batch functions of batch.hpp (see its
// file comment), one state at a time.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "denoc/batch.hpp"

namespace denoc::detail {

/// An array a batch function needs, and its name in messages.
struct NamedArray {
  const void* data;
  const char* name;
};

/// The first checks of a batch function: its model, and every array it needs (which may be null only for an
/// empty batch). Throws std::invalid_argument naming `function` and the model or array.
void checkBatch(const char* function, const std::shared_ptr<const Model>& model, std::size_t count,
                std::initializer_list<NamedArray> arrays);

/// Runs per_state(k, data) for k in [0, count) over `pool`, each chunk in one thread's workspace. cost_ns:
/// a rough single-thread cost of one state, which sets the chunk size and how often the stop condition is
/// polled (about every 20 us of work). A failing state throws BatchError naming `function` and the state
/// (the lowest of several); a stopped batch throws Stopped. options.width must be one the CPU runs; the
/// states run one at a time whatever it is (options.stats reports width 1).
void runStateByState(BatchPool& pool, const char* function, const std::shared_ptr<const Model>& model,
                     std::size_t count, double cost_ns, const BatchOptions& options,
                     const std::function<void(std::size_t k, Data& data)>& per_state);

/// The external wrenches of a batch call: at most kMaxBatchWrenches, each on a frame in 0..n + 1 with values
/// (std::invalid_argument naming `function` otherwise). Their entries are the single-state function's to
/// check.
void checkBatchWrenches(const char* function, const Model& m, const std::vector<BatchWrench>& wrenches);

/// Item k's wrenches (values + k * stride) as ExternalWrench records into out (wrenches.size() entries).
inline void gatherWrenches(const std::vector<BatchWrench>& wrenches, std::size_t k, ExternalWrench* out) {
  for (std::size_t j = 0; j < wrenches.size(); ++j) {
    const BatchWrench& w = wrenches[j];
    out[j].frame = w.frame;
    out[j].reference = w.reference;
    out[j].wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(w.values + k * w.stride);
    out[j].point = w.point;
  }
}

/// A batch with external wrenches, state by state: the wrenches checked once, then for each state k
/// `compute(k, data, wrenches, count)` with state k's wrenches gathered on the stack.
template <typename Compute>
void runWrenchBatch(BatchPool& pool, const char* function, const std::shared_ptr<const Model>& model,
                    std::size_t count, double cost_ns, const std::vector<BatchWrench>& wrenches,
                    const BatchOptions& options, Compute&& compute) {
  checkBatchWrenches(function, *model, wrenches);
  runStateByState(pool, function, model, count, cost_ns, options, [&](std::size_t k, Data& d) {
    std::array<ExternalWrench, kMaxBatchWrenches> ws;
    gatherWrenches(wrenches, k, ws.data());
    compute(k, d, ws.data(), static_cast<int>(wrenches.size()));
  });
}

}  // namespace denoc::detail
