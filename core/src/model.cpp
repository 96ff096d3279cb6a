#include "denoc/model.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"
#include "denoc/stop.hpp"
#include "format.hpp"

namespace denoc {

template struct ModelTpl<double>;
template struct DataTpl<double>;

namespace {

std::string where(const JointSpec& j) { return "joint '" + j.name + "' (link '" + j.link + "')"; }

// the shortest text that reads back to x
bool finite(const Eigen::MatrixXd& m) { return m.allFinite(); }

// rotation Ra with Ra * z = a (a unit)
Eigen::Matrix3d alignZ(const Eigen::Vector3d& a) {
  return Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), a).toRotationMatrix();
}

void checkRotation(const Eigen::Matrix3d& R, const std::string& who, const std::string& what) {
  if (!finite(R)) throw ModelError(who + ": " + what + " has a non-finite entry");
  if ((R.transpose() * R - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-9 || R.determinant() < 0) {
    throw ModelError(who + ": " + what + " is not a proper rotation (orthonormal, determinant +1)");
  }
}

// The inertial constants of a link in F_i (m, h = m d, I_o about O_i, and lambda, [d v1 v2] of
// JointConstants) into jc.
void inertialConstants(double mass, const Eigen::Vector3d& com, const Eigen::Matrix3d& inertia,
                       JointConstants<double>& jc) {
  jc.m = mass;
  jc.h = mass * com;
  jc.I_o = Sym3<double>::fromMatrix(
      inertia + mass * (com.squaredNorm() * Eigen::Matrix3d::Identity() - com * com.transpose()));
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(inertia);
  const Eigen::Vector3d l = es.eigenvalues();  // ascending
  const Eigen::Matrix3d& u = es.eigenvectors();
  jc.lambda = l[0];
  jc.dv.col(0) = com;
  jc.dv.col(1) = std::sqrt(std::max(0.0, l[1] - l[0])) * u.col(1);
  jc.dv.col(2) = std::sqrt(std::max(0.0, l[2] - l[0])) * u.col(2);
}

// The rotation constants of a joint from Et = F_{parent} <- F_i at q = 0 (frames chosen as model.hpp says):
// Et = Rx(alpha) Rz(theta0), or with `turn` Rz(gamma) Rx(alpha) Rz(theta0) (a tree's further child). Sets
// the angles in jc and returns the rotation they make (the model's E_i); throws std::logic_error when Et has
// no such form (a frame choice gone wrong).
Eigen::Matrix3d rotationConstants(const Eigen::Matrix3d& Et, bool turn, const std::string& who,
                                  JointConstants<double>& jc) {
  Eigen::Matrix3d G = Eigen::Matrix3d::Identity();  // Rz(gamma)
  const double sa = std::hypot(Et(0, 2), Et(1, 2));
  if (turn && sa > 1e-12) {
    // Et z = Rz(gamma) (0, -sin alpha, cos alpha): (sin gamma sin alpha, -cos gamma sin alpha, cos alpha)
    jc.cos_gamma = -Et(1, 2) / sa;
    jc.sin_gamma = Et(0, 2) / sa;
    jc.turned = true;
    G << jc.cos_gamma, -jc.sin_gamma, 0.0, jc.sin_gamma, jc.cos_gamma, 0.0, 0.0, 0.0, 1.0;
  }
  const Eigen::Matrix3d D = G.transpose() * Et;
  // D = Rx(alpha) Rz(theta0) = [[c0, -s0, 0], [ca s0, ca c0, -sa], [sa s0, sa c0, ca]] up to rounding
  const double norm_a = std::hypot(D(2, 2), D(1, 2));
  const double norm_t = std::hypot(D(0, 0), D(0, 1));
  jc.cos_alpha = D(2, 2) / norm_a;
  jc.sin_alpha = -D(1, 2) / norm_a;
  jc.cos_theta0 = D(0, 0) / norm_t;
  jc.sin_theta0 = -D(0, 1) / norm_t;
  jc.theta0 = std::atan2(jc.sin_theta0, jc.cos_theta0);
  Eigen::Matrix3d Rx, Rz;
  Rx << 1.0, 0.0, 0.0, 0.0, jc.cos_alpha, -jc.sin_alpha, 0.0, jc.sin_alpha, jc.cos_alpha;
  Rz << jc.cos_theta0, -jc.sin_theta0, 0.0, jc.sin_theta0, jc.cos_theta0, 0.0, 0.0, 0.0, 1.0;
  const Eigen::Matrix3d E = G * Rx * Rz;
  if (!((E - Et).cwiseAbs().maxCoeff() < 1e-8)) {
    throw std::logic_error(who + ": internal error: the joint rotation has no DH form");
  }
  return E;
}

// turn[i + 1] (i = -1: F_{-1}), F_i before <- F_i after: F_i's x axis turned normal to joint i's axis and
// to the axis u = E_c z of `child[i + 1]` c, its first child (-1: none, no turn). With u in F_i,
// Rz(phi)^T u has no x component for (cos phi, sin phi) = (-u_y, u_x) / |(u_x, u_y)|.
std::vector<Eigen::Matrix3d> frameTurns(const std::vector<Eigen::Matrix3d>& E,
                                        const std::vector<int>& child) {
  std::vector<Eigen::Matrix3d> turn(child.size(), Eigen::Matrix3d::Identity());
  for (std::size_t b = 0; b < child.size(); ++b) {
    if (child[b] < 0) continue;
    const Eigen::Vector3d u = E[static_cast<std::size_t>(child[b])].col(2);
    const double r = std::hypot(u.x(), u.y());
    if (r > 0.0) {
      const double c = -u.y() / r, sn = u.x() / r;
      turn[b] << c, -sn, 0.0, sn, c, 0.0, 0.0, 0.0, 1.0;
    }
  }
  return turn;
}

// model.hpp's dof_run from dof_parent.
std::vector<int> ancestorRuns(const std::vector<int>& dof_parent) {
  std::vector<int> run(dof_parent.size());
  for (std::size_t k = 0; k < run.size(); ++k) {
    const int ik = static_cast<int>(k);
    run[k] = k > 0 && dof_parent[k] == ik - 1 ? run[k - 1] : ik;
  }
  return run;
}

// model.hpp's dof_end, dof_slot, sweep_slots, tree_sweeps and inverse_by_sweeps from dof_parent. The order is
// depth first when every coordinate's subtree is the range k..dof_end[k] - 1, i.e. when each coordinate
// begins where its previous sibling's subtree ends (a first child right after its parent). The slots replay
// the forward sweep of I^-1 in that order: a coordinate with two or more children keeps its motion from its
// step until its last child begins, and the motions kept at once form a stack (every later child begins after
// the subtrees of its earlier siblings have ended).
void sweepLayout(Model& m) {
  const int nv = m.nv;
  const auto unv = static_cast<std::size_t>(nv);
  m.dof_end.assign(unv, 0);
  m.dof_slot.assign(unv, -1);
  std::vector<int> children(unv, 0), last_child(unv, -1);
  for (int k = nv - 1; k >= 0; --k) {
    const auto uk = static_cast<std::size_t>(k);
    m.dof_end[uk] = std::max(m.dof_end[uk], k + 1);
    const int p = m.dof_parent[uk];
    if (p < 0) continue;
    const auto up = static_cast<std::size_t>(p);
    m.dof_end[up] = std::max(m.dof_end[up], m.dof_end[uk]);
    if (children[up]++ == 0) last_child[up] = k;
  }
  // depth first: the ranges of siblings follow one another (a child begins where its previous sibling's
  // subtree ends, the first child right after its parent), so that the ranges nest
  bool depth_first = true;
  std::vector<int> next(unv, -1);  // where the next child of a coordinate must begin
  int next_root = 0;
  for (int k = 0; k < nv; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const int p = m.dof_parent[uk];
    int& expected = p < 0 ? next_root : next[static_cast<std::size_t>(p)];
    if (p >= 0 && expected < 0) expected = p + 1;
    if (expected != k) depth_first = false;
    expected = m.dof_end[uk];
  }
  int live = 0;
  std::vector<int> stack;  // the coordinates whose motions are kept, the innermost last
  for (int k = 0; k < nv && depth_first; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const int p = m.dof_parent[uk];
    if (p >= 0 && p != k - 1 && last_child[static_cast<std::size_t>(p)] == k) {
      // a parent's last child: its motion is no longer needed (the innermost kept, the subtrees between
      // having ended)
      assert(!stack.empty() && stack.back() == p);
      stack.pop_back();
    }
    if (children[uk] >= 2) {
      m.dof_slot[uk] = static_cast<int>(stack.size());
      stack.push_back(k);
      live = std::max(live, static_cast<int>(stack.size()));
    }
  }
  m.sweep_slots = depth_first ? live : 0;
  m.tree_sweeps = depth_first && static_cast<long long>(live) * 6 * nv <= kMaxSweepSaved;
  if (!m.tree_sweeps) {
    m.dof_slot.assign(unv, -1);
    m.sweep_slots = 0;
  }
  // the longest path: the deepest joint's, below the root's nr coordinates
  m.inverse_by_sweeps = m.tree_sweeps && m.depth + m.nr > kMaxFactorInverseDepth;
}

// A tree model (model.hpp, docs/trees.md) from a validated spec: F_i is the link frame turned so that z is
// the joint axis and x is normal to the axis of its first child; E_i = F_parent <- F_i at q = 0 is then
// Rz(gamma_i) Rx(alpha_i) Rz(theta0_i), gamma_i = 0 for a first child. A floating or planar root's frame
// F_{-1} is the root link's (at the neutral configuration, the world's); a fixed root's is the world's turned
// about z as a chain's base is.
Model buildTree(ModelSpec spec) {
  const int n = static_cast<int>(spec.joints.size());
  Model m;
  m.serial = false;
  m.n = n;
  m.root = spec.root;
  m.nqr = spec.root == RootJoint::Floating ? 7 : spec.root == RootJoint::Planar ? 3 : 0;
  m.nr = spec.root == RootJoint::Floating ? 6 : spec.root == RootJoint::Planar ? 3 : 0;
  m.nq = m.nqr + n;
  m.nv = m.nr + n;
  m.nu = n;
  for (int k = 0; k < m.nr; ++k) m.dof_parent.push_back(k - 1);
  std::vector<int> depth(static_cast<std::size_t>(n), 1);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const JointSpec& j = spec.joints[ui];
    const int p = j.parent;
    const Eigen::Matrix3d Ra = alignZ(j.axis);  // link frame <- F_i
    const Eigen::Matrix3d Rp =
        p < 0 ? Eigen::Matrix3d::Identity() : m.axis_rotation[static_cast<std::size_t>(p)];
    m.parent.push_back(p);
    m.dof_parent.push_back(p < 0 ? m.nr - 1 : m.nr + p);
    if (p >= 0) depth[ui] = depth[static_cast<std::size_t>(p)] + 1;
    m.depth = std::max(m.depth, depth[ui]);
    m.type.push_back(j.type);
    m.E.push_back(Rp.transpose() * j.rotation * Ra);
    m.s.push_back(Rp.transpose() * j.origin);
    m.mass.push_back(j.mass);
    m.com.push_back(Ra.transpose() * j.com);
    m.inertia.push_back(Ra.transpose() * j.inertia * Ra);
    m.armature.push_back(j.armature);
    m.axis_rotation.push_back(Ra);
    m.has_prismatic = m.has_prismatic || j.type == JointType::Prismatic;
  }
  m.dof_run = ancestorRuns(m.dof_parent);
  sweepLayout(m);
  // the frame choice: each body's first child (child[p + 1]); a moving root's frame is the root link's
  std::vector<int> child(static_cast<std::size_t>(n) + 1, -1);
  for (int i = n - 1; i >= 0; --i)
    child[static_cast<std::size_t>(m.parent[static_cast<std::size_t>(i)] + 1)] = i;
  m.branch_point.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    const int p = m.parent[static_cast<std::size_t>(i)];
    if (p != i - 1) m.branch_point[static_cast<std::size_t>(p < 0 ? n : p)] = 1;
  }
  if (spec.root != RootJoint::Fixed) child[0] = -1;
  const std::vector<Eigen::Matrix3d> turn = frameTurns(m.E, child);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(m.parent[ui] + 1);
    const Eigen::Matrix3d& before = turn[up];     // F_parent
    const Eigen::Matrix3d& after = turn[ui + 1];  // F_i
    JointConstants<double> jc;
    m.E[ui] =
        rotationConstants(before.transpose() * m.E[ui] * after, child[up] != i, where(spec.joints[ui]), jc);
    m.s[ui] = before.transpose() * m.s[ui];
    m.com[ui] = after.transpose() * m.com[ui];
    const Eigen::Matrix3d I = after.transpose() * m.inertia[ui] * after;
    m.inertia[ui] = 0.5 * (I + I.transpose());
    m.axis_rotation[ui] = m.axis_rotation[ui] * after;
    jc.s = m.s[ui];
    inertialConstants(m.mass[ui], m.com[ui], m.inertia[ui], jc);
    jc.armature = m.armature[ui];
    jc.revolute = m.type[ui] == JointType::Revolute;
    m.joint.push_back(jc);
  }
  if (n > 0) {
    const Eigen::Matrix3d& Ra = m.axis_rotation.back();
    m.tip_rotation = Ra.transpose() * spec.tip_rotation;
    m.tip_origin = Ra.transpose() * spec.tip_origin;
  } else {
    m.tip_rotation = spec.tip_rotation;
    m.tip_origin = spec.tip_origin;
  }
  if (spec.root != RootJoint::Fixed) {
    m.root_mass = spec.root_mass;
    m.root_com = spec.root_com;
    m.root_inertia = spec.root_inertia;
    inertialConstants(m.root_mass, m.root_com, m.root_inertia, m.root_joint);
  } else {
    spec.root_mass = 0.0;
    spec.root_com.setZero();
    spec.root_inertia.setZero();
  }
  m.base_rotation = turn[0];  // the identity for a moving root
  m.gravity = spec.gravity;
  m.gravity_base = turn[0].transpose() * spec.gravity;
  m.spec = std::move(spec);
  detail::checkNeutralInertia(m);
  return m;
}

}  // namespace

std::string checkNumber(double x, double lo, double hi, const char* unit) {
  if (std::isfinite(x) && x >= lo && x <= hi && (x == 0.0 || std::isnormal(x))) return {};
  std::string why = "is " + detail::formatNumber(x) + ", expected ";
  if (std::isfinite(x) && x != 0.0 && !std::isnormal(x) && x >= lo && x <= hi) {
    return why + "0 or a normal number (this one is subnormal, below 2.2e-308 in magnitude)";
  }
  return why + "a number in [" + detail::formatNumber(lo) + ", " + detail::formatNumber(hi) + "]" + unit;
}

std::string checkName(const std::string& name) {
  if (name.size() <= kMaxNameLength) return {};
  return "name of " + std::to_string(name.size()) + " bytes ('" + name.substr(0, 40) +
         "...') is longer than the limit of " + std::to_string(kMaxNameLength) + " bytes";
}

std::string checkInertia(const Eigen::Matrix3d& inertia, bool semidefinite) {
  if (!inertia.allFinite()) return "inertia has a non-finite entry";
  const double scale = inertia.cwiseAbs().maxCoeff();
  if (scale == 0.0) return semidefinite ? std::string() : std::string("inertia is zero");
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (const std::string why = checkNumber(inertia(r, c), -kMaxInertia, kMaxInertia, " kg m^2");
          !why.empty()) {
        return "inertia entry (" + std::to_string(r + 1) + ", " + std::to_string(c + 1) + ") " + why;
      }
    }
  }
  if ((inertia - inertia.transpose()).cwiseAbs().maxCoeff() > 1e-9 * scale) return "inertia is not symmetric";
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(0.5 * (inertia + inertia.transpose()),
                                                          Eigen::EigenvaluesOnly);
  const Eigen::Vector3d l = es.eigenvalues();  // ascending
  const std::string moments = " (principal moments " + detail::formatNumber(l[0]) + ", " +
                              detail::formatNumber(l[1]) + ", " + detail::formatNumber(l[2]) + ")";
  // a semidefinite inertia's zero moments are zero up to rounding (1e-12 of the largest); they are then
  // taken as 0 in the triangle inequality
  const double zero = semidefinite ? 1e-12 * l[2] : 0.0;
  if (!(l[0] > 0.0) && !(semidefinite && l[0] >= -zero)) {
    return std::string("inertia is not positive ") + (semidefinite ? "semidefinite" : "definite") + moments;
  }
  const bool singular = semidefinite && l[0] <= zero;
  if (l[0] < kMinInertia && !singular) {
    return "inertia's least principal moment is below the limit of " + detail::formatNumber(kMinInertia) +
           " kg m^2" + moments;
  }
  if (l[2] > kMaxInertia) {
    return "inertia's largest principal moment is above the limit of " + detail::formatNumber(kMaxInertia) +
           " kg m^2" + moments;
  }
  if ((singular ? 0.0 : l[0]) + l[1] < l[2] * (1.0 - 1e-9)) {
    return "inertia violates the triangle inequality (principal moments " + detail::formatNumber(l[0]) +
           " + " + detail::formatNumber(l[1]) + " < " + detail::formatNumber(l[2]) + ")";
  }
  return {};
}

Model buildModel(const ModelSpec& input, const StopCondition* stop) {
  ModelSpec spec = input;
  const int n = static_cast<int>(spec.joints.size());
  if (const std::string why = checkName(spec.name); !why.empty()) throw ModelError("model " + why);
  if (n == 0 && spec.root == RootJoint::Fixed)
    throw ModelError("model '" + spec.name + "' has no joints (and a fixed root: nothing moves)");
  if (n > kMaxJoints) {
    throw ModelError("model '" + spec.name + "' has " + std::to_string(n) +
                     " joints, more than the limit of " + std::to_string(kMaxJoints));
  }
  if (!spec.gravity.allFinite()) throw ModelError("gravity has a non-finite entry");
  for (int k = 0; k < 3; ++k) {
    if (const std::string why = checkNumber(spec.gravity[k], -kMaxGravity, kMaxGravity, " m/s^2");
        !why.empty())
      throw ModelError("gravity[" + std::to_string(k) + "] " + why);
  }

  // why a vector's first entry out of [-bound, bound] is, or an empty string
  const auto vectorWhy = [](const Eigen::Vector3d& v, double bound) -> std::string {
    for (int k = 0; k < 3; ++k) {
      if (std::string why = checkNumber(v[k], -bound, bound, " m"); !why.empty()) {
        std::string r(1, '[');  // appended: GCC 12 warns falsely on "literal" + std::string&&
        r += std::to_string(k);
        r += "] ";
        r += why;
        return r;
      }
    }
    return {};
  };

  // mass, mass center and inertia of a link: a mass of 0 or an inertia that is only positive semi-definite
  // makes the model a tree model (its inertia matrix is checked at the neutral configuration instead)
  bool definite = true;
  const auto checkInertial = [&](double& mass, const Eigen::Vector3d& com, Eigen::Matrix3d& inertia,
                                 const std::string& who, bool& is_definite) {
    if (!std::isfinite(mass) || !(mass >= 0.0)) {
      throw ModelError(who + ": mass is " + detail::formatNumber(mass) + ", expected a finite number >= 0");
    }
    if (mass != 0.0) {
      if (const std::string why = checkNumber(mass, kMinMass, kMaxMass, " kg"); !why.empty())
        throw ModelError(who + ": mass " + why);
    }
    if (!com.allFinite()) throw ModelError(who + ": mass center has a non-finite entry");
    if (const std::string why = vectorWhy(com, kMaxLength); !why.empty())
      throw ModelError(who + ": mass center" + why);
    if (const std::string why = checkInertia(inertia, true); !why.empty()) {
      throw ModelError(who + ": " + why);
    }
    if (mass == 0.0 || !checkInertia(inertia, false).empty()) is_definite = false;
    inertia = 0.5 * (inertia + inertia.transpose());
  };

  bool chain = true;
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (stop && stop->stopRequested()) stop->raise("buildModel", static_cast<std::uint64_t>(i), n, "joints");
    JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    if (const std::string why = checkName(j.name); !why.empty())
      throw ModelError("joint " + std::to_string(i + 1) + ": joint " + why);
    if (const std::string why = checkName(j.link); !why.empty())
      throw ModelError("joint '" + j.name + "': link " + why);
    if (j.name.empty()) j.name = "joint" + std::to_string(i + 1);
    if (j.link.empty()) j.link = "link" + std::to_string(i + 1);
    const std::string who = where(j);
    if (!names.insert(j.name).second) throw ModelError(who + ": joint name is used twice");
    checkRotation(j.rotation, who, "joint rotation");
    if (!j.origin.allFinite()) throw ModelError(who + ": joint origin has a non-finite entry");
    if (const std::string why = vectorWhy(j.origin, kMaxLength); !why.empty())
      throw ModelError(who + ": joint origin" + why);
    if (!j.axis.allFinite()) throw ModelError(who + ": axis has a non-finite entry");
    // scaled first: the norm of an axis such as (1e300, 1e300, 0) overflows
    const double axis_scale = j.axis.cwiseAbs().maxCoeff();
    if (!(axis_scale > 0.0)) throw ModelError(who + ": axis is zero");
    j.axis /= axis_scale;
    j.axis.normalize();
    if (j.parent == kPreviousJoint) j.parent = i - 1;
    if (j.parent < kRootLink || j.parent >= i) {
      throw ModelError(
          who + ": parent " + std::to_string(j.parent) +
          " is not an earlier joint (joints are listed parents first, depth-first; -1 is the root "
          "link)");
    }
    chain = chain && j.parent == i - 1;
    checkInertial(j.mass, j.com, j.inertia, who, definite);
    if (std::isnan(j.lower) || std::isnan(j.upper) || j.lower > j.upper ||
        j.lower == std::numeric_limits<double>::infinity() ||
        j.upper == -std::numeric_limits<double>::infinity()) {
      throw ModelError(who + ": position limits [" + detail::formatNumber(j.lower) + ", " +
                       detail::formatNumber(j.upper) +
                       "] are invalid (expected lower <= upper, lower < +inf, upper > -inf, no NaN)");
    }
    if (std::isnan(j.velocity_limit) || !(j.velocity_limit > 0.0)) {
      throw ModelError(who + ": velocity limit is " + detail::formatNumber(j.velocity_limit) +
                       ", expected > 0");
    }
    if (std::isnan(j.effort_limit) || !(j.effort_limit > 0.0)) {
      throw ModelError(who + ": effort limit is " + detail::formatNumber(j.effort_limit) + ", expected > 0");
    }
    if (!std::isfinite(j.armature) || j.armature < 0.0) {
      throw ModelError(who + ": armature is " + detail::formatNumber(j.armature) +
                       ", expected a finite number >= 0");
    }
    if (const std::string why = checkNumber(j.armature, 0.0, kMaxArmature); !why.empty())
      throw ModelError(who + ": armature " + why);
  }
  if (spec.root_link.empty()) spec.root_link = "base";
  if (const std::string why = checkName(spec.root_link); !why.empty()) throw ModelError("root link " + why);
  if (spec.root != RootJoint::Fixed) {
    bool root_definite = true;
    checkInertial(spec.root_mass, spec.root_com, spec.root_inertia, "root link '" + spec.root_link + "'",
                  root_definite);
  }
  checkRotation(spec.tip_rotation, "tip frame", "rotation");
  if (!spec.tip_origin.allFinite()) throw ModelError("tip frame: origin has a non-finite entry");
  if (const std::string why = vectorWhy(spec.tip_origin, kMaxLength); !why.empty())
    throw ModelError("tip frame: origin" + why);

  if (!(chain && definite && spec.root == RootJoint::Fixed) || spec.force_tree)
    return buildTree(std::move(spec));

  Model m;
  m.n = n;
  m.nq = m.nv = m.nu = n;
  m.depth = n;
  m.branch_point.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) m.dof_parent.push_back(i - 1);
  m.dof_run = ancestorRuns(m.dof_parent);
  sweepLayout(m);
  Eigen::Matrix3d Ra_parent = Eigen::Matrix3d::Identity();
  for (int i = 0; i < n; ++i) {
    const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    const Eigen::Matrix3d Ra = alignZ(j.axis);  // joint (link) frame <- F_i (before the turn below)
    m.parent.push_back(i - 1);
    m.type.push_back(j.type);
    m.E.push_back(Ra_parent.transpose() * j.rotation * Ra);
    m.s.push_back(Ra_parent.transpose() * j.origin);
    m.mass.push_back(j.mass);
    m.com.push_back(Ra.transpose() * j.com);
    m.inertia.push_back(Ra.transpose() * j.inertia * Ra);
    m.armature.push_back(j.armature);
    m.axis_rotation.push_back(Ra);
    Ra_parent = Ra;
  }
  m.tip_rotation = Ra_parent.transpose() * spec.tip_rotation;
  m.tip_origin = Ra_parent.transpose() * spec.tip_origin;

  // frame choice (model.hpp): turn F_{i-1} about its z axis so that its x axis is normal to joint i's axis
  // too (frameTurns, each link's child the next joint); the last link keeps its frame
  std::vector<int> next(static_cast<std::size_t>(n) + 1, -1);
  for (int i = 0; i < n; ++i) next[static_cast<std::size_t>(i)] = i;
  const std::vector<Eigen::Matrix3d> turn = frameTurns(m.E, next);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Eigen::Matrix3d& before = turn[ui];     // F_{i-1}
    const Eigen::Matrix3d& after = turn[ui + 1];  // F_i
    JointConstants<double> jc;
    m.E[ui] = rotationConstants(before.transpose() * m.E[ui] * after, false, where(spec.joints[ui]), jc);
    m.s[ui] = before.transpose() * m.s[ui];
    m.com[ui] = after.transpose() * m.com[ui];
    m.inertia[ui] = after.transpose() * m.inertia[ui] * after;
    m.inertia[ui] = 0.5 * (m.inertia[ui] + m.inertia[ui].transpose()).eval();
    m.axis_rotation[ui] = m.axis_rotation[ui] * after;
    jc.s = m.s[ui];
    inertialConstants(m.mass[ui], m.com[ui], m.inertia[ui], jc);
    jc.armature = m.armature[ui];
    jc.revolute = m.type[ui] == JointType::Revolute;
    m.has_prismatic = m.has_prismatic || !jc.revolute;
    m.joint.push_back(jc);
  }
  // Fixman's constants: Phi = [[J, -J (c x)], [(c x) J, -(c x) J (c x) + 1/m]], J = I^-1, c = d_i
  m.fx_log_det_links = 0.0;
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Eigen::Matrix3d J = m.inertia[ui].inverse();
    Eigen::Matrix3d cx;
    const Eigen::Vector3d& c = m.com[ui];
    cx << 0.0, -c.z(), c.y(), c.z(), 0.0, -c.x(), -c.y(), c.x(), 0.0;
    const Eigen::Matrix3d Jcx = J * cx;
    Eigen::Matrix<double, 6, 6> Phi;
    Phi.topLeftCorner<3, 3>() = J;
    Phi.topRightCorner<3, 3>() = -Jcx;
    Phi.bottomLeftCorner<3, 3>() = -Jcx.transpose();
    Phi.bottomRightCorner<3, 3>() = -cx * Jcx;
    Phi.bottomRightCorner<3, 3>().diagonal().array() += 1.0 / m.mass[ui];
    m.fx_J.push_back(J);
    m.fx_Phi.push_back(Phi);
    m.fx_log_det_links += 3.0 * std::log(m.mass[ui]) + std::log(m.inertia[ui].determinant());
    if (m.armature[ui] > 0.0) m.fx_log_det_links += std::log(m.armature[ui]);
  }

  const Eigen::Matrix3d& last = turn[static_cast<std::size_t>(n)];
  m.tip_rotation = last.transpose() * m.tip_rotation;
  m.tip_origin = last.transpose() * m.tip_origin;
  m.base_rotation = turn[0];
  m.gravity = spec.gravity;
  m.gravity_base = turn[0].transpose() * spec.gravity;
  m.spec = std::move(spec);
  return m;
}

}  // namespace denoc
