// Every RPC of denocd against the core computed in this process, on the same models and states.
#include <gtest/gtest.h>

#include "denoc/simulate.hpp"
#include "denoc/urdf.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

class ServerRpc : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store")); }

  std::string registerModel(const v1::RegisterModelRequest& req) {
    auto stub = server_->stub();
    v1::RegisterModelResponse resp;
    const grpc::Status st = stub->RegisterModel(context().get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.model_id().size(), 64u);
    return resp.model_id();
  }

  // checks ID, FD (three routes), FullFactor (all terms), Stream and GetModel of one model
  void checkModel(const std::string& id, const Model& m, unsigned seed) {
    SCOPED_TRACE("model " + m.spec.name + " " + id);
    auto stub = server_->stub();
    const int n = m.n;
    const int count = 7;
    const auto q = randomStates(count, n, seed, 1.5);
    const auto qd = randomStates(count, n, seed + 1, 2.0);
    const auto qdd = randomStates(count, n, seed + 2, 3.0);
    const auto wrench = randomStates(count, 6, seed + 3, 5.0);

    // GetModel
    {
      v1::GetModelRequest req;
      req.set_model_id(id);
      v1::GetModelResponse resp;
      ASSERT_TRUE(stub->GetModel(context().get(), req, &resp).ok());
      EXPECT_EQ(resp.model().dof(), static_cast<unsigned>(n));
      ASSERT_EQ(resp.model().joint_names_size(), n);
      for (int i = 0; i < n; ++i) EXPECT_EQ(resp.model().joint_names(i), m.spec.joints[i].name);
      EXPECT_EQ(resp.model().gravity().z(), m.gravity.z());
    }
    // InverseDynamics, without and with a tip wrench
    for (bool with_wrench : {false, true}) {
      v1::InverseDynamicsRequest req;
      req.set_model_id(id);
      req.set_count(count);
      req.set_dof(n);
      *req.mutable_q() = {q.begin(), q.end()};
      *req.mutable_qd() = {qd.begin(), qd.end()};
      *req.mutable_qdd() = {qdd.begin(), qdd.end()};
      if (with_wrench) *req.mutable_tip_wrench() = {wrench.begin(), wrench.end()};
      v1::InverseDynamicsResponse resp;
      const grpc::Status st = stub->InverseDynamics(context().get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      EXPECT_EQ(resp.model_id(), id);
      EXPECT_EQ(resp.count(), static_cast<unsigned>(count));
      EXPECT_EQ(resp.dof(), static_cast<unsigned>(n));
      EXPECT_EQ(resp.gravity().x(), m.gravity.x());
      EXPECT_EQ(resp.gravity().y(), m.gravity.y());
      EXPECT_EQ(resp.gravity().z(), m.gravity.z());
      EXPECT_GT(resp.compute_time_ns(), 0);
      expectCloseField(resp.tau(), coreID(m, q, qd, qdd, with_wrench ? &wrench : nullptr),
                       with_wrench ? "tau (wrench)" : "tau");
    }
    // ForwardDynamics by each route
    const auto tau = randomStates(count, n, seed + 4, 10.0);
    const std::pair<v1::ForwardRoute, Route> routes[] = {{v1::FORWARD_ROUTE_SAHA, Route::Saha},
                                                         {v1::FORWARD_ROUTE_CHOLESKY, Route::Cholesky},
                                                         {v1::FORWARD_ROUTE_FIXMAN, Route::Fixman}};
    for (auto [route, core_route] : routes) {
      v1::ForwardDynamicsRequest req;
      req.set_model_id(id);
      req.set_count(count);
      req.set_dof(n);
      req.set_route(route);
      *req.mutable_q() = {q.begin(), q.end()};
      *req.mutable_qd() = {qd.begin(), qd.end()};
      *req.mutable_tau() = {tau.begin(), tau.end()};
      v1::ForwardDynamicsResponse resp;
      const grpc::Status st = stub->ForwardDynamics(context().get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      EXPECT_EQ(resp.route(), route);
      EXPECT_EQ(resp.model_id(), id);
      expectCloseField(resp.qdd(), coreFD(m, q, qd, tau, core_route),
                       "qdd route " + v1::ForwardRoute_Name(route));
    }
    // FullFactor with every term
    {
      v1::FullFactorRequest req;
      req.set_model_id(id);
      req.set_count(count);
      req.set_dof(n);
      *req.mutable_q() = {q.begin(), q.end()};
      *req.mutable_qd() = {qd.begin(), qd.end()};
      req.set_convective(true);
      req.set_bias(true);
      req.set_gravity_torque(true);
      req.set_inverse(true);
      v1::FullFactorResponse resp;
      const grpc::Status st = stub->FullFactor(context().get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      Data d(m);
      std::vector<double> I, U, D, logdet, C, bias, grav, inv;
      auto push = [](std::vector<double>& v, const Eigen::MatrixXd& M) {
        for (int i = 0; i < M.rows(); ++i)
          for (int j = 0; j < M.cols(); ++j) v.push_back(M(i, j));
      };
      for (int k = 0; k < count; ++k) {
        const Eigen::Map<const Eigen::VectorXd> Q(&q[k * n], n), QD(&qd[k * n], n);
        computeFullFactor(m, d, Q);
        push(I, d.M);
        push(U, d.U);
        for (int i = 0; i < n; ++i) D.push_back(d.D[i]);
        logdet.push_back(d.log_det);
        push(inv, computeInverseInertia(m, d, Q));
        push(C, computeConvectiveMatrix(m, d, Q, QD));
        const Eigen::VectorXd b = computeBias(m, d, Q, QD);
        for (int i = 0; i < n; ++i) bias.push_back(b[i]);
        const Eigen::VectorXd g = computeGravity(m, d, Q);
        for (int i = 0; i < n; ++i) grav.push_back(g[i]);
      }
      expectCloseField(resp.inertia(), I, "inertia");
      expectCloseField(resp.u(), U, "u");
      expectCloseField(resp.d(), D, "d");
      expectCloseField(resp.log_det(), logdet, "log_det");
      expectCloseField(resp.inverse(), inv, "inverse");
      expectCloseField(resp.convective(), C, "convective");
      expectCloseField(resp.bias(), bias, "bias");
      expectCloseField(resp.gravity_torque(), grav, "gravity_torque");
      // U is unit upper triangular, written row-major: U[0][1] is above the diagonal
      if (n > 1) {
        EXPECT_EQ(resp.u(n), 0.0);  // U[1][0]
        EXPECT_EQ(resp.u(0), 1.0);
      }
    }
    // Stream: alternating ID and FD, each followed by an echo, answers in order
    {
      auto ctx = context();
      auto stream = stub->Stream(ctx.get());
      for (int k = 0; k < count; ++k) {
        v1::StreamRequest req;
        req.set_model_id(id);
        req.set_sequence(100 + k);
        const bool inverse = k % 2 == 0;
        req.set_computation(inverse ? v1::COMPUTATION_INVERSE_DYNAMICS : v1::COMPUTATION_FORWARD_DYNAMICS);
        req.mutable_q()->Add(&q[k * n], &q[k * n] + n);
        req.mutable_qd()->Add(&qd[k * n], &qd[k * n] + n);
        if (inverse) {
          req.mutable_qdd()->Add(&qdd[k * n], &qdd[k * n] + n);
        } else {
          req.mutable_tau()->Add(&tau[k * n], &tau[k * n] + n);
          req.set_route(v1::FORWARD_ROUTE_CHOLESKY);
        }
        ASSERT_TRUE(stream->Write(req));
        v1::StreamResponse resp;
        ASSERT_TRUE(stream->Read(&resp));
        EXPECT_EQ(resp.sequence(), 100u + k);
        EXPECT_EQ(resp.model_id(), id);
        const std::vector<double> one_q(&q[k * n], &q[k * n] + n), one_qd(&qd[k * n], &qd[k * n] + n);
        const std::vector<double> want =
            inverse ? coreID(m, one_q, one_qd, std::vector<double>(&qdd[k * n], &qdd[k * n] + n))
                    : coreFD(m, one_q, one_qd, std::vector<double>(&tau[k * n], &tau[k * n] + n),
                             Route::Cholesky);
        expectCloseField(resp.result(), want, "stream result");
        // an echo between two computations: its sequence back, nothing computed
        v1::StreamRequest echo;
        echo.set_computation(v1::COMPUTATION_ECHO);
        echo.set_sequence(5000 + k);
        ASSERT_TRUE(stream->Write(echo));
        ASSERT_TRUE(stream->Read(&resp));
        EXPECT_EQ(resp.sequence(), 5000u + k);
        EXPECT_EQ(resp.computation(), v1::COMPUTATION_ECHO);
        EXPECT_EQ(resp.result_size(), 0);
        EXPECT_EQ(resp.model_id(), "");
      }
      stream->WritesDone();
      const grpc::Status st = stream->Finish();
      EXPECT_TRUE(st.ok()) << st.error_message();
    }
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerRpc, BuiltinStanfordArmMatchesCore) {
  // the built-in model's id is the id of the same DH table registered over the wire
  const std::string id = registerModel(dhRequest(stanfordArmDH()));
  auto stub = server_->stub();
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &list).ok());
  bool builtin = false;
  for (const auto& info : list.models()) builtin |= info.model_id() == id && info.pinned();
  EXPECT_TRUE(builtin) << "the built-in Stanford arm should have the id of its DH table";
  checkModel(id, buildModelFromDH(stanfordArmDH()), 11);
}

TEST_F(ServerRpc, PlanarArmMatchesCore) {
  checkModel(registerModel(dhRequest(planarArmDH())), buildModelFromDH(planarArmDH()), 21);
}

TEST_F(ServerRpc, RandomChainWithArmatureMatchesCore) {
  const DHSpec dh = randomChain(7, 5, true);
  checkModel(registerModel(dhRequest(dh)), buildModelFromDH(dh), 31);
}

TEST_F(ServerRpc, PandaUrdfMatchesCore) {
  const std::string urdf = readText(std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf");
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text(urdf);
  req.mutable_urdf()->set_tip_link("panda_link8");
  const std::vector<double> armature = {0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05};
  *req.mutable_armature() = {armature.begin(), armature.end()};
  UrdfOptions options;
  options.tip_link = "panda_link8";
  options.armature = armature;
  const Model m = buildModelFromUrdf(urdf, options);
  ASSERT_EQ(m.n, 7);
  checkModel(registerModel(req), m, 41);
}

TEST_F(ServerRpc, SimulateStreamsTheCoresSamples) {
  const DHSpec dh = planarArmDH();
  const std::string id = registerModel(dhRequest(dh));
  const Model m = buildModelFromDH(dh);
  for (auto integrator : {v1::INTEGRATOR_DOPRI5, v1::INTEGRATOR_RK4}) {
    v1::SimulateRequest req;
    req.set_model_id(id);
    req.set_dof(3);
    for (double v : {0.3, -0.2, 0.1}) req.add_q0(v);
    for (double v : {0.0, 0.5, 0.0}) req.add_qd0(v);
    req.set_t_end(0.5);
    req.set_dt_out(0.01);
    req.set_integrator(integrator);
    req.set_batch_size(7);
    for (double v : {0.1, 0.0, 0.05}) req.add_damping(v);
    for (double v : {0.0, 1.0}) req.add_torque_times(v);
    for (double v : {0.0, 0.0, 0.0, 1.0, -0.5, 0.2}) req.add_torque_values(v);
    auto ctx = context();
    auto reader = server_->stub()->Simulate(ctx.get(), req);
    std::vector<double> t, q, qd, energy;
    v1::SimulateResponse resp;
    int messages = 0;
    bool last = false;
    while (reader->Read(&resp) && messages < 1000) {
      ++messages;
      EXPECT_EQ(resp.model_id(), id);
      EXPECT_LE(resp.count(), 7u);
      EXPECT_FALSE(last) << "a message after the last one";
      last = resp.last();
      t.insert(t.end(), resp.t().begin(), resp.t().end());
      q.insert(q.end(), resp.q().begin(), resp.q().end());
      qd.insert(qd.end(), resp.qd().begin(), resp.qd().end());
      energy.insert(energy.end(), resp.energy().begin(), resp.energy().end());
    }
    const grpc::Status st = reader->Finish();
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_TRUE(last);
    EXPECT_EQ(messages, (51 + 6) / 7);
    // the same run in this process
    SimulationOptions o;
    o.integrator = integrator == v1::INTEGRATOR_RK4 ? Integrator::RK4 : Integrator::DormandPrince45;
    o.t_end = 0.5;
    o.dt_out = 0.01;
    o.damping = Eigen::Vector3d(0.1, 0.0, 0.05);
    o.torque =
        TorqueInput::piecewiseLinear({0.0, 1.0}, {Eigen::Vector3d::Zero(), Eigen::Vector3d(1.0, -0.5, 0.2)});
    const SimulationResult r =
        simulate(m, Eigen::Vector3d(0.3, -0.2, 0.1), Eigen::Vector3d(0.0, 0.5, 0.0), o);
    ASSERT_EQ(t.size(), static_cast<std::size_t>(r.t.size()));
    std::vector<double> rq, rqd;
    for (int k = 0; k < r.q.rows(); ++k)
      for (int j = 0; j < 3; ++j) {
        rq.push_back(r.q(k, j));
        rqd.push_back(r.qd(k, j));
      }
    expectClose(t.data(), r.t.data(), t.size(), "t");
    expectClose(q.data(), rq.data(), q.size(), "q");
    expectClose(qd.data(), rqd.data(), qd.size(), "qd");
    expectClose(energy.data(), r.energy.data(), energy.size(), "energy");
  }
}

}  // namespace
}  // namespace denoc::test
