// Models and in-process oracles for the server tests: DH tables as request messages (written here, apart
// from the server's code), random chains, and the core's answers computed in this process.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/dh.hpp"
#include "denoc/v1/dynamics.pb.h"

namespace denoc::test {

inline v1::Vec3 vec3(const Eigen::Vector3d& v) {
  v1::Vec3 m;
  m.set_x(v.x());
  m.set_y(v.y());
  m.set_z(v.z());
  return m;
}

/// A registration request for a DH table (every field spelled out).
inline v1::RegisterModelRequest dhRequest(const DHSpec& dh, bool with_gravity = true) {
  v1::RegisterModelRequest r;
  r.set_name(dh.name);
  if (with_gravity) *r.mutable_gravity() = vec3(dh.gravity);
  for (const DHLink& l : dh.links) {
    v1::DHLink* m = r.mutable_dh()->add_links();
    m->set_joint(l.joint);
    m->set_link(l.link);
    m->set_type(l.type == JointType::Revolute ? v1::JOINT_TYPE_REVOLUTE : v1::JOINT_TYPE_PRISMATIC);
    m->set_a(l.a);
    m->set_b(l.b);
    m->set_alpha(l.alpha);
    m->set_theta(l.theta);
    m->set_mass(l.mass);
    *m->mutable_com() = vec3(l.com);
    v1::Inertia* I = m->mutable_inertia();
    I->set_ixx(l.inertia(0, 0));
    I->set_ixy(l.inertia(0, 1));
    I->set_ixz(l.inertia(0, 2));
    I->set_iyy(l.inertia(1, 1));
    I->set_iyz(l.inertia(1, 2));
    I->set_izz(l.inertia(2, 2));
    if (std::isfinite(l.lower)) m->mutable_limits()->set_lower(l.lower);
    if (std::isfinite(l.upper)) m->mutable_limits()->set_upper(l.upper);
    if (std::isfinite(l.velocity_limit)) m->mutable_limits()->set_velocity(l.velocity_limit);
    if (std::isfinite(l.effort_limit)) m->mutable_limits()->set_effort(l.effort_limit);
    m->set_armature(l.armature);
  }
  return r;
}

/// A random chain of n joints (revolute and prismatic, random geometry and physical inertias).
inline DHSpec randomChain(int n, unsigned seed, bool armature = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_real_distribution<double> pos(0.2, 1.0);
  DHSpec dh;
  dh.name = "random_" + std::to_string(n) + "_" + std::to_string(seed);
  dh.gravity = Eigen::Vector3d(0.1 * u(rng), 0.1 * u(rng), -9.81);
  for (int i = 0; i < n; ++i) {
    DHLink l;
    l.type = (i % 3 == 2) ? JointType::Prismatic : JointType::Revolute;
    l.a = 0.3 * u(rng);
    l.b = 0.3 * u(rng);
    l.alpha = 1.5 * u(rng);
    l.theta = 0.5 * u(rng);
    l.mass = 0.5 + 2.0 * pos(rng);
    l.com = Eigen::Vector3d(0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng));
    // principal moments in [0.02, 0.04]: the triangle inequalities hold; rotated by a random rotation
    const Eigen::Vector3d d(0.02 + 0.02 * pos(rng), 0.02 + 0.02 * pos(rng), 0.02 + 0.02 * pos(rng));
    const Eigen::Matrix3d R =
        Eigen::AngleAxisd(3 * u(rng), Eigen::Vector3d(u(rng), u(rng), 1.0).normalized()).toRotationMatrix();
    l.inertia = R * d.asDiagonal() * R.transpose();
    l.inertia = 0.5 * (l.inertia + l.inertia.transpose()).eval();
    if (armature) l.armature = 0.01 * pos(rng);
    dh.links.push_back(l);
  }
  return dh;
}

/// count random states of n joints, row-major.
inline std::vector<double> randomStates(int count, int n, unsigned seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(static_cast<std::size_t>(count) * n);
  for (double& x : v) x = u(rng);
  return v;
}

/// |a - b| <= tol * max(1, |b|) for every entry.
inline void expectClose(const double* got, const double* want, std::size_t n, const std::string& what,
                        double tol = 1e-12) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])))) {
      if (++bad <= 3) ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", core says " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

template <typename Field>
void expectCloseField(const Field& got, const std::vector<double>& want, const std::string& what,
                      double tol = 1e-12) {
  ASSERT_EQ(static_cast<std::size_t>(got.size()), want.size()) << what;
  expectClose(got.data(), want.data(), want.size(), what, tol);
}

/// The core's inverse dynamics in this process for a batch.
inline std::vector<double> coreID(const Model& m, const std::vector<double>& q, const std::vector<double>& qd,
                                  const std::vector<double>& qdd,
                                  const std::vector<double>* wrench = nullptr) {
  Data d(m);
  const int n = m.n;
  std::vector<double> out(q.size());
  for (std::size_t k = 0; k < q.size() / n; ++k) {
    const Eigen::Map<const Eigen::VectorXd> Q(&q[k * n], n), QD(&qd[k * n], n), QDD(&qdd[k * n], n);
    const Eigen::VectorXd tau =
        wrench ? inverseDynamics(m, d, Q, QD, QDD,
                                 Eigen::Map<const Eigen::Matrix<double, 6, 1>>(&(*wrench)[6 * k]))
               : inverseDynamics(m, d, Q, QD, QDD);
    Eigen::Map<Eigen::VectorXd>(&out[k * n], n) = tau;
  }
  return out;
}

enum class Route { Saha, Cholesky, Fixman };

inline std::vector<double> coreFD(const Model& m, const std::vector<double>& q, const std::vector<double>& qd,
                                  const std::vector<double>& tau, Route route) {
  Data d(m);
  const int n = m.n;
  std::vector<double> out(q.size());
  for (std::size_t k = 0; k < q.size() / n; ++k) {
    const Eigen::Map<const Eigen::VectorXd> Q(&q[k * n], n), QD(&qd[k * n], n), T(&tau[k * n], n);
    Eigen::VectorXd qdd = route == Route::Saha       ? forwardDynamics(m, d, Q, QD, T)
                          : route == Route::Cholesky ? forwardDynamicsCholesky(m, d, Q, QD, T)
                                                     : forwardDynamicsFixman(m, d, Q, QD, T);
    Eigen::Map<Eigen::VectorXd>(&out[k * n], n) = qdd;
  }
  return out;
}

}  // namespace denoc::test
