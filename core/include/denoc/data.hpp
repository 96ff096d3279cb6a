// Data: the per-call workspace of the algorithms, allocated once for a model and reused. Every algorithm
// writes its intermediate quantities and results here; none allocates. One Data per thread.
//
// Two sets of frames are used (see model.hpp and docs/algorithms.md):
//  - local: link i's quantities in its body frame F_i, referred to the joint origin O_i (inverse dynamics,
//    section 5.1 of the 1999 paper);
//  - common: every quantity in the axes of the base frame F_{-1} and referred to the base origin. There the
//    twist-propagation matrices B_ij reduce to identity, so the composite-body, UDU^T and forward-dynamics
//    recursions become plain sums; p_i becomes [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic).
#pragma once

#include <algorithm>
#include <vector>

#include "denoc/model.hpp"
#include "denoc/spatial.hpp"

namespace denoc {

namespace detail {
/// What the forward sweep of the inverse dynamics carries from link i-1 (a tree: the parent) to link i, in
/// F_{i-1}: angular velocity w, angular acceleration wd, acceleration a of the origin O_{i-1}, and K = Wd +
/// W W with W the cross-product matrix of w (so that the acceleration of a point r of the link is a + K r).
template <typename S>
struct MotionState {
  Eigen::Matrix<S, 3, 1> w, wd, a;
  Eigen::Matrix<S, 3, 3> K;
};
}  // namespace detail

/// What the O(n) recursions keep per joint between their sweeps, one record per joint, contiguous (scratch:
/// see DataTpl).
template <typename S>
struct JointWork {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  // inverse dynamics (local: F_i, about O_i)
  Vec3 s_q;   // O_i in F_{i-1} (s_i, plus R_i z q_i for a prismatic joint)
  Vec3 f, n;  // force and moment of link i's inertia (forward sweep), then of the subchain i..n-1
              // (backward sweep), i.e. the wrench w_i transmitted by joint i
  // common frame (base axes, base origin): placements, reverse Gaussian elimination, forward dynamics
  RigidInertia<S> M;  // link inertia M_i
  Vec6 psi;           // psi_i = psi_hat_i / mh_i
  S inv_mh;           // 1 / mh_i
  S tau_hat;          // tauh_i
};

/// What the derivative sweeps of the inverse dynamics keep per joint (algorithm/
/// inverse_dynamics_derivatives.hxx), common frame (base axes, base origin), one record per joint.
template <typename S>
struct DerivativeWork {
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  // forward sweep
  Vec6 p;             // p_i
  Vec6 pdot;          // pdot_i = t_{i-1} x p_i
  Vec6 pddot;         // tdot_{i-1} x p_i + t_{i-1} x pdot_i (tdot with gravity as a base acceleration)
  RigidInertia<S> M;  // link inertia M_i
  Vec6 h;             // momentum M_i t_i
  Vec6 w;             // Newton-Euler wrench of link i, M_i tdot_i + t_i x* (M_i t_i)
  Sym3<S> Mdot_I;     // dM_i/dt: rate of the rotational inertia about the base origin (the mass rate is zero,
                      // the first-moment rate is the linear part of h)
  // backward sweep (subchain i..n-1: composite inertia Mt_i, its rate Mtdot_i, momentum ht_i, wrench w_i)
  Vec6 F1;  // Mt_i p_i
  Vec6 F2;  // (Mtdot_i + ht_i x*)^T p_i
  Vec6 G;   // p_i x* w_i + Mt_i pddot_i + (Mtdot_i + ht_i x*) pdot_i
  Vec6 H;   // 2 Mt_i pdot_i + (Mtdot_i + ht_i x*) p_i
};

/// What the derivative sweeps over a tree keep per velocity coordinate k (algorithm/tree_derivatives.hxx),
/// world axes about the world origin, one record per coordinate (the root's first). s_k is the coordinate's
/// column (p_i of a joint, a column of root_S); "body" is the link it moves (the root link for a root
/// coordinate), Mc, Bc, W its subtree's composite inertia, Coriolis matrix and wrench.
template <typename S>
struct TreeDerivativeWork {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  // forward sweep: how the twists and twist rates below the coordinate change with it (floating root: Y = 0,
  // Z = a_world x s_k, X = t_root x s_k)
  Vec6 s;      // s_k
  Vec6 sdot;   // Y_k: d t / d q_k less the rigid part s_k x t (pdot_k = t_parent x p_k)
  Vec6 sddot;  // Z_k: d tdot / d q_k less s_k x tdot and Y_k x t (tdot_parent x p_k + t_parent x pdot_k)
  Vec6 X;      // d tdot / d v_k less s_k x t (2 pdot_k)
  // backward sweep (the body's subtree)
  Vec6 F1;  // Mc s_k
  Vec6 F2;  // Bc^T s_k
  Vec6 G;   // s_k x* W + Mc Z_k + Bc Y_k
  Vec6 H;   // Mc X_k + Bc s_k
  Vec3 K;   // -Phic^T s_k: the row term of the world-axes external wrenches (Phic their subtree sum)
};

/// The workspace, in two parts (docs/algorithms.md, "The workspace"):
///  - results: what a public function returns or leaves for the caller, grouped by the function that
///    writes it; a result stays valid until the next call that writes the same field;
///  - scratch: what the algorithms need between their sweeps, grouped by the algorithm that uses it; its
///    contents after a call are unspecified.
/// Each field has one meaning and a shape that follows from the model's sizes alone (given in brackets): n
/// joints, nv velocity coordinates (n for a serial chain), nr root coordinates (docs/trees.md).
template <typename S>
struct DataTpl {
  using T = Types<S>;
  using Vec3 = typename T::Vec3;
  using Mat3 = typename T::Mat3;
  using Vec6 = typename T::Vec6;
  using Mat6 = typename T::Mat6;
  using VecX = typename T::VecX;
  using MatX = typename T::MatX;
  using Mat6X = Eigen::Matrix<S, 6, Eigen::Dynamic>;

  explicit DataTpl(const ModelTpl<S>& model);

  int n = 0;   // the model's joint count
  int nv = 0;  // the model's velocity size (n for a serial chain)

  // ---------------------------------------------------------------------------------------------------
  // Results
  // ---------------------------------------------------------------------------------------------------

  // Each group names the functions that write it: first those that return it, then ("also") those that
  // write it on the way to their own results. tests/core/test_data_layout.cpp checks these lists.

  // inverseDynamics; also computeInverseDynamicsDerivatives, computeForwardDynamicsDerivatives
  VecX tau;  // [nv] joint forces (root first: docs/trees.md)

  // forwardDynamics (every route), forwardDynamicsFixman; also computeForwardDynamicsDerivatives
  VecX qdd;  // [nv] joint accelerations

  // computeInertiaMatrix, computeFullFactor; also forwardDynamicsCholesky, and for n <= kDenseUDUMaxDof or a
  // tree model without model.inverse_by_sweeps computeInverseInertia, for
  // n <= kDenseInverseMaxDof or a tree model computeForwardDynamicsDerivatives
  MatX M;  // [nv x nv] generalized inertia matrix I(q), both triangles

  // computeFullFactor, computeUDU: I = U D U^T by reverse Gaussian elimination (appendix B)
  MatX U;  // [nv x nv] unit upper triangular factor (trees: nonzero on ancestor pairs only) (computeUDU: with
           // explicit_u); also, for n <= kDenseUDUMaxDof or a tree model without inverse_by_sweeps,
           // computeInverseInertia, for n <= kDenseInverseMaxDof or a tree model,
           // computeForwardDynamicsDerivatives
  VecX D;  // [nv] mh_k (plus armature): the diagonal of D; also forwardDynamics (Saha),
           // computeInverseInertia, computeOperationalSpaceInertia, computeForwardDynamicsDerivatives
  S log_det = S(0);  // log det I(q) = sum log mh_k; also, for a tree model, computeForwardDynamicsDerivatives
                     // and (without inverse_by_sweeps) computeInverseInertia

  // computeInverseInertia; also computeForwardDynamicsDerivatives (dqdd/dtau = I^-1)
  MatX Minv;  // [nv x nv] I(q)^-1, both triangles

  // computeLocalPlacements; also fixmanLogDet, fixmanSolve, forwardDynamicsFixman, computeConvectiveMatrix
  // and the energies
  std::vector<Mat3> R;    // [n] F_{i-1} <- F_i
  std::vector<Vec3> rho;  // [n] from C_{i-1} (the base origin for i = 0) to O_i, in F_{i-1}

  // computeCommonPlacements; also computeConvectiveMatrix and the energies
  std::vector<Mat3> R0;  // [n] F_{-1} <- F_i
  std::vector<Vec3> O0;  // [n] origin O_i
  std::vector<Vec3> C0;  // [n] mass center C_i
  std::vector<Vec6> p0;  // [n] joint-rate propagation vector p_i; also every function that works in the
                         // common frame: forwardDynamics (Saha, Cholesky), computeInertiaMatrix, computeUDU,
                         // computeFullFactor, computeInverseInertia, computeOperationalSpaceInertia,
                         // computeForwardDynamicsDerivatives

  // algorithm/convective.hpp: one field per function
  MatX C;     // [nv x nv] computeConvectiveMatrix: convective inertia matrix C(q, qd)
  VecX cqd;   // [nv] computeVelocityBias: C(q, qd) qd, the velocity part of the bias
  VecX g;     // [nv] computeGravity: g(q)
  VecX bias;  // [nv] computeBias: C(q, qd) qd + g(q)

  // fixmanLogDet, fixmanSolve, forwardDynamicsFixman (algorithm/fixman.hpp)
  S fx_log_det = S(0);  // log det I(q) (armature included) by Fixman's theorem

  // forwardKinematics (every frame), framePlacement, computeFrameJacobian, computeFrameJdotQd,
  // computeOperationalSpaceInertia (the frame asked for) (algorithm/kinematics.hpp): user base frame
  std::vector<Mat3>
      kin_R;  // [n + 2] user base <- link i's user frame (i < n), tip frame (i = n), root link (n + 1)
  std::vector<Vec3> kin_p;  // [n + 2] their origins
  // computeFrameJacobian; also computeFrameJdotQd
  Mat6X J;  // [6 x nv] [angular; linear] rows, one column per velocity coordinate
  // computeFrameJdotQd
  Vec6 Jdot_qd;  // [6] (dJ/dt) qd, same rows and frame as J
  // computeOperationalSpaceInertia (algorithm/operational_space.hpp)
  Mat6 Lambda;      // [6 x 6] (top-left 3 x 3 for a 3-row task): (J I^-1 J^T)^-1
  Mat6 Lambda_inv;  // [6 x 6] (or 3 x 3): J I^-1 J^T

  // computeInverseDynamicsDerivatives (algorithm/inverse_dynamics_derivatives.hpp; trees:
  // algorithm/tree_derivatives.hpp, the q columns along integrateConfiguration); also
  // computeForwardDynamicsDerivatives (at its qdd)
  MatX dtau_dq;   // [nv x nv]
  MatX dtau_dqd;  // [nv x nv] d tau / d v
  // computeForwardDynamicsDerivatives (algorithm/forward_dynamics_derivatives.hpp)
  MatX dqdd_dq;   // [nv x nv]
  MatX dqdd_dqd;  // [nv x nv] d qdd / d v

  // ---------------------------------------------------------------------------------------------------
  // Scratch
  // ---------------------------------------------------------------------------------------------------

  // joint angles theta_i with their cosines and sines (R_i = Rx(alpha_i) Rz(theta_i)): every algorithm
  VecX theta;      // [n] (forwardKinematics and the frame functions)
  VecX cos_theta;  // [n]
  VecX sin_theta;  // [n]

  // the O(n) recursions (inverse dynamics, placements, reverse Gaussian elimination, forward dynamics)
  std::vector<JointWork<S>> work;  // [n]

  // computeFullFactor with n <= kDenseUDUMaxDof: elimination on the dense I(q) (not used at 6 and 7 joints,
  // whose elimination runs on local arrays: denseUDUFixed)
  MatX udu_W;  // [n x n] column-major upper triangle: the Schur complements

  // computeInverseInertia: the dense route (n <= kDenseInverseMaxDof) and a tree's (nv = n for a chain) ...
  MatX minv_Uinv;   // [nv x nv] U^-1, upper triangle (a tree's: on the ancestor pairs)
  VecX minv_inv_D;  // [nv] 1 / D_k
  VecX minv_v;      // [nv] column j of D^-1 U^-1

  // the sweeps of section 5.2 on many right-hand sides at once, one joint at a time: computeInverseInertia
  // above kDenseInverseMaxDof (all unit vectors), computeForwardDynamicsDerivatives above kDenseInverseMaxDof
  // (I^-1) and above detail::productDerivativesMaxDof (the columns of dtau/dq and dtau/dqd); a tree's
  // computeInverseInertia (inverseBySweeps, model.inverse_by_sweeps)
  VecX sweep_eta_mu;  // [6 nv] six rows of nv entries: eta^j, then mu^j, for every right-hand side j
                      // (explicitU: the p_i)
  MatX sweep_rows;  // [n x n] B^T for the right-hand sides B: column i holds row i of B, then of the solution
  VecX sweep_saved;  // [6 nv x model.sweep_slots] a tree's: the motions mu kept for later children, six rows
                     // of nv entries each
  std::vector<Vec6> sweep_root_p;    // [nr] a tree's root columns S_r in F_{-1} (treeArticulated)
  std::vector<Vec6> sweep_root_psi;  // [nr] psi of the root's coordinates
  VecX sweep_root_inv_mh;            // [nr] 1 / mh of the root's coordinates

  // forwardDynamicsCholesky
  MatX chol_L;  // [n x n] lower triangle: the Cholesky factor of I(q)

  // the convective matrix and the bias (algorithm/convective.hxx: common frame, base axes, base origin)
  std::vector<RigidInertia<S>> Mt;  // [n] composite-body inertias Mt_i (eq. 23-24)
  std::vector<Vec6> Mtp;            // [n] Mt_i p_i
  std::vector<Vec6> cv_t;           // [n] twist t_i of link i, referred to the base origin
  std::vector<Vec6> cv_pdot;        // [n] pdot_i = t_{i-1} x p_i (time derivative of p_i)
  std::vector<Mat3> cv_Qa;          // [n] composite sum over links k >= i of the angular-row block of Q_k
  std::vector<Mat3> cv_Ql;          // [n] the same for the linear-row block
  std::vector<Vec6> cv_y;           // [n] Mt_j pdot_j + Qt_j p_j
  std::vector<Vec3> cv_u;           // [n] Qt_i^T p_i (angular part; the linear part is zero)

  // Fixman's route (algorithm/fixman.hxx: joint coordinates F_i about O_i;
  // hard-coordinate blocks of size 5, or 6 with armature, in the top-left corner of 6 x 6 storage)
  std::vector<Mat6> fx_Hd;       // [n] H_ii of H = K M^-1 K^T, coordinates [joint rate; 5 constraint rates]
  std::vector<Mat6> fx_Ho;       // [n] H_{i,i-1}
  std::vector<Mat6> fx_L;        // [n] hard-hard block H22_{i,i-1}
  std::vector<Mat6> fx_G;        // [n] D_{i-1}^-1 H22_{i-1,i} (block Thomas)
  std::vector<Mat6> fx_Dinv;     // [n] D_i^-1 (block Thomas pivots)
  VecX fx_det_D;                 // [n] det D_i
  std::vector<Vec6> fx_sh_self;  // [n] H12 row i, hard block i
  std::vector<Vec6> fx_sh_prev;  // [n] H12 row i, hard block i-1
  std::vector<Vec6> fx_sh_next;  // [n] H12 row i-1, hard block i
  std::vector<Vec6> fx_v;        // [n] H21 b, then H22^-1 H21 b
  VecX fx_c;                     // [n] H11 b
  VecX fx_phi;                   // [n] tau minus the inverse dynamics at qdd = 0

  // the frame functions (algorithm/kinematics.hxx)
  std::vector<Vec3> kin_e;  // [n] joint i's unit axis e_i in the user base frame (up to the frame's link)

  // computeInverseDynamicsDerivatives (algorithm/inverse_dynamics_derivatives.hxx)
  std::vector<DerivativeWork<S>> dw;  // [n]
  MatX dw_rows;  // [n x 18] the records' row quantities, one column per entry: p_i (columns 0..5), F1_i
                 // (6..11), F2_i (12..17), row i joint i (double: the assembly runs over rows in SIMD lanes)
  // computeForwardDynamicsDerivatives
  VecX tau_eff;  // [n] tau with the tip wrench's joint torques moved to the right-hand side

  // ---------------------------------------------------------------------------------------------------
  // Trees (algorithm/tree.hpp: world axes about the world origin; docs/trees.md)
  // ---------------------------------------------------------------------------------------------------
  // results: every tree function (with R0, O0, p0 above for the joints' bodies, in world axes; the local
  // inverse and forward dynamics of tree_local.hpp use them as scratch in F_{-1} instead)
  Mat3 root_R;  // world <- root link frame
  Vec3 root_p;  // root link origin in the world
  Mat6 root_S;  // [6 x nr, in 6 x 6] the root's velocity columns: t_root = root_S v_root
  // computeCenterOfMass, computeCenterOfMassJacobian, computeCentroidalMap (algorithm/centroidal.hpp)
  S mass = S(0);                             // total mass
  Vec3 com;                                  // [3] centre of mass in the world
  Eigen::Matrix<S, 3, Eigen::Dynamic> Jcom;  // [3 x nv] its Jacobian
  Mat6X Ag;    // [6 x nv] centroidal momentum matrix: h_G = Ag v, [angular; linear] about the com
  Vec6 hg;     // [6] centroidal momentum at the last v (computeCentroidalMapTimeVariation)
  Vec6 dAg_v;  // [6] (dAg/dt) v (computeCentroidalMapTimeVariation)
  // scratch: per body (root last where a root exists)
  std::vector<Vec6> tr_t;              // [n + 1] twists (index n: the root link)
  std::vector<Vec6> tr_a;              // [n + 1] accelerations (spatial, gravity as a base acceleration)
  std::vector<Vec6> tr_w;              // [n + 1] wrenches, then subtree wrenches
  std::vector<Vec6> tr_c;              // [n + 1] velocity-product accelerations pdot_i v_i
  std::vector<RigidInertia<S>> tr_M;   // [n + 1] link inertias about the world origin
  std::vector<RigidInertia<S>> tr_Mc;  // [n + 1] composite inertias
  std::vector<Mat6> tr_IA;             // [n + 1] articulated inertias
  std::vector<Vec6> tr_U;              // [n + 1] IA_i p_i
  std::vector<Mat6> tr_B;              // [n + 1] computeConvectiveMatrix: the subtree sums of B_i (tree.hxx)
  VecX tr_x;                           // [nv] a solve's right-hand side, then its solution
  // the local recursions over the parent index (algorithm/tree_local.hxx; per joint: work above, and the
  // root link's record in tl_root)
  std::vector<detail::MotionState<S>> tl_state;  // [n + 1] each body's motion in its frame (n: the root)
  std::vector<SymInertia6<S>> tl_Mh;             // [n + 1] articulated inertias, common frame (F_{-1})
  std::vector<Vec6> tl_eta;                      // [n + 1] subtree sums eta of the elimination
  std::vector<Vec6> tl_mu;                       // [n + 1] mu_k = p_k qdd_k + mu_parent
  JointWork<S> tl_root;                          // the root link's wrench (f, n in F_{-1} about its origin)
  // the derivatives over a tree (algorithm/tree_derivatives.hxx; composite inertias in tr_Mc, subtree
  // wrenches in tr_w)
  std::vector<TreeDerivativeWork<S>> tdw;      // [nv] per velocity coordinate
  std::vector<Vec6> td_h;                      // [n + 1] momenta M_k t_k, then their subtree sums
  std::vector<Sym3<S>> td_Idot;                // [n + 1] rates of the rotational inertias, then subtree sums
  std::vector<Eigen::Matrix<S, 6, 3>> td_Phi;  // [n + 1] world-axes external wrenches' Phi, then subtree sums

  // constant
  VecX zeros;  // [n] zeros (a zero qd or qdd argument for the recursions), never written
};

template <typename S>
DataTpl<S>::DataTpl(const ModelTpl<S>& model) : n(model.n), nv(model.nv) {
  const auto un = static_cast<std::size_t>(n);
  // results
  tau = VecX::Zero(nv);
  qdd = VecX::Zero(nv);
  M = MatX::Zero(nv, nv);
  U = MatX::Identity(nv, nv);
  D = VecX::Zero(nv);
  Minv = MatX::Zero(nv, nv);
  R.resize(un);
  rho.resize(un);
  R0.resize(un);
  O0.resize(un);
  C0.resize(un);
  p0.resize(un);
  C = MatX::Zero(nv, nv);
  cqd = VecX::Zero(nv);
  g = VecX::Zero(nv);
  bias = VecX::Zero(nv);
  kin_R.assign(un + 2, Mat3::Identity());
  kin_p.assign(un + 2, Vec3::Zero());
  J = Mat6X::Zero(6, nv);
  Jdot_qd.setZero();
  Lambda.setZero();
  Lambda_inv.setZero();
  dtau_dq = MatX::Zero(nv, nv);
  dtau_dqd = MatX::Zero(nv, nv);
  dqdd_dq = MatX::Zero(nv, nv);
  dqdd_dqd = MatX::Zero(nv, nv);
  // scratch (defined contents: the sweeps overwrite what they use)
  theta = VecX::Zero(n);
  cos_theta = VecX::Ones(n);
  sin_theta = VecX::Zero(n);
  work.resize(un);
  for (JointWork<S>& w : work) {
    w.s_q.setZero();
    w.f.setZero();
    w.n.setZero();
    w.M = RigidInertia<S>{S(0), Vec3::Zero(), Sym3<S>::zero()};
    w.psi.setZero();
    w.inv_mh = S(0);
    w.tau_hat = S(0);
  }
  udu_W = MatX::Zero(n, n);
  minv_Uinv = MatX::Zero(nv, nv);
  minv_inv_D = VecX::Zero(nv);
  minv_v = VecX::Zero(nv);
  sweep_eta_mu = VecX::Zero(6 * nv);
  sweep_rows = MatX::Zero(n, n);
  sweep_saved = VecX::Zero(6 * nv * model.sweep_slots);
  sweep_root_p.assign(static_cast<std::size_t>(model.nr), Vec6::Zero());
  sweep_root_psi.assign(static_cast<std::size_t>(model.nr), Vec6::Zero());
  sweep_root_inv_mh = VecX::Zero(model.nr);
  chol_L = MatX::Zero(n, n);
  Mt.resize(un);
  Mtp.resize(un);
  cv_t.resize(un);
  cv_pdot.resize(un);
  cv_Qa.resize(un);
  cv_Ql.resize(un);
  cv_y.resize(un);
  cv_u.resize(un);
  fx_Hd.resize(un);
  fx_Ho.resize(un);
  fx_L.resize(un);
  fx_G.resize(un);
  fx_Dinv.resize(un);
  fx_det_D = VecX::Zero(n);
  fx_sh_self.resize(un);
  fx_sh_prev.resize(un);
  fx_sh_next.resize(un);
  fx_v.resize(un);
  fx_c = VecX::Zero(n);
  fx_phi = VecX::Zero(n);
  kin_e.assign(un, Vec3::UnitZ());
  dw.resize(un);
  dw_rows = MatX::Zero(n, 18);
  tau_eff = VecX::Zero(n);
  root_R.setIdentity();
  root_p.setZero();
  root_S.setZero();
  com.setZero();
  Jcom = Eigen::Matrix<S, 3, Eigen::Dynamic>::Zero(3, nv);
  Ag = Mat6X::Zero(6, nv);
  hg.setZero();
  dAg_v.setZero();
  {
    const RigidInertia<S> zero{S(0), Vec3::Zero(), Sym3<S>::zero()};
    tr_t.assign(un + 1, Vec6::Zero());
    tr_a.assign(un + 1, Vec6::Zero());
    tr_w.assign(un + 1, Vec6::Zero());
    tr_c.assign(un + 1, Vec6::Zero());
    tr_M.assign(un + 1, zero);
    tr_Mc.assign(un + 1, zero);
    tr_IA.assign(un + 1, Mat6::Zero());
    tr_U.assign(un + 1, Vec6::Zero());
    tr_B.assign(un + 1, Mat6::Zero());
  }
  tr_x = VecX::Zero(nv);
  {
    detail::MotionState<S> rest;
    rest.w.setZero();
    rest.wd.setZero();
    rest.a.setZero();
    rest.K.setZero();
    tl_state.assign(un + 1, rest);
    SymInertia6<S> zero6;
    zero6.setZero();
    tl_Mh.assign(un + 1, zero6);
    tl_eta.assign(un + 1, Vec6::Zero());
    tl_mu.assign(un + 1, Vec6::Zero());
    tl_root.s_q.setZero();
    tl_root.f.setZero();
    tl_root.n.setZero();
    tl_root.M = RigidInertia<S>{S(0), Vec3::Zero(), Sym3<S>::zero()};
    tl_root.psi.setZero();
    tl_root.inv_mh = S(0);
    tl_root.tau_hat = S(0);
  }
  {
    const Vec6 z = Vec6::Zero();
    tdw.assign(static_cast<std::size_t>(nv), TreeDerivativeWork<S>{z, z, z, z, z, z, z, z, Vec3::Zero()});
    td_h.assign(un + 1, z);
    td_Idot.assign(un + 1, Sym3<S>::zero());
    td_Phi.assign(un + 1, Eigen::Matrix<S, 6, 3>::Zero());
  }
  zeros = VecX::Zero(std::max(n, nv));
}

extern template struct DataTpl<double>;

}  // namespace denoc
