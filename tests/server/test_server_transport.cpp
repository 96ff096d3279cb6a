// The transport's bounds against real denocd processes on 127.0.0.1, driven by a raw HTTP/2 client
// (server/tools/h2_probe.py) that does what gRPC clients never do: the SETTINGS the server advertises;
// gzip bombs refused on their headers (resident size, not inflated); calls without a token refused on
// their headers, before their body is read (the bytes the server let in, and its resident size); a flood of
// header-only streams and a rapid-reset burst on one connection leaving the server serving. Counts and
// sizes are asserted, never times.
#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "grpc/health/v1/health.grpc.pb.h"
#include "proc_probe.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

constexpr long kMiB = 1024;  // in the KiB of VmRSS

std::string registerDH(v1::Dynamics::Stub& stub, const DHSpec& dh, const std::string& token = "") {
  auto ctx = context();
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(ctx.get(), dhRequest(dh), &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r.model_id();
}

/// A well-behaved call, its answer checked against the core.
void expectServing(const ServerProcess& server, const std::string& id, const Model& m,
                   const std::string& token = "", std::chrono::milliseconds deadline = 10s) {
  const auto q = randomStates(2, m.n, 5), qd = randomStates(2, m.n, 6), qdd = randomStates(2, m.n, 7);
  v1::InverseDynamicsRequest req;
  req.set_model_id(id);
  req.set_count(2);
  req.set_dof(static_cast<std::uint32_t>(m.n));
  for (std::size_t i = 0; i < q.size(); ++i) req.add_q(q[i]), req.add_qd(qd[i]), req.add_qdd(qdd[i]);
  auto ctx = context(deadline);
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  v1::InverseDynamicsResponse resp;
  const grpc::Status s = server.stub()->InverseDynamics(ctx.get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  expectCloseField(resp.tau(), coreID(m, q, qd, qdd), "tau after the attack");
  grpc::health::v1::HealthCheckResponse h;
  ASSERT_TRUE(
      grpc::health::v1::Health::NewStub(server.channel())->Check(context(deadline).get(), {}, &h).ok());
  EXPECT_EQ(h.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(ServerTransport, AdvertisesItsBoundsInItsSettings) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--max-concurrent-streams", "37"});
  const auto report = h2Probe("settings", server.port(), {}, dir.str("settings"));
  const auto& settings = report.at("settings");
  EXPECT_EQ(settings.at("MAX_CONCURRENT_STREAMS").get<int>(), 37) << report.dump();
  EXPECT_EQ(settings.at("MAX_HEADER_LIST_SIZE").get<int>(), 16384) << report.dump();
  TempDir other;
  ServerProcess defaults(other.str(), other.str("store"));
  EXPECT_EQ(h2Probe("settings", defaults.port(), {}, other.str("settings"))
                .at("settings")
                .at("MAX_CONCURRENT_STREAMS"),
            100);
}

TEST(ServerTransport, GzipBombsAreRefusedOnTheirHeadersNotInflated) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*server.stub(), stanfordArmDH());
  expectServing(server, id, m);
  const long before = rssKiB(server.pid());
  // 16 messages of 60 MiB of zeros, about 60 KiB each on the wire
  const auto report =
      h2Probe("gzip", server.port(), {"--calls", "16", "--inflated-mb", "60"}, dir.str("gzip"));
  const long after = rssKiB(server.pid());
  std::printf("[ figures  ] 16 gzip bombs (%d bytes on the wire, %d inflated, each): RSS %ld -> %ld KiB\n",
              report.at("wire_bytes_per_call").get<int>(), report.at("inflated_bytes_per_call").get<int>(),
              before, after);
  EXPECT_EQ(countOf(report, "statuses", 12), 16) << report.dump();  // UNIMPLEMENTED: gzip is disabled
  if (kResidentSizeBounded) EXPECT_LT(after - before, 16 * kMiB) << "one bomb inflated would add 60 MiB";
  // a message marked compressed under identity encoding is not inflated either: not a valid message
  const auto flagged = h2Probe("flagged", server.port(), {"--calls", "2"}, dir.str("flagged"));
  EXPECT_EQ(countOf(flagged, "statuses", 3), 2) << flagged.dump();
  expectServing(server, id, m);
}

class TokenServer : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir.str("tokens")) << "alice token-of-alice\nbob token-of-bob\n"; }
  TempDir dir;
};

TEST_F(TokenServer, CallsWithoutATokenAreRefusedOnTheirHeadersBeforeTheirBody) {
  ServerProcess server(dir.str(), dir.str("store"), {"--token-file", dir.str("tokens")});
  EXPECT_NE(server.log().find("tokens checked on the headers"), std::string::npos) << server.log();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*server.stub(), stanfordArmDH(), "token-of-alice");
  expectServing(server, id, m, "token-of-alice");
  const long before = rssKiB(server.pid());
  // 16 calls, each announcing a 60 MiB message and sending as much of it as the server's windows allow
  // (a server that read the body would take all 960 MiB and hold each message until it is complete)
  const auto report = h2Probe("unauth", server.port(), {"--calls", "16", "--mb", "60"}, dir.str("unauth"));
  const long after = rssKiB(server.pid());
  long long let_in = 0;
  for (const auto& sent : report.at("body_bytes_sent")) let_in += sent.get<long long>();
  std::printf(
      "[ figures  ] 16 unauthenticated 60 MiB calls: %lld body bytes sent before refusal, RSS %ld -> %ld "
      "KiB\n",
      let_in, before, after);
  EXPECT_EQ(countOf(report, "statuses", 16), 16) << report.dump();  // UNAUTHENTICATED
  EXPECT_LT(let_in, 16LL * 8 * (1 << 20)) << report.dump();
  if (kResidentSizeBounded) EXPECT_LT(after - before, 24 * kMiB);
  // the same with a wrong token; and a stream is refused before any message is read
  const auto wrong = h2Probe("unauth", server.port(),
                             {"--calls", "4", "--mb", "60", "--token", "token-of-mallory"}, dir.str("wrong"));
  EXPECT_EQ(countOf(wrong, "statuses", 16), 4) << wrong.dump();
  {
    auto ctx = context(5s);
    auto rw = server.stub()->Stream(ctx.get());
    v1::StreamResponse a;
    EXPECT_FALSE(rw->Read(&a));
    const grpc::Status st = rw->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_NE(st.error_message().find("Bearer <token>"), std::string::npos) << st.error_message();
  }
  expectServing(server, id, m, "token-of-bob");
  // the refusals never reached the service: neither logged as calls nor holding anything
  EXPECT_EQ(server.log().find("token-of-mallory"), std::string::npos);
}

TEST_F(TokenServer, PlaintextOnAReachableAddressChecksTokensInTheService) {
  // --plaintext on 0.0.0.0: the credentials there cannot run the header check, the service does it
  ServerProcess server(
      dir.str(), dir.str("store"),
      {"--token-file", dir.str("tokens"), "--listen", "0.0.0.0:0", "--plaintext", "--without-front"});
  EXPECT_NE(server.log().find("tokens checked in the service"), std::string::npos) << server.log();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*server.stub(), stanfordArmDH(), "token-of-bob");
  expectServing(server, id, m, "token-of-bob");
  v1::ListModelsResponse list;
  EXPECT_EQ(server.stub()->ListModels(context().get(), {}, &list).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  auto ctx = context(5s);
  auto rw = server.stub()->Stream(ctx.get());
  v1::StreamResponse a;
  EXPECT_FALSE(rw->Read(&a));
  EXPECT_EQ(rw->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(ServerTransport, AFloodOfHeaderOnlyStreamsIsBoundedPerConnection) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*server.stub(), stanfordArmDH());
  const long before = rssKiB(server.pid());
  // 20,000 calls that send headers only, on one connection, ignoring MAX_CONCURRENT_STREAMS = 100
  const auto report = h2Probe("header-flood", server.port(), {"--streams", "20000"}, dir.str("flood"));
  const long after = rssKiB(server.pid());
  int refused = 0;
  for (const auto& [code, n] : report.at("reset_by_server").items()) refused += n.get<int>();
  std::printf(
      "[ figures  ] 20000 header-only streams: %d reset by the server, GOAWAY %s, RSS %ld -> %ld KiB\n",
      refused, report.at("goaway").dump().c_str(), before, after);
  // beyond the 100 allowed, every stream was refused, or the connection was closed
  EXPECT_TRUE(refused >= 20000 - 100 || !report.at("goaway").is_null() ||
              report.at("connection_closed").get<bool>())
      << report.dump();
  if (kResidentSizeBounded) EXPECT_LT(after - before, 64 * kMiB);
  expectServing(server, id, m);
}

TEST_F(TokenServer, ARapidResetBurstFromOneTokenLeavesTheServerToTheOthers) {
  // gRPC 1.51 predates the HTTP/2 rapid-reset mitigation: denocd cannot stop the burst's memory (gRPC's own
  // calls; measured in docs/service.md, the front's job), but the burst's calls reach the service as alice's
  // and take at most her share of the queue, so bob is answered throughout
  ServerProcess server(dir.str(), dir.str("store"), {"--token-file", dir.str("tokens")});
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*server.stub(), stanfordArmDH(), "token-of-alice");
  const long before = rssKiB(server.pid());
  auto burst = std::async(std::launch::async, [&] {
    return h2Probe("rapid-reset", server.port(),
                   {"--streams", "20000", "--model", id, "--dof", "6", "--token", "token-of-alice"},
                   dir.str("reset"));
  });
  int answered = 0;
  do {
    // generous deadlines: the burst competes for the cores with gRPC's threads and whatever else runs
    expectServing(server, id, m, "token-of-bob", 60s);
    ++answered;
  } while (burst.wait_for(0s) != std::future_status::ready && !::testing::Test::HasFailure());
  const auto report = burst.get();
  const long after = rssKiB(server.pid());
  std::printf(
      "[ figures  ] rapid reset: %d streams sent by alice, %d of bob's calls answered meanwhile, RSS %ld -> "
      "%ld KiB\n",
      report.at("streams_sent").get<int>(), answered, before, after);
  EXPECT_GT(report.at("streams_sent").get<int>(), 0);
  EXPECT_GE(answered, 1);
  EXPECT_EQ(::kill(server.pid(), 0), 0);
  expectServing(server, id, m, "token-of-bob");
}

}  // namespace
}  // namespace denoc::test
