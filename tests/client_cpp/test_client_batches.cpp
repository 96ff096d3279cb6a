// What a planner needs from denoc::client against real denocd processes: a payload on the inverse-dynamics,
// forward-dynamics and full-factor batches (equal to the calls without it on a second model whose last link
// carries the payload, merged by hand with the parallel-axis theorem), and the planning calls (Kinematics,
// Derivatives, Rollout) split above the server's --max-states (equal to the same batches against a server
// without the limit; the number of calls read from the limited server's metrics), and a client that kept a
// larger max_states than the server now serving its address (a rolling upgrade): the batch refused with
// RESOURCE_EXHAUSTED naming max_states is split anew after one GetServerInfo, read from that server's
// metrics.
#include <fstream>
#include <thread>

#include "client_support.hpp"
#include "denoc/client/client.hpp"
#include "denoc/denoc.hpp"
#include "server/metrics_scrape.hpp"

namespace denoc {
namespace {

using client::Client;
using test::close;
using test::fromFlat;
using test::ServerProcess;
using test::TempDir;

client::Payload tool() {
  client::Payload p;
  p.mass = 1.3;
  p.com = Eigen::Vector3d(0.03, -0.02, 0.09);
  p.inertia << 0.004, 0.0003, -0.0002, 0.0003, 0.005, 0.0001, -0.0002, 0.0001, 0.003;
  return p;
}

// the DH table with the payload merged into its last link by hand: the combined mass, mass centre and
// inertia about the combined centre (parallel-axis theorem, both bodies in frame n+1, the tip frame)
DHSpec withToolByHand(DHSpec dh) {
  DHLink& last = dh.links.back();
  const client::Payload p = tool();
  const double m = last.mass + p.mass;
  const Eigen::Vector3d c = (last.mass * last.com + p.mass * p.com) / m;
  const auto shift = [](double mass, const Eigen::Vector3d& d) {
    return Eigen::Matrix3d(mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose()));
  };
  last.inertia = last.inertia + shift(last.mass, last.com - c) + p.inertia + shift(p.mass, p.com - c);
  last.mass = m;
  last.com = c;
  dh.name += " with the tool";
  return dh;
}

// a and b differ somewhere by more than 1e-6 relative (the payload changed the answer)
bool differs(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return !close(a, b, 1e-6); }

TEST(ClientBatches, DynamicsBatchesWithAPayloadEqualTheModelWithThePayloadMergedByHand) {
  TempDir dir;
  // a small max_states: the payload must travel with every part of a split batch
  ServerProcess server(dir.str(), dir.str("store"), {"--max-states", "4"});
  Client c(server.address());
  const DHSpec dh = stanfordArmDH();
  const std::string plain = c.registerDH(dh).model_id, heavy = c.registerDH(withToolByHand(dh)).model_id;
  ASSERT_NE(plain, heavy);
  const int n = static_cast<int>(dh.links.size()), count = 9;
  const Eigen::MatrixXd Q = fromFlat(test::randomStates(count, n, 201, 1.5), count, n),
                        Qd = fromFlat(test::randomStates(count, n, 202, 1.0), count, n),
                        Qdd = fromFlat(test::randomStates(count, n, 203, 3.0), count, n),
                        Tau = fromFlat(test::randomStates(count, n, 204, 10.0), count, n);
  const client::Payload p = tool();

  const Eigen::MatrixXd tau = c.inverseDynamics(plain, Q, Qd, Qdd, p).tau;
  EXPECT_TRUE(close(tau, c.inverseDynamics(heavy, Q, Qd, Qdd).tau, 1e-9));
  EXPECT_TRUE(differs(tau, c.inverseDynamics(plain, Q, Qd, Qdd).tau));
  Eigen::MatrixXd W(count, 6);
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < 6; ++j) W(k, j) = 0.2 * (k + 1) - 0.1 * j;
  EXPECT_TRUE(close(c.inverseDynamics(plain, Q, Qd, Qdd, W, p).tau,
                    c.inverseDynamics(heavy, Q, Qd, Qdd, W).tau, 1e-9));
  // one state given as vectors
  const Eigen::VectorXd q0 = Q.row(0).transpose(), qd0 = Qd.row(0).transpose(), qdd0 = Qdd.row(0).transpose();
  EXPECT_TRUE(close(c.inverseDynamics(plain, q0, qd0, qdd0, p).tau,
                    c.inverseDynamics(heavy, q0, qd0, qdd0).tau, 1e-9));

  for (const client::Route route : {client::Route::Saha, client::Route::Fixman, client::Route::Cholesky}) {
    const Eigen::MatrixXd qdd = c.forwardDynamics(plain, Q, Qd, Tau, route, p).qdd;
    EXPECT_TRUE(close(qdd, c.forwardDynamics(heavy, Q, Qd, Tau, route).qdd, 1e-9));
    EXPECT_TRUE(differs(qdd, c.forwardDynamics(plain, Q, Qd, Tau, route).qdd));
  }

  client::FactorFlags all;
  all.convective = all.bias = all.gravity_torque = all.inverse = true;
  const client::FullFactorResult f = c.fullFactor(plain, Q, all, Qd, p),
                                 want = c.fullFactor(heavy, Q, all, Qd),
                                 without = c.fullFactor(plain, Q, all, Qd);
  ASSERT_EQ(f.inertia.size(), static_cast<std::size_t>(count));
  for (std::size_t k = 0; k < f.inertia.size(); ++k) {
    EXPECT_TRUE(close(f.inertia[k], want.inertia[k], 1e-9)) << k;
    EXPECT_TRUE(close(f.u[k], want.u[k], 1e-9)) << k;
    EXPECT_TRUE(close(f.convective[k], want.convective[k], 1e-9)) << k;
    EXPECT_TRUE(close(f.inverse[k], want.inverse[k], 1e-9)) << k;
    EXPECT_TRUE(differs(f.inertia[k], without.inertia[k])) << k;
  }
  EXPECT_TRUE(close(f.d, want.d, 1e-9));
  EXPECT_TRUE(close(f.log_det, want.log_det, 1e-9));
  EXPECT_TRUE(close(f.bias, want.bias, 1e-9));
  EXPECT_TRUE(close(f.gravity_torque, want.gravity_torque, 1e-9));
  EXPECT_TRUE(differs(f.gravity_torque, without.gravity_torque));
  // without Qd (the overload with flags only)
  EXPECT_TRUE(close(c.fullFactor(plain, Q, {}, p).d, c.fullFactor(heavy, Q).d, 1e-9));
}

// the port a denocd wrote to its --metrics-port-file, 0 when it has not within 5 s
int metricsPort(const std::string& port_file) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream f(port_file);
    int port = 0;
    if (f >> port && port > 0) return port;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

double calls(int port, const std::string& rpc, const std::string& code = "OK") {
  return test::metric(test::scrapeMetrics(port),
                      "denoc_requests_total{code=\"" + code + "\",rpc=\"" + rpc + "\"}");
}

// A rollout batch no split can help (a rollout of more steps than max_states): RESOURCE_EXHAUSTED whose
// message holds `says`.
void expectRolloutRefused(Client& c, const std::string& id, const Eigen::MatrixXd& X0,
                          const std::vector<Eigen::MatrixXd>& U, const client::RolloutOptions& o,
                          const std::string& says) {
  try {
    c.rollout(id, X0, U, o);
    ADD_FAILURE() << "a rollout above max_states was answered";
  } catch (const client::Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << e.what();
    EXPECT_NE(e.message().find(says), std::string::npos) << e.message();
  }
}

class ClientSplits : public ::testing::Test {
 protected:
  void SetUp() override {
    limited_ = std::make_unique<ServerProcess>(
        dir_.str(), dir_.str("store-limited"),
        std::vector<std::string>{"--max-states", "10", "--metrics-listen", "127.0.0.1:0",
                                 "--metrics-port-file", dir_.str("metrics.port")},
        "limited");
    whole_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store-whole"), std::vector<std::string>{},
                                             "whole");
    port_ = metricsPort(dir_.str("metrics.port"));
    ASSERT_GT(port_, 0);
    small_ = std::make_unique<Client>(limited_->address());
    big_ = std::make_unique<Client>(whole_->address());
    id_ = small_->registerModelFile(test::kPanda, "", test::kTip).model_id;
    ASSERT_EQ(big_->registerModelFile(test::kPanda, "", test::kTip).model_id, id_);
    ASSERT_EQ(small_->maxStates(), 10u);
    ASSERT_GT(big_->maxStates(), 1000u);
  }
  void expectAll(const std::vector<Eigen::MatrixXd>& got, const std::vector<Eigen::MatrixXd>& want,
                 std::size_t count, const char* what) {
    ASSERT_EQ(got.size(), count) << what;
    ASSERT_EQ(want.size(), count) << what;
    for (std::size_t k = 0; k < count; ++k) EXPECT_TRUE(close(got[k], want[k])) << what << " " << k;
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> limited_, whole_;
  std::unique_ptr<Client> small_, big_;
  int port_ = 0;
  std::string id_;
  const int n_ = 7;
};

TEST_F(ClientSplits, KinematicsAboveMaxStatesIsSplitByStatesAndJoinedInOrder) {
  const int count = 37;  // 10 + 10 + 10 + 7
  const Eigen::MatrixXd Q = fromFlat(test::randomStates(count, n_, 301, 1.5), count, n_),
                        Qd = fromFlat(test::randomStates(count, n_, 302, 1.0), count, n_);
  client::KinematicsOptions o;
  o.link = "panda_link7";
  o.point = Eigen::Vector3d(0.01, 0.02, 0.03);
  o.jacobian = o.jdot_qd = o.lambda = o.all_frames = true;
  o.payload = tool();
  const client::KinematicsResult got = small_->kinematics(id_, Q, o, Qd),
                                 want = big_->kinematics(id_, Q, o, Qd);
  EXPECT_EQ(calls(port_, "Kinematics"), 4);
  EXPECT_EQ(got.model_id, id_);
  EXPECT_EQ(got.gravity, want.gravity);
  const auto k = static_cast<std::size_t>(count);
  std::vector<Eigen::MatrixXd> rg(got.rotation.begin(), got.rotation.end()),
      rw(want.rotation.begin(), want.rotation.end());
  expectAll(rg, rw, k, "rotation");
  EXPECT_TRUE(close(got.origin, want.origin));
  EXPECT_EQ(got.origin.rows(), count);
  expectAll(got.jacobian, want.jacobian, k, "jacobian");
  EXPECT_TRUE(close(got.jdot_qd, want.jdot_qd));
  EXPECT_EQ(got.jdot_qd.rows(), count);
  expectAll(got.lambda, want.lambda, k, "lambda");
  expectAll(got.frame_origins, want.frame_origins, k, "frame_origins");
  ASSERT_EQ(got.frame_rotations.size(), k);
  for (std::size_t s = 0; s < k; ++s) {
    ASSERT_EQ(got.frame_rotations[s].size(), static_cast<std::size_t>(n_ + 1));
    for (std::size_t i = 0; i <= static_cast<std::size_t>(n_); ++i)
      EXPECT_TRUE(close(got.frame_rotations[s][i], want.frame_rotations[s][i])) << s << " " << i;
  }
  // a batch that fits is one call
  small_->kinematics(id_, Q.topRows(10), o, Qd.topRows(10));
  EXPECT_EQ(calls(port_, "Kinematics"), 5);
}

TEST_F(ClientSplits, DerivativesAboveMaxStatesAreSplitByStatesAndJoinedInOrder) {
  const int count = 23;  // 10 + 10 + 3
  const Eigen::MatrixXd Q = fromFlat(test::randomStates(count, n_, 311, 1.5), count, n_),
                        Qd = fromFlat(test::randomStates(count, n_, 312, 1.0), count, n_),
                        X = fromFlat(test::randomStates(count, n_, 313, 5.0), count, n_),
                        W = fromFlat(test::randomStates(count, 6, 314, 2.0), count, 6);
  const auto k = static_cast<std::size_t>(count);
  const client::DerivativesResult id = small_->inverseDynamicsDerivatives(id_, Q, Qd, X, tool(), W),
                                  idw = big_->inverseDynamicsDerivatives(id_, Q, Qd, X, tool(), W);
  EXPECT_EQ(calls(port_, "Derivatives"), 3);
  expectAll(id.dtau_dq, idw.dtau_dq, k, "dtau_dq");
  expectAll(id.dtau_dqd, idw.dtau_dqd, k, "dtau_dqd");
  EXPECT_TRUE(close(id.tau, idw.tau));
  EXPECT_EQ(id.tau.rows(), count);
  EXPECT_TRUE(id.dqdd_dq.empty());
  const client::DerivativesResult fd = small_->forwardDynamicsDerivatives(id_, Q, Qd, X),
                                  fdw = big_->forwardDynamicsDerivatives(id_, Q, Qd, X);
  EXPECT_EQ(calls(port_, "Derivatives"), 6);
  expectAll(fd.dqdd_dq, fdw.dqdd_dq, k, "dqdd_dq");
  expectAll(fd.dqdd_dqd, fdw.dqdd_dqd, k, "dqdd_dqd");
  expectAll(fd.dqdd_dtau, fdw.dqdd_dtau, k, "dqdd_dtau");
  EXPECT_TRUE(close(fd.qdd, fdw.qdd));
  EXPECT_EQ(fd.qdd.rows(), count);
  EXPECT_TRUE(fd.dtau_dq.empty());
  EXPECT_EQ(fd.model_id, id_);
}

TEST_F(ClientSplits, RolloutsAreSplitByFloorOfMaxStatesOverStepsAndJoinedInOrder) {
  const int K = 8, T = 3;  // 10 / 3 = 3 rollouts per call: 3 + 3 + 2
  auto [X0, U, o] = test::randomRollouts(K, T, n_, 321, 330);
  o.payload = tool();
  const client::RolloutResult got = small_->rollout(id_, X0, U, o), want = big_->rollout(id_, X0, U, o);
  EXPECT_EQ(calls(port_, "Rollout"), 3);
  EXPECT_EQ(got.steps, static_cast<std::uint32_t>(T));
  expectAll(got.states, want.states, K, "states");
  ASSERT_EQ(got.A.size(), static_cast<std::size_t>(K));
  ASSERT_EQ(got.B.size(), static_cast<std::size_t>(K));
  for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
    expectAll(got.A[k], want.A[k], T, "A");
    expectAll(got.B[k], want.B[k], T, "B");
  }

  // a shared control sequence goes whole to every part
  const std::vector<Eigen::MatrixXd> shared = {U[0]};
  o.linearize = false;
  const client::RolloutResult gs = small_->rollout(id_, X0, shared, o),
                              ws = big_->rollout(id_, X0, shared, o);
  EXPECT_EQ(calls(port_, "Rollout"), 6);
  expectAll(gs.states, ws.states, K, "shared states");
  EXPECT_TRUE(gs.A.empty());

  // one rollout of more than max_states steps is sent as it is: the server refuses it with its message
  o.steps = 11;
  const std::vector<Eigen::MatrixXd> U11 = test::randomRollouts(2, 11, n_, 0, 340, 1.0).U;
  expectRolloutRefused(*small_, id_, X0.topRows(2), U11, o, "max_states");
  EXPECT_EQ(calls(port_, "Rollout", "RESOURCE_EXHAUSTED"), 1);
  EXPECT_EQ(calls(port_, "Rollout"), 6);
}

// ------------------------------------------------------------ a replica with a smaller max_states

// One address served by one denocd after another (the same port and store, each killed before the next
// starts), the client kept across them, as during a rolling upgrade; the calls read from the metrics of the
// server now serving.
class ClientLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    serve("100000");
    address_ = server_->address();
    client_ = std::make_unique<Client>(address_);
    id_ = client_->registerModelFile(test::kPanda, "", test::kTip).model_id;
  }
  // a denocd with this --max-states in place of the one serving (on a port of its own the first time)
  void serve(const std::string& max_states) {
    server_.reset();
    const std::string tag = "server" + std::to_string(++starts_);
    std::vector<std::string> args = {"--max-states",        max_states,
                                     "--metrics-listen",    "127.0.0.1:0",
                                     "--metrics-port-file", dir_.str(tag + ".metrics")};
    if (!address_.empty()) args.insert(args.end(), {"--listen", address_});
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"), args, tag);
    port_ = metricsPort(dir_.str(tag + ".metrics"));
    ASSERT_GT(port_, 0);
  }
  // the client keeps max_states = 100000 from a batched call (after a retarget, which forgets a limit kept
  // before), then a denocd with --max-states 7 serves
  void keepLargeLimitThenServeSeven() {
    serve("100000");
    client_->retarget(address_);
    const Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(2, n_);
    client_->inverseDynamics(id_, Q, Q, Q);
    ASSERT_EQ(client_->maxStates(), 100000u);
    serve("7");
  }
  double calls(const std::string& rpc, const std::string& code = "OK") const {
    return ::denoc::calls(port_, rpc, code);
  }
  // 50 random states of the Panda (Q_, Qd_, Qdd_) from seed, seed + 1 and seed + 2
  void fiftyStates(unsigned seed) {
    Q_ = fromFlat(test::randomStates(50, n_, seed, 1.5), 50, n_);
    Qd_ = fromFlat(test::randomStates(50, n_, seed + 1, 1.0), 50, n_);
    Qdd_ = fromFlat(test::randomStates(50, n_, seed + 2, 3.0), 50, n_);
  }
  // a batch call sent whole and refused, one GetServerInfo, then `parts` calls within max_states = 7
  void expectRefusedOnceThenSplit(const std::string& rpc, double parts) {
    EXPECT_EQ(calls(rpc, "RESOURCE_EXHAUSTED"), 1);
    EXPECT_EQ(calls("GetServerInfo"), 1);
    EXPECT_EQ(calls(rpc), parts);
    EXPECT_EQ(client_->maxStates(), 7u);
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::string address_;
  std::unique_ptr<Client> client_;
  std::string id_;
  int port_ = 0, starts_ = 0;
  const int n_ = 7;
  Eigen::MatrixXd Q_, Qd_, Qdd_;
};

TEST_F(ClientLimits, ADynamicsBatchRefusedForMaxStatesIsSplitByTheLimitReadAgainOnce) {
  keepLargeLimitThenServeSeven();
  fiftyStates(401);
  const Eigen::MatrixXd &Q = Q_, &Qd = Qd_, &Qdd = Qdd_;
  const int count = 50;
  const Eigen::MatrixXd tau = client_->inverseDynamics(id_, Q, Qd, Qdd).tau;
  expectRefusedOnceThenSplit("InverseDynamics", 8);  // 7, 7, ..., 7, 1 states
  const Model model = test::pandaModel();
  Data data(model);
  ASSERT_EQ(tau.rows(), count);
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd want =
        inverseDynamics(model, data, Q.row(k).transpose(), Qd.row(k).transpose(), Qdd.row(k).transpose());
    EXPECT_TRUE(close(tau.row(k), want.transpose(), 1e-9)) << "state " << k;
  }

  // RESOURCE_EXHAUSTED naming a limit the client does not keep (65 wrenches, max_wrenches): thrown as it is
  // from the first part, the limits not read again
  const std::vector<client::LinkWrench> wrenches(
      65, client::LinkWrench("panda_link7", Eigen::MatrixXd::Zero(1, 6)));
  try {
    client_->inverseDynamics(id_, Q, Qd, Qdd, wrenches);
    ADD_FAILURE() << "65 wrenches were taken";
  } catch (const client::Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << e.what();
    EXPECT_NE(e.message().find("max_wrenches"), std::string::npos) << e.message();
    EXPECT_FALSE(client::namesCachedLimit(e)) << e.message();
  }
  EXPECT_EQ(calls("InverseDynamics", "RESOURCE_EXHAUSTED"), 2);
  EXPECT_EQ(calls("GetServerInfo"), 1);
}

TEST_F(ClientLimits, DerivativesAndRolloutsAreSplitAnewAndARolloutAboveTheLimitFailsAfterOneReRead) {
  keepLargeLimitThenServeSeven();
  fiftyStates(411);
  const Eigen::MatrixXd &Q = Q_, &Qd = Qd_, &Qdd = Qdd_;
  const int count = 50;
  const client::DerivativesResult d = client_->inverseDynamicsDerivatives(id_, Q, Qd, Qdd);
  expectRefusedOnceThenSplit("Derivatives", 8);
  ASSERT_EQ(d.dtau_dq.size(), static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {  // the same states one by one
    const client::DerivativesResult one = client_->inverseDynamicsDerivatives(
        id_, Q.middleRows(k, 1), Qd.middleRows(k, 1), Qdd.middleRows(k, 1));
    const auto s = static_cast<std::size_t>(k);
    EXPECT_TRUE(close(d.dtau_dq[s], one.dtau_dq[0])) << k;
    EXPECT_TRUE(close(d.dtau_dqd[s], one.dtau_dqd[0])) << k;
    EXPECT_TRUE(close(d.tau.row(k), one.tau)) << k;
  }

  keepLargeLimitThenServeSeven();
  const int K = 20, T = 3;  // 60 states; 7 / 3 = 2 rollouts per call: 10 calls
  auto [X0, U, o] = test::randomRollouts(K, T, n_, 421, 430);
  const client::RolloutResult r = client_->rollout(id_, X0, U, o);
  expectRefusedOnceThenSplit("Rollout", 10);
  ASSERT_EQ(r.states.size(), static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const client::RolloutResult one =
        client_->rollout(id_, X0.middleRows(k, 1), {U[static_cast<std::size_t>(k)]}, o);
    const auto s = static_cast<std::size_t>(k);
    EXPECT_TRUE(close(r.states[s], one.states[0])) << k;
    ASSERT_EQ(r.A[s].size(), static_cast<std::size_t>(T));
    for (std::size_t t = 0; t < static_cast<std::size_t>(T); ++t) {
      EXPECT_TRUE(close(r.A[s][t], one.A[0][t])) << k << " " << t;
      EXPECT_TRUE(close(r.B[s][t], one.B[0][t])) << k << " " << t;
    }
  }

  // two rollouts of 11 steps: no split fits 7 states. Kept 100000: sent whole, refused, one re-read, sent
  // again (split by 7: still whole), refused, thrown
  keepLargeLimitThenServeSeven();
  o.steps = 11;
  o.linearize = false;
  const std::vector<Eigen::MatrixXd> U11 = test::randomRollouts(2, 11, n_, 0, 450, 1.0).U;
  expectRolloutRefused(*client_, id_, X0.topRows(2), U11, o, "max_states = 7");
  EXPECT_EQ(calls("Rollout", "RESOURCE_EXHAUSTED"), 2);
  EXPECT_EQ(calls("GetServerInfo"), 1);
  // kept 7: refused, one re-read (7 again), thrown without sending again
  expectRolloutRefused(*client_, id_, X0.topRows(2), U11, o, "max_states = 7");
  EXPECT_EQ(calls("Rollout", "RESOURCE_EXHAUSTED"), 3);
  EXPECT_EQ(calls("GetServerInfo"), 2);
  EXPECT_EQ(calls("Rollout"), 0);
}

}  // namespace
}  // namespace denoc
