// Small 3-D and 6-D building blocks in Saha's notation: twists t = [w; v], wrenches w = [n; f],
// the twist-propagation matrix B_ij = [[1, 0], [c_ij x, 1]] applied without forming it, and
// symmetric 6x6 inertias stored as three 3x3 blocks.
#pragma once

#include <Eigen/Geometry>
#include <cmath>

#include "denoc/fwd.hpp"

namespace denoc {

/// Cross-product matrix: skew(a) * b == a.cross(b).
template <typename S> inline Eigen::Matrix<S, 3, 3> skew(const Eigen::Matrix<S, 3, 1>& a) {
  Eigen::Matrix<S, 3, 3> m;
  m << S(0), -a.z(), a.y(), a.z(), S(0), -a.x(), -a.y(), a.x(), S(0);
  return m;
}

/// R * Rz(angle) given cos and sin of the angle: only the first two columns mix (12 multiplications).
template <typename S>
inline void rotateAboutZ(const Eigen::Matrix<S, 3, 3>& R, const S& c, const S& s,
                         Eigen::Matrix<S, 3, 3>& out) {
  out.col(0) = c * R.col(0) + s * R.col(1);
  out.col(1) = c * R.col(1) - s * R.col(0);
  out.col(2) = R.col(2);
}

/// A symmetric 6x6 matrix [[A, H], [H^T, L]] acting on [angular; linear] vectors, with A and L symmetric.
/// Used for the composite-body (Mt) and articulated-body (Mh) inertias of Saha's recursions.
template <typename S> struct SymInertia6 {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  Mat3 A;  // angular-angular block
  Mat3 H;  // angular-linear block
  Mat3 L;  // linear-linear block

  void setZero() {
    A.setZero();
    H.setZero();
    L.setZero();
  }

  /// y = M x for x = [xa; xl].
  Vec6 operator*(const Vec6& x) const {
    Vec6 y;
    y.template head<3>() = A * x.template head<3>() + H * x.template tail<3>();
    y.template tail<3>() = H.transpose() * x.template head<3>() + L * x.template tail<3>();
    return y;
  }

  /// The dense 6x6 matrix (for tests and output, not for hot paths).
  Eigen::Matrix<S, 6, 6> dense() const {
    Eigen::Matrix<S, 6, 6> m;
    m << A, H, H.transpose(), L;
    return m;
  }
};

/// Spatial inertia of a rigid body about a reference point P, in the [angular; linear] order of Saha's
/// twists: [[I_P, h x], [(h x)^T, m 1]], with h = m * (C - P) the first moment and I_P the rotational
/// inertia about P. Sums of rigid-body inertias about one point stay in this form.
template <typename S> struct RigidInertia {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  S m;
  Vec3 h;
  Mat3 I;  // about P, symmetric

  /// y = M x for x = [w; v]: angular part I w + h x v, linear part m v - h x w.
  Eigen::Matrix<S, 6, 1> operator*(const Eigen::Matrix<S, 6, 1>& x) const {
    const Vec3 w = x.template head<3>();
    const Vec3 v = x.template tail<3>();
    Eigen::Matrix<S, 6, 1> y;
    y.template head<3>() = I * w + h.cross(v);
    y.template tail<3>() = m * v - h.cross(w);
    return y;
  }

  Eigen::Matrix<S, 6, 6> dense() const {
    Eigen::Matrix<S, 6, 6> M;
    const Mat3 hx = skew(h);
    M << I, hx, hx.transpose(), m * Mat3::Identity();
    return M;
  }
};

}  // namespace denoc
