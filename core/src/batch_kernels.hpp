// The batch engine's SIMD kernels (batch_kernels.cpp), as the engine (batch.cpp) calls them: W states of
// one model at once, one per lane of denoc::simd::Lanes<W>, through the same scalar-templated algorithms as
// the single-state functions. Private to the core.
#pragma once

#include <cstddef>
#include <memory>

#include "denoc/batch.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"

namespace denoc::detail {

/// A thread's workspace for the kernels of one width: the model with every constant broadcast to W lanes,
/// its Data, and the lane-interleaved inputs. Made by makeLaneWorkspace; used by that width's kernels only.
struct LaneWorkspace {
  virtual ~LaneWorkspace() = default;
  int width = 0;
};

/// A workspace for the kernels of `width` (2, 4 or 8) and `model` (which it copies).
std::unique_ptr<LaneWorkspace> makeLaneWorkspace(const Model& model, int width);

/// Row-major arrays of a batch (count x n, tip_wrench count x 6 or null). wrench_count >= 0: the overload
/// with a list of external wrenches (wrenches[0..wrench_count)), computed as the single-state
/// treeInverseDynamics / treeForwardDynamics compute it for every model, the tip wrench null.
struct IdArrays {
  const double* q;
  const double* qd;
  const double* qdd;
  const double* tip_wrench;
  double* tau;
  const BatchWrench* wrenches = nullptr;
  int wrench_count = -1;
};
struct FdArrays {
  const double* q;
  const double* qd;
  const double* tau;
  double* qdd;
  const BatchWrench* wrenches = nullptr;
  int wrench_count = -1;
};
/// inverse may be null; the convective matrix, bias and g(q) are the engine's (state by state).
struct FfArrays {
  const double* q;
  double* inertia;
  double* u;
  double* d;
  double* log_det;
  double* inverse;
};

/// One kernel call computes states [begin, end) of a batch, W at a time; a last group of fewer than W
/// states fills the spare lanes with copies of state end - 1. It returns end, or the first state of the
/// first group with a non-finite input or output, whose outputs are then unspecified (the engine computes
/// that group again state by state, with the single-state functions' checks). `data` is the thread's
/// scalar workspace (log det is computed lane by lane with the scalar function).
template <typename Arrays>
using LaneKernel = std::size_t (*)(const Model& model, Data& data, LaneWorkspace& workspace,
                                   const Arrays& arrays, std::size_t begin, std::size_t end);

struct LaneKernels {
  int width;
  LaneKernel<IdArrays> inverse_dynamics;  // inverseDynamics, with or without the tip wrench
  LaneKernel<FdArrays> forward_dynamics;  // forwardDynamics (Saha's O(n) route)
  LaneKernel<FfArrays> full_factor;       // computeFullFactor, and computeInverseInertia when asked
};

/// The kernels of `width` (2, 4 or 8). The caller checks that the CPU runs that width (simd_dispatch.hpp).
const LaneKernels& laneKernels(int width);

}  // namespace denoc::detail
