// The loop over the states of the planning RPCs' batches (Kinematics, Derivatives: the core's
// planning_batch.hpp functions take no stop condition yet), and the per-thread workspace of Stream
// messages. Inverse dynamics, forward dynamics and the full factor run on the core's batch engine
// (batch.hpp) instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "denoc/batch.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc::server {

/// The work of one state: state k of the batch, in a workspace for the batch's model.
using PerState = std::function<void(std::uint32_t k, Data& data)>;

/// Runs per_state(k, data) for k in [0, count): on the calling thread (its cached workspace) for small
/// batches, else in chunks over `pool` (null: always on the calling thread). Polls `stop` every few states
/// (about 2000 n^2-sized units of work apart: every 32 states at n = 7, every state at n >= 45); when it
/// says stop, the batch stops part way and RequestError(Cancelled) "stopped after K of N states: ..." is
/// thrown. workspaces: how many models' workspaces a thread keeps.
void forEachState(BatchPool* pool, const std::shared_ptr<const Model>& model, std::uint32_t count,
                  std::size_t workspaces, const PerState& per_state, const StopCondition& stop);

/// The calling thread's workspace for a model, reused across calls (the most recently used `slots`
/// models' workspaces are kept per thread).
Data& workspace(const std::shared_ptr<const Model>& model, std::size_t slots);

}  // namespace denoc::server
