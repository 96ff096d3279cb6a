// The L7 balancer (deploy/nginx/balancer.conf) for robots outside the cluster, with real processes: three
// denocd replicas sharing one store, each on a unix socket behind its own front (deploy/nginx/denoc.conf),
// and the balancer (Debian's nginx, run by deploy/nginx/front.sh) passing each call to one front in turn over
// mutual TLS with its own certificate. Checks that one robot's calls on one connection spread over the
// replicas (counted in the fronts' access logs), that answers are the core's, that the replicas see the robot
// as the caller (its certificate subject, not the balancer's; a robot cannot pass itself off as another
// through the balancer, nor name another caller to a replica's front directly), and that a replica added to
// the balancer's configuration gets calls after nginx's reload while a client calls without a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "fleet_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

constexpr const char* kRobot = "CN=denoc test client";  // tls_material.hpp's client certificate
constexpr int kReplicas = BalancedFleet::kReplicas;

class Balancer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // the balancer, first over replicas 0 and 1 (AReplicaAddedGetsCallsAfterTheReload adds the third)
    fleet_ = new BalancedFleet(2);
    tls_ = &fleet_->tls();
    robot_ = frontChannel(fleet_->balancerPort(), tls_->ca, tls_->client_cert, tls_->client_key);
    ASSERT_TRUE(connects(robot_, 30s)) << fleet_->balancer().log();
  }
  static void TearDownTestSuite() {
    robot_.reset();
    delete fleet_;
  }

  /// The calls each replica's front has passed on so far.
  static std::array<int, kReplicas> perReplica() { return fleet_->perReplica(); }

  static v1::InverseDynamicsRequest idRequest(const std::string& id, int n, unsigned seed) {
    v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(1);
    req.set_dof(static_cast<std::uint32_t>(n));
    const auto q = randomStates(1, n, seed), qd = randomStates(1, n, seed + 1),
               qdd = randomStates(1, n, seed + 2);
    *req.mutable_q() = {q.begin(), q.end()};
    *req.mutable_qd() = {qd.begin(), qd.end()};
    *req.mutable_qdd() = {qdd.begin(), qdd.end()};
    return req;
  }

  /// The status of a Stream opened through `channel` after another of the same caller is open on the same
  /// replica: with --principal-streams 1 each replica admits one Stream per principal. Opens streams until
  /// one is refused (at most kReplicas + 1: by then two have reached one replica) and returns its message.
  static std::string streamRefusal(const std::shared_ptr<grpc::Channel>& channel,
                                   const std::vector<std::pair<std::string, std::string>>& md = {}) {
    auto stub = v1::Dynamics::NewStub(channel);
    struct Open {
      grpc::ClientContext ctx;
      std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> rw;
    };
    std::vector<std::unique_ptr<Open>> open;
    std::string refusal;
    for (int k = 0; k <= kReplicas && refusal.empty(); ++k) {
      auto s = std::make_unique<Open>();
      s->ctx.set_deadline(std::chrono::system_clock::now() + 60s);
      for (const auto& [key, value] : md) s->ctx.AddMetadata(key, value);
      s->rw = stub->Stream(&s->ctx);
      v1::StreamRequest echo;
      echo.set_computation(v1::COMPUTATION_ECHO);
      v1::StreamResponse resp;
      if (s->rw->Write(echo) && s->rw->Read(&resp)) {
        open.push_back(std::move(s));
        continue;
      }
      s->rw->WritesDone();
      const grpc::Status st = s->rw->Finish();
      EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
      refusal = st.error_message();
    }
    for (auto& s : open) {
      s->rw->WritesDone();
      EXPECT_TRUE(s->rw->Finish().ok());
    }
    return refusal;
  }

  static BalancedFleet* fleet_;
  static const TlsMaterial* tls_;
  static std::shared_ptr<grpc::Channel> robot_;
};

BalancedFleet* Balancer::fleet_ = nullptr;
const TlsMaterial* Balancer::tls_ = nullptr;
std::shared_ptr<grpc::Channel> Balancer::robot_;

TEST_F(Balancer, OneConnectionsCallsSpreadOverTheReplicasWithTheCoresAnswers) {
  auto stub = v1::Dynamics::NewStub(robot_);
  const DHSpec dh = randomChain(6, 51);
  const Model m = buildModelFromDH(dh);
  v1::RegisterModelResponse reg;
  ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(dh), &reg).ok());
  const auto before = fleet_->settledPerReplica();
  constexpr int kCalls = 200;
  for (int k = 0; k < kCalls; ++k) {
    const v1::InverseDynamicsRequest req = idRequest(reg.model_id(), m.n, 300 + 3 * k);
    v1::InverseDynamicsResponse resp;
    const grpc::Status st = stub->InverseDynamics(context().get(), req, &resp);
    ASSERT_TRUE(st.ok()) << "call " << k << ": " << st.error_message();
    expectCloseField(resp.tau(),
                     coreID(m, {req.q().begin(), req.q().end()}, {req.qd().begin(), req.qd().end()},
                            {req.qdd().begin(), req.qdd().end()}),
                     "tau through the balancer");
  }
  const auto settled = fleet_->settledPerReplica();
  const int on0 = settled[0] - before[0], on1 = settled[1] - before[1], on2 = settled[2] - before[2];
  std::printf(
      "one connection's %d calls through the balancer: %d on replica 0, %d on replica 1, %d on replica 2 "
      "(not in the balancer's configuration)\n",
      kCalls, on0, on1, on2);
  EXPECT_EQ(on0 + on1, kCalls);
  EXPECT_GE(on0, kCalls / 3);  // round robin per call: about half each
  EXPECT_GE(on1, kCalls / 3);
  EXPECT_EQ(on2, 0);
}

TEST_F(Balancer, TheReplicasSeeTheRobotAsTheCaller) {
  // the replicas name the robot's certificate subject, not the balancer's
  const std::string message = streamRefusal(robot_);
  ASSERT_FALSE(message.empty()) << "no Stream was refused";
  EXPECT_NE(message.find(std::string("principal 'cert:") + kRobot + "'"), std::string::npos) << message;
  EXPECT_EQ(message.find("denoc-balancer"), std::string::npos) << message;
  // a robot cannot name another caller through the balancer: its own headers of those names are overwritten
  const std::vector<std::pair<std::string, std::string>> forged = {
      {"x-denoc-client-verify", "SUCCESS"},
      {"x-denoc-client-subject", "CN=someone else"},
      {"x-denoc-client-addr", "192.0.2.7"}};
  const std::string through = streamRefusal(robot_, forged);
  EXPECT_NE(through.find(std::string("principal 'cert:") + kRobot + "'"), std::string::npos) << through;
  EXPECT_EQ(through.find("someone else"), std::string::npos) << through;
  // nor directly at a replica's front: only the balancer's certificate may name the caller there
  const std::string direct = streamRefusal(
      frontChannel(fleet_->frontPort(0), tls_->ca, tls_->client_cert, tls_->client_key), forged);
  EXPECT_NE(direct.find(std::string("principal 'cert:") + kRobot + "'"), std::string::npos) << direct;
  // while the balancer's certificate does name the caller at a replica's front
  const std::string relayed = streamRefusal(
      frontChannel(fleet_->frontPort(0), tls_->ca, tls_->balancer_cert, tls_->balancer_key), forged);
  EXPECT_NE(relayed.find("principal 'cert:CN=someone else'"), std::string::npos) << relayed;
}

TEST_F(Balancer, AReplicaAddedGetsCallsAfterTheReload) {
  auto stub = v1::Dynamics::NewStub(robot_);
  const DHSpec dh = randomChain(5, 52);
  const Model m = buildModelFromDH(dh);
  v1::RegisterModelResponse reg;
  ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(dh), &reg).ok());
  // a client calls throughout (one call every 5 ms)
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, failed{0};
  std::thread client([&] {
    for (int k = 0; !stop; ++k) {
      const v1::InverseDynamicsRequest req = idRequest(reg.model_id(), m.n, 900 + 3 * k);
      v1::InverseDynamicsResponse resp;
      const grpc::Status st = stub->InverseDynamics(context().get(), req, &resp);
      ++calls;
      if (!st.ok()) ++failed;
      std::this_thread::sleep_for(5ms);
    }
  });
  std::this_thread::sleep_for(500ms);
  const int on2_before = perReplica()[2];
  // scale from two replicas to three: the balancer's configuration names the third, nginx reloads (in a
  // cluster front.sh does it when the headless Service's addresses change; here its SIGHUP)
  const auto added = fleet_->scaleBalancer(fleet_->balancer(), "balancer", fleet_->balancerPort(), 3);
  const double first_call = fleet_->secondsUntilCalled(2, on2_before, added, 30s);
  std::this_thread::sleep_for(1s);
  stop = true;
  client.join();
  ASSERT_GE(first_call, 0) << "the added replica got no call within 30 s\n" << fleet_->balancer().log();
  std::printf(
      "replica added to the balancer: its first call %.2f s after the reload; %d calls meanwhile, %d "
      "failed\n",
      first_call, calls.load(), failed.load());
  EXPECT_EQ(failed.load(), 0) << "of " << calls.load();
  EXPECT_TRUE(fleet_->balancer().alive()) << fleet_->balancer().log();
}

}  // namespace
}  // namespace denoc::test
