// Per-principal shares against real denocd processes on 127.0.0.1, with two (or three) bearer tokens: one
// principal cannot take all of the server's streams, states in flight or compute queue; what it cannot take
// the others still get, answered correctly (the core in this process is the oracle); every refusal names
// its bound. Counts are asserted, never times.
#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "metrics_scrape.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

std::unique_ptr<grpc::ClientContext> as(const std::string& token, std::chrono::milliseconds t = 60s) {
  auto ctx = context(t);
  ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

class Shares : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir.str("tokens")) << "alice token-a\nbob token-b\ncarol token-c\n"; }
  std::vector<std::string> args(std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--token-file", dir.str("tokens"), "--metrics-listen", "127.0.0.1:0",
                               "--metrics-port-file", dir.str("metrics-port")});
    return extra;
  }
  int metricsPort() const {
    std::ifstream f(dir.str("metrics-port"));
    int port = 0;
    f >> port;
    return port;
  }
  TempDir dir;
};

std::string registerDH(v1::Dynamics::Stub& stub, const DHSpec& dh) {
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(as("token-a").get(), dhRequest(dh), &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r.model_id();
}

v1::InverseDynamicsRequest idRequest(const std::string& id, int n, int count, unsigned seed) {
  v1::InverseDynamicsRequest r;
  r.set_model_id(id);
  r.set_count(static_cast<std::uint32_t>(count));
  r.set_dof(static_cast<std::uint32_t>(n));
  for (double v : randomStates(count, n, seed)) r.add_q(v);
  for (double v : randomStates(count, n, seed + 1)) r.add_qd(v);
  for (double v : randomStates(count, n, seed + 2)) r.add_qdd(v);
  return r;
}

void expectAnswer(const grpc::Status& s, const v1::InverseDynamicsRequest& req,
                  const v1::InverseDynamicsResponse& resp, const Model& m, const std::string& what) {
  ASSERT_TRUE(s.ok()) << what << ": " << s.error_message();
  expectCloseField(resp.tau(),
                   coreID(m, {req.q().begin(), req.q().end()}, {req.qd().begin(), req.qd().end()},
                          {req.qdd().begin(), req.qdd().end()}),
                   what);
}

/// A million states of Fixman forward dynamics on the Stanford arm: seconds of work on one compute thread.
v1::ForwardDynamicsRequest bigBatch(const std::string& id) {
  v1::ForwardDynamicsRequest big;
  big.set_model_id(id);
  big.set_count(1000000);
  big.set_dof(6);
  big.set_route(v1::FORWARD_ROUTE_FIXMAN);
  big.mutable_q()->Resize(6000000, 0.3);
  big.mutable_qd()->Resize(6000000, 0.1);
  big.mutable_tau()->Resize(6000000, 1.0);
  return big;
}

TEST_F(Shares, StreamsOneTokenCannotOpenMoreThanItsShare) {
  ServerProcess server(dir.str(), dir.str("store"), args({"--max-streams", "4"}));  // a share of 2 each
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(3, 5));
  struct Open {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> rw;
  };
  // a stream is admitted when it starts; a refused one ends at once with its status
  auto open = [&](const std::string& token) {
    Open o{as(token), nullptr};
    o.rw = stub->Stream(o.ctx.get());
    v1::StreamRequest q;
    q.set_computation(v1::COMPUTATION_ECHO);
    o.rw->Write(q);
    v1::StreamResponse a;
    const bool ok = o.rw->Read(&a);
    return std::make_pair(std::move(o), ok);
  };
  auto refusal = [](Open& o) {
    const grpc::Status st = o.rw->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
    return st.error_message();
  };
  auto [a1, ok_a1] = open("token-a");
  auto [a2, ok_a2] = open("token-a");
  ASSERT_TRUE(ok_a1 && ok_a2);
  auto [a3, ok_a3] = open("token-a");
  ASSERT_FALSE(ok_a3);
  const std::string alice = refusal(a3);
  EXPECT_NE(alice.find("principal 'alice'"), std::string::npos) << alice;
  EXPECT_NE(alice.find("--principal-streams"), std::string::npos) << alice;
  // bob gets the rest
  auto [b1, ok_b1] = open("token-b");
  auto [b2, ok_b2] = open("token-b");
  EXPECT_TRUE(ok_b1 && ok_b2) << server.log();
  // and now the server is full for carol too
  auto [c1, ok_c1] = open("token-c");
  ASSERT_FALSE(ok_c1);
  EXPECT_NE(refusal(c1).find("--max-streams"), std::string::npos);
  for (Open* o : {&a1, &a2, &b1, &b2}) {
    o->rw->WritesDone();
    EXPECT_TRUE(o->rw->Finish().ok());
  }
}

TEST_F(Shares, StatesInFlightOneTokensBigBatchLeavesRoomForAnother) {
  // 1.5 million states in flight in all, at most 1 million (one request of --max-states) per principal
  ServerProcess server(dir.str(), dir.str("store"),
                       args({"--max-states", "1000000", "--max-inflight-states", "1500000",
                             "--max-message-bytes", "200000000", "--compute-threads", "2"}));
  const int port = metricsPort();
  auto stub = server.unlimitedStub();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*stub, stanfordArmDH());
  const auto big = bigBatch(id);
  grpc::ClientContext big_ctx;
  big_ctx.AddMetadata("authorization", "Bearer token-a");
  big_ctx.set_deadline(std::chrono::system_clock::now() + 120s);
  auto pending = std::async(std::launch::async, [&] {
    v1::ForwardDynamicsResponse r;
    return stub->ForwardDynamics(&big_ctx, big, &r);
  });
  ASSERT_TRUE(eventually([&] {
    return metric(scrapeMetrics(port), "denoc_states_in_flight") == 1000000 ||
           pending.wait_for(0s) == std::future_status::ready;
  }));
  ASSERT_NE(pending.wait_for(0s), std::future_status::ready) << pending.get().error_message();
  // alice's next state is over her share
  const auto small = idRequest(id, m.n, 3, 11);
  v1::InverseDynamicsResponse r;
  const grpc::Status alice = stub->InverseDynamics(as("token-a").get(), small, &r);
  EXPECT_EQ(alice.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(alice.error_message().find("principal 'alice'"), std::string::npos) << alice.error_message();
  EXPECT_NE(alice.error_message().find("--principal-inflight-states"), std::string::npos)
      << alice.error_message();
  // bob's is answered, correctly
  const grpc::Status bob = stub->InverseDynamics(as("token-b").get(), small, &r);
  expectAnswer(bob, small, r, m, "bob beside alice's batch");
  big_ctx.TryCancel();
  EXPECT_EQ(pending.get().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(eventually([&] { return metric(scrapeMetrics(port), "denoc_states_in_flight") == 0; }));
}

TEST_F(Shares, ComputeQueueOneTokenCannotFillIt) {
  // one compute thread, held by alice's big batch; 4 calls may wait, 2 of them one principal's
  ServerProcess server(
      dir.str(), dir.str("store"),
      args({"--max-states", "1000000", "--max-inflight-states", "2000000", "--max-message-bytes", "200000000",
            "--compute-threads", "1", "--compute-queue", "4"}));
  const int port = metricsPort();
  auto stub = server.unlimitedStub();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*stub, stanfordArmDH());
  const auto big = bigBatch(id);
  grpc::ClientContext big_ctx;
  big_ctx.AddMetadata("authorization", "Bearer token-a");
  big_ctx.set_deadline(std::chrono::system_clock::now() + 120s);
  auto pending = std::async(std::launch::async, [&] {
    v1::ForwardDynamicsResponse r;
    return stub->ForwardDynamics(&big_ctx, big, &r);
  });
  ASSERT_TRUE(eventually([&] { return metric(scrapeMetrics(port), "denoc_states_in_flight") == 1000000; }));
  const auto small = idRequest(id, m.n, 2, 21);
  struct Call {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::future<std::pair<grpc::Status, v1::InverseDynamicsResponse>> result;
  };
  auto call = [&](const std::string& token) {
    Call c{as(token), {}};
    grpc::ClientContext* ctx = c.ctx.get();
    c.result = std::async(std::launch::async, [&, ctx] {
      v1::InverseDynamicsResponse r;
      const grpc::Status s = stub->InverseDynamics(ctx, small, &r);
      return std::make_pair(s, r);
    });
    return c;
  };
  // three of alice's calls wait for the thread: one is over her share of the queue
  std::vector<Call> alice;
  for (int i = 0; i < 3; ++i) alice.push_back(call("token-a"));
  std::vector<std::pair<grpc::Status, v1::InverseDynamicsResponse>> alice_done;
  ASSERT_TRUE(eventually([&] {
    for (auto& c : alice) {
      if (c.result.valid() && c.result.wait_for(0s) == std::future_status::ready)
        alice_done.push_back(c.result.get());
    }
    return !alice_done.empty();
  }));
  ASSERT_EQ(alice_done.size(), 1u);
  EXPECT_EQ(alice_done[0].first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(alice_done[0].first.error_message().find("--principal-queue"), std::string::npos)
      << alice_done[0].first.error_message();
  // bob and carol: three calls for the queue's last two places: one refused, naming the queue
  std::vector<Call> others;
  others.push_back(call("token-b"));
  others.push_back(call("token-b"));
  others.push_back(call("token-c"));
  std::vector<std::pair<grpc::Status, v1::InverseDynamicsResponse>> others_done;
  ASSERT_TRUE(eventually([&] {
    for (auto& c : others) {
      if (c.result.valid() && c.result.wait_for(0s) == std::future_status::ready)
        others_done.push_back(c.result.get());
    }
    return !others_done.empty();
  }));
  ASSERT_EQ(others_done.size(), 1u);
  EXPECT_EQ(others_done[0].first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(others_done[0].first.error_message().find("--compute-queue"), std::string::npos)
      << others_done[0].first.error_message();
  // the batch goes: the four that waited are answered, correctly
  big_ctx.TryCancel();
  EXPECT_EQ(pending.get().error_code(), grpc::StatusCode::CANCELLED);
  int answered = 0;
  for (auto* list : {&alice, &others}) {
    for (auto& c : *list) {
      if (!c.result.valid()) continue;
      auto [s, r] = c.result.get();
      expectAnswer(s, small, r, m, "a call that waited");
      ++answered;
    }
  }
  EXPECT_EQ(answered, 4);
}

}  // namespace
}  // namespace denoc::test
