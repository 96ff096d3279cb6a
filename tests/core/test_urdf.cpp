// URDF import (core/src/urdf.cpp, policy in docs/urdf.md).
//
// Oracle: Orocos KDL, built here INDEPENDENTLY of denoc's importer from urdfdom's parse of the same file (the
// kdl_parser mapping: one KDL::Segment per URDF joint, KDL::Joint(name, origin, axis in the parent frame,
// type), fixed joints as KDL::Joint::None segments, inertias rotated out of their <inertial> frame by KDL's
// own RigidBodyInertia arithmetic; tests/support/urdf_kdl.hpp). Two KDL models per robot:
//  - a KDL::Tree of everything below the base link, every joint a real joint; joints off the chain are held
//  at
//    their lock position with zero rate and acceleration; TreeIdSolver_RNE gives the torques, and the inertia
//    matrix column by column (zero gravity, zero velocity, unit acceleration);
//  - a KDL::Chain of the path base -> tip (fixed segments kept: KDL merges them itself), with everything that
//    hangs off a path link added to that link's inertia with KDL's Frame * RigidBodyInertia and operator+;
//    ChainIdSolver_RNE and ChainDynParam::JntToMass, and ChainFkSolverPos_recursive for the tip frame.
// Agreement to 1e-9 relative at 100 random states per robot.
#include <gtest/gtest.h>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <kdl/chain.hpp>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <kdl/tree.hpp>
#include <kdl/treeidsolver_recursive_newton_euler.hpp>
#include <map>
#include <numbers>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "denoc/urdf.hpp"
#include "support/compare.hpp"
#include "support/read_file.hpp"
#include "support/urdf_kdl.hpp"

namespace denoc {
namespace {

namespace fs = std::filesystem;
constexpr double kTol = 1e-9;
constexpr double kPi = std::numbers::pi;

const fs::path kModels = fs::path(DENOC_MODELS_DIR);
const fs::path kCorpus = fs::path(DENOC_SOURCE_DIR) / "tests" / "data" / "urdf";

using testing::maxRelativeError;
using testing::readFile;

// ---------------------------------------------------------------- the KDL oracle, from urdfdom directly

using urdf_kdl::kdlFrame;
using urdf_kdl::kdlInertia;
using urdf_kdl::kdlJoint;
using urdf_kdl::kdlSegment;
using urdf_kdl::moving;

// The documented lock position of a joint off the chain: 0, clamped into [lower, upper] when that is a proper
// range; a mimic joint follows its (locked) master.
double lockPosition(const urdf::ModelInterface& m, const urdf::Joint& j) {
  if (j.mimic)
    return j.mimic->multiplier * lockPosition(m, *m.getJoint(j.mimic->joint_name)) + j.mimic->offset;
  if (j.type == urdf::Joint::CONTINUOUS || !j.limits || !(j.limits->lower < j.limits->upper)) return 0.0;
  return std::min(std::max(0.0, j.limits->lower), j.limits->upper);
}

struct Oracle {
  urdf::ModelInterfaceSharedPtr urdf;
  KDL::Tree tree;
  KDL::Chain chain;
  std::vector<std::string> chain_joints;                // moving joints of the chain, base to tip
  std::vector<std::pair<double, double>> chain_limits;  // position limits used for sampling
  std::vector<bool> chain_prismatic;
  std::map<std::string, double> locked;        // moving joints off the chain -> lock position
  std::map<std::string, unsigned> tree_index;  // moving joint -> KDL tree q index
};

Oracle makeOracle(const std::string& xml, const std::string& base_name, const std::string& tip_name) {
  Oracle o;
  o.urdf = urdf::parseURDF(xml);
  if (!o.urdf) throw std::runtime_error("urdfdom cannot parse the file");
  const urdf::ModelInterface& m = *o.urdf;
  const urdf::LinkConstSharedPtr base = base_name.empty() ? m.getRoot() : m.getLink(base_name);
  const urdf::LinkConstSharedPtr tip = m.getLink(tip_name);
  if (!base || !tip) throw std::runtime_error("base or tip link not found");

  // the path base -> tip
  std::vector<urdf::JointConstSharedPtr> path;
  for (urdf::LinkConstSharedPtr l = tip; l != base; l = m.getLink(l->parent_joint->parent_link_name)) {
    if (!l->parent_joint) throw std::runtime_error("tip not below base");
    path.push_back(l->parent_joint);
  }
  std::reverse(path.begin(), path.end());
  std::set<std::string> on_path;
  for (const auto& j : path) on_path.insert(j->name);

  // tree of everything below the base, and the lock positions of the moving joints off the path
  o.tree = KDL::Tree(base->name);
  std::function<void(const urdf::LinkConstSharedPtr&)> grow = [&](const urdf::LinkConstSharedPtr& l) {
    for (const auto& j : l->child_joints) {
      if (!o.tree.addSegment(kdlSegment(m, *j), l->name)) throw std::runtime_error("KDL addSegment failed");
      if (moving(*j) && !on_path.count(j->name)) o.locked[j->name] = lockPosition(m, *j);
      grow(m.getLink(j->child_link_name));
    }
  };
  grow(base);
  for (const auto& [name, element] : o.tree.getSegments()) {
    const KDL::Segment& s = GetTreeElementSegment(element);
    if (s.getJoint().getType() != KDL::Joint::None)
      o.tree_index[s.getJoint().getName()] = GetTreeElementQNr(element);
  }

  // everything hanging from a link, at the lock positions, in that link's frame (KDL arithmetic)
  std::function<KDL::RigidBodyInertia(const urdf::LinkConstSharedPtr&, const std::string&)> lumped =
      [&](const urdf::LinkConstSharedPtr& l, const std::string& skip_joint) {
        KDL::RigidBodyInertia I = kdlInertia(l);
        for (const auto& j : l->child_joints) {
          if (j->name == skip_joint) continue;
          const double q = moving(*j) ? lockPosition(m, *j) : 0.0;
          I = I + kdlSegment(m, *j).pose(q) * lumped(m.getLink(j->child_link_name), "");
        }
        return I;
      };
  for (std::size_t k = 0; k < path.size(); ++k) {
    const urdf::Joint& j = *path[k];
    const std::string next = k + 1 < path.size() ? path[k + 1]->name : "";
    o.chain.addSegment(KDL::Segment(j.child_link_name, kdlJoint(j),
                                    kdlFrame(j.parent_to_joint_origin_transform),
                                    lumped(m.getLink(j.child_link_name), next)));
    if (moving(j)) {
      o.chain_joints.push_back(j.name);
      o.chain_prismatic.push_back(j.type == urdf::Joint::PRISMATIC);
      const bool bounded = j.type != urdf::Joint::CONTINUOUS && j.limits && j.limits->lower < j.limits->upper;
      const double wide = j.type == urdf::Joint::PRISMATIC ? 0.3 : kPi;
      o.chain_limits.emplace_back(bounded ? j.limits->lower : -wide, bounded ? j.limits->upper : wide);
    }
  }
  return o;
}

KDL::JntArray kdl(const Eigen::VectorXd& v) {
  KDL::JntArray a(static_cast<unsigned>(v.size()));
  a.data = v;
  return a;
}

struct Errors {
  double tau_chain = 0, tau_tree = 0, mass_chain = 0, mass_tree = 0, tip_wrench = 0, tip_pose = 0;
};

// denoc vs the two KDL models at `states` random states. Gravity: the options' or the default.
Errors compareWithKdl(const Model& model, const Oracle& o, const Eigen::Vector3d& gravity, int states,
                      std::uint32_t seed) {
  const int n = model.n;
  EXPECT_EQ(static_cast<int>(o.chain_joints.size()), n);
  EXPECT_EQ(static_cast<int>(o.chain.getNrOfJoints()), n);
  for (int i = 0; i < n && i < static_cast<int>(o.chain_joints.size()); ++i) {
    EXPECT_EQ(model.spec.joints[static_cast<std::size_t>(i)].name,
              o.chain_joints[static_cast<std::size_t>(i)]);
  }
  const KDL::Vector g(gravity.x(), gravity.y(), gravity.z());
  KDL::ChainIdSolver_RNE chain_id(o.chain, g);
  KDL::ChainDynParam chain_dyn(o.chain, g);
  KDL::ChainFkSolverPos_recursive chain_fk(o.chain);
  KDL::TreeIdSolver_RNE tree_id(o.tree, g);
  KDL::TreeIdSolver_RNE tree_id0(o.tree, KDL::Vector::Zero());
  const unsigned nt = o.tree.getNrOfJoints();

  Data data(model);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Errors e;
  for (int s = 0; s < states; ++s) {
    Eigen::VectorXd q(n), qd(n), qdd(n);
    for (int i = 0; i < n; ++i) {
      const auto [lo, hi] = o.chain_limits[static_cast<std::size_t>(i)];
      q[i] = lo + (hi - lo) * 0.5 * (u(rng) + 1.0);
      qd[i] = 2.0 * u(rng);
      qdd[i] = 3.0 * u(rng);
    }
    // chain
    KDL::JntArray tau_c(static_cast<unsigned>(n));
    KDL::Wrenches no_ext(o.chain.getNrOfSegments(), KDL::Wrench::Zero());
    EXPECT_GE(chain_id.CartToJnt(kdl(q), kdl(qd), kdl(qdd), no_ext, tau_c), 0);
    KDL::JntSpaceInertiaMatrix H(static_cast<unsigned>(n));
    EXPECT_GE(chain_dyn.JntToMass(kdl(q), H), 0);
    // tree: chain joints from the state, the others held at their lock position
    KDL::JntArray qt(nt), qdt(nt), qddt(nt), tau_t(nt);
    for (const auto& [name, value] : o.locked) qt(o.tree_index.at(name)) = value;
    for (int i = 0; i < n; ++i) {
      const unsigned k = o.tree_index.at(o.chain_joints[static_cast<std::size_t>(i)]);
      qt(k) = q[i];
      qdt(k) = qd[i];
      qddt(k) = qdd[i];
    }
    EXPECT_GE(tree_id.CartToJnt(qt, qdt, qddt, KDL::WrenchMap(), tau_t), 0);
    Eigen::VectorXd tau_tree(n);
    Eigen::MatrixXd M_tree(n, n);
    for (int i = 0; i < n; ++i)
      tau_tree[i] = tau_t(o.tree_index.at(o.chain_joints[static_cast<std::size_t>(i)]));
    for (int j = 0; j < n; ++j) {
      KDL::JntArray zero(nt), unit(nt), col(nt);
      unit(o.tree_index.at(o.chain_joints[static_cast<std::size_t>(j)])) = 1.0;
      EXPECT_GE(tree_id0.CartToJnt(qt, zero, unit, KDL::WrenchMap(), col), 0);
      for (int i = 0; i < n; ++i)
        M_tree(i, j) = col(o.tree_index.at(o.chain_joints[static_cast<std::size_t>(i)]));
    }

    const Eigen::VectorXd tau = inverseDynamics(model, data, q, qd, qdd);
    e.tau_chain = std::max(e.tau_chain, maxRelativeError(tau, tau_c.data));
    e.tau_tree = std::max(e.tau_tree, maxRelativeError(tau, tau_tree));
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    e.mass_chain = std::max(e.mass_chain, maxRelativeError(M, H.data));
    e.mass_tree = std::max(e.mass_tree, maxRelativeError(M, M_tree));

    // a wrench on the tip (by the environment, tip frame, about the tip origin): the chain's last segment
    // frame
    Eigen::Matrix<double, 6, 1> w;
    for (int k = 0; k < 6; ++k) w[k] = 5.0 * u(rng);
    KDL::Wrenches ext(o.chain.getNrOfSegments(), KDL::Wrench::Zero());
    ext.back() = KDL::Wrench(KDL::Vector(w[3], w[4], w[5]), KDL::Vector(w[0], w[1], w[2]));
    KDL::JntArray tau_w(static_cast<unsigned>(n));
    EXPECT_GE(chain_id.CartToJnt(kdl(q), kdl(qd), kdl(qdd), ext, tau_w), 0);
    e.tip_wrench =
        std::max(e.tip_wrench, maxRelativeError(inverseDynamics(model, data, q, qd, qdd, w), tau_w.data));

    // tip frame
    KDL::Frame F;
    EXPECT_GE(chain_fk.JntToCart(kdl(q), F), 0);
    computeLocalPlacements(model, data, q);
    computeCommonPlacements(model, data);
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    tipPose(model, data, R, p);
    Eigen::Matrix3d Rk;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Rk(r, c) = F.M(r, c);
    const Eigen::Vector3d pk(F.p.x(), F.p.y(), F.p.z());
    e.tip_pose = std::max({e.tip_pose, (R - Rk).cwiseAbs().maxCoeff(), (p - pk).cwiseAbs().maxCoeff()});
  }
  return e;
}

void expectAgreement(const Errors& e, const std::string& what) {
  EXPECT_LT(e.tau_chain, kTol) << what;
  EXPECT_LT(e.tau_tree, kTol) << what;
  EXPECT_LT(e.mass_chain, kTol) << what;
  EXPECT_LT(e.mass_tree, kTol) << what;
  EXPECT_LT(e.tip_wrench, kTol) << what;
  EXPECT_LT(e.tip_pose, 1e-12) << what;
  std::cout << std::scientific << std::setprecision(2) << "[ KDL ] " << std::left << std::setw(44) << what
            << " tau chain " << e.tau_chain << " tree " << e.tau_tree << " | I(q) chain " << e.mass_chain
            << " tree " << e.mass_tree << " | tip wrench " << e.tip_wrench << " | tip pose " << e.tip_pose
            << "\n";
}

// ---------------------------------------------------------------- the example robot files (examples/models)

struct RobotCase {
  std::string file;
  std::string tip;  // the tip the documented default picks, or the one given
  int dof;
  bool give_tip;  // pass tip_link (the default is ambiguous for this file)
};

void PrintTo(const RobotCase& c, std::ostream* os) { *os << c.file; }

const std::vector<RobotCase>& robotCases() {
  static const std::vector<RobotCase> cases = {
      {"acrobot.urdf", "lower_link", 2, false},
      {"double_pendulum.urdf", "link3", 2, false},
      {"double_pendulum_continuous.urdf", "link2", 2, false},
      {"gen3.urdf", "end_effector_link", 7, false},
      {"iiwa14.urdf", "iiwa_link_7", 7, false},
      {"panda.urdf", "panda_link8", 7, false},
      {"panda_hand.urdf", "panda_hand_tcp", 7, true},  // the fingers are locked, off the chain
      {"ur10.urdf", "wrist_3_link", 6, false},
      {"ur5.urdf", "wrist_3_link", 6, false},
  };
  return cases;
}

TEST(UrdfModels, EveryFileInTheModelsDirectoryIsCovered) {
  std::set<std::string> listed;
  for (const auto& c : robotCases()) listed.insert(c.file);
  int found = 0;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    if (entry.path().extension() != ".urdf") continue;
    ++found;
    EXPECT_TRUE(listed.count(entry.path().filename().string()))
        << entry.path() << " has no case in test_urdf.cpp";
  }
  EXPECT_EQ(found, static_cast<int>(listed.size()));
}

class UrdfRobot : public ::testing::TestWithParam<RobotCase> {};

TEST_P(UrdfRobot, LoadsAndMatchesKdl) {
  const RobotCase& c = GetParam();
  const fs::path path = kModels / c.file;
  UrdfOptions options;
  if (c.give_tip) options.tip_link = c.tip;
  const Model model = buildModelFromUrdfFile(path.string(), options);
  EXPECT_EQ(model.n, c.dof);
  const ModelSpec spec = specFromUrdf(readFile(path), options);
  ASSERT_EQ(spec.joints.size(), model.spec.joints.size());
  EXPECT_EQ(spec.gravity, Eigen::Vector3d(0, 0, -9.81));
  const Oracle o = makeOracle(readFile(path), "", c.tip);
  expectAgreement(compareWithKdl(model, o, model.gravity, 100, 7), c.file);
}

INSTANTIATE_TEST_SUITE_P(ExampleModels, UrdfRobot, ::testing::ValuesIn(robotCases()),
                         [](const ::testing::TestParamInfo<RobotCase>& info) {
                           std::string s = info.param.file.substr(0, info.param.file.size() - 5);
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

TEST(UrdfModels, PandaHandWithoutTipIsTheWholeTree) {
  // two moving branches below panda_link7 (the fingers): without tip_link every moving joint is a joint of
  // the model, the fingers children of joint 7 in the order of the file, the mimic finger independent
  std::vector<std::string> notes;
  UrdfOptions options;
  options.notes = &notes;
  const Model model = buildModelFromUrdfFile((kModels / "panda_hand.urdf").string(), options);
  ASSERT_EQ(model.n, 9);
  EXPECT_FALSE(model.serial);
  EXPECT_EQ(model.nq, 9);
  EXPECT_EQ(model.nv, 9);
  EXPECT_EQ(model.parent, (std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 6}));
  EXPECT_EQ(model.spec.joints[7].name, "panda_finger_joint1");
  EXPECT_EQ(model.spec.joints[8].name, "panda_finger_joint2");
  EXPECT_EQ(model.spec.root_link, "panda_link0");
  // link 7 carries the hand (fixed), each finger its own 0.015 kg: the moving mass is the chain's
  double total = 0.0;
  for (const auto& j : model.spec.joints) total += j.mass;
  EXPECT_NEAR(total, 16.822132, 1e-9);
  EXPECT_NEAR(model.spec.joints[6].mass, 0.735522 + 0.73, 1e-12);
  EXPECT_EQ(notes,
            (std::vector<std::string>{"joint 'panda_finger_joint2' mimics 'panda_finger_joint1': loaded "
                                      "as an independent joint"}));
}

TEST(UrdfModels, PandaHandLocksTheFingersAndCarriesTheirMass) {
  // Moving mass: the arm links + panda_hand 0.73 (fixed) + two fingers 0.015 each (locked), per
  // models/README.
  UrdfOptions options;
  options.tip_link = "panda_hand_tcp";
  const ModelSpec spec = specFromUrdf(readFile(kModels / "panda_hand.urdf"), options);
  double total = 0.0;
  for (const auto& j : spec.joints) total += j.mass;
  EXPECT_NEAR(total, 16.822132, 1e-9);
  EXPECT_NEAR(spec.joints.back().mass, 0.735522 + 0.73 + 0.03, 1e-12);
  // the tip frame is panda_hand_tcp in panda_link7: link8 at z 0.107, hand rotated -45 deg about z, tcp at z
  // 0.1034
  EXPECT_NEAR(spec.tip_origin.z(), 0.107 + 0.1034, 1e-12);
}

TEST(UrdfModels, DefaultTipsAndTipFrames) {
  // gen3: bracelet_link -> end_effector_link (fixed, then the camera frames branch): the tip is
  // end_effector_link
  {
    const ModelSpec s = specFromUrdf(readFile(kModels / "gen3.urdf"));
    EXPECT_TRUE(s.tip_origin.isApprox(Eigen::Vector3d(0, 0, -0.0615250000000001), 1e-12))
        << s.tip_origin.transpose();
    const Eigen::Matrix3d Rx_pi = Eigen::AngleAxisd(kPi, Eigen::Vector3d::UnitX()).toRotationMatrix();
    EXPECT_LT((s.tip_rotation - Rx_pi).cwiseAbs().maxCoeff(),
              1e-4);  // rpy="3.14159265358979 ..." in the file
  }
  // ur5: wrist_3_link branches at once (ee_link, tool0): the tip is wrist_3_link itself
  {
    const ModelSpec s = specFromUrdf(readFile(kModels / "ur5.urdf"));
    EXPECT_EQ(s.tip_origin, Eigen::Vector3d::Zero());
    EXPECT_EQ(s.tip_rotation, Eigen::Matrix3d::Identity());
    EXPECT_EQ(s.joints.back().link, "wrist_3_link");
  }
  // panda: panda_link7 -> panda_link8 (fixed, z 0.107)
  {
    const ModelSpec s = specFromUrdf(readFile(kModels / "panda.urdf"));
    EXPECT_TRUE(s.tip_origin.isApprox(Eigen::Vector3d(0, 0, 0.107), 1e-15));
  }
}

// ---------------------------------------------------------------- base and tip selection, options

TEST(UrdfImport, SubChainBetweenGivenBaseAndTip) {
  // iiwa14 from iiwa_link_2 to iiwa_link_5: joints 3..5; joints 6, 7 (below the tip) are locked at 0 and
  // their links carried by iiwa_link_5.
  UrdfOptions options;
  options.base_link = "iiwa_link_2";
  options.tip_link = "iiwa_link_5";
  const std::string xml = readFile(kModels / "iiwa14.urdf");
  const Model model = buildModelFromUrdf(xml, options);
  ASSERT_EQ(model.n, 3);
  EXPECT_EQ(model.spec.joints[0].name, "iiwa_joint_3");
  EXPECT_EQ(model.spec.joints[2].name, "iiwa_joint_5");
  EXPECT_NEAR(model.spec.joints[2].mass, 3.5 + 1.8 + 1.2, 1e-12);
  expectAgreement(
      compareWithKdl(model, makeOracle(xml, "iiwa_link_2", "iiwa_link_5"), model.gravity, 100, 11),
      "iiwa14 iiwa_link_2 -> iiwa_link_5");
}

TEST(UrdfImport, TipInsideTheFixedPartAfterTheLastJoint) {
  // ur5 with tip tool0: the tip frame is tool0 in wrist_3_link; the dynamics do not change
  UrdfOptions options;
  options.tip_link = "tool0";
  const std::string xml = readFile(kModels / "ur5.urdf");
  const Model model = buildModelFromUrdf(xml, options);
  EXPECT_FALSE(model.spec.tip_origin.isZero());
  expectAgreement(compareWithKdl(model, makeOracle(xml, "", "tool0"), model.gravity, 100, 12),
                  "ur5 -> tool0");
}

TEST(UrdfImport, GravityOption) {
  UrdfOptions options;
  options.gravity = Eigen::Vector3d(0.7, -1.3, -9.5);
  const std::string xml = readFile(kModels / "ur10.urdf");
  const Model model = buildModelFromUrdf(xml, options);
  EXPECT_EQ(model.gravity, *options.gravity);
  expectAgreement(compareWithKdl(model, makeOracle(xml, "", "wrist_3_link"), *options.gravity, 100, 13),
                  "ur10, gravity (0.7, -1.3, -9.5)");
  options.gravity = Eigen::Vector3d(0, std::nan(""), 0);
  EXPECT_THROW(buildModelFromUrdf(xml, options), ModelError);
}

TEST(UrdfImport, BaseBelowTheRootDropsWhatIsAbove) {
  // ur5 from base_link instead of world: world_joint's placement (identity in this file) drops out; with a
  // root that is placed elsewhere (the hand-made file), the first joint's placement must change accordingly.
  const std::string xml = readFile(kCorpus / "valid_offchain_fixed.urdf");
  UrdfOptions from_base;
  from_base.base_link = "base_link";
  const ModelSpec a = specFromUrdf(xml);
  const ModelSpec b = specFromUrdf(xml, from_base);
  // world_joint: xyz (0.1, 0, 0.05), yaw 0.3
  const Eigen::Matrix3d Rz = Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  EXPECT_LT((a.joints[0].rotation - Rz * b.joints[0].rotation).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LT(
      (a.joints[0].origin - (Rz * b.joints[0].origin + Eigen::Vector3d(0.1, 0, 0.05))).cwiseAbs().maxCoeff(),
      1e-15);
  for (std::size_t i = 1; i < a.joints.size(); ++i) {
    EXPECT_EQ(a.joints[i].origin, b.joints[i].origin);
    EXPECT_EQ(a.joints[i].mass, b.joints[i].mass);
  }
}

TEST(UrdfImport, ArmatureAddsToTheDiagonal) {
  const std::string xml = readFile(kModels / "ur5.urdf");
  UrdfOptions options;
  options.armature = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  const Model plain = buildModelFromUrdf(xml);
  const Model with = buildModelFromUrdf(xml, options);
  Data dp(plain), dw(with);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-kPi, kPi);
  const Eigen::VectorXd arm = Eigen::Map<const Eigen::VectorXd>(options.armature.data(), 6);
  for (int s = 0; s < 20; ++s) {
    Eigen::VectorXd q(6), qd(6), qdd(6);
    for (int i = 0; i < 6; ++i) q[i] = u(rng), qd[i] = u(rng), qdd[i] = u(rng);
    const Eigen::MatrixXd Mp = computeInertiaMatrix(plain, dp, q);
    const Eigen::MatrixXd Mw = computeInertiaMatrix(with, dw, q);
    EXPECT_LT((Mw - Mp - Eigen::MatrixXd(arm.asDiagonal())).cwiseAbs().maxCoeff(), 1e-12);
    const Eigen::VectorXd tp = inverseDynamics(plain, dp, q, qd, qdd);
    const Eigen::VectorXd tw = inverseDynamics(with, dw, q, qd, qdd);
    EXPECT_LT((tw - tp - arm.cwiseProduct(qdd)).cwiseAbs().maxCoeff(), 1e-10);
  }
  for (auto bad : {std::vector<double>{0.1, 0.2}, std::vector<double>(7, 0.1)}) {
    options.armature = bad;
    try {
      buildModelFromUrdf(xml, options);
      ADD_FAILURE() << "expected ModelError";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("armature"), std::string::npos) << e.what();
    }
  }
  options.armature = {0.1, 0.2, -0.3, 0.4, 0.5, 0.6};
  try {
    buildModelFromUrdf(xml, options);
    ADD_FAILURE() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("elbow_joint"), std::string::npos) << e.what();
  }
}

TEST(UrdfImport, RpyConventionAndInertialFrame) {
  // URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll), for joint origins and <inertial> origins
  const std::string xml = R"(<robot name="rpy">
    <link name="base"/>
    <link name="l1"><inertial><origin xyz="0.1 0.2 0.3" rpy="-0.4 0.25 2.0"/><mass value="2"/>
      <inertia ixx="0.03" ixy="0.001" ixz="0.002" iyy="0.02" iyz="-0.003" izz="0.025"/></inertial></link>
    <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
      <origin xyz="1 2 3" rpy="0.3 -0.5 1.1"/><axis xyz="0 1 1"/></joint>
  </robot>)";
  const ModelSpec s = specFromUrdf(xml);
  ASSERT_EQ(s.joints.size(), 1u);
  auto rpy = [](double r, double p, double y) {
    return Eigen::Matrix3d(Eigen::AngleAxisd(y, Eigen::Vector3d::UnitZ()) *
                           Eigen::AngleAxisd(p, Eigen::Vector3d::UnitY()) *
                           Eigen::AngleAxisd(r, Eigen::Vector3d::UnitX()));
  };
  const auto& j = s.joints[0];
  EXPECT_LT((j.rotation - rpy(0.3, -0.5, 1.1)).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_EQ(j.origin, Eigen::Vector3d(1, 2, 3));
  EXPECT_EQ(j.axis, Eigen::Vector3d(0, 1, 1));  // normalised by buildModel, not here
  EXPECT_EQ(j.type, JointType::Revolute);
  EXPECT_TRUE(std::isinf(j.lower) && std::isinf(j.upper));
  Eigen::Matrix3d I;
  I << 0.03, 0.001, 0.002, 0.001, 0.02, -0.003, 0.002, -0.003, 0.025;
  const Eigen::Matrix3d R = rpy(-0.4, 0.25, 2.0);
  EXPECT_LT((j.inertia - R * I * R.transpose()).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_EQ(j.com, Eigen::Vector3d(0.1, 0.2, 0.3));
  EXPECT_EQ(j.mass, 2.0);
}

TEST(UrdfImport, LimitsAndJointTypes) {
  const std::string xml = readFile(kCorpus / "valid_offchain_fixed.urdf");
  const ModelSpec s = specFromUrdf(xml);
  ASSERT_EQ(s.joints.size(), 3u);
  EXPECT_EQ(s.joints[2].type, JointType::Prismatic);
  EXPECT_EQ(s.joints[2].lower, -0.1);
  EXPECT_EQ(s.joints[2].upper, 0.2);
  EXPECT_EQ(s.joints[2].velocity_limit, 0.5);
  EXPECT_EQ(s.joints[2].effort_limit, 100.0);
  // double_pendulum: lower = upper = 0, effort = velocity = 0 (URDF defaults): read as "not given"
  const ModelSpec d = specFromUrdf(readFile(kModels / "double_pendulum.urdf"));
  for (const auto& j : d.joints) {
    EXPECT_TRUE(std::isinf(j.lower) && std::isinf(j.upper) && std::isinf(j.velocity_limit) &&
                std::isinf(j.effort_limit));
  }
}

// ---------------------------------------------------------------- merging, checked by hand and by KDL

TEST(UrdfImport, OffChainFixedLinksMergedByHand) {
  const ModelSpec s = specFromUrdf(readFile(kCorpus / "valid_offchain_fixed.urdf"));
  ASSERT_EQ(s.joints.size(), 3u);
  EXPECT_EQ(s.joints[1].name, "joint2");
  // link2 (1 kg at (0, 0, 0.1)) + camera (1 kg at (0.2, 0, 0)) + a massless optical frame, by hand
  EXPECT_DOUBLE_EQ(s.joints[1].mass, 2.0);
  EXPECT_LT((s.joints[1].com - Eigen::Vector3d(0.1, 0, 0.05)).cwiseAbs().maxCoeff(), 1e-15);
  Eigen::Matrix3d I;
  I << 0.017, 0, 0.01, 0, 0.037, 0, 0.01, 0, 0.027;
  EXPECT_LT((s.joints[1].inertia - I).cwiseAbs().maxCoeff(), 1e-15);
  // link1 + spacer (on the chain between joint1 and joint2), link3 + hand (+ the massless tcp)
  EXPECT_DOUBLE_EQ(s.joints[0].mass, 1.9);
  EXPECT_DOUBLE_EQ(s.joints[2].mass, 1.4);
}

TEST(UrdfImport, OffChainFixedLinksMatchKdl) {
  const std::string xml = readFile(kCorpus / "valid_offchain_fixed.urdf");
  const Model model = buildModelFromUrdf(xml);
  EXPECT_EQ(model.n, 3);
  expectAgreement(compareWithKdl(model, makeOracle(xml, "", "tcp"), model.gravity, 100, 21),
                  "offchain_fixed -> tcp");
  // the same robot cut at link2 (joint3 and everything below locked, prismatic joint3 at 0 in [-0.1, 0.2])
  UrdfOptions options;
  options.tip_link = "camera_optical_frame";
  const Model cut = buildModelFromUrdf(xml, options);
  EXPECT_EQ(cut.n, 2);
  expectAgreement(compareWithKdl(cut, makeOracle(xml, "", "camera_optical_frame"), cut.gravity, 100, 22),
                  "offchain_fixed -> camera_optical_frame");
}

TEST(UrdfImport, LockedBranchesMatchKdl) {
  const std::string xml = readFile(kCorpus / "valid_locked_branches.urdf");
  {
    // without tip_link: the whole tree, depth first, the children of a link in the order of the file;
    // nothing is locked, the mimic finger is an independent joint (and reported)
    std::vector<std::string> notes;
    UrdfOptions whole;
    whole.notes = &notes;
    const ModelSpec s = specFromUrdf(xml, whole);
    std::vector<std::string> names;
    std::vector<int> parents;
    for (const auto& j : s.joints) names.push_back(j.name), parents.push_back(j.parent);
    EXPECT_EQ(names, (std::vector<std::string>{"joint1", "joint2", "gripper_joint", "finger_b_joint",
                                               "aux_joint", "aux_spin"}));
    EXPECT_EQ(parents, (std::vector<int>{-1, 0, 1, 1, 0, 4}));
    EXPECT_EQ(s.joints[1].mass, 2.0);  // link2 alone: the fingers are its children now
    EXPECT_EQ(notes, (std::vector<std::string>{
                         "joint 'finger_b_joint' mimics 'gripper_joint': loaded as an independent joint"}));
    EXPECT_EQ(buildModel(s).nv, 6);
  }
  UrdfOptions options;
  options.tip_link = "flange";
  const Model model = buildModelFromUrdf(xml, options);
  ASSERT_EQ(model.n, 2);
  // link1 carries aux_link and aux_rotor; link2 both fingers
  EXPECT_DOUBLE_EQ(model.spec.joints[0].mass, 3.6);
  EXPECT_DOUBLE_EQ(model.spec.joints[1].mass, 2.4);
  const Oracle o = makeOracle(xml, "", "flange");
  EXPECT_EQ(o.locked.at("gripper_joint"), 0.01);
  EXPECT_EQ(o.locked.at("finger_b_joint"), -0.01);
  expectAgreement(compareWithKdl(model, o, model.gravity, 100, 31), "locked_branches -> flange");
  // the oracle is sensitive to the lock position: the same tree with the gripper held at 0.05 differs
  Oracle shifted = makeOracle(xml, "", "flange");
  shifted.locked["gripper_joint"] = 0.05;
  shifted.locked["finger_b_joint"] = -0.05;
  const Errors e = compareWithKdl(model, shifted, model.gravity, 5, 32);
  EXPECT_GT(e.tau_tree, 1e-6);
}

TEST(UrdfImport, MasslessMovingLinkWithMassFixedToIt) {
  // A moving link without <inertial> is valid when what is fixed to it has mass: the model is the same as
  // with the mass on the link itself.
  const std::string a = R"(<robot name="a"><link name="base"/><link name="l1"/>
    <link name="payload"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
    <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
    <joint name="fix" type="fixed"><parent link="l1"/><child link="payload"/><origin xyz="0 0.2 0"/></joint></robot>)";
  const ModelSpec s = specFromUrdf(a);
  ASSERT_EQ(s.joints.size(), 1u);
  EXPECT_EQ(s.joints[0].mass, 2.0);
  EXPECT_TRUE(s.joints[0].com.isApprox(Eigen::Vector3d(0.1, 0.2, 0)));
  EXPECT_TRUE(s.tip_origin.isApprox(Eigen::Vector3d(0, 0.2, 0)));  // default tip: payload
}

TEST(UrdfImport, LongChainLoadsWithoutRecursion) {
  // n revolute joints with a fixed frame after each: the importer walks the tree without recursion. At
  // n = 512 the path from the root is 1024 joints long, the depth limit (urdfdom frees its tree
  // recursively); one more joint is refused before urdfdom builds the tree.
  const auto chain = [](int n) {
    std::ostringstream x;
    x << "<robot name=\"long\"><link name=\"l0\"/>";
    for (int i = 1; i <= n; ++i) {
      std::ostringstream parent;
      parent << (i == 1 ? 'l' : 'f') << (i == 1 ? 0 : i - 1);
      x << "<link name=\"l" << i << "\"><inertial><origin xyz=\"0 0 0.05\"/><mass value=\"0.1\"/>"
        << "<inertia ixx=\"1e-4\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial></link>"
        << "<link name=\"f" << i << "\"/>"
        << "<joint name=\"j" << i << "\" type=\"continuous\"><parent link=\"" << parent.str()
        << "\"/><child link=\"l" << i
        << "\"/><origin xyz=\"0 0 0.1\" rpy=\"0 0.1 0\"/><axis xyz=\"0 0 1\"/></joint>"
        << "<joint name=\"fj" << i << "\" type=\"fixed\"><parent link=\"l" << i << "\"/><child link=\"f" << i
        << "\"/><origin xyz=\"0 0 0.01\"/></joint>";
    }
    x << "</robot>";
    return x.str();
  };
  const Model m = buildModelFromUrdf(chain(512));
  EXPECT_EQ(m.n, 512);
  EXPECT_TRUE(m.spec.tip_origin.isApprox(Eigen::Vector3d(0, 0, 0.01)));
  const std::string deeper = chain(513);
  try {
    buildModelFromUrdf(deeper);
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1024 joints deep below link 'l1'"), std::string::npos)
        << e.what();
  }
  // a caller of the core may lift the limit (and must then give its thread the stack for it)
  UrdfOptions options;
  options.max_tree_depth = 2000;
  EXPECT_EQ(buildModelFromUrdf(deeper, options).n, 513);
}

// ---------------------------------------------------------------- the corpus of bad files

struct BadCase {
  std::string file;
  std::vector<std::string> expect;  // substrings of the message
  std::string base, tip;            // options
};

const std::vector<BadCase>& badCases() {
  static const std::vector<BadCase> cases = {
      {"broken_xml.urdf", {"URDF text is not well-formed XML", "mismatched tag", "(line 19)"}, "", ""},
      {"missing_parent_link.urdf", {"ghost_link", "joint2"}, "", ""},
      {"closed_loop.urdf", {"loop", "link1", "joint1", "loop_joint"}, "", ""},
      {"closed_loop.urdf", {"loop", "link2", "joint2"}, "link2", ""},
      {"closed_loop.urdf", {"loop", "link1"}, "side_link", "link1"},
      {"cycle_no_root.urdf", {"could not be parsed", "root"}, "", ""},
      {"duplicate_link.urdf", {"link2", "not unique"}, "", ""},
      {"mimic_joint.urdf", {"joint2", "mimic", "joint1"}, "", ""},
      {"floating_joint.urdf", {"joint2", "floating"}, "", ""},
      {"planar_joint.urdf", {"joint2", "planar"}, "", ""},
      {"unknown_joint_type.urdf", {"joint2", "ball"}, "", ""},
      {"negative_mass.urdf", {"link2", "negative"}, "", ""},
      // a massless moving body is the model builder's to refuse: the joint that moves nothing, by name
      {"zero_mass_link.urdf", {"joint 'joint2' (link 'link2') moves no mass", "singular"}, "", ""},
      {"no_inertial_moving_link.urdf", {"joint 'joint2' (link 'link2') moves no mass", "singular"}, "", ""},
      {"massless_with_inertia.urdf", {"link2", "mass is 0"}, "", ""},
      {"triangle_inequality.urdf", {"link1", "triangle"}, "", ""},
      {"not_positive_definite.urdf", {"link1", "not positive semidefinite"}, "", ""},
      {"nan_origin.urdf", {"joint2", "nan"}, "", ""},
      {"nan_mass.urdf", {"link2", "nan"}, "", ""},
      {"inf_inertia.urdf", {"link1", "ixx"}, "", ""},
      {"no_moving_joints.urdf", {"no moving", "base"}, "", ""},
      {"inverted_limits.urdf", {"joint1", "lower limit"}, "", ""},
      {"negative_velocity_limit.urdf", {"joint1", "velocity limit"}, "", ""},
      {"zero_axis.urdf", {"joint2", "axis"}, "", ""},
      {"offchain_mimic_of_chain_joint.urdf", {"finger_joint", "joint2", "mimic"}, "", "tool"},
      {"not_a_robot.urdf", {"robot"}, "", ""},
      // options on valid files
      {"valid_two_link.urdf", {"no_such_link", "tip link"}, "", "no_such_link"},
      {"valid_two_link.urdf", {"no_such_base", "base link"}, "no_such_base", ""},
      {"valid_two_link.urdf", {"link1", "link2", "not below"}, "link2", "link1"},
      {"valid_locked_branches.urdf", {"finger_a", "flange", "not below"}, "finger_a", "flange"},
      {"valid_two_link.urdf", {"no moving", "link2"}, "link2", "link2"},
      {"valid_offchain_fixed.urdf", {"no moving", "link3", "tcp"}, "link3", "tcp"},
  };
  return cases;
}

TEST(UrdfCorpus, EveryBadFileIsRejectedWithAMessageNamingTheCulprit) {
  for (const auto& c : badCases()) {
    UrdfOptions options;
    options.base_link = c.base;
    options.tip_link = c.tip;
    const fs::path path = kCorpus / c.file;
    for (int via_file = 0; via_file < 2; ++via_file) {
      try {
        if (via_file) {
          buildModelFromUrdfFile(path.string(), options);
        } else {
          buildModelFromUrdf(readFile(path), options);
        }
        ADD_FAILURE() << c.file << ": expected ModelError";
      } catch (const ModelError& e) {
        const std::string msg = e.what();
        for (const auto& s : c.expect)
          EXPECT_NE(msg.find(s), std::string::npos) << c.file << ": '" << s << "' not in: " << msg;
        if (via_file) {
          EXPECT_NE(msg.find(c.file), std::string::npos) << msg;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.file << ": not a ModelError: " << e.what();
      }
    }
  }
}

TEST(UrdfCorpus, EveryFileOfTheCorpusIsExercised) {
  std::set<std::string> listed;
  for (const auto& c : badCases()) listed.insert(c.file);
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("valid_", 0) == 0) {
      EXPECT_NO_THROW(specFromUrdf(readFile(entry.path()), name == "valid_locked_branches.urdf"
                                                               ? UrdfOptions{"", "flange", {}, {}, {}, 1024}
                                                               : UrdfOptions{}))
          << name;
    } else {
      EXPECT_TRUE(listed.count(name)) << name << " has no case";
    }
  }
}

TEST(UrdfCorpus, MissingFileAndEmptyInput) {
  EXPECT_THROW(buildModelFromUrdfFile((kCorpus / "does_not_exist.urdf").string()), ModelError);
  EXPECT_THROW(buildModelFromUrdf(""), ModelError);
  EXPECT_THROW(buildModelFromUrdf("<robot name=\"empty\"/>"), ModelError);
}

TEST(UrdfCorpus, TruncatedAndCorruptedFilesNeverCrash) {
  // Every prefix (in steps) of two real files and single-character corruptions: either a model or a
  // ModelError, nothing else.
  std::mt19937 rng(5);
  int models = 0, errors = 0;
  for (const char* f : {"panda.urdf", "gen3.urdf"}) {
    const std::string xml = readFile(kModels / f);
    auto attempt = [&](const std::string& text) {
      try {
        buildModelFromUrdf(text);
        ++models;
      } catch (const ModelError&) {
        ++errors;
      } catch (const std::exception& e) {
        ADD_FAILURE() << f << ": " << e.what();
      }
    };
    for (std::size_t len = 0; len < xml.size(); len += 97) attempt(xml.substr(0, len));
    std::uniform_int_distribution<std::size_t> pos(0, xml.size() - 1);
    const std::string junk = "<>/\"=0-.e n";
    std::uniform_int_distribution<std::size_t> pick(0, junk.size() - 1);
    for (int k = 0; k < 150; ++k) {
      std::string t = xml;
      t[pos(rng)] = junk[pick(rng)];
      attempt(t);
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(models, 0);
}

// ---------------------------------------------------------------- inputs found by fuzzing (tests/fuzz)

// A robot from its links (each with a small inertial) and joints (name, parent, child; continuous about z).
std::string robotUrdf(const std::vector<std::string>& links,
                      const std::vector<std::array<std::string, 3>>& joints) {
  std::ostringstream x;
  x << "<robot name=\"r\">";
  for (const auto& l : links) {
    x << "<link name=\"" << l << "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" "
      << "iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>";
  }
  for (const auto& [name, parent, child] : joints) {
    x << "<joint name=\"" << name << "\" type=\"continuous\"><parent link=\"" << parent
      << "\"/><child link=\"" << child << "\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 0 1\"/></joint>";
  }
  x << "</robot>";
  return x.str();
}

std::string modelError(const std::string& xml, const UrdfOptions& options = {}) {
  try {
    specFromUrdf(xml, options);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << xml;
  return "";
}

// urdfdom makes shared-pointer cycles of a cycle of joints and never frees them (the AddressSanitizer builds
// report the leak): every cycle is refused before urdfdom sees the file, wherever it is in the file.
TEST(UrdfFuzzFindings, JointCyclesAreRefusedNamingTheLoop) {
  const std::string self =
      modelError(robotUrdf({"base", "link1"}, {{"joint1", "base", "link1"}, {"spin", "link1", "link1"}}));
  EXPECT_NE(self.find("closed kinematic loop"), std::string::npos) << self;
  EXPECT_NE(self.find("'spin'"), std::string::npos) << self;
  EXPECT_NE(self.find("'link1' is the child of joints 'joint1' and 'spin'"), std::string::npos) << self;

  const std::string two =
      modelError(robotUrdf({"base", "a", "b"}, {{"j0", "base", "a"}, {"jab", "a", "b"}, {"jba", "b", "a"}}));
  for (const char* s : {"closed kinematic loop", "'a'", "'b'", "'jab'", "'jba'", "'j0'"})
    EXPECT_NE(two.find(s), std::string::npos) << s << " not in " << two;

  // a loop in a branch off the chosen chain is refused too (a URDF must be a tree)
  const std::string side =
      modelError(robotUrdf({"base", "link1", "link2", "s1", "s2"}, {{"j1", "base", "link1"},
                                                                    {"j2", "link1", "link2"},
                                                                    {"js", "base", "s1"},
                                                                    {"j12", "s1", "s2"},
                                                                    {"j21", "s2", "s1"}}),
                 UrdfOptions{"base", "link2", {}, {}, {}, 1024});
  EXPECT_NE(side.find("closed kinematic loop"), std::string::npos) << side;

  // a long cycle without a root: named in part, the message stays short
  std::vector<std::string> links;
  std::vector<std::array<std::string, 3>> joints;
  for (int i = 0; i < 50; ++i) {
    links.push_back("l" + std::to_string(i));
    joints.push_back({"j" + std::to_string(i), "l" + std::to_string(i), "l" + std::to_string((i + 1) % 50)});
  }
  const std::string ring = modelError(robotUrdf(links, joints));
  EXPECT_NE(ring.find("closed kinematic loop"), std::string::npos) << ring;
  EXPECT_NE(ring.find("..."), std::string::npos) << ring;
  EXPECT_LT(ring.size(), 600u) << ring;

  // not a cycle: two joints into one link from different parents (the importer's own loop message)
  const std::string diamond =
      modelError(robotUrdf({"base", "a", "b", "c"},
                           {{"ja", "base", "a"}, {"jb", "base", "b"}, {"jac", "a", "c"}, {"jbc", "b", "c"}}));
  EXPECT_NE(diamond.find("loop"), std::string::npos) << diamond;
}

// TinyXML (urdfdom's parser) read past the end of the text on a truncated UTF-8 sequence (the fuzzer's
// input: a Panda file cut inside a joint, ending in 0xE1 bytes); it also stopped silently at a NUL byte.
TEST(UrdfFuzzFindings, TextThatIsNotUtf8OrHoldsANulIsRefused) {
  const std::string two = readFile(kCorpus / "valid_two_link.urdf");
  const std::size_t cut = two.find("<joint name=\"joint2\"");
  ASSERT_NE(cut, std::string::npos);
  struct Case {
    std::string what, text, expect;
  };
  const std::vector<Case> cases = {
      {"truncated sequences at the end", two.substr(0, cut) + "\xe1\xe1\xe1",
       "not valid UTF-8 at byte offset " + std::to_string(cut)},
      {"lone continuation byte", "<robot name=\"r\">\x80</robot>", "not valid UTF-8 at byte offset 16"},
      {"overlong '/'", "<!-- \xc0\xaf -->" + two, "not valid UTF-8 at byte offset 5"},
      {"surrogate", "<!-- \xed\xa0\x80 -->" + two, "not valid UTF-8 at byte offset 5"},
      {"above U+10FFFF", "<!-- \xf4\x90\x80\x80 -->" + two, "not valid UTF-8 at byte offset 5"},
      {"NUL inside", two.substr(0, cut) + std::string(1, '\0') + two.substr(cut),
       "NUL byte at offset " + std::to_string(cut)},
  };
  for (const Case& c : cases) {
    const std::string msg = modelError(c.text);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
  }
  // the whole fuzzer input (the part before its first NUL is the URDF)
  const std::string input =
      readFile(fs::path(DENOC_SOURCE_DIR) / "tests/fuzz/regressions/urdf/tinyxml_overread_truncated_utf8");
  EXPECT_NE(modelError(input.substr(0, input.find('\0'))).find("not valid UTF-8"), std::string::npos);

  // valid UTF-8 of every length still loads, names kept byte for byte
  std::string named = two;
  const std::string link = "glied_\xc3\xa4_\xe6\x97\xa5_\xf0\x9d\x9b\xbc";
  for (std::size_t p; (p = named.find("\"link2\"")) != std::string::npos;)
    named.replace(p, 7, "\"" + link + "\"");
  const ModelSpec spec = specFromUrdf(named);
  ASSERT_EQ(spec.joints.size(), 2u);
  EXPECT_EQ(spec.joints[1].link, link);
}

}  // namespace
}  // namespace denoc
