// The double sincos of the core (denoc/sincos.hpp) against the C library's sin and cos: within 2 ulp (or 2
// ulp of 1 near the zeros) on random arguments, at and around multiples of pi/2, on the fallback range and
// for non-finite arguments; the vectorized array form gives the scalar form's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "denoc/sincos.hpp"
#include "support/compare.hpp"

namespace {

/// |a - b| in units of the last place of b (of 1 when |b| < 1, where the absolute error is what matters
/// for a rotation).
double ulpError(double a, double b) {
  const double scale = std::max(std::abs(b), 1.0);
  const double ulp = std::nextafter(scale, 2.0 * scale) - scale;
  return std::abs(a - b) / ulp;
}

struct Worst {
  double ulp = 0.0;
  double at = 0.0;
  void check(double x) {
    double s, c;
    denoc::sincos(x, s, c);
    const double e = std::max(ulpError(s, std::sin(x)), ulpError(c, std::cos(x)));
    if (e > ulp) {
      ulp = e;
      at = x;
    }
  }
};

TEST(Sincos, AgreesWithTheLibraryWithinTwoUlp) {
  std::mt19937_64 rng(1);
  Worst worst;
  for (const double range : {1e-8, 1.0, 4.0, 100.0, 1e4, 99999.0}) {
    std::uniform_real_distribution<double> d(-range, range);
    for (int i = 0; i < 200000; ++i) worst.check(d(rng));
  }
  // at and around multiples of pi/2, where the reduction cancels most
  for (int k = -4000; k <= 4000; ++k) {
    const double x = k * (M_PI / 2);
    worst.check(x);
    double y = x;
    for (int j = 0; j < 8; ++j) {
      y = std::nextafter(y, INFINITY);
      worst.check(y);
    }
  }
  EXPECT_LE(worst.ulp, 2.0) << "at x = " << worst.at;
}

TEST(Sincos, SpecialArguments) {
  double s, c;
  denoc::sincos(0.0, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  for (const double x : {1e5, -3e7, 1e300}) {  // the library's own reduction
    denoc::sincos(x, s, c);
    EXPECT_EQ(s, std::sin(x)) << x;
    EXPECT_EQ(c, std::cos(x)) << x;
  }
  for (const double x : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    denoc::sincos(x, s, c);
    EXPECT_TRUE(std::isnan(s)) << x;
    EXPECT_TRUE(std::isnan(c)) << x;
  }
}

TEST(Sincos, ArrayFormGivesTheScalarBits) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> d(-10.0, 10.0);
  for (int n : {0, 1, 2, 3, 7, 16, 33}) {
    std::vector<double> x(static_cast<std::size_t>(n)), s(x.size()), c(x.size());
    for (double& v : x) v = d(rng);
    if (n > 2) x[2] = 2e5;  // one argument out of the fast range: the whole array takes the scalar path
    for (int pass = 0; pass < 2; ++pass) {
      denoc::sincos(x.data(), s.data(), c.data(), n);
      for (int i = 0; i < n; ++i) {
        double si, ci;
        denoc::sincos(x[static_cast<std::size_t>(i)], si, ci);
        EXPECT_TRUE(denoc::testing::sameBits(&si, &s[static_cast<std::size_t>(i)], 1, "sin"))
            << n << " " << i;
        EXPECT_TRUE(denoc::testing::sameBits(&ci, &c[static_cast<std::size_t>(i)], 1, "cos"))
            << n << " " << i;
      }
      if (n > 2) x[2] = 0.3;
    }
  }
}

}  // namespace
