// denoc against brute force from the definitions, with this file's own forward kinematics (4x4 homogeneous
// transforms composed from the ModelSpec or straight from a DH table; nothing of denoc's Data is used):
//  - the dense NOC: I(q) = N^T M N;
//  - Lagrange's equations with finite differences: tau = I qdd + Idot qd - dT/dq + dV/dq, T = qd^T I qd / 2,
//    V = -sum m_i g . C_i, and a tip wrench as the generalized force it does work through;
//  - closed-form Lagrangian dynamics of planar 2R and 3R arms;
//  - the Stanford arm: I(q) symmetric positive definite, gravity torques = gradient of V.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::relErr;

using testing::randomChainSpec;
using testing::randomVectorX;
using Vec6 = Eigen::Matrix<double, 6, 1>;

constexpr double kDeg = std::numbers::pi / 180.0;

Eigen::Matrix4d hom(const Eigen::Matrix3d& R, const Eigen::Vector3d& p) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.topLeftCorner<3, 3>() = R;
  T.topRightCorner<3, 1>() = p;
  return T;
}
Eigen::Matrix4d rotZ(double t) {
  return hom(Eigen::AngleAxisd(t, Eigen::Vector3d::UnitZ()).toRotationMatrix(), Eigen::Vector3d::Zero());
}
Eigen::Matrix4d rotX(double t) {
  return hom(Eigen::AngleAxisd(t, Eigen::Vector3d::UnitX()).toRotationMatrix(), Eigen::Vector3d::Zero());
}
Eigen::Matrix4d transZ(double d) { return hom(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, d)); }
Eigen::Matrix4d transX(double d) { return hom(Eigen::Matrix3d::Identity(), Eigen::Vector3d(d, 0, 0)); }

Eigen::Matrix3d rot(const Eigen::Matrix4d& T) { return T.topLeftCorner<3, 3>(); }
Eigen::Vector3d pos(const Eigen::Matrix4d& T) { return T.topRightCorner<3, 1>(); }

/// Everything the definitions need at one configuration, in the base frame.
struct Kinematics {
  std::vector<JointType> type;
  std::vector<Eigen::Vector3d> e;  // joint axis
  std::vector<Eigen::Vector3d> O;  // a point on the joint axis
  std::vector<Eigen::Vector3d> C;  // mass center
  std::vector<double> m;           // mass
  std::vector<Eigen::Matrix3d> I;  // rotational inertia about C, base axes
  std::vector<double> armature;
  Eigen::Matrix3d tip_R;  // tip frame orientation
  Eigen::Vector3d tip_p;  // tip frame origin
};

using KinematicsFn = std::function<Kinematics(const Eigen::VectorXd&)>;

/// From a ModelSpec (URDF convention): T_i = T_{i-1} * [rotation_i, origin_i] * motion_i(q_i).
Kinematics specKinematics(const ModelSpec& spec, const Eigen::VectorXd& q) {
  Kinematics k;
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  for (std::size_t i = 0; i < spec.joints.size(); ++i) {
    const JointSpec& j = spec.joints[i];
    const Eigen::Vector3d a = j.axis.normalized();
    const Eigen::Matrix4d Tj = T * hom(j.rotation, j.origin);  // joint frame
    const Eigen::Matrix4d motion =
        j.type == JointType::Revolute
            ? hom(Eigen::AngleAxisd(q[static_cast<Eigen::Index>(i)], a).toRotationMatrix(),
                  Eigen::Vector3d::Zero())
            : hom(Eigen::Matrix3d::Identity(), a * q[static_cast<Eigen::Index>(i)]);
    T = Tj * motion;  // child link frame
    k.type.push_back(j.type);
    k.e.push_back(rot(Tj) * a);
    k.O.push_back(pos(Tj));
    k.C.push_back(pos(T) + rot(T) * j.com);
    k.m.push_back(j.mass);
    k.I.push_back(rot(T) * j.inertia * rot(T).transpose());
    k.armature.push_back(j.armature);
  }
  k.tip_R = rot(T) * spec.tip_rotation;
  k.tip_p = pos(T) + rot(T) * spec.tip_origin;
  return k;
}

/// From a DH table (Saha's convention): frame_{i+1} = frame_i Rz(theta_i) Tz(b_i) Tx(a_i) Rx(alpha_i), q
/// added to theta_i (revolute) or b_i (prismatic); link i's data in frame_{i+1}; the tip frame is
/// frame_{n+1}.
Kinematics dhKinematics(const DHSpec& dh, const Eigen::VectorXd& q) {
  Kinematics k;
  Eigen::Matrix4d F = Eigen::Matrix4d::Identity();  // frame 1 = base
  for (std::size_t i = 0; i < dh.links.size(); ++i) {
    const DHLink& l = dh.links[i];
    const double qi = q[static_cast<Eigen::Index>(i)];
    const bool rev = l.type == JointType::Revolute;
    k.type.push_back(l.type);
    k.e.push_back(rot(F).col(2));
    k.O.push_back(pos(F));
    F = F * rotZ(l.theta + (rev ? qi : 0.0)) * transZ(l.b + (rev ? 0.0 : qi)) * transX(l.a) * rotX(l.alpha);
    k.C.push_back(pos(F) + rot(F) * l.com);
    k.m.push_back(l.mass);
    k.I.push_back(rot(F) * l.inertia * rot(F).transpose());
    k.armature.push_back(l.armature);
  }
  k.tip_R = rot(F);
  k.tip_p = pos(F);
  return k;
}

/// The dense NOC N (6n x n): block (i, j) is the twist [w; v of C_i] of link i due to a unit rate of joint j.
Eigen::MatrixXd denseNOC(const Kinematics& k) {
  const int n = static_cast<int>(k.e.size());
  Eigen::MatrixXd N = Eigen::MatrixXd::Zero(6 * n, n);
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) {
      const auto uj = static_cast<std::size_t>(j);
      if (k.type[uj] == JointType::Revolute) {
        N.block<3, 1>(6 * i, j) = k.e[uj];
        N.block<3, 1>(6 * i + 3, j) = k.e[uj].cross(k.C[static_cast<std::size_t>(i)] - k.O[uj]);
      } else {
        N.block<3, 1>(6 * i + 3, j) = k.e[uj];
      }
    }
  }
  return N;
}

/// M = diag(M_i), M_i = diag(I_i, m_i 1) about C_i in base axes.
Eigen::MatrixXd denseMass(const Kinematics& k) {
  const int n = static_cast<int>(k.e.size());
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(6 * n, 6 * n);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    M.block<3, 3>(6 * i, 6 * i) = k.I[ui];
    M.block<3, 3>(6 * i + 3, 6 * i + 3) = k.m[ui] * Eigen::Matrix3d::Identity();
  }
  return M;
}

Eigen::MatrixXd inertiaFromNOC(const Kinematics& k) {
  const Eigen::MatrixXd N = denseNOC(k);
  Eigen::MatrixXd I = N.transpose() * denseMass(k) * N;
  for (std::size_t i = 0; i < k.armature.size(); ++i) {
    I(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i)) += k.armature[i];
  }
  return I;
}

double potential(const Kinematics& k, const Eigen::Vector3d& g) {
  double V = 0.0;
  for (std::size_t i = 0; i < k.m.size(); ++i) V -= k.m[i] * g.dot(k.C[i]);
  return V;
}

/// Generalized force of a wrench [moment; force] applied on the last link, in the tip frame about its origin:
/// Q_j = e_j . (n + (P - O_j) x f) (revolute), e_j . f (prismatic), all in base axes.
Eigen::VectorXd generalizedForce(const Kinematics& k, const Vec6& w) {
  const int n = static_cast<int>(k.e.size());
  const Eigen::Vector3d n0 = k.tip_R * w.head<3>(), f0 = k.tip_R * w.tail<3>();
  Eigen::VectorXd Q(n);
  for (int j = 0; j < n; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    Q[j] =
        k.type[uj] == JointType::Revolute ? k.e[uj].dot(n0 + (k.tip_p - k.O[uj]).cross(f0)) : k.e[uj].dot(f0);
  }
  return Q;
}

/// Lagrange's equations, derivatives by central differences of step h:
/// tau = I qdd + Idot qd - [qd^T (dI/dq_k) qd / 2]_k + dV/dq - Q(tip wrench).
Eigen::VectorXd lagrangeTorques(const KinematicsFn& kin, const Eigen::Vector3d& g, const Eigen::VectorXd& q,
                                const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd, const Vec6& wrench,
                                double h = 1e-5) {
  const Eigen::Index n = q.size();
  const Kinematics k = kin(q);
  const Eigen::MatrixXd I = inertiaFromNOC(k);
  const Eigen::MatrixXd Idot = (inertiaFromNOC(kin(q + h * qd)) - inertiaFromNOC(kin(q - h * qd))) / (2 * h);
  Eigen::VectorXd dTdq(n), dVdq(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const Eigen::VectorXd dq = h * Eigen::VectorXd::Unit(n, j);
    const Kinematics kp = kin(q + dq), km = kin(q - dq);
    const Eigen::MatrixXd dI = (inertiaFromNOC(kp) - inertiaFromNOC(km)) / (2 * h);
    dTdq[j] = 0.5 * qd.dot(dI * qd);
    dVdq[j] = (potential(kp, g) - potential(km, g)) / (2 * h);
  }
  return I * qdd + Idot * qd - dTdq + dVdq - generalizedForce(k, wrench);
}

// ---------------------------------------------------------------------------------------------------------
// (a) the dense NOC and Lagrange's equations on random chains

class DefinitionsRandomChains : public ::testing::TestWithParam<int> {};

TEST_P(DefinitionsRandomChains, InertiaMatrixIsNtMN) {
  const int n = GetParam();
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    ModelSpec spec = randomChainSpec(n, 31u * seed + static_cast<std::uint32_t>(n), seed == 4 ? 0.7 : 0.3);
    if (seed == 2) {
      for (std::size_t i = 0; i < spec.joints.size(); ++i)
        spec.joints[i].armature = 0.01 * static_cast<double>(i + 1);
    }
    const Model model = buildModel(spec);
    Data data(model);
    std::mt19937 rng(seed);
    for (int s = 0; s < 5; ++s) {
      const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
      const Eigen::MatrixXd I_def = inertiaFromNOC(specKinematics(spec, q));
      const Eigen::MatrixXd I = computeInertiaMatrix(model, data, q);
      EXPECT_LT(relErr(I, I_def), 1e-10) << spec.name << " state " << s << "\ndenoc\n"
                                         << I << "\nN^T M N\n"
                                         << I_def;
    }
  }
}

TEST_P(DefinitionsRandomChains, InverseDynamicsIsLagrange) {
  const int n = GetParam();
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const ModelSpec spec = randomChainSpec(n, 57u * seed + static_cast<std::uint32_t>(n), 0.35);
    const Model model = buildModel(spec);
    Data data(model);
    const KinematicsFn kin = [&spec](const Eigen::VectorXd& q) { return specKinematics(spec, q); };
    std::mt19937 rng(seed + 100u);
    for (int s = 0; s < 3; ++s) {
      const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
      const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
      const Eigen::VectorXd qdd = randomVectorX(rng, n, 2.0);
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
      Vec6 w;
      w << randomVectorX(rng, 3, 2.0), randomVectorX(rng, 3, 10.0);
      const Vec6 nw = Vec6::Zero();

      // velocity terms alone (no gravity, no acceleration), then everything together
      ModelSpec spec0 = spec;
      spec0.gravity.setZero();
      const Model model0 = buildModel(spec0);
      Data data0(model0);
      const Eigen::VectorXd vel_def = lagrangeTorques(kin, Eigen::Vector3d::Zero(), q, qd, zero, nw);
      EXPECT_LT(relErr(inverseDynamics(model0, data0, q, qd, zero), vel_def), 1e-7) << spec.name;
      // and the velocity terms must be a real part of the test (one joint alone has none)
      if (n >= 3) {
        EXPECT_GT(vel_def.norm(), 1e-3);
      }

      const Eigen::VectorXd grav_def = lagrangeTorques(kin, spec.gravity, q, zero, zero, nw);
      EXPECT_LT(relErr(inverseDynamics(model, data, q, zero, zero), grav_def), 1e-7) << spec.name;

      const Eigen::VectorXd tau_def = lagrangeTorques(kin, spec.gravity, q, qd, qdd, w);
      EXPECT_LT(relErr(inverseDynamics(model, data, q, qd, qdd, w), tau_def), 1e-7) << spec.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, DefinitionsRandomChains, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 9, 12, 20));

// ---------------------------------------------------------------------------------------------------------
// (b) closed-form Lagrangian dynamics of planar arms (X-Y plane, joint axes along Z, gravity g along -Y)

struct PlanarLink {
  double l, lc, m, Izz;  // length, joint-to-mass-center distance along the link, mass, inertia about C (z)
};

/// 2R: the textbook closed form.
void planar2R(const PlanarLink (&k)[2], double g, const Eigen::Vector2d& q, const Eigen::Vector2d& qd,
              Eigen::Matrix2d& M, Eigen::Vector2d& h, Eigen::Vector2d& G) {
  const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
  const double c1 = std::cos(q[0]), c12 = std::cos(q[0] + q[1]);
  const auto& [l1, lc1, m1, I1] = k[0];
  const auto& [l2, lc2, m2, I2] = k[1];
  (void)l2;
  M(0, 0) = I1 + I2 + m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2);
  M(0, 1) = M(1, 0) = I2 + m2 * (lc2 * lc2 + l1 * lc2 * c2);
  M(1, 1) = I2 + m2 * lc2 * lc2;
  const double b = m2 * l1 * lc2 * s2;
  h[0] = -b * (2 * qd[0] * qd[1] + qd[1] * qd[1]);
  h[1] = b * qd[0] * qd[0];
  G[0] = g * ((m1 * lc1 + m2 * l1) * c1 + m2 * lc2 * c12);
  G[1] = g * m2 * lc2 * c12;
}

/// 3R: M(q) by hand, its partial derivatives by hand, h_i = sum_jk (dM_ij/dq_k - dM_jk/dq_i / 2) qd_j qd_k.
void planar3R(const PlanarLink (&k)[3], double g, const Eigen::Vector3d& q, const Eigen::Vector3d& qd,
              Eigen::Matrix3d& M, Eigen::Vector3d& h, Eigen::Vector3d& G) {
  const auto& [l1, lc1, m1, I1] = k[0];
  const auto& [l2, lc2, m2, I2] = k[1];
  const auto& [l3, lc3, m3, I3] = k[2];
  (void)l3;
  const double c2 = std::cos(q[1]), s2 = std::sin(q[1]), c3 = std::cos(q[2]), s3 = std::sin(q[2]);
  const double c23 = std::cos(q[1] + q[2]), s23 = std::sin(q[1] + q[2]);
  const double A = m2 * l1 * lc2 + m3 * l1 * l2, B = m3 * l2 * lc3, C = m3 * l1 * lc3;
  M(2, 2) = I3 + m3 * lc3 * lc3;
  M(1, 2) = I3 + m3 * lc3 * lc3 + B * c3;
  M(0, 2) = I3 + m3 * lc3 * lc3 + B * c3 + C * c23;
  M(1, 1) = I2 + I3 + m2 * lc2 * lc2 + m3 * (l2 * l2 + lc3 * lc3) + 2 * B * c3;
  M(0, 1) = I2 + I3 + m2 * lc2 * lc2 + m3 * (l2 * l2 + lc3 * lc3) + A * c2 + 2 * B * c3 + C * c23;
  M(0, 0) = I1 + I2 + I3 + m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2) +
            m3 * (l1 * l1 + l2 * l2 + lc3 * lc3) + 2 * A * c2 + 2 * B * c3 + 2 * C * c23;
  M(1, 0) = M(0, 1);
  M(2, 0) = M(0, 2);
  M(2, 1) = M(1, 2);
  Eigen::Matrix3d dM[3];
  dM[0].setZero();                                                  // M does not depend on q1
  dM[1] << -2 * A * s2 - 2 * C * s23, -A * s2 - C * s23, -C * s23,  //
      -A * s2 - C * s23, 0, 0,                                      //
      -C * s23, 0, 0;
  dM[2] << -2 * B * s3 - 2 * C * s23, -2 * B * s3 - C * s23, -B * s3 - C * s23,  //
      -2 * B * s3 - C * s23, -2 * B * s3, -B * s3,                               //
      -B * s3 - C * s23, -B * s3, 0;
  for (int i = 0; i < 3; ++i) {
    h[i] = 0.0;
    for (int j = 0; j < 3; ++j) {
      for (int l = 0; l < 3; ++l) h[i] += (dM[l](i, j) - 0.5 * dM[i](j, l)) * qd[j] * qd[l];
    }
  }
  const double c1 = std::cos(q[0]), c12 = std::cos(q[0] + q[1]), c123 = std::cos(q[0] + q[1] + q[2]);
  G[0] = g * ((m1 * lc1 + m2 * l1 + m3 * l1) * c1 + (m2 * lc2 + m3 * l2) * c12 + m3 * lc3 * c123);
  G[1] = g * ((m2 * lc2 + m3 * l2) * c12 + m3 * lc3 * c123);
  G[2] = g * m3 * lc3 * c123;
}

TEST(ClosedForm, Planar2R) {
  // links 0.4 and 0.35 m, mass centers 0.15 and 0.2 m from their joints (and 3 cm off the plane), masses 2
  // and 1.3 kg, Izz 0.04 and 0.015 kg m^2
  const PlanarLink links[2] = {{0.4, 0.15, 2.0, 0.04}, {0.35, 0.2, 1.3, 0.015}};
  const Eigen::Vector3d principal[2] = {{0.03, 0.025, 0.04}, {0.01, 0.012, 0.015}};
  DHSpec dh;
  dh.name = "planar_2r";
  dh.gravity = Eigen::Vector3d(0.0, -9.81, 0.0);
  for (int i = 0; i < 2; ++i) {
    DHLink l;
    l.a = links[i].l;
    l.mass = links[i].m;
    l.com = Eigen::Vector3d(links[i].lc - links[i].l, 0.0, 0.03);  // frame i+1 is at the link's far end
    l.inertia = principal[i].asDiagonal();
    dh.links.push_back(l);
  }
  const Model model = buildModelFromDH(dh);
  Data data(model);
  std::mt19937 rng(2);
  for (int s = 0; s < 50; ++s) {
    const Eigen::Vector2d q = randomVectorX(rng, 2, 3.2), qd = randomVectorX(rng, 2, 3.0),
                          qdd = randomVectorX(rng, 2, 3.0);
    Eigen::Matrix2d M;
    Eigen::Vector2d h, G;
    planar2R(links, 9.81, q, qd, M, h, G);
    EXPECT_LT(relErr(computeInertiaMatrix(model, data, Eigen::VectorXd(q)), M), 1e-12)
        << "q=" << q.transpose();
    const Eigen::VectorXd tau =
        inverseDynamics(model, data, Eigen::VectorXd(q), Eigen::VectorXd(qd), Eigen::VectorXd(qdd));
    EXPECT_LT(relErr(tau, M * qdd + h + G), 1e-12) << "q=" << q.transpose() << " qd=" << qd.transpose();
  }
}

TEST(ClosedForm, Planar3RArmOfSection61) {
  // planarArmDH(): lengths 0.3, 0.25, 0.2 m, masses 1, 0.8, 0.5 kg, uniform bars 0.04 m wide, mass center at
  // mid-length: Izz = m (l^2 + w^2) / 12.
  const double w = 0.04;
  PlanarLink links[3] = {{0.3, 0.15, 1.0, 0}, {0.25, 0.125, 0.8, 0}, {0.2, 0.1, 0.5, 0}};
  for (PlanarLink& l : links) l.Izz = l.m * (l.l * l.l + w * w) / 12.0;
  const Model model = buildModelFromDH(planarArmDH());
  Data data(model);
  std::mt19937 rng(3);
  for (int s = 0; s < 50; ++s) {
    const Eigen::Vector3d q = randomVectorX(rng, 3, 3.2), qd = randomVectorX(rng, 3, 3.0),
                          qdd = randomVectorX(rng, 3, 3.0);
    Eigen::Matrix3d M;
    Eigen::Vector3d h, G;
    planar3R(links, 9.81, q, qd, M, h, G);
    EXPECT_LT(relErr(computeInertiaMatrix(model, data, Eigen::VectorXd(q)), M), 1e-12)
        << "q=" << q.transpose();
    const Eigen::VectorXd tau =
        inverseDynamics(model, data, Eigen::VectorXd(q), Eigen::VectorXd(qd), Eigen::VectorXd(qdd));
    EXPECT_LT(relErr(tau, M * qdd + h + G), 1e-12) << "q=" << q.transpose() << " qd=" << qd.transpose();
    // each part on its own: velocity terms, gravity
    const Eigen::VectorXd z = Eigen::VectorXd::Zero(3);
    EXPECT_LT(relErr(inverseDynamics(model, data, Eigen::VectorXd(q), z, z), G), 1e-12);
  }
}

TEST(ClosedForm, Planar3RAgreesWithLagrangeByFiniteDifferences) {
  // the hand-derived Coriolis terms themselves, against the numerical Lagrangian of this file
  const double w = 0.04;
  PlanarLink links[3] = {{0.3, 0.15, 1.0, 0}, {0.25, 0.125, 0.8, 0}, {0.2, 0.1, 0.5, 0}};
  for (PlanarLink& l : links) l.Izz = l.m * (l.l * l.l + w * w) / 12.0;
  const DHSpec dh = planarArmDH();
  const KinematicsFn kin = [&dh](const Eigen::VectorXd& q) { return dhKinematics(dh, q); };
  std::mt19937 rng(4);
  for (int s = 0; s < 10; ++s) {
    const Eigen::Vector3d q = randomVectorX(rng, 3, 3.2), qd = randomVectorX(rng, 3, 3.0);
    Eigen::Matrix3d M;
    Eigen::Vector3d h, G;
    planar3R(links, 9.81, q, qd, M, h, G);
    const Eigen::VectorXd lag =
        lagrangeTorques(kin, dh.gravity, q, qd, Eigen::VectorXd::Zero(3), Vec6::Zero());
    EXPECT_LT(relErr(lag, h + G), 1e-7);
  }
}

// ---------------------------------------------------------------------------------------------------------
// (c) the Stanford arm (Saha 1999 Table 3 as read in docs/design.md)

TEST(StanfordArm, InertiaMatrixSymmetricPositiveDefinite) {
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  std::mt19937 rng(5);
  for (int s = 0; s < 500; ++s) {
    Eigen::VectorXd q = randomVectorX(rng, 6, std::numbers::pi);
    q[2] = 0.6 * q[2] / std::numbers::pi;  // prismatic b_3 in [-0.6, 0.6] m
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    EXPECT_LE((M - M.transpose()).norm(), 1e-14 * M.norm()) << "q=" << q.transpose();
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M, Eigen::EigenvaluesOnly);
    EXPECT_GT(es.eigenvalues().minCoeff(), 0.0) << "q=" << q.transpose();
    EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>(M).info(), Eigen::Success);
  }
}

/// The Stanford arm straight from the table of docs/design.md (not from stanfordArmDH()).
DHSpec stanfordTable() {
  struct Row {
    JointType t;
    double b, alpha_deg, m;
    Eigen::Vector3d r, I;
  };
  const JointType R = JointType::Revolute, P = JointType::Prismatic;
  const Row rows[6] = {{R, 0.2, -90, 9.0, {0, -0.1, 0}, {0.01, 0.02, 0.01}},
                       {R, 0.1, 90, 6.0, {0, 0, 0}, {0.05, 0.06, 0.01}},
                       {P, 0.0, 0, 4.0, {0, 0, 0}, {0.4, 0.4, 0.01}},
                       {R, 0.6, 90, 1.0, {0, 0.1, 0}, {0.001, 0.001, 0.0005}},
                       {R, 0.0, -90, 0.6, {0, 0, 0}, {0.0005, 0.0005, 0.0002}},
                       {R, 0.0, 0, 0.5, {0, 0, 0}, {0.003, 0.001, 0.002}}};
  DHSpec dh;
  dh.gravity = Eigen::Vector3d(0, 0, -9.81);
  for (const Row& r : rows) {
    DHLink l;
    l.type = r.t;
    l.b = r.b;
    l.alpha = r.alpha_deg * kDeg;
    l.mass = r.m;
    l.com = -r.r;  // r runs from C_i to O_{i+1}
    l.inertia = r.I.asDiagonal();
    dh.links.push_back(l);
  }
  return dh;
}

TEST(StanfordArm, GravityTorquesAreThePotentialGradient) {
  const DHSpec table = stanfordTable();
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  const Eigen::Vector3d g(0, 0, -9.81);
  std::mt19937 rng(6);
  const double h = 1e-5;
  for (int s = 0; s < 100; ++s) {
    Eigen::VectorXd q = randomVectorX(rng, 6, std::numbers::pi);
    q[2] = 0.6 * q[2] / std::numbers::pi;
    Eigen::VectorXd grad(6);
    for (int j = 0; j < 6; ++j) {
      const Eigen::VectorXd dq = h * Eigen::VectorXd::Unit(6, j);
      grad[j] =
          (potential(dhKinematics(table, q + dq), g) - potential(dhKinematics(table, q - dq), g)) / (2 * h);
    }
    const Eigen::VectorXd z = Eigen::VectorXd::Zero(6);
    EXPECT_LT(relErr(inverseDynamics(model, data, q, z, z), grad), 1e-8) << "q=" << q.transpose();
  }
}

TEST(StanfordArm, FullDynamicsAreLagrange) {
  const DHSpec table = stanfordTable();
  const KinematicsFn kin = [&table](const Eigen::VectorXd& q) { return dhKinematics(table, q); };
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  std::mt19937 rng(7);
  for (int s = 0; s < 20; ++s) {
    Eigen::VectorXd q = randomVectorX(rng, 6, std::numbers::pi);
    q[2] = 0.6 * q[2] / std::numbers::pi;
    const Eigen::VectorXd qd = randomVectorX(rng, 6, 2.0), qdd = randomVectorX(rng, 6, 2.0);
    Vec6 w;
    w << randomVectorX(rng, 3, 2.0), randomVectorX(rng, 3, 10.0);
    EXPECT_LT(relErr(computeInertiaMatrix(model, data, q), inertiaFromNOC(kin(q))), 1e-10);
    EXPECT_LT(relErr(inverseDynamics(model, data, q, qd, qdd, w),
                     lagrangeTorques(kin, model.gravity, q, qd, qdd, w)),
              1e-7)
        << "q=" << q.transpose();
  }
}

}  // namespace
}  // namespace denoc
