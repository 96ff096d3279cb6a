// The dense steps for double compiled a second time for AVX2 (core/src/dense_kernels.cpp) and the choice
// between them and the baseline at run time.
#pragma once

#include "denoc/data.hpp"

namespace denoc {
namespace detail {

/// Whether the dense steps of I(q), the full factor and I^-1 for double (commonPlacementsAndInertias,
/// crba, denseUDU, the O(n) route's explicitU, the sweeps inverseBySweeps and negatedSolveUDU; a tree's
/// treeLocalCrba and treeFactor; the sweeps serve both) run their twins compiled for AVX2: this CPU runs AVX2
/// and DENOC_SIMD_WIDTH (denoc/batch.hpp) does not ask for 2 lanes or fewer. The twins are the same functions
/// in the VEX encoding (three operands: none of the register copies of SSE2's two-operand form, and the joint
/// angles' sines and cosines four at a time), with no multiply-add fused: the same bits.
bool denseKernelsWide();
template <typename S>
struct KeptPlacement;
void commonPlacementsAndInertiasWide(const Model& model, Data& data,
                                     const Eigen::Ref<const Types<double>::VecX>& q, bool angles_ready,
                                     KeptPlacement<double>* keep);
void crbaWide(const Model& model, Data& data);
bool denseUDUWide(const Model& model, Data& data);
void explicitUWide(const Model& model, Data& data);
void inverseBySweepsWide(const Model& model, Data& data);
void negatedSolveUDUWide(const Model& model, Data& data, const Types<double>::MatX& B,
                         Types<double>::MatX& X);
void treeLocalCrbaWide(const Model& model, Data& data, const Eigen::Ref<const Types<double>::VecX>& q,
                       bool after_sweep);
int treeFactorWide(const Model& model, Data& data);

}  // namespace detail
}  // namespace denoc
