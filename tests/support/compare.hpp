// The one comparator of the tests: relative Frobenius-norm error of a result against its oracle,
// as a GoogleTest assertion that names what was compared and where the worst entry is.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>

#include "denoc/spatial.hpp"

namespace denoc::testing {

/// ||actual - expected||_F / max(||expected||_F, floor).
template <typename A, typename B>
double relativeError(const Eigen::MatrixBase<A>& actual, const Eigen::MatrixBase<B>& expected,
                     double floor = 1e-12) {
  return (actual.template cast<double>() - expected.template cast<double>()).norm() /
         std::max(expected.template cast<double>().norm(), floor);
}

/// relativeError with a floor of 1: absolute below unit size, relative above (the core suites' measure).
template <typename A, typename B>
double relErr(const Eigen::MatrixBase<A>& actual, const Eigen::MatrixBase<B>& expected) {
  return relativeError(actual, expected, 1.0);
}

/// max_i |actual_i - expected_i| / max(max_i |expected_i|, floor): the worst entry against the largest one.
template <typename A, typename B>
double maxRelativeError(const Eigen::MatrixBase<A>& actual, const Eigen::MatrixBase<B>& expected,
                        double floor = 1e-300) {
  const Eigen::MatrixXd a = actual.template cast<double>(), b = expected.template cast<double>();
  return (a - b).cwiseAbs().maxCoeff() / std::max(b.cwiseAbs().maxCoeff(), floor);
}

/// Passes when relativeError(actual, expected, floor) <= tol and the shapes agree; the message gives the
/// error, the worst entry and both matrices (when small).
template <typename A, typename B>
::testing::AssertionResult near(const Eigen::MatrixBase<A>& actual, const Eigen::MatrixBase<B>& expected,
                                double tol, const std::string& what, double floor = 1e-12) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    return ::testing::AssertionFailure() << what << ": shape " << actual.rows() << "x" << actual.cols()
                                         << ", expected " << expected.rows() << "x" << expected.cols();
  }
  const Eigen::MatrixXd a = actual.template cast<double>(), b = expected.template cast<double>();
  const double err = relativeError(a, b, floor);
  if (err <= tol) return ::testing::AssertionSuccess();
  Eigen::Index r = 0, c = 0;
  (a - b).cwiseAbs().maxCoeff(&r, &c);
  std::ostringstream os;
  os << what << ": relative error " << err << " > " << tol << " (|expected| " << b.norm()
     << "); worst entry (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c);
  if (a.size() <= 64) os << "\nactual\n" << a << "\nexpected\n" << b;
  return ::testing::AssertionFailure() << os.str();
}

/// Passes when the count doubles at a and b have the same bits (results that must not differ at all: two
/// compilations or two arrangements of the same sums); the message names the first entry that differs.
inline ::testing::AssertionResult sameBits(const double* a, const double* b, std::size_t count,
                                           const std::string& what) {
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(a + i, b + i, sizeof(double)) != 0) {
      std::ostringstream os;
      os.precision(17);
      os << what << ": entry " << i << " of " << count << " differs: " << a[i] << " vs " << b[i];
      return ::testing::AssertionFailure() << os.str();
    }
  }
  return ::testing::AssertionSuccess();
}

/// A rigid inertia's ten numbers in a fixed order (m, h, I's xx yy zz xy xz yz), for sameBits.
inline std::array<double, 10> inertiaEntries(const RigidInertia<double>& M) {
  return {M.m, M.h.x(), M.h.y(), M.h.z(), M.I.xx, M.I.yy, M.I.zz, M.I.xy, M.I.xz, M.I.yz};
}

}  // namespace denoc::testing
