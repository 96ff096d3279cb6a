// Kernels whose loops run over the joints of a chain, instantiated for the arms' joint counts as well as
// for a run-time count.
#pragma once

#include <type_traits>

#include "denoc/fwd.hpp"

namespace denoc {
namespace detail {

/// Calls f(std::integral_constant<int, N>{}) with N = n for the arms' sizes, 6 and 7 joints, else with
/// N = 0 (the kernel takes the run-time n). With N > 0 the kernel's loops over the joints have compile-time
/// trip counts and unroll completely (forJoints): at these sizes the run-time loops' overhead (bounds,
/// peeling, remainders) costs more than the arithmetic; the Panda's dense U D U^T elimination, 84
/// multiplications and divisions, took about 1,450 instructions with run-time bounds and 461 unrolled
/// (callgrind). Only for floating-point S: other scalar types (operation counting, automatic
/// differentiation, the batches' SIMD lanes) take N = 0.
template <typename S, typename F>
DENOC_INLINE void withJointCount(int n, F&& f) {
  if constexpr (std::is_floating_point_v<S>) {
    if (n == 6) return f(std::integral_constant<int, 6>{});
    if (n == 7) return f(std::integral_constant<int, 7>{});
  }
  f(std::integral_constant<int, 0>{});
}

/// for (int i = lo; i < hi; ++i) body(i): in a kernel of withJointCount, unrolled completely for N > 0 (the
/// bounds are compile-time constants once the enclosing loops are unrolled), a plain loop for the run-time
/// n (N = 0), where unrolling took 6 to 9 % more time at 12 and 24 joints.
template <int N, typename F>
DENOC_INLINE void forJoints(int lo, int hi, F&& body) {
  if constexpr (N > 0) {
    DENOC_UNROLL
    for (int i = lo; i < hi; ++i) body(i);
  } else {
    for (int i = lo; i < hi; ++i) body(i);
  }
}

}  // namespace detail
}  // namespace denoc
