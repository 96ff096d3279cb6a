// Streams that pin nothing, against real denocd processes on 127.0.0.1: idle Stream calls and Simulate
// calls whose client reads nothing, more of them than the old synchronous server had threads, while a
// well-behaved client's calls are answered (checked against the core) and health stays SERVING; the idle
// and write-stall time limits ending such calls and giving their slots back; a simulation computing one
// message ahead of its reader, no more. Counts and sizes are asserted, never times.
#include <gtest/gtest.h>

#include <future>

#include "grpc/health/v1/health.grpc.pb.h"
#include "metrics_scrape.hpp"
#include "proc_probe.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

std::vector<std::string> withMetrics(const TempDir& dir, std::vector<std::string> extra) {
  extra.insert(extra.end(),
               {"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir.str("metrics-port")});
  return extra;
}

int metricsPort(const TempDir& dir) {
  std::ifstream f(dir.str("metrics-port"));
  int port = 0;
  f >> port;
  return port;
}

double inFlight(int port, const char* rpc) {
  return metric(scrapeMetrics(port), std::string("denoc_calls_in_flight{rpc=\"") + rpc + "\"}");
}

std::string registerDH(v1::Dynamics::Stub& stub, const DHSpec& dh) {
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(context().get(), dhRequest(dh), &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r.model_id();
}

grpc::health::v1::HealthCheckResponse::ServingStatus health(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::health::v1::HealthCheckResponse r;
  const grpc::Status s = grpc::health::v1::Health::NewStub(channel)->Check(context(5s).get(), {}, &r);
  return s.ok() ? r.status() : grpc::health::v1::HealthCheckResponse::UNKNOWN;
}

v1::StreamRequest streamID(const std::string& id, int n, std::uint64_t seq) {
  v1::StreamRequest q;
  q.set_model_id(id);
  q.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
  q.set_sequence(seq);
  for (int j = 0; j < n; ++j) q.add_q(0.1 * j), q.add_qd(0.2), q.add_qdd(-0.1);
  return q;
}

/// A simulation of `samples` samples at 1 ms of a model of n joints, `batch` samples per message.
v1::SimulateRequest longSimulation(const std::string& id, int n, int samples, int batch) {
  v1::SimulateRequest q;
  q.set_model_id(id);
  q.set_dof(static_cast<std::uint32_t>(n));
  for (int j = 0; j < n; ++j) q.add_q0(0.2), q.add_qd0(0.0);
  q.set_integrator(v1::INTEGRATOR_RK4);
  q.set_step(1e-3);
  q.set_dt_out(1e-3);
  q.set_t_end(1e-3 * (samples - 1));
  q.set_batch_size(static_cast<std::uint32_t>(batch));
  return q;
}

/// A well-behaved client's inverse dynamics of 3 states, checked against the core.
void expectGoodAnswer(v1::Dynamics::Stub& stub, const std::string& id, const Model& m, unsigned seed) {
  const auto q = randomStates(3, m.n, seed), qd = randomStates(3, m.n, seed + 1),
             qdd = randomStates(3, m.n, seed + 2);
  v1::InverseDynamicsRequest req;
  req.set_model_id(id);
  req.set_count(3);
  req.set_dof(static_cast<std::uint32_t>(m.n));
  for (std::size_t i = 0; i < q.size(); ++i) req.add_q(q[i]), req.add_qd(qd[i]), req.add_qdd(qdd[i]);
  v1::InverseDynamicsResponse resp;
  const grpc::Status s = stub.InverseDynamics(context(10s).get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  expectCloseField(resp.tau(), coreID(m, q, qd, qdd), "tau beside the pinned streams");
}

struct OpenStream {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> rw;
};

TEST(ServerStreams, IdleStreamsAndStalledSimulationsAboveTheOldThreadCountPinNothing) {
  // 40 Stream calls that send nothing and 10 Simulate calls whose client reads nothing: 50 calls waiting on
  // their clients, more than the 32 threads the synchronous server had (each such call held one)
  constexpr int kIdle = 40, kStalled = 10;
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, {"--max-streams", "128", "--principal-streams", "128"}));
  const int port = metricsPort(dir);
  auto stub = server.stub();
  const DHSpec dh = randomChain(6, 71);
  const Model m = buildModelFromDH(dh);
  const std::string id = registerDH(*stub, dh);
  const long threads_before = threadCount(server.pid());
  // each on its own channel, so that no client-side limit of one connection gets in the way
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<OpenStream> idle;
  for (int i = 0; i < kIdle; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("denoc.test.channel", i);  // distinct channels, not a shared subchannel
    channels.push_back(grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args));
    OpenStream s{context(60s), nullptr};
    s.rw = v1::Dynamics::NewStub(channels.back())->Stream(s.ctx.get());
    idle.push_back(std::move(s));
  }
  // the stalled ones on a raw HTTP/2 connection that grants no flow-control window: the server cannot send
  // a byte of their answers
  BackgroundProbe stalled(
      "stall", server.port(),
      {"--model", id, "--dof", std::to_string(m.n), "--calls", std::to_string(kStalled), "--hold", "60"},
      dir.str("stall.out"));
  ASSERT_TRUE(eventually([&] {
    return inFlight(port, "Stream") == kIdle && inFlight(port, "Simulate") == kStalled;
  })) << "Stream "
      << inFlight(port, "Stream") << ", Simulate " << inFlight(port, "Simulate") << "\n"
      << server.log();
  // the well-behaved client: unary calls, a stream round trip, health
  for (unsigned k = 0; k < 20; ++k) expectGoodAnswer(*stub, id, m, 100 + 3 * k);
  {
    auto ctx = context(10s);
    auto rw = stub->Stream(ctx.get());
    for (std::uint64_t k = 0; k < 5; ++k) {
      ASSERT_TRUE(rw->Write(streamID(id, m.n, k)));
      v1::StreamResponse a;
      ASSERT_TRUE(rw->Read(&a));
      EXPECT_EQ(a.sequence(), k);
      EXPECT_EQ(a.result_size(), m.n);
    }
    rw->WritesDone();
    EXPECT_TRUE(rw->Finish().ok());
  }
  EXPECT_EQ(health(server.channel()), grpc::health::v1::HealthCheckResponse::SERVING);
  // no thread per waiting call: the server's threads did not grow with the 50 calls
  const long threads_after = threadCount(server.pid());
  std::printf("[ figures  ] denocd threads: %ld before, %ld with %d idle and %d stalled calls\n",
              threads_before, threads_after, kIdle, kStalled);
  EXPECT_LT(threads_after, threads_before + 8);
  EXPECT_EQ(inFlight(port, "Stream"), kIdle);
  EXPECT_EQ(inFlight(port, "Simulate"), kStalled);
  EXPECT_TRUE(eventually([&] { return stalled.output().find("stalled") != std::string::npos; }));
  stalled.stop();
  for (auto& s : idle) s.ctx->TryCancel();
  EXPECT_TRUE(eventually([&] { return inFlight(port, "Stream") == 0 && inFlight(port, "Simulate") == 0; }));
}

TEST(ServerStreams, WriteStallTimeoutCancelsAReaderThatReadsNothingAndNothingPilesUp) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, {"--write-stall-timeout-ms", "400", "--max-streams", "2",
                                         "--principal-streams", "2"}));
  const int port = metricsPort(dir);
  auto stub = server.stub();
  // 20 joints and 100,000 samples: the whole run would be 35 MB of answers; it may compute one message
  // (2000 samples, 0.7 MB) beyond what the reader's window holds, no more
  const DHSpec dh = randomChain(20, 73);
  const std::string id = registerDH(*stub, dh);
  const long rss_before = rssKiB(server.pid());
  {
    auto ctx = context(60s);
    auto reader = stub->Simulate(ctx.get(), longSimulation(id, 20, 100000, 2000));
    ASSERT_TRUE(eventually([&] { return inFlight(port, "Simulate") == 1; }));
    // the server cancels it: the call leaves, its stream slot comes back
    ASSERT_TRUE(eventually([&] { return inFlight(port, "Simulate") == 0; })) << server.log();
    v1::SimulateResponse r;
    std::uint64_t samples = 0;
    while (reader->Read(&r)) samples += r.count();
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_LT(samples, 100000u);
  }
  const std::string log = server.log();
  EXPECT_NE(log.find("the client read nothing for 400 ms: the call was cancelled (--write-stall-timeout-ms"),
            std::string::npos)
      << log;
  // what the run had computed when cancelled: a few messages (the reader's flow-control window), not the run
  const long rss_after = rssKiB(server.pid());
  std::printf("[ figures  ] server RSS %ld -> %ld KiB around a stalled 35 MB simulation\n", rss_before,
              rss_after);
  if (kResidentSizeBounded) EXPECT_LT(rss_after - rss_before, 20 * 1024);
  const auto m = scrapeMetrics(port);
  const double computed = metric(m, "denoc_states_total{rpc=\"Simulate\"}");
  std::printf("[ figures  ] samples computed before the cancellation: %.0f of 100000\n", computed);
  EXPECT_LT(computed, 100000);
  EXPECT_GT(computed, 0);
  EXPECT_EQ(metric(m, "denoc_requests_total{code=\"CANCELLED\",rpc=\"Simulate\"}"), 1);
  // both slots free again
  for (int i = 0; i < 2; ++i) {
    auto ctx = context(10s);
    auto reader = stub->Simulate(ctx.get(), longSimulation(id, 20, 11, 64));
    v1::SimulateResponse r;
    int samples = 0;
    while (reader->Read(&r)) samples += r.t_size();
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(samples, 11);
  }
}

TEST(ServerStreams, WriteStallTimeoutCancelsAStreamWhoseClientOnlyWrites) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), withMetrics(dir, {"--write-stall-timeout-ms", "400"}));
  const int port = metricsPort(dir);
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(60, 75));
  auto ctx = context(60s);
  auto rw = stub->Stream(ctx.get());
  // writes that are answered but never read: the answers fill the client's window, the server's write stalls
  auto writer = std::async(std::launch::async, [&] {
    int written = 0;
    for (std::uint64_t k = 0; k < 200000 && rw->Write(streamID(id, 60, k)); ++k) ++written;
    return written;
  });
  ASSERT_TRUE(
      eventually([&] { return server.log().find("read nothing for 400 ms") != std::string::npos; }, 60s))
      << server.log();
  ctx->TryCancel();
  const int written = writer.get();
  EXPECT_LT(written, 200000);
  EXPECT_TRUE(eventually([&] { return inFlight(port, "Stream") == 0; }));
}

TEST(ServerStreams, IdleTimeoutClosesAStreamWithItsReasonAndFreesItsSlot) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, {"--idle-stream-timeout-ms", "300", "--max-streams", "1",
                                         "--principal-streams", "1"}));
  const int port = metricsPort(dir);
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(4, 77));
  for (int round = 0; round < 2; ++round) {
    auto ctx = context(30s);
    auto rw = stub->Stream(ctx.get());
    ASSERT_TRUE(rw->Write(streamID(id, 4, 1)));
    v1::StreamResponse a;
    ASSERT_TRUE(rw->Read(&a));
    EXPECT_EQ(a.sequence(), 1u);
    // then nothing: the server closes it
    EXPECT_FALSE(rw->Read(&a));
    const grpc::Status st = rw->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
    EXPECT_NE(st.error_message().find("no message for 300 ms after 1 messages"), std::string::npos)
        << st.error_message();
    EXPECT_NE(st.error_message().find("--idle-stream-timeout-ms"), std::string::npos) << st.error_message();
    // and its one slot is free for the next round
    ASSERT_TRUE(eventually([&] { return inFlight(port, "Stream") == 0; }));
  }
  const auto m = scrapeMetrics(port);
  EXPECT_EQ(metric(m, "denoc_requests_total{code=\"DEADLINE_EXCEEDED\",rpc=\"Stream\"}"), 2);
}

TEST(ServerStreams, AStreamThatKeepsTalkingIsNotIdle) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--idle-stream-timeout-ms", "300"});
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(4, 79));
  auto ctx = context(30s);
  auto rw = stub->Stream(ctx.get());
  // 12 messages 100 ms apart: 1.2 s in all, longer than the idle limit, never 300 ms without a message
  for (std::uint64_t k = 0; k < 12; ++k) {
    ASSERT_TRUE(rw->Write(streamID(id, 4, k)));
    v1::StreamResponse a;
    ASSERT_TRUE(rw->Read(&a)) << "message " << k;
    EXPECT_EQ(a.sequence(), k);
    std::this_thread::sleep_for(100ms);
  }
  rw->WritesDone();
  EXPECT_TRUE(rw->Finish().ok());
}

TEST(ServerStreams, EveryStreamErrorNamesItsMessageAnUnknownModelToo) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(3, 81));
  auto ctx = context();
  auto rw = stub->Stream(ctx.get());
  v1::StreamResponse a;
  ASSERT_TRUE(rw->Write(streamID(id, 3, 0)));
  ASSERT_TRUE(rw->Read(&a));
  v1::StreamRequest echo;
  echo.set_computation(v1::COMPUTATION_ECHO);
  ASSERT_TRUE(rw->Write(echo));
  ASSERT_TRUE(rw->Read(&a));
  ASSERT_TRUE(rw->Write(streamID(std::string(64, 'b'), 3, 2)));
  EXPECT_FALSE(rw->Read(&a));
  const grpc::Status st = rw->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message().rfind("message 2: model_id bbbb", 0), 0u) << st.error_message();
}

}  // namespace
}  // namespace denoc::test
