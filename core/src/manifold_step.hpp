// The fixed-step schemes of integrator.hpp on the configuration manifold of a tree model (docs/trees.md), for
// the Simulator (simulate.cpp) and the rollouts (rollout.cpp): one step of the state x = [q (nq); v (nv)]
// with the acceleration a(t, q, v) given by the caller. A serial chain keeps fixed_step.hpp. The Simulator's
// Dormand-Prince 5(4) runs its stages in the same chart with the same maps (integrateChart, chartVelocity):
// its coordinates are (xi, v) from (0, v) at the step's start, moved to the step's end once it is accepted.
//
// The chart at q: xi (nv) names the configuration G(q, xi) = integrateConfiguration(q, xi, 1) (the root link
// turned by exp(xi_w) about its own axes and its origin moved by R xi_p, every other coordinate moved by xi).
// Along a motion q(t) = G(q, xi(t)) with the velocity v(t) the chart coordinates move as
//   xi_w' = Jr(xi_w)^-1 w,   xi_p' = exp(xi_w) v_p,   xi_j' = v_j otherwise                        (M.1)
// (Jr the right Jacobian of SO(3): R(t) = R exp(xi_w) has R^T R' = [Jr(xi_w) xi_w']x = [w]x, and
// p' = R exp(xi_w) v_p). RK4 is run on (xi, v) in this chart, starting at xi = 0 (Runge-Kutta-Munthe-Kaas):
//   stage s at xi_s = c_s nu_{s-1}, v_s = v + c_s a_{s-1} (xi_1 = 0, v_1 = v), q_s = G(q, xi_s),
//   a_s = a(q_s, v_s), nu_s = Phi(xi_s, v_s) the right side of (M.1),
//   q+ = G(q, h/6 (nu_1 + 2 nu_2 + 2 nu_3 + nu_4)),   v+ = v + h/6 (a_1 + 2 a_2 + 2 a_3 + a_4).
// Jr^-1 is taken by its series through the second commutator, Jr(x)^-1 w = w + 1/2 x × w + 1/12 x × (x × w)
// + O(|x|^4 |w|): Munthe-Kaas (BIT 1999) shows the dexp^-1 series truncated after order p - 2 keeps the order
// p of the scheme, so this step is 4th order in the rotation, the position and the joints (measured in
// tests/core/test_tree_rollout.cpp). The bare form nu_s = v_s (dexp^-1 = 1, the stage velocities read as
// tangent vectors at q unchanged) is only 2nd order in the rotation, and 1st order in the position of a root
// that turns while it moves, since v_p is in the turning root link's axes.
//
// Semi-implicit Euler: v+ = v + h a(q, v), q+ = G(q, h v+).
//
// Linearization (rollout.cpp): with tangent perturbations dq at q (q' = G(q, dq)) and the difference of
// results measured by differenceConfiguration at the nominal result, G(q, omega) has, for a floating root
// (E = exp(omega_w), [x] the cross-product matrix; identity for a planar root and the joints):
//   dG/dq     = [[E^T, 0], [-E^T [omega_p], E^T]]     (R exp(dq_w) E = R E exp(E^T dq_w); p + R dq_p +
//               R exp(dq_w) omega_p - p - R omega_p = R dq_p - R [omega_p] dq_w, read in the axes of R E)
//   dG/domega = [[Jr(omega_w), 0], [0, E^T]]          (exp(omega_w + d) = E exp(Jr(omega_w) d); R d read in
//               the axes of R E)
// and Phi(x, v) of (M.1), for the root (the joints' rows are the identity in v and 0 in x):
//   dPhi_w/dx = -1/2 [w] + 1/12 ((x.w) 1 + x w^T - 2 w x^T),   dPhi_w/dw = 1 + 1/2 [x] + 1/12 [x]^2,
//   dPhi_p/dx = -exp(x) [v_p] Jr(x),                            dPhi_p/dv_p = exp(x).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

#include "denoc/integrator.hpp"
#include "denoc/model.hpp"

namespace denoc::detail {

using Mat3 = Eigen::Matrix3d;
using Mat6 = Eigen::Matrix<double, 6, 6>;

inline Mat3 skew(const Eigen::Vector3d& x) {
  Mat3 m;
  m << 0.0, -x.z(), x.y(), x.z(), 0.0, -x.x(), -x.y(), x.x(), 0.0;
  return m;
}

/// exp([x]) as a rotation matrix.
inline Mat3 expSO3(const Eigen::Vector3d& x) {
  const double angle = x.norm();
  if (angle < 1e-300) return Mat3::Identity();
  return Eigen::AngleAxisd(angle, x / angle).toRotationMatrix();
}

/// The right Jacobian of SO(3): exp(x + d) = exp(x) exp(Jr(x) d + O(d^2)).
inline Mat3 rightJacobianSO3(const Eigen::Vector3d& x) {
  const double t2 = x.squaredNorm();
  const Mat3 X = skew(x);
  double a, b;  // Jr = 1 - a [x] + b [x]^2
  if (t2 < 1e-8) {
    a = 0.5 - t2 / 24.0;
    b = 1.0 / 6.0 - t2 / 120.0;
  } else {
    const double t = std::sqrt(t2);
    a = (1.0 - std::cos(t)) / t2;
    b = (t - std::sin(t)) / (t2 * t);
  }
  return Mat3::Identity() - a * X + b * X * X;
}

/// out = G(q, xi) = integrateConfiguration(q, xi, 1) without the checks (out may be q). The root's
/// quaternion is normalized.
inline void integrateChart(const Model& model, const double* q, const double* xi, double* out) {
  if (model.root == RootJoint::Floating) {
    const Eigen::Quaterniond r = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized();
    const Eigen::Vector3d w(xi[0], xi[1], xi[2]);
    const Eigen::Vector3d p = Eigen::Vector3d(q[0], q[1], q[2]) + r * Eigen::Vector3d(xi[3], xi[4], xi[5]);
    const double angle = w.norm();
    const Eigen::Quaterniond e = angle < 1e-300 ? Eigen::Quaterniond::Identity()
                                                : Eigen::Quaterniond(Eigen::AngleAxisd(angle, w / angle));
    const Eigen::Quaterniond rn = (r * e).normalized();
    out[0] = p.x();
    out[1] = p.y();
    out[2] = p.z();
    out[3] = rn.x();
    out[4] = rn.y();
    out[5] = rn.z();
    out[6] = rn.w();
  } else if (model.root == RootJoint::Planar) {
    for (int k = 0; k < 3; ++k) out[k] = q[k] + xi[k];
  }
  for (int i = 0; i < model.n; ++i) out[model.nqr + i] = q[model.nqr + i] + xi[model.nr + i];
}

/// nu = Phi(xi, v), the chart velocity of (M.1) (nu must not be v or xi).
inline void chartVelocity(const Model& model, const double* xi, const double* v, double* nu) {
  for (int k = 0; k < model.nv; ++k) nu[k] = v[k];
  if (model.root != RootJoint::Floating) return;
  const Eigen::Vector3d x(xi[0], xi[1], xi[2]), w(v[0], v[1], v[2]), vp(v[3], v[4], v[5]);
  const Eigen::Vector3d xw = x.cross(w);
  const Eigen::Vector3d nw = w + 0.5 * xw + (1.0 / 12.0) * x.cross(xw);
  const Eigen::Vector3d np = expSO3(x) * vp;
  for (int k = 0; k < 3; ++k) {
    nu[k] = nw[k];
    nu[3 + k] = np[k];
  }
}

/// The root blocks of dG/dq and dG/domega at omega (floating root; identity otherwise).
inline void integrateJacobians(const double* omega, Mat6& Gq, Mat6& Gw) {
  const Eigen::Vector3d ow(omega[0], omega[1], omega[2]), op(omega[3], omega[4], omega[5]);
  const Mat3 Et = expSO3(ow).transpose();
  Gq.setZero();
  Gq.topLeftCorner<3, 3>() = Et;
  Gq.bottomLeftCorner<3, 3>() = -Et * skew(op);
  Gq.bottomRightCorner<3, 3>() = Et;
  Gw.setZero();
  Gw.topLeftCorner<3, 3>() = rightJacobianSO3(ow);
  Gw.bottomRightCorner<3, 3>() = Et;
}

/// The root blocks of dPhi/dxi and dPhi/dv at (xi, v) (floating root).
inline void chartVelocityJacobians(const double* xi, const double* v, Mat6& Px, Mat6& Pv) {
  const Eigen::Vector3d x(xi[0], xi[1], xi[2]), w(v[0], v[1], v[2]), vp(v[3], v[4], v[5]);
  const Mat3 X = skew(x);
  const Mat3 E = expSO3(x);
  Px.setZero();
  Px.topLeftCorner<3, 3>() = -0.5 * skew(w) + (1.0 / 12.0) * (x.dot(w) * Mat3::Identity() +
                                                              x * w.transpose() - 2.0 * w * x.transpose());
  Px.bottomLeftCorner<3, 3>() = -E * skew(vp) * rightJacobianSO3(x);
  Pv.setZero();
  Pv.topLeftCorner<3, 3>() = Mat3::Identity() + 0.5 * X + (1.0 / 12.0) * X * X;
  Pv.bottomRightCorner<3, 3>() = E;
}

/// One step of length h from x = [q; v] at time t into xn (nq + nv entries; xn may be x). `accel(s, t_s,
/// q_s, v_s, a)` writes the acceleration of stage s (0 to 3 for RK4, 0 for Euler) into a (nv) and returns
/// false when it cannot; the step then returns false at once and xn is left as it was. During the call the
/// work holds the stage's xi and vs (and qs = G(q, xi)).
template <typename Accel>
bool manifoldStep(const Model& model, StepScheme scheme, double t, double h,
                  const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> xn,
                  ManifoldStepWork& w, Accel&& accel) {
  const int nq = model.nq, nv = model.nv;
  const auto q = x.head(nq);
  const auto v = x.segment(nq, nv);
  if (scheme == StepScheme::SemiImplicitEuler) {
    w.xi.setZero();
    w.qs = q;
    w.vs = v;
    if (!accel(0, t, w.qs, w.vs, w.a)) return false;
    xn.segment(nq, nv) = v + h * w.a;
    w.xi = h * xn.segment(nq, nv);
    integrateChart(model, x.data(), w.xi.data(), xn.data());
    return true;
  }
  const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
  for (int s = 0; s < 4; ++s) {
    if (s == 0) {
      w.xi.setZero();
      w.qs = q;
      w.vs = v;
    } else {
      w.xi = c[s] * w.nu;
      integrateChart(model, x.data(), w.xi.data(), w.qs.data());
      w.vs = v + c[s] * w.a;
    }
    if (!accel(s, t + c[s], w.qs, w.vs, w.a)) return false;
    chartVelocity(model, w.xi.data(), w.vs.data(), w.nu.data());
    if (s == 0) {
      w.nusum = w.nu;
      w.asum = w.a;
    } else {
      const double f = s < 3 ? 2.0 : 1.0;
      w.nusum += f * w.nu;
      w.asum += f * w.a;
    }
  }
  w.xi = (h / 6.0) * w.nusum;
  xn.segment(nq, nv) = v + (h / 6.0) * w.asum;
  integrateChart(model, x.data(), w.xi.data(), xn.data());
  return true;
}

}  // namespace denoc::detail
