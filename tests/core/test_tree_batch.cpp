// The batch engine on tree models (denoc/batch.hpp, denoc/planning_batch.hpp): for random trees under every
// root (fixed, floating, planar) and a serial chain built on the tree recursions, every batch function gives
// bit for bit what the single-state function gives state by state, whatever the SIMD width asked for.
// Inverse dynamics (with a tip wrench too), Saha's forward dynamics and the full factor run in SIMD lanes,
// every state of them (BatchStats says so); the other calls run state by state at width 1. Every array is
// sized exactly to its stride (q: nq per state; v, a, tau: nv; matrices nv x nv; Jacobians 6 x nv), so a
// wrong stride reads or writes past the end (AddressSanitizer reports it; without it, the values differ). The
// convective matrix against the batch's own bias and gravity (C v = bias - g) and the rate of its inertia
// matrix along the motion (Idot - 2C skew). Fixman's route and a frame beyond the tree are refused before any
// state, naming themselves.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/configuration.hpp"
#include "denoc/denoc.hpp"
#include "denoc/planning_batch.hpp"
#include "support/batch_states.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMap = Eigen::Map<const Eigen::VectorXd>;
using Wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>;

/// Random states of a model, packed row-major with the strides nq (q) and nv (the others).
struct TreeStates {
  std::size_t count = 0;
  std::vector<double> q, v, a, tau, wrench;
};

TreeStates randomStates(const Model& m, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TreeStates s;
  s.count = count;
  for (std::size_t k = 0; k < count; ++k) {
    const Eigen::VectorXd qk = randomConfiguration(m, rng);
    s.q.insert(s.q.end(), qk.data(), qk.data() + qk.size());
    for (int i = 0; i < m.nv; ++i) {
      s.v.push_back(u(rng));
      s.a.push_back(u(rng));
      s.tau.push_back(10.0 * u(rng));
    }
    for (int i = 0; i < 6; ++i) s.wrench.push_back(5.0 * u(rng));
  }
  return s;
}

/// Bit for bit equality of two arrays of doubles (NaN equal to NaN of the same bits): what the state-by-state
/// batches give.
::testing::AssertionResult sameBits(const std::vector<double>& got, const std::vector<double>& want) {
  return testing::sameStates(got, want, 1, 0.0);
}

/// What the SIMD lanes give: the same bits, unless the build fuses multiply-adds (kLaneTolerance).
::testing::AssertionResult sameLanes(const std::vector<double>& got, const std::vector<double>& want,
                                     std::size_t per_state) {
  return testing::sameStates(got, want, per_state, testing::kLaneTolerance);
}

/// The width a lane kernel runs at when `asked` is asked for a batch of `count` states: the default width for
/// Auto (trees here have at most kLanesFullFactorAutoW8MaxDof coordinates), halved while the batch is
/// smaller.
SimdWidth laneWidth(SimdWidth asked, std::size_t count) {
  int w = static_cast<int>(asked == SimdWidth::Auto ? defaultSimdWidth() : asked);
  while (w > 1 && count < static_cast<std::size_t>(w)) w /= 2;
  return static_cast<SimdWidth>(w);
}

void append(std::vector<double>& out, const Eigen::VectorXd& x) {
  out.insert(out.end(), x.data(), x.data() + x.size());
}

template <typename M>
void appendRowMajor(std::vector<double>& out, const Eigen::MatrixBase<M>& x) {
  const RowMajor r = x;
  out.insert(out.end(), r.data(), r.data() + r.size());
}

struct Case {
  std::string name;
  std::shared_ptr<const Model> model;
};

std::vector<Case> treeCases() {
  std::vector<Case> cases;
  std::uint32_t seed = 11;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {1, 6, 13}) {
      ModelSpec spec = testing::randomTreeSpec(n, seed++, root);
      spec.force_tree = true;  // a fixed root's random parents may make a chain
      cases.push_back({std::string(testing::rootName(root)) + " root, " + std::to_string(n) + " joints",
                       std::make_shared<const Model>(buildModel(spec))});
    }
  }
  // the bigger random trees, with a random tip frame and gravity
  for (std::uint32_t s : {3u, 4u, 5u}) {
    testing::RandomTreeOptions o;
    o.joints = 9;
    o.root = static_cast<RootJoint>(s % 3);
    cases.push_back({std::string("randomTreeSpec seed ") + std::to_string(s),
                     std::make_shared<const Model>(buildModel(testing::randomTreeSpec(s, o)))});
  }
  // trees numbered depth first (I^-1 by the sweeps) with branches below branches
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    const Model model = buildModel(testing::depthFirst(testing::randomTreeSpec(17, seed++, root)));
    if (!model.inverse_by_sweeps || model.sweep_slots < 1)
      throw std::logic_error("treeCases: not a swept tree");
    cases.push_back({std::string(testing::rootName(root)) + " root, 17 joints depth first",
                     std::make_shared<const Model>(model)});
  }
  // a serial chain on the tree recursions
  ModelSpec chain = testing::randomChainSpec(7, 5);
  chain.force_tree = true;
  cases.push_back({"force_tree chain", std::make_shared<const Model>(buildModel(chain))});
  return cases;
}

std::vector<SimdWidth> widths() {
  std::vector<SimdWidth> w{SimdWidth::Auto, SimdWidth::Scalar};
  for (SimdWidth x : {SimdWidth::W2, SimdWidth::W4, SimdWidth::W8})
    if (simdWidthSupported(x)) w.push_back(x);
  return w;
}

BatchOptions options(SimdWidth width, BatchStats* stats) {
  BatchOptions o;
  o.width = width;
  o.grain = 2;  // several chunks, on both threads
  o.stats = stats;
  return o;
}

TEST(TreeBatch, DynamicsEqualTheSingleStateFunctions) {
  BatchPool pool(2);
  for (const Case& c : treeCases()) {
    const Model& m = *c.model;
    ASSERT_FALSE(m.serial) << c.name;
    const auto nv = static_cast<std::size_t>(m.nv);
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{9}}) {
      const TreeStates s = randomStates(m, count, 100 + count);
      ASSERT_EQ(s.q.size(), count * static_cast<std::size_t>(m.nq));
      // single-state oracles
      std::vector<double> id, id_w, fd_saha, fd_chol, I, U, D, logdet, Minv, C, bias, g;
      {
        Data d(m);
        for (std::size_t k = 0; k < count; ++k) {
          const CMap qk(s.q.data() + k * m.nq, m.nq), vk(s.v.data() + k * nv, m.nv),
              ak(s.a.data() + k * nv, m.nv), tk(s.tau.data() + k * nv, m.nv);
          append(id, inverseDynamics(m, d, qk, vk, ak));
          append(id_w, inverseDynamics(m, d, qk, vk, ak, Wrench(s.wrench.data() + 6 * k)));
          append(fd_saha, forwardDynamics(m, d, qk, vk, tk));
          append(fd_chol, forwardDynamicsCholesky(m, d, qk, vk, tk));
          computeFullFactor(m, d, qk);
          appendRowMajor(I, d.M);
          appendRowMajor(U, d.U);
          append(D, d.D);
          logdet.push_back(d.log_det);
          appendRowMajor(Minv, computeInverseInertia(m, d, qk));
          appendRowMajor(C, computeConvectiveMatrix(m, d, qk, vk));
          append(bias, computeBias(m, d, qk, vk));
          append(g, computeGravity(m, d, qk));
        }
      }
      for (SimdWidth w : widths()) {
        if (!simdWidthSupported(w)) continue;
        const std::string what =
            c.name + ", count " + std::to_string(count) + ", width " + std::to_string(static_cast<int>(w));
        BatchStats stats;
        const BatchOptions o = options(w, &stats);
        // the lanes compute every state of the calls they take (inverse dynamics, Saha's forward dynamics,
        // the full factor), none refused; the others run state by state
        const SimdWidth lanes = laneWidth(w, count);
        const auto expectRun = [&](bool in_lanes, const std::string& call) {
          const bool wide = in_lanes && lanes != SimdWidth::Scalar;
          EXPECT_EQ(stats.width, wide ? lanes : SimdWidth::Scalar) << call << ", " << what;
          EXPECT_EQ(stats.lane_states, wide ? count : 0u) << call << ", " << what;
          EXPECT_EQ(stats.single_states, wide ? 0u : count) << call << ", " << what;
        };
        std::vector<double> out(count * nv, -1.0);
        inverseDynamicsBatch(pool, c.model, count, s.q.data(), s.v.data(), s.a.data(), out.data(), nullptr,
                             o);
        EXPECT_TRUE(sameLanes(out, id, nv)) << "inverseDynamicsBatch, " << what;
        expectRun(true, "inverseDynamicsBatch");
        inverseDynamicsBatch(pool, c.model, count, s.q.data(), s.v.data(), s.a.data(), out.data(),
                             s.wrench.data(), o);
        EXPECT_TRUE(sameLanes(out, id_w, nv)) << "inverseDynamicsBatch with a tip wrench, " << what;
        expectRun(true, "inverseDynamicsBatch with a tip wrench");
        forwardDynamicsBatch(pool, c.model, ForwardRoute::Saha, count, s.q.data(), s.v.data(), s.tau.data(),
                             out.data(), o);
        EXPECT_TRUE(sameLanes(out, fd_saha, nv)) << "forwardDynamicsBatch Saha, " << what;
        expectRun(true, "forwardDynamicsBatch Saha");
        forwardDynamicsBatch(pool, c.model, ForwardRoute::Cholesky, count, s.q.data(), s.v.data(),
                             s.tau.data(), out.data(), o);
        EXPECT_TRUE(sameBits(out, fd_chol)) << "forwardDynamicsBatch Cholesky, " << what;
        expectRun(false, "forwardDynamicsBatch Cholesky");

        std::vector<double> oI(count * nv * nv), oU(count * nv * nv), oD(count * nv), oL(count),
            oMinv(count * nv * nv), oC(count * nv * nv), oBias(count * nv), oG(count * nv);
        FullFactorBatchOutput ff;
        ff.inertia = oI.data();
        ff.u = oU.data();
        ff.d = oD.data();
        ff.log_det = oL.data();
        fullFactorBatch(pool, c.model, count, s.q.data(), nullptr, ff, o);
        EXPECT_TRUE(sameLanes(oI, I, nv * nv)) << "fullFactorBatch I, " << what;
        EXPECT_TRUE(sameLanes(oU, U, nv * nv)) << "fullFactorBatch U, " << what;
        EXPECT_TRUE(sameLanes(oD, D, nv)) << "fullFactorBatch D, " << what;
        EXPECT_TRUE(sameLanes(oL, logdet, 1)) << "fullFactorBatch log det, " << what;
        expectRun(true, "fullFactorBatch");
        ff.inverse = oMinv.data();
        ff.convective = oC.data();
        ff.bias = oBias.data();
        ff.gravity_torque = oG.data();
        std::fill(oI.begin(), oI.end(), -1.0);
        fullFactorBatch(pool, c.model, count, s.q.data(), s.v.data(), ff, o);
        EXPECT_TRUE(sameLanes(oI, I, nv * nv)) << "fullFactorBatch I with the options, " << what;
        EXPECT_TRUE(sameLanes(oMinv, Minv, nv * nv)) << "fullFactorBatch inverse, " << what;
        expectRun(true, "fullFactorBatch with the options");
        EXPECT_TRUE(sameBits(oC, C)) << "fullFactorBatch convective, " << what;
        EXPECT_TRUE(sameBits(oBias, bias)) << "fullFactorBatch bias, " << what;
        EXPECT_TRUE(sameBits(oG, g)) << "fullFactorBatch gravity, " << what;
      }
    }
  }
}

TEST(TreeBatch, ExternalWrenchListsEqualTheSingleStateFunctionsInLanes) {
  // the overloads with a list of external wrenches (any frame, either reference, off the frames' origins,
  // per state or one for all states, and the empty list), on the trees and on serial chains (which take
  // the local recursions of the list form, as the single-state function does), in lanes at every width
  BatchPool pool(2);
  std::vector<Case> cases = treeCases();
  cases.push_back(
      {"serial chain", std::make_shared<const Model>(buildModel(testing::randomChainSpec(6, 8)))});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Case& c : cases) {
    const Model& m = *c.model;
    const auto nv = static_cast<std::size_t>(m.nv);
    const std::size_t count = 11;
    const TreeStates s = randomStates(m, count, 31);
    std::vector<int> frames{m.n, m.n + 1, 0, m.n - 1};
    std::vector<std::vector<double>> values(frames.size());
    std::vector<BatchWrench> list;
    for (std::size_t j = 0; j < frames.size(); ++j) {
      BatchWrench w;
      w.frame = frames[j];
      w.reference = j % 2 ? ReferenceFrame::Local : ReferenceFrame::Base;
      w.point = Eigen::Vector3d(u(rng), u(rng), u(rng));
      w.stride = j == 2 ? 0 : 6;  // one wrench for all states, the others per state
      for (std::size_t i = 0; i < (w.stride ? 6 * count : 6); ++i) values[j].push_back(5.0 * u(rng));
      w.values = values[j].data();
      list.push_back(w);
    }
    for (const std::vector<BatchWrench>& wrenches : {list, std::vector<BatchWrench>{}}) {
      std::vector<double> id, fd;
      Data d(m);
      for (std::size_t k = 0; k < count; ++k) {
        std::vector<ExternalWrench> ws;
        for (const BatchWrench& w : wrenches) {
          ExternalWrench e;
          e.frame = w.frame;
          e.reference = w.reference;
          e.point = w.point;
          e.wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(w.values + k * w.stride);
          ws.push_back(e);
        }
        const CMap qk(s.q.data() + k * m.nq, m.nq), vk(s.v.data() + k * nv, m.nv),
            ak(s.a.data() + k * nv, m.nv), tk(s.tau.data() + k * nv, m.nv);
        append(id, inverseDynamics(m, d, qk, vk, ak, ws));
        append(fd, forwardDynamics(m, d, qk, vk, tk, ws));
      }
      for (SimdWidth w : widths()) {
        const std::string what = c.name + ", " + std::to_string(wrenches.size()) + " wrenches, width " +
                                 std::to_string(static_cast<int>(w));
        BatchStats stats;
        const BatchOptions o = options(w, &stats);
        const SimdWidth lanes = laneWidth(w, count);
        std::vector<double> out(count * nv, -1.0);
        inverseDynamicsBatch(pool, c.model, count, s.q.data(), s.v.data(), s.a.data(), out.data(), wrenches,
                             o);
        EXPECT_TRUE(sameLanes(out, id, nv)) << "inverseDynamicsBatch, " << what;
        EXPECT_EQ(stats.width, lanes) << what;
        EXPECT_EQ(stats.lane_states, lanes == SimdWidth::Scalar ? 0u : count) << what;
        forwardDynamicsBatch(pool, c.model, count, s.q.data(), s.v.data(), s.tau.data(), out.data(), wrenches,
                             o);
        EXPECT_TRUE(sameLanes(out, fd, nv)) << "forwardDynamicsBatch, " << what;
        EXPECT_EQ(stats.lane_states, lanes == SimdWidth::Scalar ? 0u : count) << what;
      }
    }
  }
}

TEST(TreeBatch, DerivativesEqualTheSingleStateFunctions) {
  BatchPool pool(2);
  for (const Case& c : treeCases()) {
    const Model& m = *c.model;
    const auto nv = static_cast<std::size_t>(m.nv);
    const std::size_t count = 7;
    const TreeStates s = randomStates(m, count, 7);
    std::vector<double> dq, dv, tau, dq_w, dv_w, fdq, fdv, fminv, fqdd, fdq_w;
    {
      Data d(m);
      for (std::size_t k = 0; k < count; ++k) {
        const CMap qk(s.q.data() + k * m.nq, m.nq), vk(s.v.data() + k * nv, m.nv),
            ak(s.a.data() + k * nv, m.nv), tk(s.tau.data() + k * nv, m.nv);
        const Wrench wk(s.wrench.data() + 6 * k);
        computeInverseDynamicsDerivatives(m, d, qk, vk, ak);
        appendRowMajor(dq, d.dtau_dq);
        appendRowMajor(dv, d.dtau_dqd);
        append(tau, d.tau);
        computeInverseDynamicsDerivatives(m, d, qk, vk, ak, wk);
        appendRowMajor(dq_w, d.dtau_dq);
        appendRowMajor(dv_w, d.dtau_dqd);
        computeForwardDynamicsDerivatives(m, d, qk, vk, tk);
        appendRowMajor(fdq, d.dqdd_dq);
        appendRowMajor(fdv, d.dqdd_dqd);
        appendRowMajor(fminv, d.Minv);
        append(fqdd, d.qdd);
        computeForwardDynamicsDerivatives(m, d, qk, vk, tk, wk);
        appendRowMajor(fdq_w, d.dqdd_dq);
      }
    }
    const BatchOptions o = options(SimdWidth::Auto, nullptr);
    std::vector<double> a(count * nv * nv), b(count * nv * nv), cc(count * nv * nv), v(count * nv);
    inverseDynamicsDerivativesBatch(pool, c.model, count, s.q.data(), s.v.data(), s.a.data(), a.data(),
                                    b.data(), v.data(), nullptr, o);
    EXPECT_TRUE(sameBits(a, dq)) << "dtau_dq, " << c.name;
    EXPECT_TRUE(sameBits(b, dv)) << "dtau_dqd, " << c.name;
    EXPECT_TRUE(sameBits(v, tau)) << "tau, " << c.name;
    inverseDynamicsDerivativesBatch(pool, c.model, count, s.q.data(), s.v.data(), s.a.data(), a.data(),
                                    b.data(), nullptr, s.wrench.data(), o);
    EXPECT_TRUE(sameBits(a, dq_w)) << "dtau_dq with a tip wrench, " << c.name;
    EXPECT_TRUE(sameBits(b, dv_w)) << "dtau_dqd with a tip wrench, " << c.name;
    forwardDynamicsDerivativesBatch(pool, c.model, count, s.q.data(), s.v.data(), s.tau.data(), a.data(),
                                    b.data(), cc.data(), v.data(), nullptr, o);
    EXPECT_TRUE(sameBits(a, fdq)) << "dqdd_dq, " << c.name;
    EXPECT_TRUE(sameBits(b, fdv)) << "dqdd_dqd, " << c.name;
    EXPECT_TRUE(sameBits(cc, fminv)) << "dqdd_dtau, " << c.name;
    EXPECT_TRUE(sameBits(v, fqdd)) << "qdd, " << c.name;
    forwardDynamicsDerivativesBatch(pool, c.model, count, s.q.data(), s.v.data(), s.tau.data(), a.data(),
                                    b.data(), nullptr, nullptr, s.wrench.data(), o);
    EXPECT_TRUE(sameBits(a, fdq_w)) << "dqdd_dq with a tip wrench, " << c.name;
  }
}

TEST(TreeBatch, FramesEqualTheSingleStateFunctions) {
  BatchPool pool(2);
  for (const Case& c : treeCases()) {
    const Model& m = *c.model;
    const auto nv = static_cast<std::size_t>(m.nv);
    const std::size_t count = 5;
    const TreeStates s = randomStates(m, count, 5);
    const int frames = frameBatchFrames(m);
    EXPECT_EQ(frames, m.root == RootJoint::Fixed ? m.n + 1 : m.n + 2) << c.name;
    for (int frame = 0; frame <= m.n + 1; ++frame) {
      for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
        FrameQuery query;
        query.frame = frame;
        query.point = Eigen::Vector3d(0.1, -0.05, 0.2);
        query.reference = ref;
        std::vector<double> R, p, J, jdq, all_R, all_p;
        {
          Data d(m);
          for (std::size_t k = 0; k < count; ++k) {
            const CMap qk(s.q.data() + k * m.nq, m.nq), vk(s.v.data() + k * nv, m.nv);
            Eigen::Matrix3d Rk;
            Eigen::Vector3d pk;
            framePlacement(m, d, qk, frame, Rk, pk);
            appendRowMajor(R, Rk);
            append(p, pk);
            appendRowMajor(J, computeFrameJacobian(m, d, qk, frame, query.point, ref));
            append(jdq, computeFrameJdotQd(m, d, qk, vk, frame, query.point, ref));
            forwardKinematics(m, d, qk);
            for (int f = 0; f < frames; ++f) {
              appendRowMajor(all_R, d.kin_R[static_cast<std::size_t>(f)]);
              append(all_p, d.kin_p[static_cast<std::size_t>(f)]);
            }
          }
        }
        const std::string what = c.name + ", frame " + std::to_string(frame);
        const auto uf = static_cast<std::size_t>(frames);
        std::vector<double> oR(count * 9), op(count * 3), oJ(count * 6 * nv), oj(count * 6),
            oaR(count * uf * 9), oap(count * uf * 3);
        // the pose alone, then everything at once
        FrameBatchOutput out;
        out.rotation = oR.data();
        out.origin = op.data();
        frameBatch(pool, c.model, count, s.q.data(), nullptr, query, out, options(SimdWidth::Auto, nullptr));
        EXPECT_TRUE(sameBits(oR, R)) << "rotation, " << what;
        EXPECT_TRUE(sameBits(op, p)) << "origin, " << what;
        out.jacobian = oJ.data();
        out.jdot_qd = oj.data();
        out.frame_rotations = oaR.data();
        out.frame_origins = oap.data();
        frameBatch(pool, c.model, count, s.q.data(), s.v.data(), query, out,
                   options(SimdWidth::Auto, nullptr));
        EXPECT_TRUE(sameBits(oR, R)) << "rotation with the others, " << what;
        EXPECT_TRUE(sameBits(op, p)) << "origin with the others, " << what;
        EXPECT_TRUE(sameBits(oJ, J)) << "jacobian, " << what;
        EXPECT_TRUE(sameBits(oj, jdq)) << "jdot_qd, " << what;
        EXPECT_TRUE(sameBits(oaR, all_R)) << "frame_rotations, " << what;
        EXPECT_TRUE(sameBits(oap, all_p)) << "frame_origins, " << what;
        // the Jacobian alone
        FrameBatchOutput jac;
        jac.jacobian = oJ.data();
        std::fill(oJ.begin(), oJ.end(), -1.0);
        frameBatch(pool, c.model, count, s.q.data(), nullptr, query, jac, options(SimdWidth::Auto, nullptr));
        EXPECT_TRUE(sameBits(oJ, J)) << "jacobian alone, " << what;
      }
    }
  }
}

TEST(TreeBatch, SerialChainLayoutsAreUnchanged) {
  const auto chain = std::make_shared<const Model>(buildModel(testing::randomChainSpec(5, 2)));
  ASSERT_TRUE(chain->serial);
  EXPECT_EQ(frameBatchFrames(*chain), chain->n + 1);
  EXPECT_EQ(chain->nq, chain->n);
  EXPECT_EQ(chain->nv, chain->n);
}

/// `f` throws std::invalid_argument (not a BatchError: before any state) whose message holds every one of
/// `parts`.
template <typename F>
void expectRefused(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "not refused";
  } catch (const BatchError& e) {
    ADD_FAILURE() << "refused by a state, not before: " << e.what();
  } catch (const std::invalid_argument& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(TreeBatch, SerialOnlyRoutesAndFramesBeyondTheTreeAreRefusedByName) {
  BatchPool pool(2);
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    const auto model = std::make_shared<const Model>(buildModel(testing::randomTreeSpec(4, 9, root)));
    const Model& m = *model;
    const std::size_t count = 3;
    const TreeStates s = randomStates(m, count, 1);
    const auto nv = static_cast<std::size_t>(m.nv);
    std::vector<double> out(count * nv);
    expectRefused(
        [&] {
          forwardDynamicsBatch(pool, model, ForwardRoute::Fixman, count, s.q.data(), s.v.data(), s.tau.data(),
                               out.data());
        },
        {"forwardDynamicsBatch", "Fixman", "tree model"});
    FrameQuery query;
    FrameBatchOutput fo;
    // a frame beyond the root link
    query.frame = m.n + 2;
    fo.origin = out.data();
    expectRefused([&] { frameBatch(pool, model, count, s.q.data(), nullptr, query, fo); },
                  {"frameBatch", "frame is"});
  }
}

TEST(TreeBatch, TheConvectiveMatrixIsTheBiasLessGravityAndIdotMinusTwoCIsSkew) {
  // the batch's C against the batch's other outputs: C v = bias - g (the velocity terms of the inverse
  // dynamics), and the rate of I along the motion (central differences of the batch's I at integrate(q, +-h
  // v)) less 2 C is skew
  BatchPool pool(2);
  double worst_bias = 0.0, worst_skew = 0.0;
  for (const Case& c : treeCases()) {
    const Model& m = *c.model;
    const std::size_t count = 5, nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
    const TreeStates s = randomStates(m, count, 7);
    const double h = 1e-6;
    std::vector<double> qp, qm;
    for (std::size_t k = 0; k < count; ++k) {
      const CMap qk(s.q.data() + k * nq, m.nq), vk(s.v.data() + k * nv, m.nv);
      append(qp, integrateConfiguration(m, qk, vk, h));
      append(qm, integrateConfiguration(m, qk, vk, -h));
    }
    std::vector<double> I(count * nv * nv), Ip(count * nv * nv), Im(count * nv * nv), U(count * nv * nv),
        D(count * nv), L(count), C(count * nv * nv), bias(count * nv), g(count * nv);
    FullFactorBatchOutput ff;
    ff.inertia = Ip.data();
    ff.u = U.data();
    ff.d = D.data();
    ff.log_det = L.data();
    fullFactorBatch(pool, c.model, count, qp.data(), nullptr, ff);
    ff.inertia = Im.data();
    fullFactorBatch(pool, c.model, count, qm.data(), nullptr, ff);
    ff.inertia = I.data();
    ff.convective = C.data();
    ff.bias = bias.data();
    ff.gravity_torque = g.data();
    fullFactorBatch(pool, c.model, count, s.q.data(), s.v.data(), ff);
    for (std::size_t k = 0; k < count; ++k) {
      const auto o = static_cast<std::ptrdiff_t>(k * nv * nv);
      const Eigen::Map<const RowMajor> Ck(C.data() + o, m.nv, m.nv), Ipk(Ip.data() + o, m.nv, m.nv),
          Imk(Im.data() + o, m.nv, m.nv);
      const CMap vk(s.v.data() + k * nv, m.nv), bk(bias.data() + k * nv, m.nv), gk(g.data() + k * nv, m.nv);
      const Eigen::VectorXd velocity_terms = bk - gk;
      const double e_bias = (Ck * vk - velocity_terms).norm() / std::max(1.0, velocity_terms.norm());
      const Eigen::MatrixXd N = (Ipk - Imk) / (2.0 * h) - 2.0 * Ck;
      const double e_skew = (N + N.transpose()).norm() / std::max(1.0, Ck.norm());
      worst_bias = std::max(worst_bias, e_bias);
      worst_skew = std::max(worst_skew, e_skew);
      EXPECT_LT(e_bias, 1e-12) << c.name << ", state " << k << ": C v against bias - g";
      EXPECT_LT(e_skew, 1e-6) << c.name << ", state " << k << ": Idot - 2C skew";
    }
  }
  std::printf("worst relative errors: |C v - (bias - g)| %.3g, |(Idot - 2C) + (Idot - 2C)^T| %.3g\n",
              worst_bias, worst_skew);
}

TEST(TreeBatch, BadStatesNameTheStateAtEveryWidth) {
  // a floating root's quaternion just beyond kQuaternionTolerance of unit norm in state 4 and just within
  // it in the others: the lanes refuse exactly the states the single-state check refuses (their group is
  // computed again state by state, which names the state); the states within the tolerance are answered
  BatchPool pool(2);
  const auto model =
      std::make_shared<const Model>(buildModel(testing::randomTreeSpec(5, 21, RootJoint::Floating)));
  const Model& m = *model;
  const std::size_t count = 11, nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  TreeStates s = randomStates(m, count, 3);
  for (std::size_t k = 0; k < count; ++k) {
    const double scale = k == 4 ? 1.0 + 1.5 * kQuaternionTolerance : 1.0 - 0.5 * kQuaternionTolerance;
    for (std::size_t j = 3; j < 7; ++j) s.q[k * nq + j] *= scale;
  }
  const std::vector<std::pair<std::string, std::function<void(const double*, double*, const BatchOptions&)>>>
      calls{{"inverseDynamicsBatch",
             [&](const double* q, double* out, const BatchOptions& o) {
               inverseDynamicsBatch(pool, model, count, q, s.v.data(), s.a.data(), out, nullptr, o);
             }},
            {"forwardDynamicsBatch",
             [&](const double* q, double* out, const BatchOptions& o) {
               forwardDynamicsBatch(pool, model, ForwardRoute::Saha, count, q, s.v.data(), s.tau.data(), out,
                                    o);
             }},
            {"fullFactorBatch", [&](const double* q, double* out, const BatchOptions& o) {
               std::vector<double> U(count * nv * nv), D(count * nv), L(count);
               FullFactorBatchOutput ff;
               ff.inertia = out;
               ff.u = U.data();
               ff.d = D.data();
               ff.log_det = L.data();
               fullFactorBatch(pool, model, count, q, nullptr, ff, o);
             }}};
  for (SimdWidth w : widths()) {
    for (const auto& [name, call] : calls) {
      const std::string what = name + ", width " + std::to_string(static_cast<int>(w));
      std::vector<double> out(count * nv * nv);
      try {
        call(s.q.data(), out.data(), options(w, nullptr));
        ADD_FAILURE() << "not refused: " << what;
      } catch (const BatchError& e) {
        EXPECT_EQ(e.state(), 4u) << what;
        EXPECT_NE(std::string(e.what()).find(name + ": state 4: "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("q[3..7), the root's quaternion, has norm"), std::string::npos)
            << e.what();
      }
      // without state 4, every state is answered in lanes (where the width has them)
      std::vector<double> q(s.q);
      std::copy(s.q.begin() + 3 * static_cast<std::ptrdiff_t>(nq),
                s.q.begin() + 4 * static_cast<std::ptrdiff_t>(nq),
                q.begin() + 4 * static_cast<std::ptrdiff_t>(nq));
      BatchStats stats;
      EXPECT_NO_THROW(call(q.data(), out.data(), options(w, &stats))) << what;
      EXPECT_EQ(stats.lane_states + stats.single_states, count) << what;
      EXPECT_EQ(stats.single_states, laneWidth(w, count) == SimdWidth::Scalar ? count : 0u) << what;
    }
  }
}

}  // namespace
}  // namespace denoc
