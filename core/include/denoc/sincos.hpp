// sin and cos of one joint angle together. Every algorithm needs cos q_i and sin q_i of each revolute joint;
// for double the library's sin/cos (about 110 instructions per joint in glibc's sincos, with branches on the
// argument's range) cost as much as a third of the inverse dynamics of an arm. The double version here
// reduces the argument by the nearest multiple of pi/2 (three-part Cody-Waite constants, exact products for
// |x| < 2^20 pi/2) and evaluates the fdlibm minimax polynomials on [-pi/4, pi/4] without branches; it agrees
// with std::sin/std::cos to within 2 ulp (tests/test_sincos.cpp). Arguments of magnitude 10^5 or more, and
// non-finite ones, go to std::sin/std::cos. Other scalar types (the counting scalar) call sin and cos.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "denoc/fwd.hpp"

namespace denoc {

/// s = sin x, c = cos x for any scalar with sin and cos found by argument-dependent lookup or in std.
template <typename S> inline void sincos(const S& x, S& s, S& c) {
  using std::cos;
  using std::sin;
  s = S(sin(x));
  c = S(cos(x));
}

/// s = sin x, c = cos x for double (see the file comment).
DENOC_INLINE void sincos(double x, double& s, double& c) {
  if (!(std::abs(x) < 1e5)) {
    s = std::sin(x);
    c = std::cos(x);
    return;
  }
  // k = nearest integer to x / (pi/2), by adding and subtracting 1.5 * 2^52 (round to nearest even);
  // the low bits of the sum's representation are k mod 4 in two's complement
  constexpr double kTwoOverPi = 6.36619772367581382433e-01;
  constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  const double shifted = x * kTwoOverPi + kShifter;
  const double k = shifted - kShifter;
  std::uint64_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  const std::uint64_t quadrant = bits & 3u;
  // r = x - k pi/2 with pi/2 in three parts of 33, 33 and 53 bits: k * part is exact for |k| < 2^20, and
  // x - k * kPio2a is exact (the two are within a factor of two)
  constexpr double kPio2a = 1.57079632673412561417e+00;
  constexpr double kPio2b = 6.07710050630396597660e-11;
  constexpr double kPio2c = 2.02226624879595063154e-21;
  const double r = ((x - k * kPio2a) - k * kPio2b) - k * kPio2c;
  // fdlibm kernels (k_sin.c, k_cos.c) on |r| <= pi/4
  constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                   S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                   S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                   C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                   C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  const double z = r * r;
  const double w = z * z;
  const double ps = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
  const double sin_r = r + z * r * (S1 + z * ps);
  const double pc = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
  const double hz = 0.5 * z;
  const double one_minus_hz = 1.0 - hz;
  const double cos_r = one_minus_hz + (((1.0 - one_minus_hz) - hz) + z * pc);
  // quadrant k mod 4: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s) with s, c of r
  const bool odd = (quadrant & 1u) != 0;
  double sv = odd ? cos_r : sin_r;
  double cv = odd ? sin_r : cos_r;
  std::uint64_t sb, cb;
  std::memcpy(&sb, &sv, sizeof sb);
  std::memcpy(&cb, &cv, sizeof cb);
  sb ^= (quadrant & 2u) << 62;
  cb ^= ((quadrant + 1u) & 2u) << 62;
  std::memcpy(&sv, &sb, sizeof sv);
  std::memcpy(&cv, &cb, sizeof cv);
  s = sv;
  c = cv;
}

}  // namespace denoc
