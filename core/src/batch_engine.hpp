// What every batch function of the core shares beside the pool (batch.cpp): its first checks, and the
// state-by-state driver for the batch functions whose states have no SIMD kernel (planning_batch.cpp), with
// the same chunking, workspaces, stop polling and error rules as the batch functions of batch.hpp (see its
// file comment), one state at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>

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

}  // namespace denoc::detail
