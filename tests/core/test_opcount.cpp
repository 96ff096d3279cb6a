// Operation counts of inverse dynamics and O(n) forward dynamics with a counting scalar, on the all-revolute
// chains of docs/design.md (n = 2..40): the counting scalar gives the same numbers as double, and the
// counts are exactly affine in n (the papers' Tables 1 and 2 give 120n - 44 and 201n - 335
// multiplications). The fitted slopes and intercepts are printed and recorded as test properties.
// Also: the benchmark models' hand-transcribed Panda (bench/models.hpp) against the URDF importer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/models.hpp"
#include "denoc/denoc.hpp"
#include "denoc/urdf.hpp"
#include "support/counting_scalar.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::CountingScalar;
using testing::OpCounts;
using CModel = ModelTpl<CountingScalar>;
using CData = DataTpl<CountingScalar>;
using CVecX = Types<CountingScalar>::VecX;

constexpr int kMinN = 2;
constexpr int kMaxN = 40;

CVecX toCounting(const Eigen::VectorXd& v) { return v.cast<CountingScalar>(); }

/// Norm-wise relative difference |a - b|_inf / max(1, |b|_inf). (Entry-wise it would measure the conditioning
/// of I(q) of the long chains: the double build sums in another order where Eigen vectorizes.)
double maxRelDiff(const CVecX& a, const Eigen::VectorXd& b) {
  double m = 0.0;
  for (Eigen::Index i = 0; i < b.size(); ++i) m = std::max(m, std::abs(a[i].value() - b[i]));
  return m / std::max(1.0, b.cwiseAbs().maxCoeff());
}

struct Counted {
  OpCounts counts;
  double rel_diff = 0.0;  // against the double computation
};

enum class Algo { InverseDynamics, ForwardDynamics };

/// Which recursions count: the serial ones, or the tree ones (ModelSpec::force_tree) under a root.
struct Route {
  bool tree = false;
  RootJoint root = RootJoint::Fixed;
};

/// The benchmark chain of n joints by `route` (a moving root's link with a mass and an inertia) and a
/// configuration q with the joint angles drawn from rng.
Model countedChain(int n, Route route, std::mt19937& rng, Eigen::VectorXd& q) {
  ModelSpec spec = bench::chainSpec(n);
  spec.force_tree = route.tree;
  spec.root = route.root;
  spec.root_mass = 2.0;
  spec.root_inertia = Eigen::Vector3d(0.1, 0.2, 0.25).asDiagonal();
  Model model = buildModel(spec);
  q = neutralConfiguration(model);
  q.tail(n) = testing::randomVectorX(rng, n, 3.0);
  return model;
}

Counted countOne(Algo algo, int n, Route route = {}) {
  std::mt19937 rng(1000u + static_cast<unsigned>(n));
  Eigen::VectorXd q;
  const Model model = countedChain(n, route, rng, q);
  Data data(model);
  const CModel cmodel = model.cast<CountingScalar>();
  CData cdata(cmodel);
  const Eigen::VectorXd qd = testing::randomVectorX(rng, model.nv, 2.0);
  const Eigen::VectorXd u = testing::randomVectorX(rng, model.nv, 5.0);  // qdd or tau
  const CVecX cq = toCounting(q), cqd = toCounting(qd), cu = toCounting(u);
  Counted out;
  testing::resetOpCounts();
  if (algo == Algo::InverseDynamics) {
    const CVecX& tau = inverseDynamics(cmodel, cdata, cq, cqd, cu);
    out.counts = testing::opCounts();
    out.rel_diff = maxRelDiff(tau, inverseDynamics(model, data, q, qd, u));
  } else {
    const CVecX& qdd = forwardDynamics(cmodel, cdata, cq, cqd, cu);
    out.counts = testing::opCounts();
    out.rel_diff = maxRelDiff(qdd, forwardDynamics(model, data, q, qd, u));
  }
  return out;
}

/// "a n + b" with integer a, b.
std::string affine(std::int64_t a, std::int64_t b) {
  std::ostringstream os;
  os << a << "n " << (b < 0 ? "- " : "+ ") << (b < 0 ? -b : b);
  return os.str();
}

struct Field {
  const char* name;
  std::uint64_t (*get)(const OpCounts&);
};

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"mul", [](const OpCounts& c) { return c.mul; }},
      {"div", [](const OpCounts& c) { return c.div; }},
      {"mul+div", [](const OpCounts& c) { return c.mulDiv(); }},
      {"add", [](const OpCounts& c) { return c.add; }},
      {"neg", [](const OpCounts& c) { return c.neg; }},
      {"sin", [](const OpCounts& c) { return c.sin; }},
      {"cos", [](const OpCounts& c) { return c.cos; }},
      {"sqrt", [](const OpCounts& c) { return c.sqrt; }},
      {"log", [](const OpCounts& c) { return c.log; }},
      {"other", [](const OpCounts& c) { return c.other; }},
  };
  return f;
}

void checkCounts(Algo algo, const char* label, Route route = {}) {
  std::vector<OpCounts> counts(kMaxN + 1);
  for (int n = kMinN; n <= kMaxN; ++n) {
    const Counted c = countOne(algo, n, route);
    EXPECT_LE(c.rel_diff, 1e-12) << label << " with the counting scalar differs from double at n = " << n;
    counts[n] = c.counts;
  }
  std::cout << label << " (counted on the benchmark chains, n = " << kMinN << ".." << kMaxN << "):\n";
  for (const Field& f : fields()) {
    const auto c = [&](int n) { return static_cast<std::int64_t>(f.get(counts[n])); };
    const std::int64_t slope = c(4) - c(3);
    const std::int64_t intercept = c(3) - 3 * slope;
    // exactly affine from n = 3 on
    for (int n = 3; n < kMaxN; ++n) {
      EXPECT_EQ(c(n + 1) - c(n), slope) << label << ": the " << f.name << " count is not affine at n = " << n;
    }
    std::cout << "  " << f.name << ": " << affine(slope, intercept) << "  (n = 2: " << c(2) << ")\n";
    ::testing::Test::RecordProperty(std::string(label) + "_" + f.name, affine(slope, intercept));
  }
}

TEST(OperationCounts, InverseDynamicsIsAffineAndExact) {
  checkCounts(Algo::InverseDynamics, "inverse_dynamics");
}

TEST(OperationCounts, ForwardDynamicsIsAffineAndExact) {
  checkCounts(Algo::ForwardDynamics, "forward_dynamics");
}

// The tree recursions (world axes) on the same chains, and their cost under a floating and a planar root:
// docs/operation-counts.md, "Trees".
TEST(OperationCounts, TreeRecursionsAreAffineAndExact) {
  checkCounts(Algo::InverseDynamics, "tree_inverse_dynamics", {true, RootJoint::Fixed});
  checkCounts(Algo::ForwardDynamics, "tree_forward_dynamics", {true, RootJoint::Fixed});
  checkCounts(Algo::InverseDynamics, "floating_inverse_dynamics", {true, RootJoint::Floating});
  checkCounts(Algo::ForwardDynamics, "floating_forward_dynamics", {true, RootJoint::Floating});
  checkCounts(Algo::InverseDynamics, "planar_inverse_dynamics", {true, RootJoint::Planar});
  checkCounts(Algo::ForwardDynamics, "planar_forward_dynamics", {true, RootJoint::Planar});
}

/// The operations of computeInverseInertia on the benchmark chain of n joints by `route`.
OpCounts inverseInertiaCounts(int n, Route route) {
  std::mt19937 rng(1000u + static_cast<unsigned>(n));
  Eigen::VectorXd q;
  const CModel cmodel = countedChain(n, route, rng, q).cast<CountingScalar>();
  CData cdata(cmodel);
  testing::resetOpCounts();
  computeInverseInertia(cmodel, cdata, toCounting(q));
  return testing::opCounts();
}

// I^-1 by the sweeps over a tree (TL.8): on a chain through the tree code exactly the serial sweeps'
// operations above kDenseInverseMaxDof; under a floating root exactly quadratic in n, the serial sweeps'
// n^2 term (docs/operation-counts.md, "Trees").
TEST(OperationCounts, TreeInverseInertiaIsTheSerialSweeps) {
  for (int n = kDenseInverseMaxDof + 1; n <= 24; ++n) {
    const OpCounts tree = inverseInertiaCounts(n, {true, RootJoint::Fixed});
    const OpCounts serial = inverseInertiaCounts(n, {});
    EXPECT_EQ(tree.mulDiv(), serial.mulDiv()) << "n = " << n;
    EXPECT_EQ(tree.add, serial.add) << "n = " << n;
  }
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating}) {
    std::vector<std::int64_t> m, a;
    for (int n = 10; n <= 24; ++n) {
      const OpCounts c = inverseInertiaCounts(n, {true, root});
      m.push_back(static_cast<std::int64_t>(c.mulDiv()));
      a.push_back(static_cast<std::int64_t>(c.add));
    }
    // constant second differences: 2 x the n^2 coefficient, 25 (12.5 n^2) and 23 (11.5 n^2)
    for (std::size_t k = 2; k < m.size(); ++k) {
      EXPECT_EQ(m[k] - 2 * m[k - 1] + m[k - 2], 25) << "multiplications, n = " << 10 + k;
      EXPECT_EQ(a[k] - 2 * a[k - 1] + a[k - 2], 23) << "additions, n = " << 10 + k;
    }
    std::cout << (root == RootJoint::Fixed ? "fixed" : "floating")
              << " root, I^-1 on the tree code at n = 12: " << m[2] << " multiplications and divisions, "
              << a[2] << " additions\n";
  }
}

// Saha 1999, Table 1: the DeNOC inverse dynamics in 120n - 44 multiplications and 97n - 55 additions. The
// core's must not take more, at any n (sin and cos of the joint angles are counted apart, as in the paper).
TEST(OperationCounts, InverseDynamicsAtOrBelowThePaper) {
  for (int n = 1; n <= kMaxN; ++n) {
    const OpCounts c = countOne(Algo::InverseDynamics, n).counts;
    EXPECT_LE(c.mulDiv(), static_cast<std::uint64_t>(120 * n - 44)) << "multiplications at n = " << n;
    if (n >= 2) {  // at n = 1 ours takes 50 additions, the formula gives 42
      EXPECT_LE(c.add, static_cast<std::uint64_t>(97 * n - 55)) << "additions at n = " << n;
    }
  }
}

// The benchmark models' hand transcription of the Panda against the URDF importer (tip panda_link8, the
// flange). The importer merges what is rigidly attached beyond the flange (the hand, and the fingers at
// q = 0) into link 7; the benchmark model leaves them out, so link 7 is compared after merging them here.
TEST(BenchModels, PandaMatchesItsUrdf) {
  std::ifstream file(std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf");
  ASSERT_TRUE(file.good());
  std::stringstream xml;
  xml << file.rdbuf();
  UrdfOptions options;
  options.tip_link = "panda_link8";
  const ModelSpec urdf = specFromUrdf(xml.str(), options);
  const ModelSpec ours = bench::pandaSpec();
  ASSERT_EQ(urdf.joints.size(), 7u);
  ASSERT_EQ(ours.joints.size(), 7u);
  for (std::size_t i = 0; i < 7; ++i) {
    const JointSpec& a = ours.joints[i];
    const JointSpec& b = urdf.joints[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.name, b.name);
    EXPECT_LE((a.rotation - b.rotation).norm(), 1e-15);
    EXPECT_LE((a.origin - b.origin).norm(), 1e-15);
    EXPECT_LE((a.axis - b.axis).norm(), 1e-15);
    EXPECT_EQ(a.lower, b.lower);
    EXPECT_EQ(a.upper, b.upper);
    if (i < 6) {
      EXPECT_EQ(a.mass, b.mass);
      EXPECT_LE((a.com - b.com).norm(), 1e-15);
      EXPECT_LE((a.inertia - b.inertia).norm(), 1e-15);
    }
  }
  EXPECT_LE((ours.tip_origin - urdf.tip_origin).norm(), 1e-15);
  EXPECT_LE((ours.gravity - urdf.gravity).norm(), 1e-15);

  // link 7 plus the hand (frame: Rz(-pi/4) at the flange) and the two fingers (0.0584 along the hand's z)
  struct Body {
    double m;
    Eigen::Vector3d c;  // mass center in link 7
    Eigen::Matrix3d I;  // about the mass center, link 7 axes
  };
  const Eigen::Matrix3d Rh = bench::rpy(0, 0, -0.7853981633974483);
  const Eigen::Vector3d ph(0, 0, 0.107);
  const JointSpec& l7 = ours.joints[6];
  const Eigen::Matrix3d Ih = Eigen::Vector3d(0.001, 0.0025, 0.0017).asDiagonal();
  const Eigen::Matrix3d If =
      Eigen::Vector3d(2.3749999999999997e-06, 2.3749999999999997e-06, 7.5e-07).asDiagonal();
  const std::vector<Body> bodies = {
      {l7.mass, l7.com, l7.inertia},
      {0.73, ph + Rh * Eigen::Vector3d(-0.01, 0, 0.03), Rh * Ih * Rh.transpose()},
      {0.015, ph + Rh * Eigen::Vector3d(0, 0, 0.0584), Rh * If * Rh.transpose()},
      {0.015, ph + Rh * Eigen::Vector3d(0, 0, 0.0584), Rh * If * Rh.transpose()},
  };
  double m = 0.0;
  Eigen::Vector3d mc = Eigen::Vector3d::Zero();
  for (const Body& b : bodies) {
    m += b.m;
    mc += b.m * b.c;
  }
  const Eigen::Vector3d c = mc / m;
  Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
  for (const Body& b : bodies) {
    const Eigen::Vector3d d = b.c - c;
    I += b.I + b.m * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
  }
  const JointSpec& u7 = urdf.joints[6];
  EXPECT_NEAR(m, u7.mass, 1e-12);
  EXPECT_LE((c - u7.com).norm(), 1e-12);
  EXPECT_LE((I - u7.inertia).norm(), 1e-12);
}

TEST(OperationCounts, CountingScalarCountsEachOperation) {
  using S = CountingScalar;
  testing::resetOpCounts();
  S a(2.0), b(3.0);
  S c = a * b + a / b - b;
  c += a;
  c *= b;
  c = -c;
  using std::cos;
  using std::sin;
  using std::sqrt;
  c = sqrt(c * c) + sin(a) + cos(b);
  const OpCounts& k = testing::opCounts();
  EXPECT_EQ(k.mul, 3u);
  EXPECT_EQ(k.div, 1u);
  EXPECT_EQ(k.add, 5u);
  EXPECT_EQ(k.neg, 1u);
  EXPECT_EQ(k.sqrt, 1u);
  EXPECT_EQ(k.sin, 1u);
  EXPECT_EQ(k.cos, 1u);
  // a 3x3 product through Eigen: 27 multiplications, 18 additions
  testing::resetOpCounts();
  Eigen::Matrix<S, 3, 3> A = Eigen::Matrix3d::Random().cast<S>();
  Eigen::Matrix<S, 3, 3> B = Eigen::Matrix3d::Random().cast<S>();
  Eigen::Matrix<S, 3, 3> C = A * B;
  EXPECT_EQ(testing::opCounts().mul, 27u);
  EXPECT_EQ(testing::opCounts().add, 18u);
  EXPECT_NEAR(C(1, 2).value(), (A.cast<double>() * B.cast<double>())(1, 2), 1e-15);
}

}  // namespace
}  // namespace denoc
