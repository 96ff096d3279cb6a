// denoc::client's planning calls (kinematics, derivatives, rollouts, payloads) against a real denocd: every
// answer equals the core computed in this process to 1e-12.
#include <nlohmann/json.hpp>

#include "client_support.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/client/client.hpp"
#include "denoc/payload.hpp"
#include "denoc/rollout.hpp"

namespace denoc {
namespace {

using test::close;
using test::fromFlat;
using test::ServerProcess;
using test::TempDir;

client::Payload tool() {
  client::Payload p;
  p.mass = 0.8;
  p.com = Eigen::Vector3d(0.02, 0, 0.07);
  p.inertia = Eigen::Vector3d(0.002, 0.003, 0.001).asDiagonal();
  return p;
}

Model withTool(const Model& m) {
  Payload p;
  p.mass = 0.8;
  p.com = Eigen::Vector3d(0.02, 0, 0.07);
  p.inertia = Eigen::Vector3d(0.002, 0.003, 0.001).asDiagonal();
  return attachPayload(m, p);
}

class ClientPlanning : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"));
    client_ = std::make_unique<client::Client>(server_->address());
    id_ = client_->registerModelFile(test::kPanda, "", test::kTip).model_id;
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::string id_;
  Model model_ = test::pandaModel();
};

TEST_F(ClientPlanning, KinematicsEqualTheCore) {
  const int n = model_.n, count = 4;
  const Eigen::MatrixXd Q = fromFlat(test::randomStates(count, n, 71, 1.5), count, n),
                        Qd = fromFlat(test::randomStates(count, n, 72, 1.0), count, n);
  client::KinematicsOptions o;
  o.point = Eigen::Vector3d(0, 0, 0.05);
  o.reference = client::Reference::Local;
  o.jacobian = o.jdot_qd = true;
  const client::KinematicsResult r = client_->kinematics(id_, Q, o, Qd);
  ASSERT_EQ(r.rotation.size(), 4u);
  Data d(model_);
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd q = Q.row(k).transpose(), qd = Qd.row(k).transpose();
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    framePlacement(model_, d, q, model_.n, R, p);
    EXPECT_TRUE(close(r.rotation[static_cast<std::size_t>(k)], R));
    EXPECT_TRUE(close(r.origin.row(k), p.transpose()));
    EXPECT_TRUE(close(r.jacobian[static_cast<std::size_t>(k)],
                      computeFrameJacobian(model_, d, q, model_.n, o.point, ReferenceFrame::Local)));
    EXPECT_TRUE(
        close(r.jdot_qd.row(k),
              computeFrameJdotQd(model_, d, q, qd, model_.n, o.point, ReferenceFrame::Local).transpose()));
  }
}

TEST_F(ClientPlanning, DerivativesWithAPayloadEqualTheCoreOnTheModelWithIt) {
  const int n = model_.n, count = 3;
  const Eigen::MatrixXd Q = fromFlat(test::randomStates(count, n, 81, 1.5), count, n),
                        Qd = fromFlat(test::randomStates(count, n, 82, 1.0), count, n),
                        Tau = fromFlat(test::randomStates(count, n, 83, 10.0), count, n);
  const Model heavy = withTool(model_);
  const client::DerivativesResult r = client_->forwardDynamicsDerivatives(id_, Q, Qd, Tau, tool());
  const client::DerivativesResult plain = client_->forwardDynamicsDerivatives(id_, Q, Qd, Tau);
  Data d(heavy), d0(model_);
  for (int k = 0; k < count; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const Eigen::VectorXd q = Q.row(k).transpose(), qd = Qd.row(k).transpose(), tau = Tau.row(k).transpose();
    computeForwardDynamicsDerivatives(heavy, d, q, qd, tau);
    EXPECT_TRUE(close(r.dqdd_dq[uk], d.dqdd_dq));
    EXPECT_TRUE(close(r.dqdd_dqd[uk], d.dqdd_dqd));
    EXPECT_TRUE(close(r.dqdd_dtau[uk], d.Minv));
    EXPECT_TRUE(close(r.qdd.row(k), d.qdd.transpose()));
    computeForwardDynamicsDerivatives(model_, d0, q, qd, tau);
    EXPECT_TRUE(close(plain.dqdd_dtau[uk], d0.Minv));  // the registered model has no payload
    EXPECT_FALSE(close(plain.dqdd_dtau[uk], d.Minv));
  }
  const client::DerivativesResult id = client_->inverseDynamicsDerivatives(id_, Q, Qd, Tau, tool());
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd q = Q.row(k).transpose(), qd = Qd.row(k).transpose(), qdd = Tau.row(k).transpose();
    computeInverseDynamicsDerivatives(heavy, d, q, qd, qdd);
    EXPECT_TRUE(close(id.dtau_dq[static_cast<std::size_t>(k)], d.dtau_dq));
    EXPECT_TRUE(close(id.dtau_dqd[static_cast<std::size_t>(k)], d.dtau_dqd));
  }
}

TEST_F(ClientPlanning, RolloutsWithLinearizationsEqualTheCore) {
  const int n = model_.n, K = 2, T = 15;
  auto [X0, U, o] = test::randomRollouts(K, T, n, 91, 92);
  o.scheme = client::StepScheme::SemiImplicitEuler;
  o.payload = tool();
  const client::RolloutResult r = client_->rollout(id_, X0, U, o);
  ASSERT_EQ(r.states.size(), 2u);
  ASSERT_EQ(r.A.size(), 2u);
  const Model heavy = withTool(model_);
  RolloutWorkspace d(heavy);
  denoc::RolloutOptions core;
  core.scheme = StepScheme::SemiImplicitEuler;
  core.step = 0.01;
  core.steps = T;
  const std::size_t x = 2 * static_cast<std::size_t>(n);
  for (int k = 0; k < K; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    std::vector<double> states((T + 1) * x), A(T * x * x), B(T * x * static_cast<std::size_t>(n));
    const Eigen::VectorXd x0 = X0.row(k).transpose();
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> u = U[uk];
    rollout(heavy, d, core, x0.data(), u.data(), states.data(), A.data(), B.data());
    EXPECT_TRUE(close(r.states[uk], fromFlat(states, T + 1, 2 * n)));
    for (int t = 0; t < T; ++t) {
      const auto ut = static_cast<std::size_t>(t);
      EXPECT_TRUE(
          close(r.A[uk][ut], fromFlat(std::vector<double>(A.begin() + static_cast<long>(ut * x * x),
                                                          A.begin() + static_cast<long>((ut + 1) * x * x)),
                                      2 * n, 2 * n)));
      const std::size_t bs = x * static_cast<std::size_t>(n);
      EXPECT_TRUE(
          close(r.B[uk][ut], fromFlat(std::vector<double>(B.begin() + static_cast<long>(ut * bs),
                                                          B.begin() + static_cast<long>((ut + 1) * bs)),
                                      2 * n, n)));
    }
  }
}

// the CLI's fk, jacobian, derivatives and rollout equal the core
TEST_F(ClientPlanning, CliCommandsEqualTheCore) {
  const std::string q = "0.1,-0.4,0.2,-2.0,0.1,1.6,0.7";
  Eigen::VectorXd qv(7);
  qv << 0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7;
  Data d(model_);
  const auto rowsOf = [](const nlohmann::json& j) {
    Eigen::MatrixXd m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j.at(0).size()));
    for (std::size_t i = 0; i < j.size(); ++i)
      for (std::size_t k = 0; k < j.at(i).size(); ++k)
        m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = j.at(i).at(k).get<double>();
    return m;
  };
  auto run = test::runDenoc(dir_, {"--server", server_->address(), "jacobian", id_, "--q=" + q, "--link",
                                   "panda_link4", "--point", "0,0.1,0", "--local", "--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  auto doc = nlohmann::json::parse(run.out);
  const int frame = frameIndex(model_, "panda_link4");
  EXPECT_TRUE(
      close(rowsOf(doc.at("states").at(0).at("jacobian")),
            computeFrameJacobian(model_, d, qv, frame, Eigen::Vector3d(0, 0.1, 0), ReferenceFrame::Local)));
  Eigen::Matrix3d R;
  Eigen::Vector3d p;
  framePlacement(model_, d, qv, frame, R, p);
  EXPECT_TRUE(close(rowsOf(doc.at("states").at(0).at("rotation")), R));

  run = test::runDenoc(dir_, {"--server", server_->address(), "derivatives", id_, "--of", "id", "--q=" + q,
                              "--qd", "0.1,0.1,0.1,0.1,0.1,0.1,0.1", "--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  doc = nlohmann::json::parse(run.out);
  computeInverseDynamicsDerivatives(model_, d, qv, Eigen::VectorXd::Constant(7, 0.1),
                                    Eigen::VectorXd::Zero(7));
  EXPECT_TRUE(close(rowsOf(doc.at("states").at(0).at("dtau_dq")), d.dtau_dq));

  run = test::runDenoc(dir_, {"--server", server_->address(), "rollout", id_, "--q0=" + q, "--tau",
                              "1,1,1,1,0.5,0.5,0.5", "--steps", "5", "--dt", "0.01", "--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  doc = nlohmann::json::parse(run.out);
  denoc::RolloutOptions core;
  core.step = 0.01;
  core.steps = 5;
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(14);
  x0.head(7) = qv;
  Eigen::Matrix<double, 5, 7, Eigen::RowMajor> u;
  u.rowwise() = (Eigen::RowVectorXd(7) << 1, 1, 1, 1, 0.5, 0.5, 0.5).finished();
  std::vector<double> states(6 * 14);
  RolloutWorkspace ws(model_);
  rollout(model_, ws, core, x0.data(), u.data(), states.data());
  EXPECT_TRUE(close(rowsOf(doc.at("states")), fromFlat(states, 6, 14)));
}

// the computed-torque example (clients/cpp/examples/computed_torque_payload.cpp): a plant carrying a 3 kg
// tool is tracked better by a controller that declares the tool than by one that ignores it
TEST_F(ClientPlanning, ComputedTorqueTracksBetterWithThePayloadDeclared) {
  const auto run = ::denoc::testing::runProcess(DENOC_COMPUTED_TORQUE_EXAMPLE,
                                                {server_->address(), test::kPanda}, dir_.str("example"));
  ASSERT_EQ(run.code, 0) << run.err;
  double ignored = 0, declared = 0;
  const auto a = run.out.find("without the payload declared:"),
             b = run.out.find("with the payload declared:");
  ASSERT_NE(a, std::string::npos) << run.out;
  ASSERT_NE(b, std::string::npos) << run.out;
  ignored = std::stod(run.out.substr(a + std::string("without the payload declared:").size()));
  declared = std::stod(run.out.substr(b + std::string("with the payload declared:").size()));
  EXPECT_GT(ignored, 0.0) << run.out;
  EXPECT_LT(declared, 0.5 * ignored) << run.out;
}

}  // namespace
}  // namespace denoc
