#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {
namespace detail {

// The unconstrained system. Give joint i the frame F_i (origin O_i on the joint axis, z along it) and let
// the 6 coordinate rates of joint i be the relative twist of link i with respect to link i-1, expressed in
// F_i about O_i: c_i = A_i (t_i - t_{i-1}) with A_i = P_i^T Y_i^-1, where Y_i maps F_i-coordinates about
// O_i to the common frame and P_i is the permutation that puts the joint's own rate first (w_z for a
// revolute joint, v_z for a prismatic one). Then [S_i T_i] = Y_i P_i: S_i = p_i, and T_i is the other five
// columns (the constraint directions); det A_i = +-1. The link twists are t = K^-1 c, K block bidiagonal with
// K_ii = A_i, K_{i,i-1} = -A_i (B = 1 in the common frame), and H = G^-1 = K M^-1 K^T is block tridiagonal:
//   H_ii = P_i^T (Phi_i + X_i Phi_{i-1} X_i^T) P_i,   H_{i,i-1} = -P_i^T X_i Phi_{i-1} P_{i-1},
// with Phi_l = Y_l^-1 M_l^-1 Y_l^-T the inverse spatial inertia of link l in F_l about O_l,
//   Phi_l = [[J, -J (c x)], [(c x) J, -(c x) J (c x) + 1/m]],  J = Ic^-1, c = O_l -> C_l,
// and X_i = Y_i^-1 Y_{i-1} = [[R^T, 0], [-R^T (d x), R^T]] the twist transform from F_{i-1} about O_{i-1}
// to F_i about O_i (R: F_{i-1} <- F_i, d = O_i - O_{i-1} in F_{i-1}). Soft coordinates (1): the n joint
// rates; hard (2): the 5n constraint rates. G_11 = N^T M N = I(q), so (Wang and Chirikjian eq. 9)
//   I^-1 b = H11 b - H12 H22^-1 H21 b,   det I = det G det H22 = det M det H22 / det(K)^2 (Fixman).
//
// Armature. I + diag(a) is G_11 of an augmented system: each joint with a_i > 0 gets a rotor, a 1-DOF body
// of inertia a_i whose rate r_i is free in the unconstrained system; the extra hard coordinate
// h_i = r_i - qd_i makes r_i = qd_i. Its K'' = [[K, 0], [-P_s K, 1]], so
//   H''(x, h_j) = -H(x, s_j),  H''(h_i, h_j) = H(s_i, s_j) + delta_ij / a_i,
// still block tridiagonal, with hard blocks of 6 (5 constraint rates and h_i) and
// det G'' = det M prod a_i. Joints with a_i = 0 keep a decoupled dummy h_i (H''(h_i, h_i) = 1).

template <typename S>
inline const int* fixmanPermutation(JointType type) {
  static const int revolute[6] = {2, 0, 1, 3, 4, 5};
  static const int prismatic[6] = {5, 0, 1, 2, 3, 4};
  return type == JointType::Revolute ? revolute : prismatic;
}

// inverse spatial inertia [[J, -J (c x)], [(c x) J, -(c x) J (c x) + 1/m]] of a body with inverse
// rotational inertia J (about its mass center) and mass center c, both in the frame used
template <typename S>
typename Types<S>::Mat6 fixmanInverseInertia(const typename Types<S>::Mat3& J,
                                             const typename Types<S>::Vec3& c, const S& mass) {
  using Mat3 = typename Types<S>::Mat3;
  const Mat3 cx = skew(c);
  const Mat3 Jcx = J * cx;
  typename Types<S>::Mat6 Phi;
  Phi.template topLeftCorner<3, 3>() = J;
  Phi.template topRightCorner<3, 3>() = -Jcx;
  Phi.template bottomLeftCorner<3, 3>() = -Jcx.transpose();  // (c x) J = -(J (c x))^T
  Phi.template bottomRightCorner<3, 3>().noalias() = -cx * Jcx;
  Phi.template bottomRightCorner<3, 3>().diagonal().array() += S(1) / mass;
  return Phi;
}

// H''22 block (i, j) from the 6x6 block H_ij (rows joint i, columns joint j)
template <typename S, int B>
Eigen::Matrix<S, B, B> fixmanHardBlock(const typename Types<S>::Mat6& H, bool act_i, bool act_j, bool diag,
                                       const S& inv_a_i) {
  Eigen::Matrix<S, B, B> out;
  out.template topLeftCorner<5, 5>() = H.template bottomRightCorner<5, 5>();
  if constexpr (B == 6) {
    for (int k = 0; k < 5; ++k) {
      out(5, k) = act_i ? S(-H(0, 1 + k)) : S(0);
      out(k, 5) = act_j ? S(-H(1 + k, 0)) : S(0);
    }
    out(5, 5) = act_i && act_j ? H(0, 0) : S(0);
    if (diag) out(5, 5) += act_i ? inv_a_i : S(1);
  }
  return out;
}

// H''(s_a, hard_b) from r = H(s_a, [s_b; y_b])
template <typename S, int B, typename Row>
typename Types<S>::Vec6 fixmanSoftHard(const Row& r, bool act_b) {
  typename Types<S>::Vec6 out = Types<S>::Vec6::Zero();
  for (int k = 0; k < 5; ++k) out[k] = r[1 + k];
  if constexpr (B == 6) out[5] = act_b ? S(-r[0]) : S(0);
  return out;
}

// D^-1 of a symmetric positive definite B x B pivot by its Cholesky factor D = L L^T (plain loops: Eigen's
// generic triangular solves are slow at this size); also prod L_kk. Returns false if D is not positive
// definite.
template <typename S, int B>
bool fixmanInvertPivot(Eigen::Matrix<S, B, B>& D, Eigen::Matrix<S, B, B>& Dinv, S& diag_product) {
  using std::sqrt;
  diag_product = S(1);
  for (int j = 0; j < B; ++j) {
    S d = D(j, j);
    for (int k = 0; k < j; ++k) d -= D(j, k) * D(j, k);
    if (!(d > S(0))) return false;
    if constexpr (std::is_floating_point_v<S>) {
      if (!(d <= std::numeric_limits<S>::max())) return false;  // a pivot must be finite too
    }
    const S l = sqrt(d);
    D(j, j) = l;
    diag_product *= l;
    const S inv_l = S(1) / l;
    for (int i = j + 1; i < B; ++i) {
      S v = D(i, j);
      for (int k = 0; k < j; ++k) v -= D(i, k) * D(j, k);
      D(i, j) = v * inv_l;
    }
  }
  // W = L^-1 (lower triangular), then D^-1 = W^T W
  Eigen::Matrix<S, B, B> W = Eigen::Matrix<S, B, B>::Zero();
  for (int j = 0; j < B; ++j) {
    W(j, j) = S(1) / D(j, j);
    for (int i = j + 1; i < B; ++i) {
      S v(0);
      for (int k = j; k < i; ++k) v -= D(i, k) * W(k, j);
      W(i, j) = v / D(i, i);
    }
  }
  for (int a = 0; a < B; ++a) {
    for (int b = 0; b <= a; ++b) {
      S v(0);
      for (int k = a; k < B; ++k) v += W(k, a) * W(k, b);
      Dinv(a, b) = v;
      Dinv(b, a) = v;
    }
  }
  return true;
}

template <typename S, int B>
DENOC_FLATTEN void fixmanFactorBlocks(const ModelTpl<S>& model, DataTpl<S>& data, const char* function) {
  using Mat3 = typename Types<S>::Mat3;
  using Mat6 = typename Types<S>::Mat6;
  using MatB = Eigen::Matrix<S, B, B>;
  using Vec3 = typename Types<S>::Vec3;
  const int n = model.n;
  for (int i = 0; i < n; ++i) {
    // H_ii = Phi_i + X_i Phi_{i-1} X_i^T and H_{i,i-1} = -X_i Phi_{i-1}, then the permutations P
    const Mat6& Phi_prev = model.fx_Phi[i > 0 ? i - 1 : 0];
    Mat6 Hf = model.fx_Phi[i];
    const int* P = fixmanPermutation<S>(model.type[i]);
    if (i > 0) {
      const Mat3 Rt = data.R[i].transpose();
      // X_i Phi_{i-1} X_i^T is link i-1's inverse inertia in F_i about O_i: J rotated, mass center at
      // C_{i-1} - O_i = -rho_i
      const Mat3 J_i = Rt * model.fx_J[i - 1] * data.R[i];
      const Vec3 c_i = -(Rt * data.rho[i]);
      Hf += fixmanInverseInertia<S>(J_i, c_i, model.mass[i - 1]);
      // X_i Phi_{i-1} = [[R^T, 0], [-R^T (d x), R^T]] Phi_{i-1}, d = O_i - O_{i-1} in F_{i-1}
      const Vec3 d = data.rho[i] + model.com[i - 1];
      Mat6 Psi;
      Psi.template topRows<3>().noalias() = Rt * Phi_prev.template topRows<3>();
      Eigen::Matrix<S, 3, 6> lower = Phi_prev.template bottomRows<3>();
      for (int col = 0; col < 6; ++col) {
        lower.col(col) -= d.cross(Vec3(Phi_prev.template block<3, 1>(0, col)));
      }
      Psi.template bottomRows<3>().noalias() = Rt * lower;
      const int* Pp = fixmanPermutation<S>(model.type[i - 1]);
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) data.fx_Ho[i](a, b) = -Psi(P[a], Pp[b]);
    }
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b) data.fx_Hd[i](a, b) = Hf(P[a], P[b]);

    // block Thomas factorization of H22: D_i = H22_ii - H22_{i,i-1} D_{i-1}^-1 H22_{i-1,i}
    const bool act = model.armature[i] > S(0);
    const S inv_a = act ? S(1) / model.armature[i] : S(0);
    MatB D = fixmanHardBlock<S, B>(data.fx_Hd[i], act, act, true, inv_a);
    data.fx_sh_self[i] = fixmanSoftHard<S, B>(data.fx_Hd[i].row(0), act);
    if (i > 0) {
      const bool act_prev = model.armature[i - 1] > S(0);
      const MatB L = fixmanHardBlock<S, B>(data.fx_Ho[i], act, act_prev, false, S(0));
      const MatB G = data.fx_Dinv[i - 1].template topLeftCorner<B, B>() * L.transpose();
      // D -= L G is symmetric and the pivot reads its lower triangle only
      for (int b = 0; b < B; ++b) {
        for (int a = b; a < B; ++a) {
          S v = D(a, b);
          for (int k = 0; k < B; ++k) v -= L(a, k) * G(k, b);
          D(a, b) = v;
        }
      }
      data.fx_L[i].template topLeftCorner<B, B>() = L;
      data.fx_G[i].template topLeftCorner<B, B>() = G;
      data.fx_sh_prev[i] = fixmanSoftHard<S, B>(data.fx_Ho[i].row(0), act_prev);
      data.fx_sh_next[i] = fixmanSoftHard<S, B>(data.fx_Ho[i].col(0), act);
    }
    MatB Dinv;
    S diag_product;
    if (!fixmanInvertPivot<S, B>(D, Dinv, diag_product)) {
      throw NumericalError(std::string(function) + ": the hard-coordinate block of joint " +
                           std::to_string(i + 1) +
                           " is not numerically positive definite (a pivot is not positive and finite)");
    }
    data.fx_det_D[i] = diag_product * diag_product;  // det D_i
    data.fx_Dinv[i].template topLeftCorner<B, B>() = Dinv;
  }
  // det I = det M det H22 / det(K)^2 with det H22 = prod det D_i (model.fx_log_det_links holds log det M)
  data.fx_log_det = model.fx_log_det_links + logDetFromD<S>(data.fx_det_D);
}

template <typename S, int B>
DENOC_FLATTEN void fixmanApplyBlocks(const ModelTpl<S>& model, DataTpl<S>& data,
                                     const Eigen::Ref<const typename Types<S>::VecX>& b,
                                     Eigen::Ref<typename Types<S>::VecX> x) {
  using VecB = Eigen::Matrix<S, B, 1>;
  const int n = model.n;
  // c = H11 b (tridiagonal), d = H21 b
  for (int i = 0; i < n; ++i) {
    S c = data.fx_Hd[i](0, 0) * b[i];
    VecB d = data.fx_sh_self[i].template head<B>() * b[i];
    if (i > 0) {
      c += data.fx_Ho[i](0, 0) * b[i - 1];
      d += data.fx_sh_next[i].template head<B>() * b[i - 1];
    }
    if (i + 1 < n) {
      c += data.fx_Ho[i + 1](0, 0) * b[i + 1];
      d += data.fx_sh_prev[i + 1].template head<B>() * b[i + 1];
    }
    data.fx_c[i] = c;
    data.fx_v[i].template head<B>() = d;
  }
  // e = H22^-1 d: forward y_i = D_i^-1 (d_i - H22_{i,i-1} y_{i-1}), backward e_i = y_i - G_{i+1} e_{i+1}
  for (int i = 0; i < n; ++i) {
    VecB d = data.fx_v[i].template head<B>();
    if (i > 0)
      d.noalias() -= data.fx_L[i].template topLeftCorner<B, B>() * data.fx_v[i - 1].template head<B>();
    data.fx_v[i].template head<B>().noalias() = data.fx_Dinv[i].template topLeftCorner<B, B>() * d;
  }
  for (int i = n - 2; i >= 0; --i) {
    data.fx_v[i].template head<B>().noalias() -=
        data.fx_G[i + 1].template topLeftCorner<B, B>() * data.fx_v[i + 1].template head<B>();
  }
  // x = c - H12 e
  for (int i = 0; i < n; ++i) {
    S f = data.fx_sh_self[i].template head<B>().dot(data.fx_v[i].template head<B>());
    if (i > 0) f += data.fx_sh_prev[i].template head<B>().dot(data.fx_v[i - 1].template head<B>());
    if (i + 1 < n) f += data.fx_sh_next[i + 1].template head<B>().dot(data.fx_v[i + 1].template head<B>());
    x[i] = data.fx_c[i] - f;
  }
}

template <typename S>
int fixmanFactor(const ModelTpl<S>& model, DataTpl<S>& data, const char* function) {
  bool armature = false;
  for (int i = 0; i < model.n; ++i) armature = armature || model.armature[i] > S(0);
  if (armature) {
    fixmanFactorBlocks<S, 6>(model, data, function);
    return 6;
  }
  fixmanFactorBlocks<S, 5>(model, data, function);
  return 5;
}

template <typename S>
void fixmanApply(const ModelTpl<S>& model, DataTpl<S>& data, int bs,
                 const Eigen::Ref<const typename Types<S>::VecX>& b, Eigen::Ref<typename Types<S>::VecX> x) {
  if (bs == 6) {
    fixmanApplyBlocks<S, 6>(model, data, b, x);
  } else {
    fixmanApplyBlocks<S, 5>(model, data, b, x);
  }
}

}  // namespace detail

template <typename S>
void fixmanSolve(const ModelTpl<S>& model, DataTpl<S>& data,
                 const Eigen::Ref<const typename Types<S>::VecX>& q,
                 const Eigen::Ref<const typename Types<S>::VecX>& b, Eigen::Ref<typename Types<S>::VecX> x) {
  detail::checkData(model, data, "fixmanSolve");
  detail::checkVector(model, q, "fixmanSolve", "q", kMaxPosition);
  detail::checkVector(model, b, "fixmanSolve", "b");
  if (x.size() != model.n) {
    throw std::invalid_argument("fixmanSolve: x has " + std::to_string(x.size()) + " entries, expected " +
                                std::to_string(model.n) + " (one per joint)");
  }
  detail::localPlacements(model, data, q);
  const int bs = detail::fixmanFactor(model, data, "fixmanSolve");
  detail::checkScalar<S>(data.fx_log_det, "fixmanSolve", "log det");
  detail::fixmanApply(model, data, bs, b, x);
  detail::checkOutput<S>(x, "fixmanSolve", "x");
}

template <typename S>
S fixmanLogDet(const ModelTpl<S>& model, DataTpl<S>& data,
               const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkData(model, data, "fixmanLogDet");
  detail::checkVector(model, q, "fixmanLogDet", "q", kMaxPosition);
  detail::localPlacements(model, data, q);
  detail::fixmanFactor(model, data, "fixmanLogDet");
  detail::checkScalar<S>(data.fx_log_det, "fixmanLogDet", "log det");
  return data.fx_log_det;
}

template <typename S>
const typename Types<S>::VecX& forwardDynamicsFixman(const ModelTpl<S>& model, DataTpl<S>& data,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  detail::checkData(model, data, "forwardDynamicsFixman");
  detail::checkVectors(model, "forwardDynamicsFixman", q, "q", qd, "qd", tau, "tau");
  // phi = tau - (inverse dynamics with qdd = 0); the recursion also leaves the local placements
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, true, data.fx_phi);
  data.fx_phi = tau - data.fx_phi;
  detail::localPlacementsFromAngles(model, data, q);  // the angles of the inverse dynamics
  const int bs = detail::fixmanFactor(model, data, "forwardDynamicsFixman");
  detail::fixmanApply(model, data, bs, data.fx_phi, data.qdd);
  detail::checkOutput<S>(data.qdd, "forwardDynamicsFixman", "qdd");
  return data.qdd;
}

}  // namespace denoc
