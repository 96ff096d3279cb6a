// -I^-1 B for the forward-dynamics derivatives by a dense product, and up to which size it is taken: the
// serial route (forward_dynamics_derivatives.hxx) and a tree's (tree_derivatives.hxx) share both.
#pragma once

#include <type_traits>

#include "denoc/data.hpp"

namespace denoc {

/// The largest n for which the forward-dynamics derivatives apply I^-1 to dtau/dq and dtau/dqd by two dense
/// products (n^3 multiplications each) rather than by the sweeps (24 n^2 each), for scalars other than
/// double (automatic differentiation, the operation counts), which run one lane wide.
inline constexpr int kProductDerivativesMaxDof = 16;
/// For double, where the products run in the CPU's SIMD lanes: 32 joints with pairs of lanes (SSE2), 64 with
/// 4 or 8 (AVX2, AVX-512F); the measured crossovers (docs/planning.md).
inline constexpr int kProductDerivativesMaxDofPairs = 32;
inline constexpr int kProductDerivativesMaxDofWide = 64;

namespace detail {
/// out = -A B for n x n column-major A, B (core/src/negated_product.cpp), in register blocks of `lanes`
/// doubles (2, 4, 8; 0: the CPU's default, DENOC_SIMD_WIDTH as for the batches, denoc/batch.hpp; narrower
/// where n is small); the same bits at every width.
void negatedProductWide(const double* a, const double* b, double* out, int n, int lanes = 0);

/// kProductDerivativesMaxDofPairs or kProductDerivativesMaxDofWide by the lanes negatedProductWide takes.
int productDerivativesMaxDofDouble();

template <typename S>
int productDerivativesMaxDof() {
  if constexpr (std::is_same_v<S, double>) {
    return productDerivativesMaxDofDouble();
  } else {
    return kProductDerivativesMaxDof;
  }
}

/// out = -A B, all n x n column-major (A = I^-1, both triangles stored); out must not alias B. Each entry is
/// o_ij = sum_k a_ik (-b_kj), k ascending from 0. For double, negatedProductWide: register blocks in the
/// widest SIMD lanes the CPU has, the same bits as the plain loop at every width.
template <typename S>
DENOC_FLATTEN void negatedProduct(const typename Types<S>::MatX& A, const typename Types<S>::MatX& B,
                                  typename Types<S>::MatX& out) {
  const Eigen::Index n = A.rows();
  if constexpr (std::is_same_v<S, double>) {
    negatedProductWide(A.data(), B.data(), out.data(), static_cast<int>(n));
  } else {
    const S* a = A.data();
    const S* b = B.data();
    S* o = out.data();
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) {
        S s = S(0);
        for (Eigen::Index k = 0; k < n; ++k) s += a[i + k * n] * -b[k + j * n];
        o[i + j * n] = s;
      }
  }
}
}  // namespace detail

}  // namespace denoc
