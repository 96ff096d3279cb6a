// Random but physically valid kinematic trees (ModelSpec) for the tree tests: random parents, joint types,
// axes, placements, masses and inertias, some armature, and a random root (fixed, floating or planar, with
// the root link's inertia). Every number is drawn from one std::mt19937 seeded by the caller, so a seed
// names one tree on every run (no Eigen::...::Random, which draws from std::rand).
#pragma once

#include <Eigen/Geometry>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/model.hpp"
#include "support/random_chain.hpp"

namespace denoc::testing {

/// What randomTreeSpec may vary; unset fields are drawn from the seed.
struct RandomTreeOptions {
  int joints = 0;                   // number of joints; 0: drawn in [1, 64]
  std::optional<RootJoint> root;    // unset: drawn (fixed, floating, planar with equal odds)
  bool chain = false;               // every joint on the previous one (parent kPreviousJoint), a serial chain
  double prismatic_fraction = 0.3;  // odds of a prismatic joint
  double armature_fraction = 0.3;   // odds of a joint with armature in [0.01, 1]
  double massless_fraction = 0.0;   // odds of a massless link (mass 0, inertia 0: a URDF's virtual link)
};

/// A uniformly distributed rotation (a normalised Gaussian quaternion).
inline Eigen::Matrix3d randomTreeRotation(std::mt19937& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::Quaterniond q;
  do {
    q = Eigen::Quaterniond(g(rng), g(rng), g(rng), g(rng));
  } while (q.norm() < 1e-6);
  return q.normalized().toRotationMatrix();
}

inline Eigen::Vector3d randomTreeVector(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  const double x = u(rng), y = u(rng), z = u(rng);
  return {x, y, z};
}

/// A rotational inertia about the mass centre of a body of mass m: the second moments diag(a, b, c) of a
/// random mass distribution (a, b, c in [0.002, 0.05] m^2) give the principal moments m (b + c), m (a + c),
/// m (a + b), positive and strictly within the triangle inequalities; turned by a random rotation.
inline Eigen::Matrix3d randomTreeInertia(std::mt19937& rng, double mass) {
  std::uniform_real_distribution<double> u(0.002, 0.05);
  const double a = u(rng), b = u(rng), c = u(rng);
  const Eigen::Matrix3d R = randomTreeRotation(rng);
  const Eigen::Vector3d moments(b + c, a + c, a + b);
  const Eigen::Matrix3d I = mass * R * moments.asDiagonal() * R.transpose();
  return 0.5 * (I + I.transpose());
}

/// A random tree of joints: each joint's parent is the previous joint with odds 1/2 (chains) and otherwise
/// drawn uniformly among the earlier joints and the root link; revolute or prismatic; an axis along a
/// coordinate axis or random; an identity or random joint rotation; origin within 0.3 m, mass centre within
/// 0.2 m, mass in [0.1, 10] kg; armature on some joints; the root link (floating, planar) with its own mass,
/// mass centre and inertia; a random tip frame on the last link and a gravity off the vertical.
inline ModelSpec randomTreeSpec(std::uint32_t seed, const RandomTreeOptions& options = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uniform_real_distribution<double> mass(0.1, 10.0);
  std::uniform_real_distribution<double> armature(0.01, 1.0);
  ModelSpec spec;
  const int n = options.joints > 0 ? options.joints : std::uniform_int_distribution<int>(1, 64)(rng);
  spec.root =
      options.root ? *options.root : static_cast<RootJoint>(std::uniform_int_distribution<int>(0, 2)(rng));
  spec.name = "random_tree_" + std::to_string(seed);
  spec.gravity = Eigen::Vector3d(2.0 * u01(rng) - 1.0, 2.0 * u01(rng) - 1.0, -9.81);
  for (int i = 0; i < n; ++i) {
    JointSpec j;
    j.name = std::string("j").append(std::to_string(i));  // (not "j" + ...: GCC 12's -Wrestrict false alarm)
    j.link = std::string("l").append(std::to_string(i));
    if (options.chain || i == 0 || u01(rng) < 0.5) {
      j.parent = options.chain ? kPreviousJoint : i - 1;
    } else {
      j.parent = std::uniform_int_distribution<int>(-1, i - 1)(rng);
    }
    j.type = u01(rng) < options.prismatic_fraction ? JointType::Prismatic : JointType::Revolute;
    if (u01(rng) < 0.25) {
      j.axis = Eigen::Vector3d::Unit(std::uniform_int_distribution<int>(0, 2)(rng));
    } else {
      do {
        j.axis = randomTreeVector(rng, 1.0);
      } while (j.axis.norm() < 0.1);
      j.axis.normalize();
    }
    j.rotation = u01(rng) < 0.25 ? Eigen::Matrix3d::Identity() : randomTreeRotation(rng);
    j.origin = randomTreeVector(rng, 0.3);
    if (u01(rng) < options.massless_fraction) {
      j.mass = 0.0;
      j.inertia.setZero();
    } else {
      j.mass = mass(rng);
      j.com = randomTreeVector(rng, 0.2);
      j.inertia = randomTreeInertia(rng, j.mass);
    }
    if (u01(rng) < options.armature_fraction) j.armature = armature(rng);
    spec.joints.push_back(j);
  }
  // a massless link must carry other links (else its joint moves nothing and the inertia matrix is
  // singular): a massless leaf gets a mass after all
  std::vector<bool> has_child(static_cast<std::size_t>(n), false);
  for (int i = 0; i < n; ++i) {
    const int p = spec.joints[static_cast<std::size_t>(i)].parent;
    const int parent = p == kPreviousJoint ? i - 1 : p;
    if (parent >= 0) has_child[static_cast<std::size_t>(parent)] = true;
  }
  for (int i = 0; i < n; ++i) {
    JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    if (j.mass == 0.0 && !has_child[static_cast<std::size_t>(i)]) {
      j.mass = mass(rng);
      j.com = randomTreeVector(rng, 0.2);
      j.inertia = randomTreeInertia(rng, j.mass);
    }
  }
  if (spec.root != RootJoint::Fixed) {
    spec.root_link = "root";
    spec.root_mass = mass(rng);
    spec.root_com = randomTreeVector(rng, 0.2);
    spec.root_inertia = randomTreeInertia(rng, spec.root_mass);
  }
  spec.tip_rotation = randomTreeRotation(rng);
  spec.tip_origin = randomTreeVector(rng, 0.1);
  return spec;
}

/// A random tree of n joints from a random chain: the joints of randomChainSpec(n, seed) given random earlier
/// parents (or the root link), under `root`; the root link gets a mass and an inertia (test_trees.cpp,
/// test_tree_derivatives.cpp).
inline ModelSpec randomTreeSpec(int n, std::uint32_t seed, RootJoint root) {
  ModelSpec spec = randomChainSpec(n, seed);
  std::mt19937 rng(seed + 1000);
  for (int i = 0; i < n; ++i) {
    std::uniform_int_distribution<int> pick(-1, i - 1);
    spec.joints[static_cast<std::size_t>(i)].parent = (i > 0 && rng() % 3 == 0) ? i - 1 : pick(rng);
  }
  spec.root = root;
  spec.root_link = "trunk";
  spec.root_mass = 3.0;
  spec.root_com = randomVector(rng, 0.1);
  spec.root_inertia = randomInertia(rng);
  return spec;
}

/// The same tree with its joints numbered depth first (each joint's children in their order in `spec`), the
/// parents renumbered to match: the order a URDF's tree gives, under which I^-1 takes the sweeps
/// (model.tree_sweeps).
inline ModelSpec depthFirst(const ModelSpec& spec) {
  const int n = static_cast<int>(spec.joints.size());
  std::vector<std::vector<int>> children(static_cast<std::size_t>(n) + 1);  // [parent + 1]
  std::vector<int> parent(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int p = spec.joints[static_cast<std::size_t>(i)].parent;
    parent[static_cast<std::size_t>(i)] = p == kPreviousJoint ? i - 1 : p;
    children[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)] + 1)].push_back(i);
  }
  std::vector<int> order, renumbered(static_cast<std::size_t>(n));
  std::vector<int> stack(children[0].rbegin(), children[0].rend());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    renumbered[static_cast<std::size_t>(i)] = static_cast<int>(order.size());
    order.push_back(i);
    const std::vector<int>& c = children[static_cast<std::size_t>(i) + 1];
    stack.insert(stack.end(), c.rbegin(), c.rend());
  }
  ModelSpec out = spec;
  out.joints.clear();
  for (int i : order) {
    JointSpec j = spec.joints[static_cast<std::size_t>(i)];
    const int p = parent[static_cast<std::size_t>(i)];
    j.parent = p < 0 ? kRootLink : renumbered[static_cast<std::size_t>(p)];
    out.joints.push_back(j);
  }
  return out;
}

/// A tree size and root, for tests that sweep both.
struct TreeCase {
  int n;
  RootJoint root;
};

/// Every root with each of `sizes` joints, and the free bodies without joints (floating, planar).
inline std::vector<TreeCase> treeCases(std::initializer_list<int> sizes) {
  std::vector<TreeCase> out;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : sizes) out.push_back({n, root});
  }
  out.push_back({0, RootJoint::Floating});
  out.push_back({0, RootJoint::Planar});
  return out;
}

/// `size` entries uniform in [-scale, scale] (a state, a velocity, a torque).
inline Eigen::VectorXd randomStateVector(int size, std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd x(size);
  for (int k = 0; k < size; ++k) x[k] = u(rng);
  return x;
}

inline const char* rootName(RootJoint root) {
  return root == RootJoint::Fixed ? "fixed" : root == RootJoint::Floating ? "floating" : "planar";
}

/// A chain on both recursions: built as it is (serial) and with ModelSpec::force_tree (tree).
struct SerialAndTree {
  Model serial, tree;
};

inline SerialAndTree serialAndTree(ModelSpec spec) {
  SerialAndTree out;
  out.serial = buildModel(spec);
  spec.force_tree = true;
  out.tree = buildModel(spec);
  if (!out.serial.serial || out.tree.serial)
    throw std::logic_error("serialAndTree: the spec is not a serial chain");
  return out;
}

}  // namespace denoc::testing
