// sin and cos of one joint angle together. Every algorithm needs cos q_i and sin q_i of each revolute joint;
// for double the library's sin/cos (about 110 instructions per joint in glibc's sincos, with branches on the
// argument's range) cost as much as a third of the inverse dynamics of an arm. The double version here
// reduces the argument by the nearest multiple of pi/2 (three-part Cody-Waite constants, exact products for
// |x| < 2^20 pi/2) and evaluates the fdlibm minimax polynomials on [-pi/4, pi/4] without branches; it agrees
// with std::sin/std::cos to within 2 ulp (tests/core/test_sincos.cpp). Arguments of magnitude 10^5 or more,
// and non-finite ones, go to std::sin/std::cos. Other scalar types (the counting scalar) call sin and cos.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "denoc/fwd.hpp"

namespace denoc {

/// s = sin x, c = cos x for any scalar with sin and cos found by argument-dependent lookup or in std.
template <typename S>
inline void sincos(const S& x, S& s, S& c) {
  using std::cos;
  using std::sin;
  s = S(sin(x));
  c = S(cos(x));
}

namespace detail {

/// sin and cos of r in [-pi/4, pi/4] after the reduction x = k pi/2 + r, moved to x's quadrant k mod 4:
/// (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s). `shifted` holds k in its low bits. Branch-free, so that
/// a loop over it vectorizes. F is double, or a GCC vector of doubles (simd/lanes.hpp: the same operations in
/// every lane), U the 64-bit unsigned integer (vector) of F's size. Returned by value: a vector type passed
/// as a template argument loses a reduced alignment, so references to F could promise too much.
template <typename F>
struct SinCos {
  F s, c;
};
template <typename F, typename U>
DENOC_INLINE SinCos<F> sincosReducedT(F x) {
  // k = nearest integer to x / (pi/2), by adding and subtracting 1.5 * 2^52 (round to nearest even);
  // the low bits of the sum's representation are k mod 4 in two's complement
  constexpr double kTwoOverPi = 6.36619772367581382433e-01;
  constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  const F shifted = x * kTwoOverPi + kShifter;
  const F k = shifted - kShifter;
  const U quadrant = std::bit_cast<U>(shifted);
  // r = x - k pi/2 with pi/2 in three parts of 33, 33 and 53 bits: k * part is exact for |k| < 2^20, and
  // x - k * kPio2a is exact (the two are within a factor of two)
  constexpr double kPio2a = 1.57079632673412561417e+00;
  constexpr double kPio2b = 6.07710050630396597660e-11;
  constexpr double kPio2c = 2.02226624879595063154e-21;
  const F r = ((x - k * kPio2a) - k * kPio2b) - k * kPio2c;
  // fdlibm kernels (k_sin.c, k_cos.c) on |r| <= pi/4
  constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                   S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                   S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                   C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                   C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  const F z = r * r;
  const F w = z * z;
  const F ps = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
  const F sin_r = r + z * r * (S1 + z * ps);
  const F pc = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
  const F hz = 0.5 * z;
  const F one_minus_hz = 1.0 - hz;
  const F cos_r = one_minus_hz + (((1.0 - one_minus_hz) - hz) + z * pc);
  // select by the bit patterns: odd quadrants swap, quadrants 2, 3 negate sin, 1, 2 negate cos
  const U sb = std::bit_cast<U>(sin_r);
  const U cb = std::bit_cast<U>(cos_r);
  const U one = U{} + 1u, two = U{} + 2u;
  const U odd = U{} - (quadrant & one);  // all ones for an odd quadrant
  const U s_bits = ((sb & ~odd) | (cb & odd)) ^ ((quadrant & two) << 62);
  const U c_bits = ((cb & ~odd) | (sb & odd)) ^ (((quadrant + one) & two) << 62);
  return {std::bit_cast<F>(s_bits), std::bit_cast<F>(c_bits)};
}

/// The same for one double.
DENOC_INLINE void sincosReduced(double x, double& s, double& c) {
  const SinCos<double> r = sincosReducedT<double, std::uint64_t>(x);
  s = r.s;
  c = r.c;
}

}  // namespace detail

/// s = sin x, c = cos x for double (see the file comment).
DENOC_INLINE void sincos(double x, double& s, double& c) {
  if (!(std::abs(x) < 1e5)) {
    s = std::sin(x);
    c = std::cos(x);
    return;
  }
  detail::sincosReduced(x, s, c);
}

/// s[i] = sin x[i], c[i] = cos x[i] for i < n.
template <typename S>
inline void sincos(const S* x, S* s, S* c, int n) {
  for (int i = 0; i < n; ++i) sincos(x[i], s[i], c[i]);
}

/// The same for double: one range check for all, then a loop the compiler vectorizes.
inline void sincos(const double* __restrict x, double* __restrict s, double* __restrict c, int n) {
  bool in_range = true;
  for (int i = 0; i < n; ++i) in_range &= std::abs(x[i]) < 1e5;  // false for NaN too
  if (!in_range) {
    for (int i = 0; i < n; ++i) sincos(x[i], s[i], c[i]);
    return;
  }
  for (int i = 0; i < n; ++i) detail::sincosReduced(x[i], s[i], c[i]);
}

}  // namespace denoc
