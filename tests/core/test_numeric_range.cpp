// The one numeric check (algorithm/check.hpp; docs/algorithms.md, "Numerical range"):
//  - states: each argument at its bound accepted, beyond it (and NaN, infinities) refused naming the
//    function, the argument and the index, by every public algorithm;
//  - no public algorithm ever returns a non-finite number: a random search over extreme states (in range,
//    at the bounds, beyond them, subnormal, non-finite) on the Panda, the Stanford arm, random chains and the
//    same robots scaled to the ends of the mass and length ranges;
//  - the three forward dynamics routes (Saha's O(n), Cholesky, Fixman) agree on what they refuse: each state
//    is answered by all three (with finite accelerations) or refused by all three; each answer satisfies the
//    equations of motion I(q) qdd + C(q, qd) qd + g(q) = tau to a small backward error (the identity oracle:
//    I from composite bodies, C qd + g from the inverse dynamics), and ID(q, qd, FD(q, qd, tau)) = tau.
// The known limit of that agreement (Fixman's route on badly scaled chains) is measured, not hidden: see
// Agreement.FixmanOnBadlyScaledChainsRefusesOrAgrees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/check.hpp"
#include "denoc/denoc.hpp"
#include "denoc/urdf.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSubnormal = 4.9e-324;

Model panda() {
  return buildModelFromUrdfFile(std::string(DENOC_SOURCE_DIR) + "/examples/models/panda.urdf");
}

// the same robot with every mass and inertia times s (conditioning unchanged), or every length times l and
// every inertia times l^2 (the same)
ModelSpec scaled(ModelSpec spec, double mass_factor, double length_factor) {
  for (JointSpec& j : spec.joints) {
    j.mass *= mass_factor;
    j.inertia *= mass_factor * length_factor * length_factor;
    j.origin *= length_factor;
    j.com *= length_factor;
  }
  spec.tip_origin *= length_factor;
  return spec;
}

std::vector<std::pair<std::string, Model>> robots() {
  std::vector<std::pair<std::string, Model>> r;
  r.emplace_back("panda", panda());
  r.emplace_back("stanford", buildModelFromDH(stanfordArmDH()));
  for (std::uint32_t seed = 1; seed <= 4; ++seed)
    r.emplace_back("chain" + std::to_string(seed),
                   buildModel(testing::randomChainSpec(3 + 3 * int(seed), seed)));
  const ModelSpec p = panda().spec;
  const ModelSpec s = buildModelFromDH(stanfordArmDH()).spec;
  // the lightest link at the lightest mass allowed (1e-9 kg), the heaviest at the heaviest (1e9 kg)
  const auto masses = [](const ModelSpec& spec) {
    double lo = kInf, hi = 0.0;
    for (const JointSpec& j : spec.joints) lo = std::min(lo, j.mass), hi = std::max(hi, j.mass);
    return std::pair{lo, hi};
  };
  r.emplace_back("panda lightest", buildModel(scaled(p, kMinMass / masses(p).first, 1.0)));
  r.emplace_back("panda heaviest", buildModel(scaled(p, kMaxMass / masses(p).second, 1.0)));
  r.emplace_back("stanford lightest", buildModel(scaled(s, kMinMass / masses(s).first, 1.0)));
  r.emplace_back("stanford heaviest", buildModel(scaled(s, kMaxMass / masses(s).second, 1.0)));
  // lengths up to 1e6 m (the longest allowed)
  r.emplace_back("panda x1e5 m", buildModel(scaled(p, 1.0, 1e5)));
  r.emplace_back("stanford x1e6 m", buildModel(scaled(s, 1.0, 1e6)));
  return r;
}

// ---------------------------------------------------------------------------------------------- states

using Call = std::function<void(const Model&, Data&, const Eigen::VectorXd&, const Eigen::VectorXd&,
                                const Eigen::VectorXd&)>;

struct Algorithm {
  const char* name;
  int args;  // how many of (q, x, y) it takes
  Call call;
};

// every public algorithm, with (q, qd or b, qdd or tau)
std::vector<Algorithm> algorithms() {
  using V = Eigen::VectorXd;
  return {
      {"inverseDynamics", 3,
       [](const Model& m, Data& d, const V& q, const V& x, const V& y) { inverseDynamics(m, d, q, x, y); }},
      {"forwardDynamics", 3,
       [](const Model& m, Data& d, const V& q, const V& x, const V& y) { forwardDynamics(m, d, q, x, y); }},
      {"forwardDynamicsCholesky", 3,
       [](const Model& m, Data& d, const V& q, const V& x, const V& y) {
         forwardDynamicsCholesky(m, d, q, x, y);
       }},
      {"forwardDynamicsFixman", 3,
       [](const Model& m, Data& d, const V& q, const V& x, const V& y) {
         forwardDynamicsFixman(m, d, q, x, y);
       }},
      {"computeInertiaMatrix", 1,
       [](const Model& m, Data& d, const V& q, const V&, const V&) { computeInertiaMatrix(m, d, q); }},
      {"computeUDU", 1, [](const Model& m, Data& d, const V& q, const V&, const V&) { computeUDU(m, d, q); }},
      {"computeFullFactor", 1,
       [](const Model& m, Data& d, const V& q, const V&, const V&) { computeFullFactor(m, d, q); }},
      {"computeInverseInertia", 1,
       [](const Model& m, Data& d, const V& q, const V&, const V&) { computeInverseInertia(m, d, q); }},
      {"computeConvectiveMatrix", 2,
       [](const Model& m, Data& d, const V& q, const V& x, const V&) {
         computeConvectiveMatrix(m, d, q, x);
       }},
      {"computeVelocityBias", 2,
       [](const Model& m, Data& d, const V& q, const V& x, const V&) { computeVelocityBias(m, d, q, x); }},
      {"computeBias", 2,
       [](const Model& m, Data& d, const V& q, const V& x, const V&) { computeBias(m, d, q, x); }},
      {"computeGravity", 1,
       [](const Model& m, Data& d, const V& q, const V&, const V&) { computeGravity(m, d, q); }},
      {"fixmanLogDet", 1,
       [](const Model& m, Data& d, const V& q, const V&, const V&) { fixmanLogDet(m, d, q); }},
      {"fixmanSolve", 2,
       [](const Model& m, Data& d, const V& q, const V& x, const V&) {
         V out(m.n);
         fixmanSolve(m, d, q, x, out);
         if (!out.allFinite()) throw std::logic_error("fixmanSolve returned a non-finite x");
       }},
      {"mechanicalEnergy", 2,
       [](const Model& m, Data& d, const V& q, const V& x, const V&) {
         double k, p;
         mechanicalEnergy(m, d, q, x, k, p);
       }},
  };
}

// every result the data holds after a call is finite where the call wrote one
bool resultsFinite(const Algorithm& a, const Data& d) {
  const std::string n = a.name;
  if (n == "inverseDynamics") return d.tau.allFinite();
  if (n.rfind("forwardDynamics", 0) == 0) return d.qdd.allFinite();
  if (n == "computeInertiaMatrix") return d.M.allFinite();
  if (n == "computeUDU") return d.D.allFinite() && std::isfinite(d.log_det) && d.U.allFinite();
  if (n == "computeFullFactor")
    return d.M.allFinite() && d.U.allFinite() && d.D.allFinite() && std::isfinite(d.log_det);
  if (n == "computeInverseInertia") return d.Minv.allFinite();
  if (n == "computeConvectiveMatrix") return d.C.allFinite();
  if (n == "computeVelocityBias") return d.cqd.allFinite();
  if (n == "computeBias") return d.bias.allFinite();
  if (n == "computeGravity") return d.g.allFinite();
  if (n == "fixmanLogDet") return std::isfinite(d.fx_log_det);
  return true;
}

TEST(OutputCheck, AllFiniteAgreesWithIsfiniteOnEveryKindOfDouble) {
  // the bit test of detail::allFinite against std::isfinite, value by value and on whole arrays: the special
  // values (infinities, quiet and signalling NaNs, the largest finite, subnormals, signed zeros) and random
  // bit patterns (every exponent, every sign)
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                inf,
                                -inf,
                                std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::signaling_NaN(),
                                std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                -std::numeric_limits<double>::denorm_min(),
                                std::nextafter(std::numeric_limits<double>::max(), inf)};
  std::mt19937_64 rng(7);
  for (int k = 0; k < 100000; ++k) {
    const std::uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    values.push_back(x);
  }
  int non_finite = 0;
  for (const double x : values) {
    EXPECT_EQ(detail::allFinite(&x, 1), static_cast<bool>(std::isfinite(x))) << x;
    non_finite += !std::isfinite(x);
  }
  EXPECT_GT(non_finite, 10);  // the random patterns hold some (1 in 2048 has the exponent all ones)
  // arrays: all finite, then one non-finite entry at each place
  std::vector<double> finite;
  for (const double x : values)
    if (std::isfinite(x)) finite.push_back(x);
  EXPECT_TRUE(detail::allFinite(finite.data(), static_cast<Eigen::Index>(finite.size())));
  for (const double bad : {inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
    for (std::size_t at : {std::size_t{0}, finite.size() / 2, finite.size() - 1}) {
      std::vector<double> v = finite;
      v[at] = bad;
      EXPECT_FALSE(detail::allFinite(v.data(), static_cast<Eigen::Index>(v.size()))) << at;
    }
  }
  EXPECT_TRUE(detail::allFinite(finite.data(), 0));
}

// computeInertiaMatrix and computeFullFactor make no pass over I (docs/algorithms.md, "Argument checks and
// the numerical range"): the bound derived there, on a chain at the ends of every range (offsets, mass
// centres and prismatic travel 1e6 m, masses 1e9 kg, inertias 1e21 kg m^2, armatures 1e21), at the
// extreme states. With r = (n + 1) 2.8e6 m, the bound for n joints is 6 r (6 n (1e21 + 1e9 r^2) r) + 1e21.
// The tree recursions' I(q) makes no pass either: the same joints as four legs of n / 4 on a fixed root
// (no composite body or lever arm exceeds the chain's, so the chain's bound holds).
TEST(OutputCheck, TheInertiaMatrixStaysWithinItsDerivedBoundAtTheEndsOfEveryRange) {
  for (const int chain_n : {7, 64, 256, -8, -64}) {
    const bool legs = chain_n < 0;
    const int n = std::abs(chain_n);
    ModelSpec spec;
    spec.name = "extreme_chain";
    std::mt19937 rng(11 + static_cast<unsigned>(n));
    for (int i = 0; i < n; ++i) {
      JointSpec j;
      j.type = i % 3 == 1 ? JointType::Prismatic : JointType::Revolute;
      j.rotation = testing::randomRotation(rng);
      j.origin = Eigen::Vector3d(1e6, -1e6, 1e6);
      j.axis = testing::randomVector(rng, 1.0).normalized();
      j.mass = 1e9;
      j.com = Eigen::Vector3d(-1e6, 1e6, 1e6);
      j.inertia = Eigen::Vector3d(1e21, 1e21, 1e21).asDiagonal();
      j.armature = 1e21;
      if (legs && i % (n / 4) == 0) j.parent = kRootLink;
      spec.joints.push_back(j);
    }
    const Model m = buildModel(spec);
    ASSERT_EQ(m.serial, !legs);
    Data d(m);
    const double reach = (n + 1) * 2.8e6;  // |O_i| and |C_i|
    const double bound = 6 * reach * (6 * n * (1e21 + 1e9 * reach * reach) * reach) + 1e21;
    double largest = 0;
    for (int k = 0; k < 50; ++k) {
      Eigen::VectorXd q = testing::randomVectorX(rng, n, kMaxPosition);
      if (k % 2 == 0)
        for (int i = 0; i < n; ++i) q[i] = (rng() % 2 ? 1 : -1) * kMaxPosition;
      const Eigen::MatrixXd& M = computeInertiaMatrix(m, d, q);
      ASSERT_TRUE(M.allFinite()) << n;
      largest = std::max(largest, M.cwiseAbs().maxCoeff());
      try {
        computeFullFactor(m, d, q);
      } catch (const NumericalError&) {  // a pivot may be refused; I is whole either way
      }
      EXPECT_TRUE(d.M.allFinite()) << n;
    }
    EXPECT_LT(largest, bound) << n;
    std::printf("[ figures  ] extreme %s of %d joints: largest |I_ij| %.3g, derived bound %.3g\n",
                legs ? "four legs" : "chain", n, largest, bound);
  }
}

// ... nor over U of the dense elimination once its pivots pass: a non-finite U_ak = W_ak / D_k drives the
// later pivot D_a to -inf or NaN. Symmetric matrices with some rows and columns scaled towards underflow
// (subnormal pivots, 1 / D_k infinite) and overflow, through detail::denseUDU: whenever checkPivots would
// let the factor through, every entry of U is finite; and the search does reach non-finite U (so the
// implication is tested, not vacuous). denseUDU's own verdict on its pivots, formed as it eliminates, is
// the test of every pivot written out here.
TEST(OutputCheck, TheDenseFactorsUIsFiniteWheneverItsPivotsPass) {
  const Model m = panda();
  Data d(m);
  const int n = m.n;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double scales[] = {1e-170, 1e-160, 1e-155, 1e-3, 1.0, 1e100, 1e150, 1e154};
  int passed = 0, refused = 0, non_finite_u = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    Eigen::MatrixXd B(n, n);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) B(r, c) = u(rng);
    Eigen::MatrixXd A = B * B.transpose();
    if (trial % 4 == 0) A(0, 1) = A(1, 0) = std::sqrt(A(0, 0) * A(1, 1));  // singular 2 x 2 block
    for (int r = 0; r < n; ++r) {
      const double s = rng() % 4 == 0 ? scales[rng() % std::size(scales)] : 1.0;
      A.row(r) *= s;
      A.col(r) *= s;
    }
    d.M = A;
    const bool accepted = detail::denseUDU(m, d);
    bool pivots = true;
    for (int k = 0; k < n; ++k) pivots &= d.D[k] > 0 && d.D[k] <= std::numeric_limits<double>::max();
    ASSERT_EQ(accepted, pivots) << "trial " << trial;
    non_finite_u += !d.U.allFinite();
    if (pivots) {
      ++passed;
      ASSERT_TRUE(d.U.allFinite()) << "trial " << trial << "\nI =\n" << A << "\nU =\n" << d.U;
    } else {
      ++refused;
    }
  }
  EXPECT_GT(non_finite_u, 100);
  EXPECT_GT(passed, 1000);
  std::printf(
      "[ figures  ] dense factor: %d matrices passed the pivot check (U finite), %d refused, %d of them "
      "with a non-finite U\n",
      passed, refused, non_finite_u);
}

TEST(StateRange, EachArgumentAtItsBoundIsAcceptedAndBeyondRefused) {
  const Model m = buildModelFromDH(stanfordArmDH());  // revolute and prismatic joints
  Data d(m);
  const Eigen::VectorXd q0 = Eigen::VectorXd::Constant(m.n, 0.3), x0 = Eigen::VectorXd::Constant(m.n, 0.2);
  const double above = std::nextafter(kMaxStateValue, kInf);
  const double above_q = std::nextafter(kMaxPosition, kInf);
  int refused = 0;
  for (const Algorithm& a : algorithms()) {
    for (int arg = 0; arg < a.args; ++arg) {
      const double bound = arg == 0 ? kMaxPosition : kMaxStateValue;
      const char* names3[] = {"q", a.name == std::string("fixmanSolve") ? "b" : "qd",
                              std::string(a.name).find("forward") == 0 ? "tau" : "qdd"};
      for (int at : {0, m.n - 1}) {
        // at the bound, either sign: accepted, with finite results
        for (double v : {bound, -bound}) {
          Eigen::VectorXd args[3] = {q0, x0, x0};
          args[arg][at] = v;
          try {
            a.call(m, d, args[0], args[1], args[2]);
            EXPECT_TRUE(resultsFinite(a, d)) << a.name << " arg " << arg << " = " << v;
          } catch (const std::exception& e) {
            ADD_FAILURE() << a.name << " refused " << names3[arg] << "[" << at << "] = " << v << ": "
                          << e.what();
          }
        }
        // beyond it, and not finite: refused before any work, naming the argument and the index
        for (double v :
             {arg == 0 ? above_q : above, -(arg == 0 ? above_q : above), kInf, -kInf, kNaN, 1e200, -1e308}) {
          Eigen::VectorXd args[3] = {q0, x0, x0};
          args[arg][at] = v;
          try {
            a.call(m, d, args[0], args[1], args[2]);
            ADD_FAILURE() << a.name << " accepted arg " << arg << " = " << v;
          } catch (const std::invalid_argument& e) {
            const std::string msg = e.what();
            const std::string who = std::string(names3[arg]) + "[" + std::to_string(at) + "]";
            EXPECT_NE(msg.find(std::string(a.name) + ": "), std::string::npos) << msg;
            EXPECT_NE(msg.find(who), std::string::npos) << who << " not in " << msg;
            EXPECT_NE(msg.find("expected a finite number in [-"), std::string::npos) << msg;
            ++refused;
          }
        }
      }
    }
  }
  EXPECT_EQ(refused, 7 * 2 * (3 * 4 + 2 * 5 + 1 * 6));  // 7 values x 2 positions x every argument
  // a tip wrench the same way
  Eigen::Matrix<double, 6, 1> w = Eigen::Matrix<double, 6, 1>::Constant(kMaxStateValue);
  EXPECT_NO_THROW(inverseDynamics(m, d, q0, x0, x0, w));
  w[4] = above;
  try {
    inverseDynamics(m, d, q0, x0, x0, w);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tip_wrench[4]"), std::string::npos) << e.what();
  }
  // a subnormal state is a valid (tiny) number
  Eigen::VectorXd tiny = Eigen::VectorXd::Constant(m.n, kSubnormal);
  EXPECT_NO_THROW(forwardDynamics(m, d, tiny, tiny, tiny));
}

// ------------------------------------------------------------------------------- random extreme states

// a value from across the whole double range: in range (log-uniform from 1e-300 up to the bound), at the
// bound, beyond it, special values
double extreme(std::mt19937& rng, double bound) {
  std::uniform_int_distribution<int> kind(0, 19);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double sign = u(rng) < 0.5 ? -1.0 : 1.0;
  switch (kind(rng)) {
    case 0:
      return sign * bound;
    case 1:
      return sign * std::nextafter(bound, kInf);
    case 2:
      return sign * std::pow(10.0, std::log10(bound) + 300.0 * u(rng));  // beyond, up to 1e308
    case 3:
      return sign * kSubnormal * (1.0 + 1000.0 * u(rng));
    case 4:
      return 0.0;
    case 5:
      return u(rng) < 0.5 ? kNaN : sign * kInf;
    default:
      return sign * std::pow(10.0, -300.0 + (300.0 + std::log10(bound)) * u(rng));
  }
}

struct Tally {
  int states = 0, answered = 0, refused_argument = 0, refused_numeric = 0;
  double worst_residual[3] = {0.0, 0.0, 0.0};  // relative, over the states with some |q_i| > 100
};

// The routes on one state: all answer (finite, agreeing) or all refuse, by the same kind of error.
void checkRoutes(const Model& m, Data& d, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                 const Eigen::VectorXd& tau, const std::string& what, Tally& t) {
  enum Outcome { Answered, BadArgument, Numerical };
  Eigen::VectorXd qdd[3];
  Outcome out[3];
  std::string why[3];
  const std::function<const Eigen::VectorXd&()> route[3] = {
      [&]() -> const Eigen::VectorXd& { return forwardDynamics(m, d, q, qd, tau); },
      [&]() -> const Eigen::VectorXd& { return forwardDynamicsCholesky(m, d, q, qd, tau); },
      [&]() -> const Eigen::VectorXd& { return forwardDynamicsFixman(m, d, q, qd, tau); }};
  for (int r = 0; r < 3; ++r) {
    try {
      qdd[r] = route[r]();
      out[r] = Answered;
      EXPECT_TRUE(qdd[r].allFinite()) << what << " route " << r;
    } catch (const std::invalid_argument& e) {
      out[r] = BadArgument;
      why[r] = e.what();
    } catch (const NumericalError& e) {
      out[r] = Numerical;
      why[r] = e.what();
    }
  }
  ++t.states;
  EXPECT_TRUE(out[0] == out[1] && out[1] == out[2])
      << what << ": Saha " << out[0] << " " << why[0] << " | Cholesky " << out[1] << " " << why[1]
      << " | Fixman " << out[2] << " " << why[2] << "\nq " << q.transpose() << "\nqd " << qd.transpose()
      << "\ntau " << tau.transpose();
  if (out[0] == Answered) {
    ++t.answered;
    // each answer satisfies the equations of motion, I(q) qdd + C qd + g = tau, to a small backward error
    // where the state is ordinary (|q_i| <= 100); beyond that the error is measured (prismatic joints far out
    // make I(q) ill-conditioned: the O(n) routes, which work about the base origin, lose digits first)
    const Eigen::MatrixXd M = computeInertiaMatrix(m, d, q);
    const Eigen::VectorXd b = computeBias(m, d, q, qd);
    const bool ordinary = q.cwiseAbs().maxCoeff() <= 100.0;
    for (int r = 0; r < 3; ++r) {
      if (out[r] != Answered) continue;
      const double residual = (M * qdd[r] + b - tau).cwiseAbs().maxCoeff();
      const double size = M.cwiseAbs().rowwise().sum().maxCoeff() * qdd[r].cwiseAbs().maxCoeff() +
                          b.cwiseAbs().maxCoeff() + tau.cwiseAbs().maxCoeff();
      if (ordinary) {
        EXPECT_LE(residual, 1e-9 * size) << what << " route " << r;
      } else if (size > 0.0) {
        t.worst_residual[r] = std::max(t.worst_residual[r], residual / size);
      }
    }
  } else if (out[0] == BadArgument) {
    ++t.refused_argument;
  } else {
    ++t.refused_numeric;
  }
}

TEST(Agreement, ExtremeStatesOnRealAndScaledRobots) {
  std::mt19937 rng(2024);
  for (const auto& [name, m] : robots()) {
    Data d(m);
    Tally t;
    for (int k = 0; k < 400; ++k) {
      Eigen::VectorXd q(m.n), qd(m.n), tau(m.n);
      // most states have a few extreme entries among moderate ones
      std::uniform_real_distribution<double> moderate(-2.0, 2.0);
      for (int i = 0; i < m.n; ++i) {
        const bool wild = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
        q[i] = wild ? extreme(rng, kMaxPosition) : moderate(rng);
        qd[i] = wild ? extreme(rng, kMaxStateValue) : moderate(rng);
        tau[i] = wild ? extreme(rng, kMaxStateValue) : 10.0 * moderate(rng);
      }
      checkRoutes(m, d, q, qd, tau, name + " state " + std::to_string(k), t);
      // every other algorithm on the same state: finite or refused, never a non-finite answer
      for (const Algorithm& a : algorithms()) {
        try {
          a.call(m, d, q, qd, tau);
          EXPECT_TRUE(resultsFinite(a, d)) << name << " " << a.name;
        } catch (const std::invalid_argument&) {
        } catch (const NumericalError&) {
        }
      }
    }
    std::printf(
        "[ agree ] %-18s %d states: %d answered by all routes, %d refused as arguments, %d as numerically "
        "singular; worst relative residual with some |q_i| > 100: Saha %.1e, Cholesky %.1e, Fixman %.1e\n",
        name.c_str(), t.states, t.answered, t.refused_argument, t.refused_numeric, t.worst_residual[0],
        t.worst_residual[1], t.worst_residual[2]);
    EXPECT_GT(t.answered, 50) << name;
    EXPECT_GT(t.refused_argument, 50) << name;
  }
}

TEST(Agreement, StatesAtTheBoundsOnRealRobots) {
  // every joint at +-kMaxPosition (a prismatic joint 1000 km out), rates at +-kMaxStateValue
  std::mt19937 rng(7);
  for (const auto& [name, m] : robots()) {
    Data d(m);
    Tally t;
    for (int k = 0; k < 60; ++k) {
      Eigen::VectorXd q(m.n), qd(m.n), tau(m.n);
      for (int i = 0; i < m.n; ++i) {
        const double s = std::uniform_int_distribution<int>(0, 1)(rng) ? 1.0 : -1.0;
        q[i] = s * (k % 2 ? kMaxPosition
                          : std::uniform_real_distribution<double>(-kMaxPosition, kMaxPosition)(rng));
        qd[i] = (k % 3 == 0 ? kMaxStateValue : 1.0) * std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
        tau[i] =
            (k % 5 == 0 ? kMaxStateValue : 10.0) * std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
      }
      checkRoutes(m, d, q, qd, tau, name + " bound state " + std::to_string(k), t);
    }
    // within the ranges these robots are never numerically singular: every state is answered
    EXPECT_EQ(t.answered, t.states) << name;
    std::printf(
        "[ bounds ] %-18s %d states at the bounds, all answered; worst relative residual: Saha %.1e, "
        "Cholesky %.1e, Fixman %.1e\n",
        name.c_str(), t.states, t.worst_residual[0], t.worst_residual[1], t.worst_residual[2]);
  }
}

// Fixman's route reads the inverse link inertias, and its hard-coordinate pivots lose positive definiteness
// before the other routes' when link masses and inertias span many orders of magnitude within one chain
// (docs/algorithms.md, "Numerical range"). Measured here, not asserted away: Saha and Cholesky always agree;
// Fixman answers the same or refuses with NumericalError, and never returns a non-finite number.
TEST(Agreement, FixmanOnBadlyScaledChainsRefusesOrAgrees) {
  std::mt19937 rng(11);
  int states = 0, fixman_refused = 0, all_refused = 0;
  for (int c = 0; c < 60; ++c) {
    ModelSpec spec = testing::randomChainSpec(7, 100 + c, 0.4);
    // masses and rotational inertias each times 10^[-6, 6], independently
    std::uniform_real_distribution<double> e(-6.0, 6.0);
    for (JointSpec& j : spec.joints) {
      j.mass *= std::pow(10.0, e(rng));
      j.inertia *= std::pow(10.0, e(rng));
    }
    const Model m = buildModel(spec);
    Data d(m);
    for (int k = 0; k < 20; ++k) {
      const Eigen::VectorXd q = testing::randomVectorX(rng, m.n, 3.0),
                            qd = testing::randomVectorX(rng, m.n, 3.0),
                            tau = testing::randomVectorX(rng, m.n, 10.0);
      ++states;
      int answered = 0;
      Eigen::VectorXd a[3];
      bool ok[3];
      for (int r = 0; r < 3; ++r) {
        try {
          a[r] = r == 0   ? forwardDynamics(m, d, q, qd, tau)
                 : r == 1 ? forwardDynamicsCholesky(m, d, q, qd, tau)
                          : forwardDynamicsFixman(m, d, q, qd, tau);
          ok[r] = true;
          ++answered;
          EXPECT_TRUE(a[r].allFinite());
        } catch (const NumericalError&) {
          ok[r] = false;
        }
      }
      EXPECT_EQ(ok[0], ok[1]) << "Saha and Cholesky disagree, chain " << c;
      if (ok[0] && !ok[2]) ++fixman_refused;
      if (answered == 0) ++all_refused;
    }
  }
  std::printf(
      "[ fixman ] badly scaled 7-DOF chains (masses and inertias each spanning 1e12): %d states, Fixman "
      "alone refused %d, all three refused %d\n",
      states, fixman_refused, all_refused);
}

}  // namespace
}  // namespace denoc
