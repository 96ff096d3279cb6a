// Whole SIMD registers of W doubles to and from memory, for the core's run-time dispatched kernels
// (batch_kernels.cpp, cholesky_blocked.cpp, negated_product.cpp, derivative_assembly.cpp). Private to the
// core. memcpy, so the address needs no alignment beyond a double's; inside a kernel with a target attribute
// it becomes one unaligned vector load or store of that width.
#pragma once

#include <cstring>

#include "denoc/simd/lanes.hpp"

namespace denoc::detail::lanes {

template <int W>
using Vec = typename simd::detail::VectorOf<W>::type;

template <int W>
DENOC_INLINE Vec<W> load(const double* p) {
  Vec<W> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <int W>
DENOC_INLINE void store(double* p, const Vec<W>& v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace denoc::detail::lanes
