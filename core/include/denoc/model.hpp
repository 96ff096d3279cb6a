// Model: the immutable description of a fixed-base serial chain of revolute and prismatic joints.
//
// Frames. Every moving link i (0-based here, 1-based in the papers) carries a body frame F_i whose origin
// O_i lies on joint i's axis and whose z axis is that axis, so that p_i, Rz(q_i) and the prismatic offset
// take their simplest form. The rotation of F_i about its own z axis is also free; the builder chooses it so
// that the x axis of F_{i-1} is normal to both joint axes i-1 and i (the x axis of modified
// Denavit-Hartenberg frames), which turns every constant rotation F_{i-1} <- F_i into
//   E_i = Rx(alpha_i) Rz(theta0_i)
// with alpha_i the twist angle between the two axes and theta0_i a joint offset. The internal base frame
// F_{-1} is the user's base frame turned about its z axis in the same way (`base_rotation`), so that joint 0
// has this form too. At configuration q:
//   revolute:  rotation F_{i-1} <- F_i is R_i = Rx(alpha_i) Rz(theta_i), theta_i = theta0_i + q_i,
//              origin of F_i in F_{i-1} is s_i;
//   prismatic: rotation is R_i = Rx(alpha_i) Rz(theta0_i), origin is s_i + R_i z q_i.
// A vector is rotated by R_i or R_i^T in 8 multiplications (two plane rotations) and R_i is never formed
// by the recursions. The user-facing link frame (a URDF child-link frame, or a DH frame) is related to F_i
// by the constant rotation `axis_rotation[i]` (user frame <- F_i); the builder converts all constant data
// into F_i. Gravity is given in the user's base frame (`gravity`) and used in F_{-1} (`gravity_base`).
//
// Trees (docs/trees.md). A model whose joints do not form one chain from a fixed base (JointSpec::parent),
// whose root joint is floating or planar (ModelSpec::root), or one of whose links has a rotational inertia
// that is only positive semi-definite (a point mass, a thin rod) is a tree model (`serial` false): its
// recursions run over the parent index. Its body frames are chosen as above, F_p's x axis normal to joint
// p's axis and to the axis of p's first child (the internal base frame F_{-1} likewise for a fixed root; a
// floating or planar root's F_{-1} is the root link's frame); a further child c of p needs a turn gamma_c
// about F_p's z axis first: E_c = Rz(gamma_c) Rx(alpha_c) Rz(theta0_c). Inverse and forward dynamics without
// external wrenches run the serial recursions' local steps over the parent index (algorithm/tree_local.hxx);
// the other tree functions work in world axes about the world origin (algorithm/tree.hxx).
#pragma once

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/fwd.hpp"
#include "denoc/spatial.hpp"

namespace denoc {

/// Thrown when a model is invalid; the message names the joint or link at fault.
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown when a state or a model's numbers put a computation beyond double precision: a route's pivots
/// (mh_k of the reverse Gaussian elimination, the Cholesky pivots, Fixman's hard-coordinate blocks) are not
/// positive and finite, or a result has a non-finite entry (algorithm/check.hpp). The inputs, not the
/// library, are at fault; the message names the function and the pivot or output.
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StopCondition;

/// The ranges of a model's numbers and names (docs/model-format.md, "Ranges"): checked by buildModel, and by
/// the URDF and DH builders naming their own fields. Wide enough for any real robot; narrow enough that every
/// product and sum the recursions form (m |d|^2, composite inertias, their pivots) stays finite.
inline constexpr std::size_t kMaxNameLength = 256;  // bytes: model, joint and link names
inline constexpr double kMaxLength = 1e6;           // m: |x| of an origin, a mass center, DH a and b
inline constexpr double kMaxAngle = 1e6;            // rad: |x| of DH alpha and theta
inline constexpr double kMinMass = 1e-9;            // kg: a moving body's mass
inline constexpr double kMaxMass = 1e9;
inline constexpr double kMinInertia = 1e-18;  // kg m^2: a rotational inertia's principal moments ...
inline constexpr double kMaxInertia = 1e21;   // ... and the magnitude of its entries (kMaxMass kMaxLength^2)
inline constexpr double kMaxArmature = 1e21;  // kg m^2 (revolute) or kg (prismatic)
inline constexpr double kMaxGravity = 1e4;    // m/s^2: |x| of each gravity entry

/// Checks one number of a model: finite, within [lo, hi], and either 0 or a normal (not subnormal) number.
/// Returns an empty string when it is, else the reason ("is 1e+300, expected a number in [-1e+06, 1e+06]"
/// followed by `unit`).
std::string checkNumber(double x, double lo, double hi, const char* unit = "");

/// Checks a name's length against kMaxNameLength; returns the reason or an empty string.
std::string checkName(const std::string& name);

/// Largest number of joints of a model, and largest depth of its tree (joints on the path from the root).
inline constexpr int kMaxJoints = 4096;
/// JointSpec::parent for "the joint before this one" (a serial chain); -1 is the root link.
inline constexpr int kPreviousJoint = -2;
/// Largest number of entries (6 nv per motion) a tree's sweeps of I^-1 may keep for later children
/// (ModelTpl::sweep_slots): beyond it, I^-1 takes the sparse factor's route (docs/trees.md).
inline constexpr int kMaxSweepSaved = 1 << 16;
/// A tree whose longest path holds at most this many velocity coordinates takes I^-1 from its sparse factor
/// even where the sweeps apply: on such shallow trees (a fixed-root quadruped's three-joint legs) the
/// factor's products are short and the sweeps' elimination costs more (docs/design.md, section 6).
inline constexpr int kMaxFactorInverseDepth = 4;
inline constexpr int kRootLink = -1;
/// The tolerance on a floating root's quaternion norm: | |q| - 1 | beyond it is refused (checkConfiguration).
inline constexpr double kQuaternionTolerance = 1e-6;

/// One joint and the link it moves, as a user describes it (URDF convention): the joint frame's placement
/// in the parent link's frame at q = 0; the child link's frame coincides with the joint frame at q = 0 and
/// moves with the joint. Inertial data are in the child link's frame.
struct JointSpec {
  std::string name;  // joint name (unique)
  std::string link;  // name of the link it moves
  JointType type = JointType::Revolute;
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();   // parent link frame <- joint frame
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();         // joint frame origin in the parent link frame
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();          // in the joint frame; normalised when built
  double mass = 0.0;                                        // kg, > 0
  Eigen::Vector3d com = Eigen::Vector3d::Zero();            // mass center: position in the link frame
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();        // about the mass center, link-frame axes
  double lower = -std::numeric_limits<double>::infinity();  // position limits (rad or m)
  double upper = std::numeric_limits<double>::infinity();
  double velocity_limit = std::numeric_limits<double>::infinity();
  double effort_limit = std::numeric_limits<double>::infinity();
  double armature = 0.0;  // rotor inertia reflected to the joint, added to the inertia matrix diagonal
  // the joint whose link this joint's parent link is: an index < this joint's (depth-first order),
  // kRootLink for the root link, or kPreviousJoint for the joint before (the root link for the first joint)
  int parent = kPreviousJoint;
};

/// A frame fixed to a link of the model: a URDF link merged into it by fixed joints (a foot, a flange, a
/// sensor mount), kept by name for the service's requests (kinematics, wrenches and payloads on it). The
/// recursions do not read it: its mass is in the link's.
struct FixedFrameSpec {
  std::string name;
  int joint = kRootLink;  // the joint whose link carries it; kRootLink: the root link
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // link frame <- this frame
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();        // this frame's origin in the link frame
};

/// A whole chain as a user describes it.
struct ModelSpec {
  std::string name;
  std::vector<JointSpec> joints;                               // base to tip
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);  // in the base frame, m/s^2
  // Tip (tool) frame in the last link's frame: tip wrenches are given in it, about its origin.
  Eigen::Matrix3d tip_rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d tip_origin = Eigen::Vector3d::Zero();
  // the root joint and the root link (trees; docs/trees.md): a floating or planar root moves the root link,
  // whose inertial data are these (link frame, about the mass center); a fixed root ignores them
  RootJoint root = RootJoint::Fixed;
  std::string root_link;  // name of the root link (frame name); empty: "base"
  double root_mass = 0.0;
  Eigen::Vector3d root_com = Eigen::Vector3d::Zero();
  Eigen::Matrix3d root_inertia = Eigen::Matrix3d::Zero();
  bool force_tree = false;  // build a serial chain on the tree recursions (tests and benchmarks compare both)
  // the links merged into the model's links by fixed joints, in the order of the file (URDF import); not
  // part of the dynamics, nor of the canonical form (model_io.hpp)
  std::vector<FixedFrameSpec> fixed_frames;
};

/// The constants of joint i and link i as the recursions read them, all in F_i (and s_i in F_{i-1}).
template <typename S>
struct JointConstants {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  S cos_alpha = S(1), sin_alpha = S(0);    // twist angle alpha_i: E_i = Rx(alpha_i) Rz(theta0_i)
  S theta0 = S(0);                         // joint offset (revolute: theta_i = theta0_i + q_i)
  S cos_theta0 = S(1), sin_theta0 = S(0);  // (the rotation of a prismatic joint)
  Vec3 s = Vec3::Zero();                   // O_i in F_{i-1} (q = 0)
  S m = S(0);                              // mass m_i
  Vec3 h = Vec3::Zero();                   // first moment m_i d_i about O_i
  Sym3<S> I_o = Sym3<S>::zero();           // rotational inertia about O_i, I_i + m_i (|d_i|^2 1 - d_i d_i^T)
  // I_i about C_i as lambda 1 + v1 v1^T + v2 v2^T (lambda its least principal moment, v1, v2 the other
  // principal axes scaled by the square roots of the excess), and the columns [d_i, v1, v2]: rotating these
  // three vectors gives I_i in any frame (algorithm/inertia_matrix.hxx)
  S lambda = S(0);
  Mat3 dv = Mat3::Zero();
  S armature = S(0);
  bool revolute = true;
  // trees: a turn gamma_i about the parent's z axis before Rx(alpha_i), E_i = Rz(gamma_i) Rx(alpha_i)
  // Rz(theta0_i) (Khalil and Kleinfinger's tree parameters); `turned` false: gamma_i = 0 (every serial
  // joint, and a tree's first child of each body)
  S cos_gamma = S(1), sin_gamma = S(0);
  bool turned = false;

  template <typename S2>
  JointConstants<S2> cast() const {
    JointConstants<S2> j;
    j.cos_gamma = S2(cos_gamma);
    j.sin_gamma = S2(sin_gamma);
    j.turned = turned;
    j.cos_alpha = S2(cos_alpha);
    j.sin_alpha = S2(sin_alpha);
    j.theta0 = S2(theta0);
    j.cos_theta0 = S2(cos_theta0);
    j.sin_theta0 = S2(sin_theta0);
    j.s = s.template cast<S2>();
    j.m = S2(m);
    j.h = h.template cast<S2>();
    j.I_o = Sym3<S2>{S2(I_o.xx), S2(I_o.yy), S2(I_o.zz), S2(I_o.xy), S2(I_o.xz), S2(I_o.yz)};
    j.lambda = S2(lambda);
    j.dv = dv.template cast<S2>();
    j.armature = S2(armature);
    j.revolute = revolute;
    return j;
  }
};

/// The immutable model used by every algorithm. Build it with buildModel(); share it read-only across
/// threads. S is the scalar type (double, or a counting/AD scalar through cast()).
template <typename S>
struct ModelTpl {
  using T = Types<S>;
  using Vec3 = typename T::Vec3;
  using Mat3 = typename T::Mat3;
  using Mat6 = typename T::Mat6;

  int n = 0;                // number of joints (= DOF = moving links)
  std::vector<int> parent;  // parent[i] = i - 1 (-1: the base); explicit for trees later
  std::vector<JointType> type;
  std::vector<Mat3> E;        // F_{i-1} <- F_i at q = 0: Rx(alpha_i) Rz(theta0_i)
  std::vector<Vec3> s;        // origin of F_i in F_{i-1} at q = 0
  std::vector<S> mass;        // m_i
  std::vector<Vec3> com;      // mass center C_i in F_i (d_i of the papers, from O_i to C_i)
  std::vector<Mat3> inertia;  // I_i about C_i, F_i axes
  std::vector<S> armature;    // added to I(q)_ii
  Vec3 gravity;               // user's base frame
  Mat3 tip_rotation;          // F_{n-1} <- tip frame
  Vec3 tip_origin;            // tip origin in F_{n-1}

  // the same constants in the form the recursions read them (one record per joint, contiguous)
  std::vector<JointConstants<S>> joint;
  bool has_prismatic = false;  // any prismatic joint
  Mat3 base_rotation;          // user's base frame <- F_{-1} (a rotation about z)
  Vec3 gravity_base;           // gravity in F_{-1}
  // Fixman's route (algorithm/fixman.hxx): per link I_i^-1 and the inverse spatial inertia Phi_i in F_i
  // about O_i; log det of the unconstrained mass matrix, sum of log(m_i^3 det I_i), plus the armature
  // rotors' sum of log a_i (a_i > 0)
  std::vector<Mat3> fx_J;
  std::vector<Mat6> fx_Phi;
  S fx_log_det_links = S(0);

  // trees (docs/trees.md). For a serial chain: nq = nv = nu = n, nr = nqr = 0, serial true.
  bool serial = true;  // the serial recursions apply (fixed root, parent[i] = i - 1, links PD)
  RootJoint root = RootJoint::Fixed;
  int nq = 0, nv = 0, nu = 0;   // configuration, velocity and actuated sizes
  int nqr = 0, nr = 0;          // the root's coordinates in q (0, 7, 3) and in v (0, 6, 3)
  std::vector<int> dof_parent;  // [nv] lambda(k): the velocity coordinate that k's body hangs from, -1
  // [nv] the first coordinate of the run of consecutive ancestors that ends at k: dof_parent[j] = j - 1 for
  // dof_run[k] < j <= k. The ancestors of k are the runs dof_run[k]..k, dof_run[a]..a for a =
  // dof_parent[dof_run[k]], ...: the sparse factor's walks become contiguous loops (a chain: one run)
  std::vector<int> dof_run;
  // [n + 1] 1 where a body (index n: the root link) has a child other than the next joint: the local sweeps
  // (algorithm/tree_local.hxx) keep its motion for that child
  std::vector<unsigned char> branch_point;
  // the sweeps of I^-1 over a tree (algorithm/udu.hxx, inverseBySweeps), used when tree_sweeps: the
  // coordinates numbered depth first, so that the subtree of k is the range k..dof_end[k] - 1, and the
  // motions the sweep keeps for later children fit in sweep_slots x 6 nv entries (kMaxSweepSaved)
  std::vector<int> dof_end;   // [nv] one past the last coordinate of k's subtree (depth first)
  std::vector<int> dof_slot;  // [nv] where a coordinate with two or more children keeps its motion (-1: none)
  int sweep_slots = 0;        // the most motions kept at once
  bool tree_sweeps = false;   // depth-first numbering and sweep_slots within kMaxSweepSaved
  bool inverse_by_sweeps = false;  // I^-1 by the sweeps: tree_sweeps and a path of more than
                                   // kMaxFactorInverseDepth coordinates
  int depth = 0;                   // largest number of joints on a path from the root
  S root_mass = S(0);              // root link (floating, planar): mass, mass center and inertia about it,
  Vec3 root_com = Vec3::Zero();    // in the root link frame
  Mat3 root_inertia = Mat3::Zero();
  JointConstants<S> root_joint;  // the root link's m, h and I_o in F_{-1} (zero for a fixed root)

  // user-facing metadata
  std::vector<Eigen::Matrix3d> axis_rotation;  // user link frame <- F_i
  ModelSpec spec;                              // the validated, normalised description it was built from

  /// The same model in another scalar type.
  template <typename S2>
  ModelTpl<S2> cast() const {
    ModelTpl<S2> m;
    m.n = n;
    m.parent = parent;
    m.type = type;
    m.serial = serial;
    m.root = root;
    m.nq = nq;
    m.nv = nv;
    m.nu = nu;
    m.nqr = nqr;
    m.nr = nr;
    m.dof_parent = dof_parent;
    m.dof_run = dof_run;
    m.branch_point = branch_point;
    m.dof_end = dof_end;
    m.dof_slot = dof_slot;
    m.sweep_slots = sweep_slots;
    m.tree_sweeps = tree_sweeps;
    m.inverse_by_sweeps = inverse_by_sweeps;
    m.depth = depth;
    m.root_mass = S2(root_mass);
    m.root_com = root_com.template cast<S2>();
    m.root_inertia = root_inertia.template cast<S2>();
    m.root_joint = root_joint.template cast<S2>();
    for (int i = 0; i < n; ++i) {
      m.E.push_back(E[i].template cast<S2>());
      m.s.push_back(s[i].template cast<S2>());
      m.mass.push_back(S2(mass[i]));
      m.com.push_back(com[i].template cast<S2>());
      m.inertia.push_back(inertia[i].template cast<S2>());
      m.armature.push_back(S2(armature[i]));
      m.joint.push_back(joint[i].template cast<S2>());
    }
    for (std::size_t i = 0; i < fx_J.size(); ++i) {
      m.fx_J.push_back(fx_J[i].template cast<S2>());
      m.fx_Phi.push_back(fx_Phi[i].template cast<S2>());
    }
    m.fx_log_det_links = S2(fx_log_det_links);
    m.has_prismatic = has_prismatic;
    m.base_rotation = base_rotation.template cast<S2>();
    m.gravity_base = gravity_base.template cast<S2>();
    m.gravity = gravity.template cast<S2>();
    m.tip_rotation = tip_rotation.template cast<S2>();
    m.tip_origin = tip_origin.template cast<S2>();
    m.axis_rotation = axis_rotation;
    m.spec = spec;
    return m;
  }
};

/// Validates a spec and builds the model. Throws ModelError naming the joint or link (and the field) at
/// fault when: a name is longer than kMaxNameLength; a number is not finite, is subnormal or lies outside its
/// range (kMaxLength, kMinMass..kMaxMass, kMinInertia..kMaxInertia, kMaxArmature, kMaxGravity); an inertia
/// is not symmetric, not positive definite or violates the triangle inequalities; an axis is zero; a
/// rotation is not orthonormal; position limits are NaN, inverted, or lower = +inf or upper = -inf; velocity
/// or effort limits are not positive; joint names repeat; the chain is empty. `stop`, if given, is polled
/// between joints (denoc::Stopped).
Model buildModel(const ModelSpec& spec, const StopCondition* stop = nullptr);

/// Checks one rotational inertia about the mass center: symmetric, entries within kMaxInertia and not
/// subnormal, positive definite with principal moments in [kMinInertia, kMaxInertia], triangle inequalities
/// (I_a + I_b >= I_c for the principal moments). With semidefinite, a principal moment may also be 0 (below
/// kMinInertia times 1e-3 of the largest: a point mass, a thin rod), and the whole inertia may be zero.
/// Returns an empty string when physical, else the reason.
std::string checkInertia(const Eigen::Matrix3d& inertia, bool semidefinite = false);

extern template struct ModelTpl<double>;

}  // namespace denoc
