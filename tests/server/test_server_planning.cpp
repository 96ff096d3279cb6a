// The planners' RPCs (Kinematics, Derivatives, Rollout) of a real denocd against the core computed in this
// process: poses, Jacobians, (dJ/dt) qd and operational-space inertias of the Panda's hand, the analytic
// derivatives of ID and FD, rollouts with their linearizations, each with and without a payload; the
// registered model stays untouched by a payload; bounds and bad requests are refused before any compute.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/payload.hpp"
#include "denoc/rollout.hpp"
#include "denoc/urdf.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc {
namespace {

using test::ServerProcess;
using test::TempDir;

const std::string kPanda = std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf";
const std::string kTip = "panda_hand_tcp";

Model pandaModel() {
  UrdfOptions o;
  o.tip_link = kTip;
  return buildModelFromUrdfFile(kPanda, o);
}

std::string registerPanda(v1::Dynamics::Stub& stub) {
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text(test::readText(kPanda));
  req.mutable_urdf()->set_tip_link(kTip);
  v1::RegisterModelResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status s = stub.RegisterModel(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.model_id();
}

// a 1.5 kg tool 10 cm beyond the flange, a box's inertia about its centre
v1::Payload wirePayload() {
  v1::Payload p;
  p.set_mass(1.5);
  p.mutable_com()->set_z(0.1);
  p.mutable_inertia()->set_ixx(0.004);
  p.mutable_inertia()->set_iyy(0.005);
  p.mutable_inertia()->set_izz(0.003);
  return p;
}

Payload corePayload() {
  Payload p;
  p.mass = 1.5;
  p.com = Eigen::Vector3d(0, 0, 0.1);
  p.inertia = Eigen::Vector3d(0.004, 0.005, 0.003).asDiagonal();
  return p;
}

template <typename M>
void expectRowMajor(const google::protobuf::RepeatedField<double>& got, std::size_t offset, const M& want,
                    const std::string& what, double tol = 1e-12) {
  ASSERT_GE(static_cast<std::size_t>(got.size()), offset + static_cast<std::size_t>(want.size())) << what;
  for (Eigen::Index i = 0; i < want.rows(); ++i) {
    for (Eigen::Index j = 0; j < want.cols(); ++j) {
      const double g = got[static_cast<int>(offset + static_cast<std::size_t>(i * want.cols() + j))];
      ASSERT_LE(std::abs(g - want(i, j)), tol * std::max(1.0, std::abs(want(i, j))))
          << what << " (" << i << ", " << j << "): " << g << " vs core " << want(i, j);
    }
  }
}

class ServerPlanning : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"),
                                              std::vector<std::string>{"--max-states", "400"});
    stub_ = server_->stub();
    id_ = registerPanda(*stub_);
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Dynamics::Stub> stub_;
  std::string id_;
  Model model_ = pandaModel();
};

TEST_F(ServerPlanning, KinematicsEqualTheCore) {
  const int n = model_.n, count = 5;
  const std::vector<double> q = test::randomStates(count, n, 31, 1.5),
                            qd = test::randomStates(count, n, 32, 1.0);
  for (const auto& [reference, local] :
       {std::pair{v1::REFERENCE_FRAME_BASE, false}, std::pair{v1::REFERENCE_FRAME_LOCAL, true}}) {
    v1::KinematicsRequest req;
    req.set_model_id(id_);
    req.set_count(count);
    req.set_dof(n);
    for (double v : q) req.add_q(v);
    for (double v : qd) req.add_qd(v);
    req.set_link("panda_link5");
    req.mutable_point()->set_x(0.01);
    req.mutable_point()->set_y(-0.02);
    req.mutable_point()->set_z(0.05);
    req.set_reference(reference);
    req.set_jacobian(true);
    req.set_jdot_qd(true);
    req.set_lambda(true);
    req.set_lambda_rows(v1::TASK_ROWS_LINEAR);
    req.set_all_frames(true);
    v1::KinematicsResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->Kinematics(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.model_id(), id_);

    Data d(model_);
    const int frame = frameIndex(model_, "panda_link5");
    const Eigen::Vector3d point(0.01, -0.02, 0.05);
    const ReferenceFrame ref = local ? ReferenceFrame::Local : ReferenceFrame::Base;
    for (int k = 0; k < count; ++k) {
      const auto o = static_cast<std::size_t>(k * n);
      const Eigen::Map<const Eigen::VectorXd> qk(q.data() + o, n), qdk(qd.data() + o, n);
      const auto uk = static_cast<std::size_t>(k);
      Eigen::Matrix3d R;
      Eigen::Vector3d p;
      framePlacement(model_, d, qk, frame, R, p);
      expectRowMajor(resp.rotation(), 9 * uk, R, "rotation");
      expectRowMajor(resp.origin(), 3 * uk, p.transpose(), "origin");
      expectRowMajor(resp.jacobian(), 6 * o, computeFrameJacobian(model_, d, qk, frame, point, ref),
                     "jacobian");
      expectRowMajor(resp.jdot_qd(), 6 * uk,
                     computeFrameJdotQd(model_, d, qk, qdk, frame, point, ref).transpose(), "jdot_qd");
      expectRowMajor(resp.lambda(), 9 * uk,
                     computeOperationalSpaceInertia(model_, d, qk, frame, point, ref, TaskRows::Linear)
                         .topLeftCorner(3, 3),
                     "lambda");
      forwardKinematics(model_, d, qk);
      for (int i = 0; i <= n; ++i) {
        const std::size_t f = uk * static_cast<std::size_t>(n + 1) + static_cast<std::size_t>(i);
        expectRowMajor(resp.frame_rotations(), 9 * f, d.kin_R[static_cast<std::size_t>(i)], "frame rotation");
        expectRowMajor(resp.frame_origins(), 3 * f, d.kin_p[static_cast<std::size_t>(i)].transpose(),
                       "frame origin");
      }
    }
  }
}

TEST_F(ServerPlanning, DerivativesEqualTheCoreWithAndWithoutAPayload) {
  const int n = model_.n, count = 6;
  const auto un = static_cast<std::size_t>(n);
  const std::vector<double> q = test::randomStates(count, n, 41, 1.5),
                            qd = test::randomStates(count, n, 42, 1.0),
                            qdd = test::randomStates(count, n, 43, 2.0),
                            tau = test::randomStates(count, n, 44, 10);
  const Model heavy = attachPayload(model_, corePayload());
  for (const bool payload : {false, true, false}) {  // the last: the registered model is untouched
    const Model& m = payload ? heavy : model_;
    Data d(m);
    for (const auto of : {v1::DERIVATIVE_OF_INVERSE_DYNAMICS, v1::DERIVATIVE_OF_FORWARD_DYNAMICS}) {
      v1::DerivativesRequest req;
      req.set_model_id(id_);
      req.set_count(count);
      req.set_dof(n);
      req.set_of(of);
      for (double v : q) req.add_q(v);
      for (double v : qd) req.add_qd(v);
      for (double v : (of == v1::DERIVATIVE_OF_INVERSE_DYNAMICS ? qdd : tau)) {
        if (of == v1::DERIVATIVE_OF_INVERSE_DYNAMICS)
          req.add_qdd(v);
        else
          req.add_tau(v);
      }
      if (payload) *req.mutable_payload() = wirePayload();
      v1::DerivativesResponse resp;
      grpc::ClientContext ctx;
      const grpc::Status s = stub_->Derivatives(&ctx, req, &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      for (int k = 0; k < count; ++k) {
        const std::size_t o = static_cast<std::size_t>(k) * un;
        const Eigen::Map<const Eigen::VectorXd> qk(q.data() + o, n), qdk(qd.data() + o, n),
            qddk(qdd.data() + o, n), tauk(tau.data() + o, n);
        const std::string what = std::string(payload ? "payload " : "") + "state " + std::to_string(k);
        if (of == v1::DERIVATIVE_OF_INVERSE_DYNAMICS) {
          computeInverseDynamicsDerivatives(m, d, qk, qdk, qddk);
          expectRowMajor(resp.dtau_dq(), o * un, d.dtau_dq, "dtau_dq " + what);
          expectRowMajor(resp.dtau_dqd(), o * un, d.dtau_dqd, "dtau_dqd " + what);
          expectRowMajor(resp.tau(), o, d.tau.transpose(), "tau " + what);
        } else {
          computeForwardDynamicsDerivatives(m, d, qk, qdk, tauk);
          expectRowMajor(resp.dqdd_dq(), o * un, d.dqdd_dq, "dqdd_dq " + what);
          expectRowMajor(resp.dqdd_dqd(), o * un, d.dqdd_dqd, "dqdd_dqd " + what);
          expectRowMajor(resp.dqdd_dtau(), o * un, d.Minv, "dqdd_dtau " + what);
          expectRowMajor(resp.qdd(), o, d.qdd.transpose(), "qdd " + what);
        }
      }
    }
  }
}

TEST_F(ServerPlanning, RolloutsEqualTheCore) {
  const int n = model_.n, K = 3, T = 20;
  const auto un = static_cast<std::size_t>(n), x = 2 * un;
  const std::vector<double> x0 = test::randomStates(K, 2 * n, 51, 0.5),
                            u = test::randomStates(K * T, n, 52, 5.0);
  const Model heavy = attachPayload(model_, corePayload());
  for (const bool payload : {false, true}) {
    for (const auto scheme : {v1::STEP_SCHEME_RK4, v1::STEP_SCHEME_SEMI_IMPLICIT_EULER}) {
      v1::RolloutRequest req;
      req.set_model_id(id_);
      req.set_count(K);
      req.set_dof(n);
      req.set_steps(T);
      req.set_dt(0.01);
      req.set_scheme(scheme);
      for (double v : x0) req.add_x0(v);
      for (double v : u) req.add_u(v);
      req.set_linearize(true);
      if (payload) *req.mutable_payload() = wirePayload();
      v1::RolloutResponse resp;
      grpc::ClientContext ctx;
      const grpc::Status s = stub_->Rollout(&ctx, req, &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      ASSERT_EQ(resp.steps(), static_cast<std::uint32_t>(T));

      const Model& m = payload ? heavy : model_;
      RolloutWorkspace d(m);
      RolloutOptions options;
      options.scheme = scheme == v1::STEP_SCHEME_RK4 ? StepScheme::RK4 : StepScheme::SemiImplicitEuler;
      options.step = 0.01;
      options.steps = T;
      std::vector<double> states((T + 1) * x), A(T * x * x), B(T * x * un);
      for (int k = 0; k < K; ++k) {
        const auto uk = static_cast<std::size_t>(k);
        rollout(m, d, options, x0.data() + uk * x, u.data() + uk * T * un, states.data(), A.data(), B.data());
        for (std::size_t i = 0; i < states.size(); ++i)
          ASSERT_NEAR(resp.states(static_cast<int>(uk * states.size() + i)), states[i],
                      1e-12 * std::max(1.0, std::abs(states[i])));
        for (std::size_t i = 0; i < A.size(); ++i)
          ASSERT_NEAR(resp.a(static_cast<int>(uk * A.size() + i)), A[i],
                      1e-12 * std::max(1.0, std::abs(A[i])));
        for (std::size_t i = 0; i < B.size(); ++i)
          ASSERT_NEAR(resp.b(static_cast<int>(uk * B.size() + i)), B[i],
                      1e-12 * std::max(1.0, std::abs(B[i])));
      }
    }
  }
}

TEST_F(ServerPlanning, SharedControlsAreOneSequenceForEveryRollout) {
  const int n = model_.n, K = 4, T = 10;
  const std::vector<double> x0 = test::randomStates(K, 2 * n, 61, 0.5), u = test::randomStates(T, n, 62, 5.0);
  v1::RolloutRequest req;
  req.set_model_id(id_);
  req.set_count(K);
  req.set_dof(n);
  req.set_steps(T);
  req.set_dt(0.005);
  for (double v : x0) req.add_x0(v);
  for (double v : u) req.add_u(v);
  req.set_shared_controls(true);
  v1::RolloutResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->Rollout(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.a_size(), 0);
  RolloutWorkspace d(model_);
  RolloutOptions options;
  options.step = 0.005;
  options.steps = T;
  const std::size_t x = 2 * static_cast<std::size_t>(n);
  std::vector<double> states((T + 1) * x);
  for (int k = 0; k < K; ++k) {
    rollout(model_, d, options, x0.data() + static_cast<std::size_t>(k) * x, u.data(), states.data());
    for (std::size_t i = 0; i < states.size(); ++i)
      ASSERT_NEAR(resp.states(static_cast<int>(static_cast<std::size_t>(k) * states.size() + i)), states[i],
                  1e-12 * std::max(1.0, std::abs(states[i])));
  }
}

grpc::Status call(v1::Dynamics::Stub& stub, const v1::RolloutRequest& req) {
  v1::RolloutResponse resp;
  grpc::ClientContext ctx;
  return stub.Rollout(&ctx, req, &resp);
}

TEST_F(ServerPlanning, BadRequestsAreRefusedNamingTheField) {
  const int n = model_.n;
  v1::RolloutRequest r;
  r.set_model_id(id_);
  r.set_count(21);
  r.set_dof(n);
  r.set_steps(20);  // 420 steps > --max-states 400
  r.set_dt(0.01);
  grpc::Status s = call(*stub_, r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("max_states"), std::string::npos) << s.error_message();
  r.set_count(1);
  r.set_dt(-1);
  s = call(*stub_, r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("dt"), std::string::npos) << s.error_message();
  r.set_dt(0.01);
  s = call(*stub_, r);  // no x0
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("x0"), std::string::npos) << s.error_message();
  for (int i = 0; i < 2 * n; ++i) r.add_x0(0.0);
  for (int i = 0; i < 20 * n; ++i) r.add_u(0.0);
  r.mutable_payload()->set_mass(-1.0);
  s = call(*stub_, r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("payload"), std::string::npos) << s.error_message();
  r.mutable_payload()->set_mass(1.0);
  r.set_u(3, std::nan(""));
  s = call(*stub_, r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("u[3]"), std::string::npos) << s.error_message();

  v1::KinematicsRequest k;
  k.set_model_id(id_);
  k.set_count(1);
  k.set_dof(n);
  for (int i = 0; i < n; ++i) k.add_q(0.0);
  k.set_link("no_such_link");
  v1::KinematicsResponse kr;
  grpc::ClientContext kc;
  s = stub_->Kinematics(&kc, k, &kr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("no_such_link"), std::string::npos) << s.error_message();
  k.set_link("");
  k.set_jdot_qd(true);  // without qd
  grpc::ClientContext kc2;
  s = stub_->Kinematics(&kc2, k, &kr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("qd"), std::string::npos) << s.error_message();
}

TEST(ServerPlanningLimits, LinearizationsBeyondTheMessageLimitAreRefusedBeforeComputing) {
  TempDir dir;
  // 100 rollouts of 100 steps of the Panda with A and B: 10^4 * (14 * 21) doubles = 23.5 MB > 4 MB
  ServerProcess server(dir.str(), dir.str("store"), {"--max-message-bytes", "4000000"});
  auto stub = server.stub();
  const std::string id = registerPanda(*stub);
  v1::RolloutRequest r;
  r.set_model_id(id);
  r.set_count(100);
  r.set_dof(7);
  r.set_steps(100);
  r.set_dt(0.01);
  r.set_linearize(true);
  const grpc::Status s = call(*stub, r);  // no x0 either: the bound comes first
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("max_message_bytes"), std::string::npos) << s.error_message();
}

/// A long rollout request: K rollouts of T RK4 steps of the Panda from rest, zero torques (shared).
v1::RolloutRequest longRollout(const std::string& id, int K, int T) {
  v1::RolloutRequest r;
  r.set_model_id(id);
  r.set_count(K);
  r.set_dof(7);
  r.set_steps(T);
  r.set_dt(1e-4);
  for (int i = 0; i < K * 14; ++i) r.add_x0(0.1);
  for (int i = 0; i < T * 7; ++i) r.add_u(0.0);
  r.set_shared_controls(true);
  return r;
}

TEST(ServerPlanningLimits, ALongRolloutStopsAtItsDeadlineWithDeadlineExceeded) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const std::string id = registerPanda(*stub);
  // 8 rollouts of 10^4 RK4 steps: tenths of seconds of work, beyond a 50 ms deadline
  const v1::RolloutRequest r = longRollout(id, 8, 10000);
  v1::RolloutResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
  const grpc::Status s = stub->Rollout(&ctx, r, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  // the server's own status (its log line; the client's library says DEADLINE_EXCEEDED at its deadline
  // whatever the server answers): the rollouts stopped at the deadline, not as a cancellation
  ASSERT_TRUE(test::eventually([&] {
    return server.log().find("Rollout from ") != std::string::npos &&
           server.log().find(" failed: ") != std::string::npos;
  })) << server.log();
  EXPECT_NE(server.log().find("failed: DEADLINE_EXCEEDED: rolloutBatch: stopped after "), std::string::npos)
      << server.log();
  EXPECT_NE(server.log().find("rollouts: the deadline passed"), std::string::npos) << server.log();
  EXPECT_EQ(server.log().find("failed: CANCELLED"), std::string::npos) << server.log();
  // the server is free again at once: a small call answers
  v1::GetServerInfoResponse info;
  grpc::ClientContext ictx;
  EXPECT_TRUE(stub->GetServerInfo(&ictx, v1::GetServerInfoRequest(), &info).ok());
}

TEST(ServerPlanningLimits, ACallWhoseDeadlinePassedInTheQueueIsDeadlineExceeded) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--compute-threads", "1"});
  auto stub = server.stub();
  const std::string id = registerPanda(*stub);
  // the one compute thread busy with a simulation of 5 * 10^6 RK4 steps to its first sample after t = 0 (tens
  // of seconds) until its 1.5 s deadline; a call with a 50 ms deadline waits behind it
  auto busy = std::async(std::launch::async, [&] {
    v1::SimulateRequest q;
    q.set_model_id(id);
    q.set_dof(7);
    for (int j = 0; j < 7; ++j) q.add_q0(0.3), q.add_qd0(0.0);
    q.set_integrator(v1::INTEGRATOR_RK4);
    q.set_step(1e-3);
    q.set_t_end(5000.0);
    q.set_dt_out(5000.0);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(1500));
    auto reader = stub->Simulate(&ctx, q);
    v1::SimulateResponse m;
    while (reader->Read(&m)) {
    }
    return reader->Finish();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the simulation has the thread
  v1::GetServerInfoResponse info;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
  EXPECT_EQ(stub->GetServerInfo(&ctx, v1::GetServerInfoRequest(), &info).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(busy.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_TRUE(test::eventually([&] { return server.log().find("GetServerInfo from ") != std::string::npos; }))
      << server.log();
  EXPECT_NE(server.log().find("GetServerInfo from "), std::string::npos);
  EXPECT_NE(server.log().find("failed: DEADLINE_EXCEEDED: the call's deadline passed before it was computed"),
            std::string::npos)
      << server.log();
}

TEST_F(ServerPlanning, ADivergingRolloutAndADivergingSimulationAreBothAborted) {
  // one code for an integration that stops part way, whichever RPC integrates (docs/service.md)
  const int n = model_.n;
  v1::RolloutRequest r;
  r.set_model_id(id_);
  r.set_count(2);
  r.set_dof(n);
  r.set_steps(5);
  r.set_dt(1e-3);
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 2 * n; ++i) r.add_x0(k == 1 && i == n + 1 ? 1e160 : 0.0);  // rollout 1: qd[1] = 1e160
  }
  for (int i = 0; i < 5 * n; ++i) r.add_u(0.0);
  r.set_shared_controls(true);
  const grpc::Status s = call(*stub_, r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_NE(s.error_message().find("rollout 1, step 0"), std::string::npos) << s.error_message();
  // a simulation driven by torques of 1e11 N m: within a few steps the velocities leave the range the
  // dynamics accept
  v1::SimulateRequest q;
  q.set_model_id(id_);
  q.set_dof(n);
  for (int i = 0; i < n; ++i) q.add_q0(0.0), q.add_qd0(0.0), q.add_torque_values(1e11);
  q.set_integrator(v1::INTEGRATOR_RK4);
  q.set_step(1e-3);
  q.set_t_end(1.0);
  q.set_dt_out(0.5);
  grpc::ClientContext ctx;
  auto reader = stub_->Simulate(&ctx, q);
  v1::SimulateResponse m;
  while (reader->Read(&m)) {
  }
  const grpc::Status st = reader->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::ABORTED) << st.error_message();
  EXPECT_NE(st.error_message().find("simulate: the state became non-finite or left the accepted range"),
            std::string::npos)
      << st.error_message();
}

}  // namespace
}  // namespace denoc
