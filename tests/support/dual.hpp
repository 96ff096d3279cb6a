// A forward-mode automatic-differentiation scalar: a dual number v + d eps (eps^2 = 0), usable as S in
// ModelTpl<S> / DataTpl<S>. Running a templated algorithm on duals whose d parts hold a direction x gives
// the algorithm's value and its directional derivative along x, exact to rounding: the derivative oracle of
// the tests, independent of the analytic derivatives under test. Test code only.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <ostream>

namespace denoc::testing {

class Dual {
 public:
  Dual() = default;
  // implicit from arithmetic values, as the algorithms write S(0), S(2) * x, ...
  Dual(double v) : v_(v) {}  // NOLINT(google-explicit-constructor)
  Dual(double v, double d) : v_(v), d_(d) {}
  explicit operator double() const { return v_; }
  double value() const { return v_; }
  double deriv() const { return d_; }

  Dual& operator+=(const Dual& o) {
    v_ += o.v_;
    d_ += o.d_;
    return *this;
  }
  Dual& operator-=(const Dual& o) {
    v_ -= o.v_;
    d_ -= o.d_;
    return *this;
  }
  Dual& operator*=(const Dual& o) {
    d_ = d_ * o.v_ + v_ * o.d_;
    v_ *= o.v_;
    return *this;
  }
  Dual& operator/=(const Dual& o) {
    *this = *this / o;
    return *this;
  }

  friend Dual operator+(const Dual& a, const Dual& b) { return {a.v_ + b.v_, a.d_ + b.d_}; }
  friend Dual operator-(const Dual& a, const Dual& b) { return {a.v_ - b.v_, a.d_ - b.d_}; }
  friend Dual operator*(const Dual& a, const Dual& b) { return {a.v_ * b.v_, a.d_ * b.v_ + a.v_ * b.d_}; }
  friend Dual operator/(const Dual& a, const Dual& b) {
    const double q = a.v_ / b.v_;
    return {q, (a.d_ - q * b.d_) / b.v_};
  }
  friend Dual operator-(const Dual& a) { return {-a.v_, -a.d_}; }
  friend Dual operator+(const Dual& a) { return a; }

  // comparisons look at the value only (branches follow the value, as in double)
  friend bool operator==(const Dual& a, const Dual& b) { return a.v_ == b.v_; }
  friend bool operator!=(const Dual& a, const Dual& b) { return a.v_ != b.v_; }
  friend bool operator<(const Dual& a, const Dual& b) { return a.v_ < b.v_; }
  friend bool operator<=(const Dual& a, const Dual& b) { return a.v_ <= b.v_; }
  friend bool operator>(const Dual& a, const Dual& b) { return a.v_ > b.v_; }
  friend bool operator>=(const Dual& a, const Dual& b) { return a.v_ >= b.v_; }

  // math functions, found by argument-dependent lookup
  friend Dual sqrt(const Dual& a) {
    const double s = std::sqrt(a.v_);
    return {s, a.d_ / (2.0 * s)};
  }
  friend Dual sin(const Dual& a) { return {std::sin(a.v_), a.d_ * std::cos(a.v_)}; }
  friend Dual cos(const Dual& a) { return {std::cos(a.v_), -a.d_ * std::sin(a.v_)}; }
  friend Dual log(const Dual& a) { return {std::log(a.v_), a.d_ / a.v_}; }
  friend Dual exp(const Dual& a) {
    const double e = std::exp(a.v_);
    return {e, a.d_ * e};
  }
  friend Dual abs(const Dual& a) { return a.v_ < 0.0 ? -a : a; }
  friend Dual fabs(const Dual& a) { return abs(a); }
  friend Dual atan2(const Dual& y, const Dual& x) {
    const double r2 = x.v_ * x.v_ + y.v_ * y.v_;
    return {std::atan2(y.v_, x.v_), (x.v_ * y.d_ - y.v_ * x.d_) / r2};
  }
  friend Dual pow(const Dual& a, const Dual& b) { return exp(b * log(a)); }
  friend bool isfinite(const Dual& a) { return std::isfinite(a.v_) && std::isfinite(a.d_); }
  friend bool isnan(const Dual& a) { return std::isnan(a.v_) || std::isnan(a.d_); }
  friend bool isinf(const Dual& a) { return std::isinf(a.v_) || std::isinf(a.d_); }

  friend std::ostream& operator<<(std::ostream& os, const Dual& a) {
    return os << a.v_ << " + " << a.d_ << " eps";
  }

 private:
  double v_ = 0.0;
  double d_ = 0.0;
};

}  // namespace denoc::testing

namespace Eigen {

template <>
struct NumTraits<denoc::testing::Dual> : NumTraits<double> {
  using Real = denoc::testing::Dual;
  using NonInteger = denoc::testing::Dual;
  using Nested = denoc::testing::Dual;
  using Literal = denoc::testing::Dual;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 2,
    MulCost = 3
  };
  static Real epsilon() { return Real(std::numeric_limits<double>::epsilon()); }
  static Real dummy_precision() { return Real(1e-12); }
  static Real highest() { return Real(std::numeric_limits<double>::max()); }
  static Real lowest() { return Real(std::numeric_limits<double>::lowest()); }
  static int digits10() { return std::numeric_limits<double>::digits10; }
};

template <typename BinaryOp>
struct ScalarBinaryOpTraits<denoc::testing::Dual, double, BinaryOp> {
  using ReturnType = denoc::testing::Dual;
};
template <typename BinaryOp>
struct ScalarBinaryOpTraits<double, denoc::testing::Dual, BinaryOp> {
  using ReturnType = denoc::testing::Dual;
};

}  // namespace Eigen

namespace denoc::testing {

/// Values of a dual vector or matrix.
template <typename Derived>
Eigen::Matrix<double, Derived::RowsAtCompileTime, Derived::ColsAtCompileTime> values(
    const Eigen::MatrixBase<Derived>& m) {
  return m.unaryExpr([](const Dual& x) { return x.value(); });
}

/// Derivative parts of a dual vector or matrix.
template <typename Derived>
Eigen::Matrix<double, Derived::RowsAtCompileTime, Derived::ColsAtCompileTime> derivs(
    const Eigen::MatrixBase<Derived>& m) {
  return m.unaryExpr([](const Dual& x) { return x.deriv(); });
}

/// A dual vector with values v and derivative parts d.
inline Eigen::Matrix<Dual, Eigen::Dynamic, 1> seed(const Eigen::VectorXd& v, const Eigen::VectorXd& d) {
  Eigen::Matrix<Dual, Eigen::Dynamic, 1> x(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) x[i] = Dual(v[i], d[i]);
  return x;
}

}  // namespace denoc::testing
