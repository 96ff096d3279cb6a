// Generalized inertia matrix I(q) from composite-body inertias (Saha 1999, eq. 23-24). O(n^2).
#pragma once

#include "denoc/algorithm/dense_kernels.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// I(q) (n x n, both triangles filled, armature on the diagonal) into data.M, returned.
/// Also leaves the composite-body inertias data.Mt and data.Mtp = Mt_i p_i. Throws on a bad q.
template <typename S>
const typename Types<S>::MatX& computeInertiaMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                    const Eigen::Ref<const typename Types<S>::VecX>& q);

namespace detail {
/// Spatial inertia M_i of link i about the base origin in base axes (needs common placements).
template <typename S>
RigidInertia<S> linkInertia(const ModelTpl<S>& model, const DataTpl<S>& data, int i);

/// Composite-body recursion and I(q) from placements already computed; reads the link inertias in
/// data.work[i].M. kDispatch (double): the AVX2 twin where denseKernelsWide().
template <typename S, bool kDispatch = true>
void crba(const ModelTpl<S>& model, DataTpl<S>& data);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/inertia_matrix.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template const Types<double>::MatX& computeInertiaMatrix<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&);
}  // namespace denoc
