// Random but physically valid serial chains for tests and benchmarks.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>
#include <utility>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "support/compare.hpp"

namespace denoc::testing {

/// A random rotational inertia about the mass center: principal moments satisfying the triangle
/// inequalities, rotated by a random rotation.
inline Eigen::Matrix3d randomInertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  // principal moments from a random positive second-moment matrix diag(a, b, c): I_x = b + c, ...
  const double a = u(rng), b = u(rng), c = u(rng);
  const Eigen::Vector3d moments(b + c, a + c, a + b);
  const Eigen::Matrix3d R = Eigen::Quaterniond::UnitRandom().toRotationMatrix();
  return R * moments.asDiagonal() * R.transpose() * 0.1;
}

inline Eigen::Matrix3d randomRotation(std::mt19937& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::Quaterniond q(g(rng), g(rng), g(rng), g(rng));
  q.normalize();
  return q.toRotationMatrix();
}

inline Eigen::Vector3d randomVector(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  return {u(rng), u(rng), u(rng)};
}

/// A chain of n joints with random placements, axes and inertias; each joint prismatic with probability
/// prismatic_fraction.
inline ModelSpec randomChainSpec(int n, std::uint32_t seed, double prismatic_fraction = 0.3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uniform_real_distribution<double> mass(0.2, 5.0);
  ModelSpec spec;
  spec.name = "random_chain_" + std::to_string(n) + "_" + std::to_string(seed);
  spec.gravity = Eigen::Vector3d(0.3, -0.2, -9.81);
  for (int i = 0; i < n; ++i) {
    JointSpec j;
    j.type = u01(rng) < prismatic_fraction ? JointType::Prismatic : JointType::Revolute;
    j.rotation = randomRotation(rng);
    j.origin = randomVector(rng, 0.3);
    j.axis = randomVector(rng, 1.0).normalized();
    j.mass = mass(rng);
    j.com = randomVector(rng, 0.2);
    j.inertia = randomInertia(rng);
    spec.joints.push_back(j);
  }
  spec.tip_rotation = randomRotation(rng);
  spec.tip_origin = randomVector(rng, 0.1);
  return spec;
}

inline Eigen::VectorXd randomVectorX(std::mt19937& rng, int n, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

/// One chain built twice: for the serial recursions and for the tree's (ModelSpec::force_tree), whose
/// results on a chain the tests hold to the serial ones.
struct ChainOnBothRoutes {
  Model serial;
  Model tree;
};

inline ChainOnBothRoutes chainOnBothRoutes(ModelSpec spec) {
  Model serial = buildModel(spec);
  spec.force_tree = true;
  return {std::move(serial), buildModel(spec)};
}

/// Whether f(model, data, q), an n x n result, has the same bits on both routes of the chain of n joints
/// `spec` at a random q (seeded by n).
template <typename F>
::testing::AssertionResult sameBitsOnBothRoutes(const ModelSpec& spec, F&& f, const char* what) {
  const ChainOnBothRoutes chain = chainOnBothRoutes(spec);
  if (!chain.serial.serial || chain.tree.serial) return ::testing::AssertionFailure() << "not a serial chain";
  const int n = chain.serial.n;
  Data ds(chain.serial), dt(chain.tree);
  std::mt19937 rng(static_cast<std::uint32_t>(n));
  const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
  const Eigen::MatrixXd a = f(chain.serial, ds, q);
  const Eigen::MatrixXd b = f(chain.tree, dt, q);
  return sameBits(a.data(), b.data(), static_cast<std::size_t>(n) * n, what);
}

}  // namespace denoc::testing
