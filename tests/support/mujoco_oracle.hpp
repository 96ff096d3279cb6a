// MuJoCo (Debian's libmujoco-dev 2.2.2) as an independent oracle for denoc's models, trees and serial chains
// under any root: a ModelSpec written as MJCF, compiled by MuJoCo, and MuJoCo's results turned into denoc's
// conventions (fwd.hpp, configuration.hpp). Header-only test support; link the test with libmujoco.
//
// The MJCF (toMjcf). One MuJoCo body per link, nested by JointSpec::parent; body i sits at the joint frame
// (pos = origin, quat = rotation, in the parent body's frame) and carries joint i at its origin (hinge or
// slide along the axis, in the body frame), so that the body frame is the URDF child link frame: at q = 0 it
// is the joint frame, and the joint moves it. The inertial element gives the mass, the mass centre and the
// rotational inertia in principal form (diaginertia and quat: the eigen-decomposition is made here with
// Eigen rather than left to MuJoCo's compiler, as fullinertia would). A floating root is a body
// with a <freejoint/> at the world origin; a planar root a body with a slide along world x, a slide along
// world y and a hinge about z, in this order (MuJoCo applies a body's joints in order, so both slides move
// the body along the world's axes before the hinge turns it about the vertical through its origin, which is
// denoc's (x, y, yaw)); a fixed root puts the root's children in the worldbody. The tip frame and the test
// points are sites. Contacts are disabled, no damping, stiffness or friction, armature as in the spec.
//
// What MuJoCo 2.2.2 accepts (checked): a moving body needs a mass > mjMINVAL (1e-15) and every principal
// moment > mjMINVAL ("mass and inertia of moving bodies must be larger than mjMINVAL"), and principal
// moments with A + B >= C. denoc accepts massless links and point masses on tree models; MujocoOptions::floor
// raises such masses and moments to `floor` (a perturbation of relative size floor, far below the
// comparisons' tolerance for floor = 1e-12), and without it toMjcf throws.
//
// The coordinates. MuJoCo orders its bodies depth-first in the XML, and its qpos and qvel follow the bodies:
// denoc's joint order (parents first, not necessarily depth-first) is a permutation of it. Joint i is named
// "j<i>", its body "b<i>"; the addresses come from mj_name2id, jnt_qposadr and jnt_dofadr.
//   qpos: floating root [x y z | qw qx qy qz] (denoc: [x y z | qx qy qz qw]); planar root [x y yaw]; joints
//   q_i at jnt_qposadr.
//   qvel = T v. MuJoCo's free joint has qvel = [vdot_world; omega_local]: the world-axes velocity of the body
//   origin (qpos[0..3) integrates it) and the angular velocity in the body's axes (the quaternion integrates
//   it on the right). denoc's floating v = [omega; v_o] has both in root-link axes: omega_local = omega,
//   vdot_world = R v_o with R = world <- root link. So, in MuJoCo's order of the root's six dofs,
//     T_root = [0 R; 1 0]   (rows: MuJoCo's [linear; angular], columns: denoc's [angular; linear]).
//   The planar root's [xdot ydot yawdot] and every joint rate are the same numbers (T = a permutation there).
//   T is orthogonal (R orthogonal, the rest a permutation): T^-1 = T^T.
//   qacc = d(qvel)/dt = T a + Tdot v, with denoc's a = dv/dt (configuration.hpp integrates v in root-link
//   axes): Tdot v = [Rdot v_o; 0] = [R (omega x v_o); 0] for a floating root (Rdot = R [omega]x), 0 for the
//   rest. So a = T^-1 (qacc - Tdot v).
//   Forces: a generalized force is the dual of a velocity, power = tau . v = qfrc . qvel = qfrc . T v for
//   every v, so tau = T^T qfrc and qfrc = T^-T tau. For the floating root this makes tau_root =
//   [torque_local; R^T force_world]: MuJoCo's [force in world axes; torque about the body origin in body
//   axes] becomes denoc's [moment about the root origin; force] in root-link axes, as fwd.hpp states. The
//   equations of motion carry over: both are d'Alembert's principle, sum over bodies of (inertial - applied
//   wrench) . twist = 0 for every admissible motion, written in two velocity bases; a motion is qvel = T v,
//   so M_denoc = T^T M_mujoco T, and MuJoCo's inverse dynamics at qacc = T a + Tdot v, mapped by T^T, is
//   denoc's at a.
//   Jacobians: MuJoCo's mj_jac gives jacp, jacr (3 x nv, world axes) with respect to qvel, so denoc's
//   [angular; linear] Jacobian with respect to v is [jacr; jacp] T.
//   External wrenches: MuJoCo's xfrc_applied is [force; torque] in world axes with the torque about the
//   body's mass centre (xipos); denoc's ExternalWrench is [moment about the frame origin o; force] in the
//   frame's (Local) or the world's (Base) axes: force_w = R f, torque about c = R n + (o - c) x force_w.
// The free body's origin is its body frame origin (xpos), which is denoc's root link origin: the test
// FreeJointConvention checks that, and the qvel convention above, against MuJoCo.
#pragma once

#include <mujoco/mujoco.h>

#include <Eigen/Dense>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/fwd.hpp"
#include "denoc/model.hpp"

namespace denoc::testing {

/// A site: a point fixed in a kinematic frame (denoc's frame index: 0..n-1 links, n tip, n + 1 root link),
/// given in that frame's coordinates.
struct MujocoSite {
  int frame = 0;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
};

struct MujocoOptions {
  /// Masses and principal moments below this are raised to it (MuJoCo refuses those below mjMINVAL); 0:
  /// toMjcf throws on them instead.
  double floor = 0.0;
  double timestep = 1e-3;
  /// sites "s<k>" at these points (mj_objectAcceleration works on sites)
  std::vector<MujocoSite> sites;
};

namespace mujoco_detail {

inline std::string num(double x) {
  std::ostringstream os;
  os << std::setprecision(17) << x;
  return os.str();
}

inline std::string vec(const Eigen::Vector3d& v) { return num(v.x()) + " " + num(v.y()) + " " + num(v.z()); }

/// MuJoCo's quaternion order: w x y z.
inline std::string quat(const Eigen::Matrix3d& R) {
  const Eigen::Quaterniond q(R);
  return num(q.w()) + " " + num(q.x()) + " " + num(q.y()) + " " + num(q.z());
}

/// An <inertial> element in principal form; throws (floor == 0) or raises the values MuJoCo refuses.
inline std::string inertial(double mass, const Eigen::Vector3d& com, const Eigen::Matrix3d& inertia,
                            double floor, const std::string& who) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(0.5 * (inertia + inertia.transpose()));
  Eigen::Matrix3d V = es.eigenvectors();  // body frame <- principal axes (columns)
  if (V.determinant() < 0.0) V.col(2) = -V.col(2);
  Eigen::Vector3d moments = es.eigenvalues();
  constexpr double kMuJoCoMin = 1e-14;  // mjMINVAL = 1e-15, with a margin
  if (floor > 0.0) {
    mass = std::max(mass, floor);
    for (int k = 0; k < 3; ++k) moments[k] = std::max(moments[k], floor);
  } else if (!(mass > kMuJoCoMin) || !(moments.minCoeff() > kMuJoCoMin)) {
    throw std::invalid_argument("toMjcf: " + who + " has mass " + num(mass) + " and least principal moment " +
                                num(moments.minCoeff()) +
                                ": MuJoCo 2.2.2 refuses a moving body with a mass or a moment <= 1e-15 "
                                "(set MujocoOptions::floor)");
  }
  return "<inertial pos=\"" + vec(com) + "\" mass=\"" + num(mass) + "\" diaginertia=\"" + vec(moments) +
         "\" quat=\"" + quat(V) + "\"/>";
}

}  // namespace mujoco_detail

/// The MJCF of a model description (see the file comment). Throws std::invalid_argument on a mass or
/// inertia MuJoCo refuses (unless options.floor is set) or a bad parent index.
inline std::string toMjcf(const ModelSpec& spec, const MujocoOptions& options = {}) {
  using mujoco_detail::inertial;
  using mujoco_detail::num;
  using mujoco_detail::quat;
  using mujoco_detail::vec;
  const int n = static_cast<int>(spec.joints.size());
  // children of every link (index p + 1; 0 the root link)
  std::vector<std::vector<int>> children(static_cast<std::size_t>(n + 1));
  for (int i = 0; i < n; ++i) {
    int p = spec.joints[static_cast<std::size_t>(i)].parent;
    if (p == kPreviousJoint) p = i - 1;
    if (p < -1 || p >= i)
      throw std::invalid_argument("toMjcf: joint " + std::to_string(i) + " has parent " + std::to_string(p));
    children[static_cast<std::size_t>(p + 1)].push_back(i);
  }
  // sites by link (index p + 1 as above): the tip frame on the last link, then the test points
  std::vector<std::string> sites(static_cast<std::size_t>(n + 1));
  const auto siteOn = [&](int frame, const Eigen::Vector3d& point, const Eigen::Matrix3d& R,
                          const std::string& name) {
    Eigen::Vector3d pos = point;
    Eigen::Matrix3d rot = R;
    int link = frame;
    if (frame == n) {  // the tip frame, on the last link (the root link without joints)
      link = n - 1;
      pos = spec.tip_origin + spec.tip_rotation * point;
      rot = spec.tip_rotation * R;
    } else if (frame == n + 1) {
      link = -1;
    } else if (frame < 0 || frame > n + 1) {
      throw std::invalid_argument("toMjcf: site on frame " + std::to_string(frame));
    }
    sites[static_cast<std::size_t>(link + 1)] +=
        "<site name=\"" + name + "\" pos=\"" + vec(pos) + "\" quat=\"" + quat(rot) + "\"/>\n";
  };
  siteOn(n, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity(), "tip");
  for (std::size_t k = 0; k < options.sites.size(); ++k)
    siteOn(options.sites[k].frame, options.sites[k].point, Eigen::Matrix3d::Identity(),
           std::string("s").append(std::to_string(k)));

  std::ostringstream os;
  // the body of joint i and its subtree (recursive: depth <= kMaxJoints)
  const auto body = [&](const auto& self, int i) -> void {
    const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    os << "<body name=\"b" << i << "\" pos=\"" << vec(j.origin) << "\" quat=\"" << quat(j.rotation) << "\">\n"
       << "<joint name=\"j" << i << "\" type=\"" << (j.type == JointType::Revolute ? "hinge" : "slide")
       << "\" pos=\"0 0 0\" axis=\"" << vec(j.axis) << "\" armature=\"" << num(j.armature) << "\"/>\n"
       << inertial(j.mass, j.com, j.inertia, options.floor, "link of joint " + std::to_string(i)) << "\n"
       << sites[static_cast<std::size_t>(i + 1)];
    for (int c : children[static_cast<std::size_t>(i + 1)]) self(self, c);
    os << "</body>\n";
  };
  os << "<mujoco model=\"denoc\">\n"
     << "<compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"false\" boundmass=\"0\" "
        "boundinertia=\"0\"/>\n"
     << "<option gravity=\"" << vec(spec.gravity) << "\" integrator=\"Euler\" timestep=\""
     << num(options.timestep) << "\">\n"
     << "<flag contact=\"disable\" energy=\"enable\"/>\n"
     << "</option>\n"
     << "<worldbody>\n";
  if (spec.root == RootJoint::Fixed) {
    os << sites[0];
    for (int c : children[0]) body(body, c);
  } else {
    os << "<body name=\"root\" pos=\"0 0 0\">\n";
    if (spec.root == RootJoint::Floating) {
      os << "<freejoint name=\"root\"/>\n";
    } else {
      os << "<joint name=\"root_x\" type=\"slide\" pos=\"0 0 0\" axis=\"1 0 0\"/>\n"
         << "<joint name=\"root_y\" type=\"slide\" pos=\"0 0 0\" axis=\"0 1 0\"/>\n"
         << "<joint name=\"root_yaw\" type=\"hinge\" pos=\"0 0 0\" axis=\"0 0 1\"/>\n";
    }
    os << inertial(spec.root_mass, spec.root_com, spec.root_inertia, options.floor, "root link") << "\n"
       << sites[0];
    for (int c : children[0]) body(body, c);
    os << "</body>\n";
  }
  os << "</worldbody>\n</mujoco>\n";
  return os.str();
}

/// A MuJoCo model and data for a denoc model, and its results in denoc's conventions (file comment). Every
/// function taking q (and v) sets MuJoCo's state from them first. Not thread-safe (one mjData).
class MujocoOracle {
 public:
  using Vec3 = Eigen::Vector3d;
  using Mat3 = Eigen::Matrix3d;
  using Vec6 = Eigen::Matrix<double, 6, 1>;
  using VecX = Eigen::VectorXd;
  using MatX = Eigen::MatrixXd;
  using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;

  explicit MujocoOracle(const Model& model, MujocoOptions options = {})
      : model_(model), options_(std::move(options)), xml_(toMjcf(model.spec, options_)) {
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    const char* file = "denoc_model.xml";
    if (mj_makeEmptyFileVFS(vfs.get(), file, static_cast<int>(xml_.size())) != 0)
      throw std::runtime_error("MuJoCo: mj_makeEmptyFileVFS failed");
    const int index = mj_findFileVFS(vfs.get(), file);
    std::memcpy(vfs->filedata[index], xml_.data(), xml_.size());
    char error[1024] = "";
    mjModel* m = mj_loadXML(file, vfs.get(), error, sizeof error);
    mj_deleteVFS(vfs.get());
    if (!m) throw std::runtime_error(std::string("MuJoCo refused the model: ") + error + "\n" + xml_);
    m_.reset(m);
    d_.reset(mj_makeData(m));
    const int n = model.n;
    if (m->nv != model.nv || m->nq != model.nq)
      throw std::runtime_error("MuJoCo: nq/nv " + std::to_string(m->nq) + "/" + std::to_string(m->nv) +
                               ", denoc " + std::to_string(model.nq) + "/" + std::to_string(model.nv));
    for (int i = 0; i < n; ++i) {
      const std::string name = std::to_string(i);
      const int joint = id(mjOBJ_JOINT, "j" + name);
      qpos_adr_.push_back(m->jnt_qposadr[joint]);
      dof_adr_.push_back(m->jnt_dofadr[joint]);
      body_.push_back(id(mjOBJ_BODY, "b" + name));
    }
    if (model.root == RootJoint::Floating) {
      const int joint = id(mjOBJ_JOINT, "root");
      root_qpos_ = {m->jnt_qposadr[joint]};
      root_dof_ = {m->jnt_dofadr[joint]};
    } else if (model.root == RootJoint::Planar) {
      for (const char* name : {"root_x", "root_y", "root_yaw"}) {
        const int joint = id(mjOBJ_JOINT, name);
        root_qpos_.push_back(m->jnt_qposadr[joint]);
        root_dof_.push_back(m->jnt_dofadr[joint]);
      }
    }
    root_body_ = model.root == RootJoint::Fixed ? 0 : id(mjOBJ_BODY, "root");
    tip_site_ = id(mjOBJ_SITE, "tip");
  }

  const std::string& xml() const { return xml_; }
  const mjModel* m() const { return m_.get(); }
  mjData* d() const { return d_.get(); }

  /// MuJoCo's body of a denoc frame (the tip frame: the last link's body; the root link of a fixed root:
  /// the world body 0).
  int bodyOf(int frame) const {
    const int n = model_.n;
    if (frame < n) return body_[static_cast<std::size_t>(frame)];
    if (frame == n && n > 0) return body_.back();
    return root_body_;
  }

  // --- the maps between the conventions (file comment) ------------------------------------------------

  /// MuJoCo's qpos of denoc's q.
  VecX qpos(const VecX& q) const {
    VecX qp = VecX::Zero(m_->nq);
    if (model_.root == RootJoint::Floating) {
      const int a = root_qpos_[0];
      qp.segment<3>(a) = q.head<3>();
      qp[a + 3] = q[6];  // w
      qp.segment<3>(a + 4) = q.segment<3>(3);
    } else if (model_.root == RootJoint::Planar) {
      for (int k = 0; k < 3; ++k) qp[root_qpos_[static_cast<std::size_t>(k)]] = q[k];
    }
    for (int i = 0; i < model_.n; ++i) qp[qpos_adr_[static_cast<std::size_t>(i)]] = q[model_.nqr + i];
    return qp;
  }

  /// T with qvel = T v (nv x nv).
  MatX velocityMap(const VecX& q) const {
    const int nv = model_.nv;
    MatX T = MatX::Zero(nv, nv);
    if (model_.root == RootJoint::Floating) {
      const int a = root_dof_[0];
      T.block<3, 3>(a, 3) = rootRotation(q);       // vdot_world = R v_o
      T.block<3, 3>(a + 3, 0) = Mat3::Identity();  // omega_local = omega
    } else if (model_.root == RootJoint::Planar) {
      for (int k = 0; k < 3; ++k) T(root_dof_[static_cast<std::size_t>(k)], k) = 1.0;
    }
    for (int i = 0; i < model_.n; ++i) T(dof_adr_[static_cast<std::size_t>(i)], model_.nr + i) = 1.0;
    return T;
  }

  /// Tdot v (nv): [R (omega x v_o); 0] in the floating root's MuJoCo dofs, else zero.
  VecX velocityMapRate(const VecX& q, const VecX& v) const {
    VecX r = VecX::Zero(model_.nv);
    if (model_.root == RootJoint::Floating) {
      const Vec3 omega = v.head<3>(), vo = v.segment<3>(3);
      r.segment<3>(root_dof_[0]) = rootRotation(q) * omega.cross(vo);
    }
    return r;
  }

  VecX qvel(const VecX& q, const VecX& v) const { return velocityMap(q) * v; }
  /// qacc = T a + Tdot v.
  VecX qacc(const VecX& q, const VecX& v, const VecX& a) const {
    return velocityMap(q) * a + velocityMapRate(q, v);
  }
  /// denoc's a = T^-1 (qacc - Tdot v).
  VecX acceleration(const VecX& q, const VecX& v, const VecX& qacc) const {
    return velocityMap(q).partialPivLu().solve(qacc - velocityMapRate(q, v));
  }
  /// denoc's generalized force tau = T^T qfrc.
  VecX generalizedForce(const VecX& q, const VecX& qfrc) const { return velocityMap(q).transpose() * qfrc; }
  /// MuJoCo's qfrc = T^-T tau.
  VecX mujocoForce(const VecX& q, const VecX& tau) const {
    return velocityMap(q).transpose().partialPivLu().solve(tau);
  }

  // --- MuJoCo's computations, in denoc's conventions -------------------------------------------------

  /// Sets qpos, qvel (no applied forces, qacc zero) and runs mj_forward.
  void setState(const VecX& q, const VecX& v) const {
    mjData* d = d_.get();
    mj_resetData(m_.get(), d);
    Eigen::Map<VecX>(d->qpos, m_->nq) = qpos(q);
    Eigen::Map<VecX>(d->qvel, m_->nv) = qvel(q, v);
    mj_forward(m_.get(), d);
  }

  /// tau = T^T (qfrc_inverse - J^T xfrc) at qacc = T a + Tdot v; MuJoCo's mj_inverse leaves applied forces
  /// out of qfrc_inverse (it is the force that must be applied), so the wrenches' generalized forces are
  /// mj_applyFT's, as mj_forward applies xfrc_applied.
  VecX inverseDynamics(const VecX& q, const VecX& v, const VecX& a,
                       const std::vector<ExternalWrench>& wrenches = {}) const {
    setState(q, v);
    mjData* d = d_.get();
    Eigen::Map<VecX>(d->qacc, m_->nv) = qacc(q, v, a);
    mj_inverse(m_.get(), d);
    VecX qfrc = Eigen::Map<const VecX>(d->qfrc_inverse, m_->nv);
    VecX ext = VecX::Zero(m_->nv);
    for (const ExternalWrench& w : wrenches) {
      const Vec6 x = xfrc(w);
      const Vec3 force = x.head<3>(), torque = x.tail<3>();
      const int b = bodyOf(w.frame);
      mj_applyFT(m_.get(), d, force.data(), torque.data(), d->xipos + 3 * b, b, ext.data());
    }
    return generalizedForce(q, qfrc - ext);
  }

  /// a from mj_forward with qfrc_applied = T^-T tau and the wrenches in xfrc_applied.
  VecX forwardDynamics(const VecX& q, const VecX& v, const VecX& tau,
                       const std::vector<ExternalWrench>& wrenches = {}) const {
    setState(q, v);
    mjData* d = d_.get();
    Eigen::Map<VecX>(d->qfrc_applied, m_->nv) = mujocoForce(q, tau);
    for (const ExternalWrench& w : wrenches)
      Eigen::Map<Vec6>(d->xfrc_applied + 6 * bodyOf(w.frame)) += xfrc(w);
    mj_forward(m_.get(), d);
    return acceleration(q, v, Eigen::Map<const VecX>(d->qacc, m_->nv));
  }

  /// M_denoc = T^T M T from mj_fullM of qM.
  MatX inertiaMatrix(const VecX& q) const {
    setState(q, VecX::Zero(model_.nv));
    const int nv = m_->nv;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M(nv, nv);
    mj_fullM(m_.get(), M.data(), d_->qM);
    const MatX T = velocityMap(q);
    return T.transpose() * M * T;
  }

  /// M_denoc^-1 = T^-1 M^-1 T^-T, M^-1 by MuJoCo's own factor (mj_solveM on the columns of the identity).
  MatX inverseInertia(const VecX& q) const {
    setState(q, VecX::Zero(model_.nv));
    const int nv = m_->nv;
    // mj_solveM solves n right-hand sides stored one after the other (row-major n x nv)
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X(nv, nv), I(nv, nv);
    I.setIdentity();
    mj_solveM(m_.get(), d_.get(), X.data(), I.data(), nv);
    const MatX T = velocityMap(q);
    return T.transpose() * MatX(X) * T;  // T^-1 = T^T
  }

  /// log det M_denoc = log det M (det T = +-1): minus the sum of log qLDiagInv.
  double logDetInertia(const VecX& q) const {
    setState(q, VecX::Zero(model_.nv));
    double s = 0.0;
    for (int k = 0; k < m_->nv; ++k) s -= std::log(d_->qLDiagInv[k]);
    return s;
  }

  /// C(q, v) v + g(q) in denoc's coordinates: denoc's inverse dynamics at a = 0, i.e. MuJoCo's at qacc =
  /// Tdot v: T^T (qfrc_bias + M Tdot v).
  VecX bias(const VecX& q, const VecX& v) const {
    setState(q, v);
    const int nv = m_->nv;
    const VecX rate = velocityMapRate(q, v);
    VecX Mr(nv);
    mj_mulM(m_.get(), d_.get(), Mr.data(), rate.data());
    return generalizedForce(q, Eigen::Map<const VecX>(d_->qfrc_bias, nv) + Mr);
  }

  /// The pose of a frame in the world: bodies' xmat, xpos; the tip site's.
  void framePose(const VecX& q, int frame, Mat3& R, Vec3& p) const {
    setState(q, VecX::Zero(model_.nv));
    pose(frame, R, p);
  }

  /// denoc's Jacobian (rows [angular; linear], columns v) of the point `point` of frame `frame`: [jacr; jacp]
  /// T from mj_jac at the point in the world (MuJoCo's pose of the frame); Local: both rows turned by R^T.
  Mat6X jacobian(const VecX& q, int frame, const Vec3& point, ReferenceFrame reference) const {
    setState(q, VecX::Zero(model_.nv));
    Mat3 R;
    Vec3 o;
    pose(frame, R, o);
    const Vec3 P = o + R * point;
    const int nv = m_->nv;
    Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor> jacp(3, nv), jacr(3, nv);
    mj_jac(m_.get(), d_.get(), jacp.data(), jacr.data(), P.data(), bodyOf(frame));
    Mat6X J(6, nv);
    J.topRows<3>() = jacr;
    J.bottomRows<3>() = jacp;
    J = (J * velocityMap(q)).eval();
    if (reference == ReferenceFrame::Local) {
      J.topRows<3>() = (R.transpose() * J.topRows<3>()).eval();
      J.bottomRows<3>() = (R.transpose() * J.bottomRows<3>()).eval();
    }
    return J;
  }

  /// (dJ/dt) v of site k's point, [dw/dt; a_P] in world axes at a = 0 without gravity (a_P the point's
  /// classical acceleration): MuJoCo's mj_objectAcceleration of the site (cacc from mj_rnePostConstraint with
  /// qacc = Tdot v and the gravity set to zero for the call). Local: kinematics.hpp's definition from
  /// MuJoCo's site rotation R and mj_objectVelocity's [w; v_P]: [R^T dw/dt; R^T (a_P - w x v_P)].
  Vec6 jdotQd(const VecX& q, const VecX& v, int site, ReferenceFrame reference) const {
    setState(q, v);
    mjData* d = d_.get();
    Eigen::Map<VecX>(d->qacc, m_->nv) = velocityMapRate(q, v);
    mjtNum gravity[3];
    mju_copy3(gravity, m_->opt.gravity);
    mju_zero3(m_->opt.gravity);
    mj_rnePostConstraint(m_.get(), d);
    mju_copy3(m_->opt.gravity, gravity);
    const int s = id(mjOBJ_SITE, std::string("s").append(std::to_string(site)));
    Vec6 acc, vel;
    mj_objectAcceleration(m_.get(), d, mjOBJ_SITE, s, acc.data(), 0);
    if (reference == ReferenceFrame::Base) return acc;
    mj_objectVelocity(m_.get(), d, mjOBJ_SITE, s, vel.data(), 0);
    const Mat3 R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->site_xmat + 9 * s);
    const Vec3 w = vel.head<3>(), vP = vel.tail<3>();
    Vec6 local;
    local << R.transpose() * acc.head<3>(), R.transpose() * (acc.tail<3>() - w.cross(vP));
    return local;
  }

  /// The centre of mass of the whole model: subtree_com of the world body.
  Vec3 centerOfMass(const VecX& q) const {
    setState(q, VecX::Zero(model_.nv));
    return Eigen::Map<const Vec3>(d_->subtree_com);
  }

  /// mj_energyVel's kinetic energy 1/2 qvel^T M qvel (armature included).
  double kineticEnergy(const VecX& q, const VecX& v) const {
    setState(q, v);
    return d_->energy[1];
  }
  /// mj_energyPos's potential energy -sum m_i g . xipos_i.
  double potentialEnergy(const VecX& q) const {
    setState(q, VecX::Zero(model_.nv));
    return d_->energy[0];
  }

  /// xfrc_applied of a denoc wrench (file comment), with MuJoCo's pose of the frame and mass centre of its
  /// body, after setState.
  Vec6 xfrc(const ExternalWrench& w) const {
    Mat3 R;
    Vec3 o;
    pose(w.frame, R, o);
    Vec3 moment = w.wrench.head<3>(), force = w.wrench.tail<3>();
    if (w.reference == ReferenceFrame::Local) {
      moment = R * moment;
      force = R * force;
    }
    const Vec3 c = Eigen::Map<const Vec3>(d_->xipos + 3 * bodyOf(w.frame));
    Vec6 x;
    x << force, moment + (o - c).cross(force);
    return x;
  }

 private:
  struct ModelDeleter {
    void operator()(mjModel* m) const { mj_deleteModel(m); }
  };
  struct DataDeleter {
    void operator()(mjData* d) const { mj_deleteData(d); }
  };

  int id(int type, const std::string& name) const {
    const int i = mj_name2id(m_.get(), type, name.c_str());
    if (i < 0) throw std::runtime_error("MuJoCo: no object named " + name);
    return i;
  }

  /// world <- root link of a floating root (q's quaternion normalised, as denoc and MuJoCo do).
  static Mat3 rootRotation(const VecX& q) {
    return Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
  }

  /// MuJoCo's pose of a frame after mj_forward: a link's body, the tip site, the root body (the world).
  void pose(int frame, Mat3& R, Vec3& p) const {
    const mjData* d = d_.get();
    const double* xmat = d->xmat + 9 * bodyOf(frame);
    const double* xpos = d->xpos + 3 * bodyOf(frame);
    if (frame == model_.n) {
      xmat = d->site_xmat + 9 * tip_site_;
      xpos = d->site_xpos + 3 * tip_site_;
    }
    R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(xmat);
    p = Eigen::Map<const Vec3>(xpos);
  }

  const Model& model_;
  MujocoOptions options_;
  std::string xml_;
  std::unique_ptr<mjModel, ModelDeleter> m_;
  std::unique_ptr<mjData, DataDeleter> d_;
  std::vector<int> qpos_adr_, dof_adr_, body_;  // per denoc joint
  std::vector<int> root_qpos_, root_dof_;       // floating: the free joint's first address; planar: x, y, yaw
  int root_body_ = 0;
  int tip_site_ = 0;
};

}  // namespace denoc::testing
