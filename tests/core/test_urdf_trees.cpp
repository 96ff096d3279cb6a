// URDF import of whole kinematic trees (core/src/urdf.cpp; docs/urdf.md, "What is imported") under fixed,
// floating and planar roots: the four branched robots of examples/models/trees, hand-made trees, a drone.
//
// Oracles, independent of denoc's importer:
//  - urdfdom's own parse of the file (urdf::parseURDF): the moving joints counted, every link's mass summed,
//    and for every moving joint the nearest moving joint above it, found by walking up urdfdom's parent
//    links;
//  - Orocos KDL: a KDL::Tree of every URDF joint built from that parse (tests/support/urdf_kdl.hpp, fixed
//    joints as KDL::Joint::None segments), TreeFkSolverPos_recursive for the pose of every link frame and
//    TreeIdSolver_RNE for inverse dynamics. KDL has no floating root: a floating or planar model's link poses
//    are the root's pose (from q, by the documented convention) times KDL's, and its joint forces with the
//    root held still are KDL's with gravity turned into the root link's axes;
//  - statics: with nothing moving, a floating root's generalized force is the wrench that holds the robot's
//    weight (total mass and mass centre from urdfdom and KDL's link poses).
#include <gtest/gtest.h>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <kdl/tree.hpp>
#include <kdl/treefksolverpos_recursive.hpp>
#include <kdl/treeidsolver_recursive_newton_euler.hpp>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
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
using urdf_kdl::kdlSegment;
using urdf_kdl::moving;

const fs::path kTrees = fs::path(DENOC_MODELS_DIR) / "trees";
const fs::path kCorpus = fs::path(DENOC_SOURCE_DIR) / "tests" / "data" / "urdf";
constexpr RootJoint kRoots[] = {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar};

using testing::maxRelativeError;
using testing::readFile;

const char* rootName(RootJoint r) {
  return r == RootJoint::Fixed ? "fixed" : r == RootJoint::Floating ? "floating" : "planar";
}

// ---------------------------------------------------------------- urdfdom's view of a robot

struct Reference {
  urdf::ModelInterfaceSharedPtr urdf;
  std::string root;
  std::vector<std::string> moving;                     // every moving joint (urdfdom's order: by name)
  std::map<std::string, std::string> moving_ancestor;  // joint -> nearest moving joint above it, "" none
  double total_mass = 0.0;                             // every link
  double root_body_mass = 0.0;  // the root link and the links fixed to it through fixed joints only
  KDL::Tree tree;               // every joint of the URDF, rooted at the root link
  std::map<std::string, unsigned> q_index;  // moving joint -> KDL q index
};

Reference reference(const std::string& xml) {
  Reference r;
  r.urdf = urdf::parseURDF(xml);
  if (!r.urdf) throw std::runtime_error("urdfdom cannot parse the file");
  const urdf::ModelInterface& m = *r.urdf;
  r.root = m.getRoot()->name;
  for (const auto& [name, joint] : m.joints_) {
    if (!moving(*joint)) continue;
    r.moving.push_back(name);
    std::string above;
    for (urdf::LinkConstSharedPtr l = m.getLink(joint->parent_link_name); l->parent_joint;
         l = m.getLink(l->parent_joint->parent_link_name)) {
      if (moving(*l->parent_joint)) {
        above = l->parent_joint->name;
        break;
      }
    }
    r.moving_ancestor[name] = above;
  }
  for (const auto& [name, link] : m.links_) {
    const double mass = link->inertial ? link->inertial->mass : 0.0;
    r.total_mass += mass;
    bool rigid = true;  // reached from the root through fixed joints only
    for (urdf::LinkConstSharedPtr l = link; l->parent_joint; l = m.getLink(l->parent_joint->parent_link_name))
      rigid = rigid && !moving(*l->parent_joint);
    if (rigid) r.root_body_mass += mass;
  }
  r.tree = KDL::Tree(r.root);
  std::function<void(const urdf::LinkConstSharedPtr&)> grow = [&](const urdf::LinkConstSharedPtr& l) {
    for (const auto& j : l->child_joints) {
      if (!r.tree.addSegment(kdlSegment(m, *j), l->name)) throw std::runtime_error("KDL addSegment failed");
      grow(m.getLink(j->child_link_name));
    }
  };
  grow(m.getRoot());
  for (const auto& [name, element] : r.tree.getSegments()) {
    const KDL::Segment& s = GetTreeElementSegment(element);
    if (s.getJoint().getType() != KDL::Joint::None)
      r.q_index[s.getJoint().getName()] = GetTreeElementQNr(element);
  }
  return r;
}

// The joint part of a model's vector (after the root's coordinates) in KDL's order.
KDL::JntArray toKdl(const Model& model, const Reference& r, const Eigen::VectorXd& x, int offset) {
  KDL::JntArray a(r.tree.getNrOfJoints());
  for (int i = 0; i < model.n; ++i)
    a(r.q_index.at(model.spec.joints[static_cast<std::size_t>(i)].name)) = x[offset + i];
  return a;
}

Eigen::Isometry3d toEigen(const KDL::Frame& f) {
  Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) T.linear()(r, c) = f.M(r, c);
  T.translation() = Eigen::Vector3d(f.p.x(), f.p.y(), f.p.z());
  return T;
}

// The root link's pose in the world from q, by the documented convention (fwd.hpp, RootJoint).
Eigen::Isometry3d rootPose(const Model& model, const Eigen::VectorXd& q) {
  Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
  if (model.root == RootJoint::Floating) {
    T.translation() = q.head<3>();
    T.linear() = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
  } else if (model.root == RootJoint::Planar) {
    T.translation() = Eigen::Vector3d(q[0], q[1], 0.0);
    T.linear() = Eigen::AngleAxisd(q[2], Eigen::Vector3d::UnitZ()).toRotationMatrix();
  }
  return T;
}

// The link of the tip frame, by the documented rule: below the last joint's link (the root link without
// joints), down the fixed joints while a link has exactly one child.
std::string tipLink(const Model& model, const Reference& r) {
  const urdf::ModelInterface& m = *r.urdf;
  urdf::LinkConstSharedPtr l = m.getLink(model.n > 0 ? model.spec.joints.back().link : r.root);
  while (l->child_joints.size() == 1) l = m.getLink(l->child_joints.front()->child_link_name);
  return l->name;
}

Model load(const fs::path& path, RootJoint root, std::vector<std::string>* notes = nullptr) {
  UrdfOptions options;
  options.root = root;
  options.notes = notes;
  return buildModelFromUrdfFile(path.string(), options);
}

// ---------------------------------------------------------------- the four robots

struct TreeRobot {
  std::string file;
  RootJoint intended;
  int moving;  // moving joints (examples/models/README.md)
};

void PrintTo(const TreeRobot& c, std::ostream* os) { *os << c.file; }

const std::vector<TreeRobot>& treeRobots() {
  static const std::vector<TreeRobot> robots = {
      {"solo12.urdf", RootJoint::Floating, 12},
      {"anymal_c.urdf", RootJoint::Floating, 12},
      {"baxter.urdf", RootJoint::Fixed, 19},
      {"simple_humanoid.urdf", RootJoint::Floating, 29},
  };
  return robots;
}

TEST(UrdfTrees, EveryFileInTheTreesDirectoryIsCovered) {
  std::set<std::string> listed;
  for (const auto& c : treeRobots()) listed.insert(c.file);
  int found = 0;
  for (const auto& entry : fs::directory_iterator(kTrees)) {
    if (entry.path().extension() != ".urdf") continue;
    ++found;
    EXPECT_TRUE(listed.count(entry.path().filename().string())) << entry.path() << " has no case";
  }
  EXPECT_EQ(found, static_cast<int>(listed.size()));
}

// Every robot file of the repository (the arms and hands of examples/models, the trees of
// examples/models/trees) under each root: it loads with its whole tree moving (n joints, the same under
// every root; nv = nr + n), or, only where a root coordinate moves no mass of its own, it is refused naming
// that coordinate (the acrobot's massless root link turned about its y axis moves every mass as its shoulder
// joint does). Every file loads under a fixed root, every tree under every root. The table is printed
// (docs/trees.md).
TEST(UrdfTrees, EveryRobotFileOfTheRepositoryLoadsUnderItsRoots) {
  int files = 0, everywhere = 0;
  for (const fs::path& dir : {fs::path(DENOC_MODELS_DIR), kTrees}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".urdf") continue;
      ++files;
      std::string line = entry.path().filename().string() + ":";
      int roots = 0, n = -1;
      for (RootJoint root : kRoots) {
        SCOPED_TRACE(entry.path().filename().string() + ", " + rootName(root) + " root");
        try {
          const Model model = load(entry.path(), root);
          const int nr = root == RootJoint::Floating ? 6 : root == RootJoint::Planar ? 3 : 0;
          EXPECT_EQ(model.root, root);
          EXPECT_EQ(model.nv, nr + model.n);
          if (n >= 0) EXPECT_EQ(model.n, n) << "the same joints under every root";
          n = model.n;
          line += std::string(" ") + rootName(root) + " (nv " + std::to_string(model.nv) + ")";
          ++roots;
        } catch (const std::exception& e) {
          const std::string what = e.what();
          EXPECT_TRUE(root != RootJoint::Fixed && dir != kTrees) << what;
          EXPECT_NE(what.find("moves no mass or inertia"), std::string::npos) << what;
          line += std::string(" ") + rootName(root) + " refused (a root coordinate moves no inertia)";
        }
      }
      everywhere += roots == 3 ? 1 : 0;
      std::printf("%s\n", line.c_str());
    }
  }
  std::printf("%d robot files: %d load under each of the three roots\n", files, everywhere);
  EXPECT_GE(files, 13);
}

class UrdfTreeRobot : public ::testing::TestWithParam<TreeRobot> {};

// Sizes, the parent structure and the total mass against urdfdom's parse, under every root.
TEST_P(UrdfTreeRobot, LoadsUnderEveryRootWithUrdfdomsTree) {
  const TreeRobot& c = GetParam();
  const Reference r = reference(readFile(kTrees / c.file));
  ASSERT_EQ(static_cast<int>(r.moving.size()), c.moving);
  const int n = c.moving;
  for (RootJoint root : kRoots) {
    SCOPED_TRACE(std::string(c.file) + ", " + rootName(root) + " root" +
                 (root == c.intended ? " (the robot's own)" : ""));
    const Model model = load(kTrees / c.file, root);
    const int nr = root == RootJoint::Floating ? 6 : root == RootJoint::Planar ? 3 : 0;
    const int nqr = root == RootJoint::Floating ? 7 : nr;
    EXPECT_EQ(model.root, root);
    EXPECT_FALSE(model.serial);
    EXPECT_EQ(model.n, n);
    EXPECT_EQ(model.nu, n);
    EXPECT_EQ(model.nv, nr + n);
    EXPECT_EQ(model.nq, nqr + n);
    EXPECT_EQ(model.spec.root_link, r.root);
    EXPECT_EQ(frameIndex(model, r.root), n + 1);
    // the same joints, each below the nearest moving joint above it in urdfdom's tree
    std::map<std::string, int> index;
    for (int i = 0; i < model.n; ++i) index[model.spec.joints[static_cast<std::size_t>(i)].name] = i;
    ASSERT_EQ(index.size(), r.moving.size());
    for (int i = 0; i < model.n; ++i) {
      const JointSpec& j = model.spec.joints[static_cast<std::size_t>(i)];
      ASSERT_TRUE(r.moving_ancestor.count(j.name)) << j.name << " is not a moving joint of the file";
      const std::string& above = r.moving_ancestor.at(j.name);
      EXPECT_EQ(model.parent[static_cast<std::size_t>(i)], above.empty() ? -1 : index.at(above)) << j.name;
      EXPECT_EQ(frameIndex(model, j.link), i);
    }
    // every link's mass is in the model: the joints' bodies, and the root link's for a moving root
    double mass = 0.0;
    for (const JointSpec& j : model.spec.joints) mass += j.mass;
    if (root == RootJoint::Fixed) {
      EXPECT_EQ(model.root_mass, 0.0);
      EXPECT_NEAR(mass, r.total_mass - r.root_body_mass, 1e-12 * r.total_mass);
    } else {
      EXPECT_NEAR(model.root_mass, r.root_body_mass, 1e-12 * r.total_mass);
      EXPECT_NEAR(mass + model.root_mass, r.total_mass, 1e-12 * r.total_mass);
    }
  }
}

// The pose of every frame (links, tip, root link) against KDL's tree, under every root.
TEST_P(UrdfTreeRobot, FramePosesMatchKdl) {
  const TreeRobot& c = GetParam();
  const Reference r = reference(readFile(kTrees / c.file));
  KDL::TreeFkSolverPos_recursive fk(r.tree);
  for (RootJoint root : kRoots) {
    SCOPED_TRACE(std::string(c.file) + ", " + rootName(root) + " root");
    const Model model = load(kTrees / c.file, root);
    Data data(model);
    const std::string tip = tipLink(model, r);
    std::mt19937_64 rng(17);
    double err = 0.0;
    for (int s = 0; s < 20; ++s) {
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      forwardKinematics(model, data, q);
      const KDL::JntArray qk = toKdl(model, r, q, model.nqr);
      const Eigen::Isometry3d T0 = rootPose(model, q);
      const auto compare = [&](int frame, const std::string& link) {
        KDL::Frame F;
        ASSERT_GE(fk.JntToCart(qk, F, link), 0) << link;
        const Eigen::Isometry3d T = T0 * toEigen(F);
        const auto f = static_cast<std::size_t>(frame);
        err = std::max({err, (data.kin_R[f] - T.linear()).cwiseAbs().maxCoeff(),
                        (data.kin_p[f] - T.translation()).cwiseAbs().maxCoeff()});
      };
      for (int i = 0; i < model.n; ++i) compare(i, model.spec.joints[static_cast<std::size_t>(i)].link);
      compare(model.n, tip);
      compare(model.n + 1, r.root);
    }
    EXPECT_LT(err, 1e-12);
    std::cout << "[ KDL ] " << c.file << " " << rootName(root) << ": frame poses within " << err << "\n";
  }
}

// Inverse dynamics against KDL's TreeIdSolver_RNE: a fixed root at random states; a floating or planar root
// held still at a random pose (its joint rows are KDL's with gravity in the root link's axes), and at rest
// (its root rows hold the robot's weight).
TEST_P(UrdfTreeRobot, InverseDynamicsMatchesKdl) {
  const TreeRobot& c = GetParam();
  const Reference r = reference(readFile(kTrees / c.file));
  const Eigen::Vector3d g(0.0, 0.0, -9.81);
  KDL::TreeFkSolverPos_recursive fk(r.tree);
  for (RootJoint root : kRoots) {
    SCOPED_TRACE(std::string(c.file) + ", " + rootName(root) + " root");
    const Model model = load(kTrees / c.file, root);
    Data data(model);
    const int n = model.n, nr = model.nr;
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    double err = 0.0, err_root = 0.0;
    for (int s = 0; s < 20; ++s) {
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv), a = Eigen::VectorXd::Zero(model.nv);
      for (int i = nr; i < model.nv; ++i) v[i] = u(rng), a[i] = u(rng);
      const Eigen::Isometry3d T0 = rootPose(model, q);
      const Eigen::Vector3d g_root = T0.linear().transpose() * g;
      KDL::TreeIdSolver_RNE id(r.tree, KDL::Vector(g_root.x(), g_root.y(), g_root.z()));
      KDL::JntArray tau_k(r.tree.getNrOfJoints());
      ASSERT_GE(id.CartToJnt(toKdl(model, r, q, model.nqr), toKdl(model, r, v, nr), toKdl(model, r, a, nr),
                             KDL::WrenchMap(), tau_k),
                0);
      const Eigen::VectorXd tau = inverseDynamics(model, data, q, v, a);
      Eigen::VectorXd expected(n);
      for (int i = 0; i < n; ++i)
        expected[i] = tau_k(r.q_index.at(model.spec.joints[static_cast<std::size_t>(i)].name));
      err = std::max(err, maxRelativeError(tau.tail(n), expected));
      if (root == RootJoint::Fixed) continue;
      // at rest: the root's generalized force holds the weight, M g through the mass centre
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
      const Eigen::VectorXd hold = inverseDynamics(model, data, q, zero, zero);
      const KDL::JntArray qk = toKdl(model, r, q, model.nqr);
      Eigen::Vector3d moment_sum = Eigen::Vector3d::Zero();  // sum of m_l c_l, root link frame
      for (const auto& [name, link] : r.urdf->links_) {
        if (!link->inertial) continue;
        KDL::Frame F;
        ASSERT_GE(fk.JntToCart(qk, F, name), 0);
        const auto& p = link->inertial->origin.position;
        moment_sum += link->inertial->mass * (toEigen(F) * Eigen::Vector3d(p.x, p.y, p.z));
      }
      const Eigen::Vector3d force = -r.total_mass * g_root;  // root axes
      const Eigen::Vector3d centre = moment_sum / r.total_mass;
      Eigen::VectorXd expected_root(nr);
      if (root == RootJoint::Floating) {
        expected_root << centre.cross(force), force;
      } else {  // planar: [f_x f_y n_z] in world axes; the weight is along z, its moment normal to it
        expected_root.setZero();
      }
      err_root = std::max(err_root, (hold.head(nr) - expected_root).cwiseAbs().maxCoeff() /
                                        (r.total_mass * 9.81 * std::max(1.0, centre.norm())));
    }
    EXPECT_LT(err, 1e-9);
    EXPECT_LT(err_root, 1e-12);
    std::cout << "[ KDL ] " << c.file << " " << rootName(root) << ": joint forces within " << err
              << " relative, root forces at rest within " << err_root << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(TreeModels, UrdfTreeRobot, ::testing::ValuesIn(treeRobots()),
                         [](const ::testing::TestParamInfo<TreeRobot>& info) {
                           return info.param.file.substr(0, info.param.file.find('.'));
                         });

// ---------------------------------------------------------------- order, notes, the chain cases

TEST(UrdfTrees, ChildrenComeInTheOrderOfTheFile) {
  // ANYmal's file lists the legs LF, RF, LH, RH (urdfdom keeps them by name: LF, LH, RF, RH)
  const Model anymal = load(kTrees / "anymal_c.urdf", RootJoint::Floating);
  std::vector<std::string> names;
  for (const auto& j : anymal.spec.joints) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
                                             "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"}));
  EXPECT_EQ(anymal.parent, (std::vector<int>{-1, 0, 1, -1, 3, 4, -1, 6, 7, -1, 9, 10}));
  // a hand-made tree, link1's children left_joint and right_joint: in the file's order, and in the other
  // order once right_joint is moved before left_joint in the text
  std::string xml = readFile(kCorpus / "valid_several_leaves.urdf");
  const ModelSpec s = specFromUrdf(xml);
  ASSERT_EQ(s.joints.size(), 3u);
  EXPECT_EQ(s.joints[1].name, "left_joint");
  EXPECT_EQ(s.joints[2].name, "right_joint");
  EXPECT_EQ(s.joints[1].parent, 0);
  EXPECT_EQ(s.joints[2].parent, 0);
  const std::size_t left = xml.find("  <joint name=\"left_joint\"");
  const std::size_t right = xml.find("  <joint name=\"right_joint\"");
  const std::size_t end = xml.find("</joint>", right) + 8;
  ASSERT_LT(left, right);
  const std::string moved = xml.substr(0, left) + xml.substr(right, end - right) + "\n" +
                            xml.substr(left, right - left) + xml.substr(end);
  const ModelSpec t = specFromUrdf(moved);
  EXPECT_EQ(t.joints[1].name, "right_joint");
  EXPECT_EQ(t.joints[2].name, "left_joint");
}

TEST(UrdfTrees, BaxterReportsItsMimicFingers) {
  std::vector<std::string> notes;
  const Model baxter = load(kTrees / "baxter.urdf", RootJoint::Fixed, &notes);
  EXPECT_EQ(baxter.n, 19);
  std::sort(notes.begin(), notes.end());
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "joint 'l_gripper_r_finger_joint' mimics 'l_gripper_l_finger_joint': loaded as an "
                       "independent joint",
                       "joint 'r_gripper_r_finger_joint' mimics 'r_gripper_l_finger_joint': loaded as an "
                       "independent joint"}));
  // both fingers of a gripper hang from the arm's last joint and move independently
  const int l = frameIndex(baxter, "l_gripper_l_finger");
  const int r = frameIndex(baxter, "l_gripper_r_finger");
  EXPECT_EQ(baxter.parent[static_cast<std::size_t>(l)], baxter.parent[static_cast<std::size_t>(r)]);
  EXPECT_EQ(baxter.spec.joints[static_cast<std::size_t>(baxter.parent[static_cast<std::size_t>(l)])].name,
            "left_w2");
  // notes are appended; none without mimic joints, none for a chain (the off-chain mimic fingers are locked)
  notes.clear();
  load(kTrees / "anymal_c.urdf", RootJoint::Floating, &notes);
  EXPECT_TRUE(notes.empty());
  UrdfOptions arm;
  arm.tip_link = "left_gripper";
  arm.notes = &notes;
  EXPECT_EQ(buildModelFromUrdfFile((kTrees / "baxter.urdf").string(), arm).n, 7);
  EXPECT_TRUE(notes.empty());
}

TEST(UrdfTrees, ASerialRobotUnderAMovingRootKeepsItsJointsAndTip) {
  // ur5 floating: the whole tree is its chain; joints, bodies and the tip frame as the fixed import's
  const std::string xml = readFile(fs::path(DENOC_MODELS_DIR) / "ur5.urdf");
  const ModelSpec chain = specFromUrdf(xml);
  for (RootJoint root : {RootJoint::Floating, RootJoint::Planar}) {
    UrdfOptions options;
    options.root = root;
    const ModelSpec s = specFromUrdf(xml, options);
    EXPECT_EQ(s.root, root);
    EXPECT_EQ(s.root_link, "world");
    ASSERT_EQ(s.joints.size(), chain.joints.size());
    for (std::size_t i = 0; i < s.joints.size(); ++i) {
      EXPECT_EQ(s.joints[i].name, chain.joints[i].name);
      EXPECT_EQ(s.joints[i].parent, static_cast<int>(i) - 1);
      EXPECT_EQ(s.joints[i].origin, chain.joints[i].origin);
      EXPECT_EQ(s.joints[i].rotation, chain.joints[i].rotation);
      EXPECT_EQ(s.joints[i].mass, chain.joints[i].mass);
      EXPECT_EQ(s.joints[i].inertia, chain.joints[i].inertia);
    }
    EXPECT_EQ(s.tip_origin, chain.tip_origin);
    EXPECT_EQ(s.tip_rotation, chain.tip_rotation);
    EXPECT_EQ(s.root_mass, 4.0);  // base_link, fixed to the root link 'world'
    EXPECT_EQ(buildModel(s).nv, 6 + (root == RootJoint::Floating ? 6 : 3));
  }
  // the fixed import of a serial robot is the chain of before: no root link name, parents left implicit
  EXPECT_EQ(chain.root, RootJoint::Fixed);
  EXPECT_TRUE(chain.root_link.empty());
  for (const auto& j : chain.joints) EXPECT_EQ(j.parent, kPreviousJoint);
  EXPECT_TRUE(buildModel(chain).serial);
}

TEST(UrdfTrees, TipLinkWithAFloatingRoot) {
  // the chain to the hand's tcp under a floating root: the fingers are locked on link 7, panda_link0 is the
  // root body
  UrdfOptions options;
  options.tip_link = "panda_hand_tcp";
  options.root = RootJoint::Floating;
  const Model model =
      buildModelFromUrdfFile((fs::path(DENOC_MODELS_DIR) / "panda_hand.urdf").string(), options);
  ASSERT_EQ(model.n, 7);
  EXPECT_EQ(model.nv, 13);
  EXPECT_EQ(model.root_mass, 0.629769);
  EXPECT_EQ(model.spec.root_link, "panda_link0");
  EXPECT_NEAR(model.spec.joints.back().mass, 0.735522 + 0.73 + 0.03, 1e-12);
  // a chain without a moving joint is the root body alone
  options.tip_link = "panda_link0";
  const Model alone =
      buildModelFromUrdfFile((fs::path(DENOC_MODELS_DIR) / "panda_hand.urdf").string(), options);
  EXPECT_EQ(alone.n, 0);
  EXPECT_EQ(alone.nv, 6);
  options.root = RootJoint::Fixed;
  EXPECT_THROW(buildModelFromUrdfFile((fs::path(DENOC_MODELS_DIR) / "panda_hand.urdf").string(), options),
               ModelError);
}

// ---------------------------------------------------------------- no joints, point masses, refusals

TEST(UrdfTrees, ADroneIsTheRootLinkAlone) {
  const std::string drone = R"(<robot name="drone">
    <link name="body"><inertial><origin xyz="0 0 0.01"/><mass value="1.2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link></robot>)";
  UrdfOptions options;
  options.root = RootJoint::Floating;
  const Model m = buildModelFromUrdf(drone, options);
  EXPECT_EQ(m.n, 0);
  EXPECT_EQ(m.nv, 6);
  EXPECT_EQ(m.nq, 7);
  EXPECT_EQ(m.root_mass, 1.2);
  EXPECT_EQ(m.root_com, Eigen::Vector3d(0, 0, 0.01));
  EXPECT_EQ(frameIndex(m, "body"), 1);
  // hovering: the root holds its weight, (0, 0, 1.2 g) in its axes, moment of the offset mass centre zero
  Data d(m);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd tau = inverseDynamics(m, d, neutralConfiguration(m), zero, zero);
  EXPECT_LT((tau - (Eigen::VectorXd(6) << 0, 0, 0, 0, 0, 1.2 * 9.81).finished()).cwiseAbs().maxCoeff(),
            1e-12);
  options.root = RootJoint::Planar;
  EXPECT_EQ(buildModelFromUrdf(drone, options).nv, 3);
  // the same body with propellers on fixed joints: their mass is the root link's
  const std::string rotors = R"(<robot name="quad"><link name="body"><inertial><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link>
    <link name="p1"><inertial><mass value="0.1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>
      </inertial></link>
    <link name="p2"><inertial><mass value="0.1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>
      </inertial></link>
    <joint name="f1" type="fixed"><parent link="body"/><child link="p1"/><origin xyz="0.2 0 0"/></joint>
    <joint name="f2" type="fixed"><parent link="body"/><child link="p2"/><origin xyz="-0.2 0 0"/></joint></robot>)";
  options.root = RootJoint::Floating;
  const Model quad = buildModelFromUrdf(rotors, options);
  EXPECT_EQ(quad.nv, 6);
  EXPECT_NEAR(quad.root_mass, 1.2, 1e-15);
  EXPECT_NEAR(quad.root_inertia(1, 1), 0.01 + 2 * 0.1 * 0.04, 1e-15);
  EXPECT_NEAR(quad.root_inertia(2, 2), 0.02 + 2 * 0.1 * 0.04, 1e-15);
  // a fixed root: nothing moves
  options.root = RootJoint::Fixed;
  try {
    buildModelFromUrdf(drone, options);
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no moving"), std::string::npos) << e.what();
  }
  // the corpus's robot of fixed joints only, floating
  options.root = RootJoint::Floating;
  EXPECT_EQ(buildModelFromUrdfFile((kCorpus / "no_moving_joints.urdf").string(), options).nv, 6);
}

TEST(UrdfTrees, PointMassesAndThinRodsArePassedToTheBuilder) {
  // a pendulum of two point masses and a thin rod about its own axis: semi-definite link inertias
  const auto pendulum = [](const std::string& rod_axis_joint) {
    return R"(<robot name="p"><link name="base"/>
      <link name="bob1"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
      <link name="rod"><inertial><origin xyz="0 0 -0.25"/><mass value="0.3"/>
        <inertia ixx="0.00625" ixy="0" ixz="0" iyy="0.00625" iyz="0" izz="0"/></inertial></link>
      <joint name="j1" type="continuous"><parent link="base"/><child link="bob1"/><axis xyz="0 1 0"/></joint>
      <joint name="j2" type="continuous"><parent link="bob1"/><child link="rod"/><origin xyz="0 0 -0.5"/>
        <axis xyz=")" +
           rod_axis_joint + R"("/></joint></robot>)";
  };
  const Model m = buildModelFromUrdf(pendulum("0 1 0"));
  EXPECT_EQ(m.n, 2);
  EXPECT_FALSE(m.serial);  // semi-definite links: the tree recursions
  EXPECT_EQ(m.spec.joints[0].inertia, Eigen::Matrix3d::Zero());
  // the rod turned about its own axis moves nothing: the builder refuses it by name
  try {
    buildModelFromUrdf(pendulum("0 0 1"));
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("joint 'j2' (link 'rod') moves no mass"), std::string::npos)
        << e.what();
  }
  // what is not physical stays refused by the importer, naming the link
  const std::string indefinite = R"(<robot name="p"><link name="base"/>
      <link name="l"><inertial><mass value="1"/>
        <inertia ixx="0.01" ixy="0.02" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="l"/></joint></robot>)";
  try {
    specFromUrdf(indefinite);
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("link 'l': mass 1, inertia is not positive semidefinite"),
              std::string::npos)
        << e.what();
  }
}

TEST(UrdfTrees, FloatingAndPlanarJointsInsideTheFileStayRefused) {
  for (RootJoint root : kRoots) {
    UrdfOptions options;
    options.root = root;
    for (const char* f : {"floating_joint.urdf", "planar_joint.urdf"}) {
      try {
        buildModelFromUrdfFile((kCorpus / f).string(), options);
        ADD_FAILURE() << f << " accepted";
      } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("joint 'joint2'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("only revolute, continuous, prismatic and fixed"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(UrdfTrees, ArmatureFollowsTheModelsOrder) {
  UrdfOptions options;
  options.armature = {0.1, 0.2, 0.3};
  const ModelSpec s = specFromUrdf(readFile(kCorpus / "valid_several_leaves.urdf"), options);
  EXPECT_EQ(s.joints[2].armature, 0.3);
  options.armature = {0.1, 0.2};
  EXPECT_THROW(specFromUrdf(readFile(kCorpus / "valid_several_leaves.urdf"), options), ModelError);
}

}  // namespace
}  // namespace denoc
