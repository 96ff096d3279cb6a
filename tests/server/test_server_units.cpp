// Units of denocd that need no server: bearer tokens, the plaintext policy and the option checks, the
// store record's owner (admission control and the compute executor: test_rpc_units.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "auth.hpp"
#include "model_id.hpp"
#include "options.hpp"
#include "server_process.hpp"
#include "store_record.hpp"

namespace denoc::server {
namespace {

TEST(TokenAuth, KnownTokensMapToTheirPrincipalsAndNothingElseDoes) {
  const TokenAuth auth({{"alice", "s3cret-a"}, {"bob", "s3cret-b"}, {"", "anonymous-token"}});
  EXPECT_EQ(auth.principal("s3cret-a"), "alice");
  EXPECT_EQ(auth.principal("s3cret-b"), "bob");
  // an unnamed token is named by its digest (SHA-256("anonymous-token") starts 2e8c...; checked below by
  // recomputing it independently of the class)
  const std::string anon = auth.principal("anonymous-token");
  ASSERT_EQ(anon.rfind("token-", 0), 0u) << anon;
  EXPECT_EQ(anon.size(), 6u + 12u);
  EXPECT_EQ(anon.substr(6), sha256Hex("anonymous-token").substr(0, 12));
  for (const char* wrong : {"", "s3cret-", "s3cret-a ", "S3CRET-A", "s3cret-c", "alice", "bob"})
    EXPECT_EQ(auth.principal(wrong), "") << wrong;
}

TEST(TokenAuth, RepeatedTokensAreRefused) {
  EXPECT_THROW(TokenAuth({{"alice", "same"}, {"bob", "same"}}), std::runtime_error);
}

TEST(TokenAuth, FileFormat) {
  test::TempDir dir;
  const std::string path = dir.str("tokens");
  {
    std::ofstream f(path);
    f << "# fleet tokens\n\nalice   tok-a\n  tok-anon  \nbob\ttok-b\n";
  }
  const TokenAuth auth = TokenAuth::fromFile(path);
  EXPECT_EQ(auth.size(), 3u);
  EXPECT_EQ(auth.principal("tok-a"), "alice");
  EXPECT_EQ(auth.principal("tok-b"), "bob");
  EXPECT_EQ(auth.principal("tok-anon").rfind("token-", 0), 0u);
  {
    std::ofstream f(path);
    f << "alice tok-a extra\n";
  }
  try {
    TokenAuth::fromFile(path);
    FAIL() << "three fields accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 1 has 3 fields"), std::string::npos) << e.what();
  }
  {
    std::ofstream f(path);
    f << "# nothing\n";
  }
  EXPECT_THROW(TokenAuth::fromFile(path), std::runtime_error);
  EXPECT_THROW(TokenAuth::fromFile(dir.str("missing")), std::runtime_error);
}

TEST(TokenAuth, BearerHeader) {
  EXPECT_EQ(bearerToken("Bearer abc"), "abc");
  EXPECT_EQ(bearerToken("bearer abc"), "abc");
  EXPECT_EQ(bearerToken("BEARER   abc  "), "abc");
  EXPECT_EQ(bearerToken("Basic abc"), "");
  EXPECT_EQ(bearerToken("Bearer"), "");
  EXPECT_EQ(bearerToken("Bearer "), "");
  EXPECT_EQ(bearerToken("abc"), "");
}

TEST(Options, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1:50051", "127.1.2.3:1", "localhost:50051", "[::1]:50051", "unix:/tmp/s"})
    EXPECT_TRUE(isLoopbackAddress(a)) << a;
  for (const char* a : {"0.0.0.0:50051", "[::]:50051", "10.0.0.5:50051", "denoc.example:443", "128.0.0.1:1"})
    EXPECT_FALSE(isLoopbackAddress(a)) << a;
}

TEST(Options, PlaintextOnlyOnLoopbackUnlessAskedFor) {
  ServerOptions o;
  EXPECT_EQ(checkOptions(o), "");  // the default: 127.0.0.1, plaintext
  o.listen.address = "0.0.0.0:50051";
  EXPECT_NE(checkOptions(o).find("refusing plaintext on 0.0.0.0:50051"), std::string::npos);
  o.security.plaintext = true;
  // a reachable TCP address is served directly only when asked for (the front bounds what gRPC 1.51 does not)
  EXPECT_NE(checkOptions(o).find("refusing to serve 0.0.0.0:50051 directly"), std::string::npos);
  EXPECT_NE(checkOptions(o).find("CVE-2023-33953"), std::string::npos);
  o.listen.without_front = true;
  EXPECT_EQ(checkOptions(o), "");
  o.security.plaintext = false;
  o.security.tls_cert = "cert.pem";
  EXPECT_NE(checkOptions(o).find("--tls-cert and --tls-key"), std::string::npos);
  o.security.tls_key = "key.pem";
  EXPECT_EQ(checkOptions(o), "");
  o.security.tls_cert.clear();
  o.security.tls_key.clear();
  o.listen.address = "127.0.0.1:1";
  o.security.tls_client_ca = "ca.pem";
  EXPECT_NE(checkOptions(o).find("--tls-client-ca"), std::string::npos);
}

TEST(Options, InflightStatesCannotBeBelowOneRequest) {
  ServerOptions o;
  o.limits.max_states = 1000;
  EXPECT_EQ(o.inflightStates(), 8000u);
  o.admission.max_inflight_states = 999;
  EXPECT_NE(checkOptions(o).find("--max-inflight-states"), std::string::npos);
  o.admission.max_inflight_states = 1000;
  EXPECT_EQ(checkOptions(o), "");
}

TEST(Options, PrincipalSharesDefaultToHalfAndFitTheirBounds) {
  ServerOptions o;
  o.limits.max_states = 1000;  // in flight: 8000
  o.admission.max_streams = 7;
  o.compute.queue = 9;
  EXPECT_EQ(o.principalInflightStates(), 4000u);
  EXPECT_EQ(o.principalStreams(), 3u);
  EXPECT_EQ(o.principalQueue(), 4u);
  EXPECT_EQ(checkOptions(o), "");
  // one request of max_states must still fit a principal's share
  o.admission.max_inflight_states = 1500;
  EXPECT_EQ(o.principalInflightStates(), 1000u);
  o.admission.max_inflight_states = 1000;
  EXPECT_EQ(o.principalInflightStates(), 1000u);
  o.admission.principal_inflight_states = 999;
  EXPECT_NE(checkOptions(o).find("--principal-inflight-states (999) must lie between"), std::string::npos);
  o.admission.principal_inflight_states = 1001;
  EXPECT_NE(checkOptions(o).find("--principal-inflight-states"), std::string::npos);
  o.admission.principal_inflight_states = 0;
  o.admission.principal_streams = 8;
  EXPECT_NE(checkOptions(o).find("--principal-streams (8) is above --max-streams (7)"), std::string::npos);
  o.admission.principal_streams = 1;
  o.admission.max_streams = 1;
  EXPECT_EQ(o.principalStreams(), 1u);
  o.compute.principal_queue = 10;
  EXPECT_NE(checkOptions(o).find("--principal-queue (10) is above --compute-queue (9)"), std::string::npos);
  o.compute.principal_queue = 0;
  EXPECT_EQ(checkOptions(o), "");
}

TEST(Options, MemoryQuotaHoldsTwoMessages) {
  ServerOptions o;
  EXPECT_EQ(o.memoryQuotaBytes(), std::size_t{256} << 20);  // 4 x 64 MiB
  o.limits.max_message_bytes = 1 << 20;
  EXPECT_EQ(o.memoryQuotaBytes(), std::size_t{64} << 20);  // at least 64 MiB
  o.limits.max_message_bytes = 64u << 20;
  o.transport.memory_quota_mb = 100;
  EXPECT_NE(checkOptions(o).find("--memory-quota-mb (100) leaves no room for two messages"),
            std::string::npos);
  o.transport.memory_quota_mb = 128;
  EXPECT_EQ(checkOptions(o), "");
}

TEST(Options, GrpcArgsAreNamedIntegers) {
  std::string name;
  int value = 0;
  EXPECT_TRUE(parseGrpcArg("grpc.http2.max_frame_size=1048576", name, value));
  EXPECT_EQ(name, "grpc.http2.max_frame_size");
  EXPECT_EQ(value, 1048576);
  EXPECT_TRUE(parseGrpcArg("grpc.x=-3", name, value));
  EXPECT_EQ(value, -3);
  for (const char* bad : {"grpc.x", "grpc.x=", "grpc.x=1k", "grpc.x=99999999999", "http2.x=1", "=5", ""})
    EXPECT_FALSE(parseGrpcArg(bad, name, value)) << bad;
  ServerOptions o;
  o.transport.grpc_args = {"grpc.http2.lookahead_bytes=4194304", "grpc.http2.bdp_probe=one"};
  EXPECT_NE(checkOptions(o).find("--grpc-arg 'grpc.http2.bdp_probe=one'"), std::string::npos);
  o.transport.grpc_args.pop_back();
  EXPECT_EQ(checkOptions(o), "");
}

TEST(Options, RemovedFlagsAreRefusedAndTheirVariablesIgnored) {
  // --threads (gRPC's synchronous pool, which serves only reflection), --api and --workspaces-per-thread
  // (ignored since the callback API and the batch engine): gone, so a leftover flag stops the start and a
  // leftover variable changes nothing
  const auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "denocd");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    ServerOptions o;
    int code = 0;
    const bool ok = parseOptions(static_cast<int>(argv.size()), argv.data(), o, code);
    return std::make_pair(ok, code);
  };
  for (const std::vector<std::string>& removed :
       {std::vector<std::string>{"--threads", "16"}, {"--api", "sync"}, {"--workspaces-per-thread", "8"}}) {
    const auto [ok, code] = parse(removed);
    EXPECT_FALSE(ok) << removed[0];
    EXPECT_NE(code, 0) << removed[0];
  }
  ::setenv("DENOC_THREADS", "32", 1);
  ::setenv("DENOC_API", "sync", 1);
  ::setenv("DENOC_WORKSPACES_PER_THREAD", "8", 1);
  EXPECT_EQ(parse({}), std::make_pair(true, 0));
  ::unsetenv("DENOC_THREADS");
  ::unsetenv("DENOC_API");
  ::unsetenv("DENOC_WORKSPACES_PER_THREAD");
  // and the nested options are filled from their flags
  std::vector<std::string> args = {
      "denocd", "--compute-queue",   "9", "--principal-queue",        "3",  "--max-states",
      "500",    "--metrics-threads", "2", "--idle-stream-timeout-ms", "700"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ServerOptions o;
  int code = 0;
  ASSERT_TRUE(parseOptions(static_cast<int>(argv.size()), argv.data(), o, code));
  EXPECT_EQ(o.compute.queue, 9u);
  EXPECT_EQ(o.principalQueue(), 3u);
  EXPECT_EQ(o.limits.max_states, 500u);
  EXPECT_EQ(o.metrics.http.threads, 2u);
  EXPECT_EQ(o.streams.idle_timeout_ms, 700);
}

TEST(StoreRecord, OwnerRoundTripAndNoSmuggledOwner) {
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text("<robot name='r'/>");
  req.set_name("r");
  const std::string bytes = storeRecord(req, "alice");
  // the oracle: the bytes parsed as the plain request, field 1000 read from its unknown fields by hand
  const auto unknownOwner = [](const std::string& record) {
    v1::RegisterModelRequest plain;
    EXPECT_TRUE(plain.ParseFromString(record));
    const auto& unknown = plain.GetReflection()->GetUnknownFields(plain);
    std::string owner;
    for (int i = 0; i < unknown.field_count(); ++i) {
      if (unknown.field(i).number() == 1000) owner += unknown.field(i).length_delimited();
    }
    return owner;
  };
  EXPECT_EQ(unknownOwner(bytes), "alice");
  const std::optional<StoreRecord> back = readRecord(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->owner, "alice");
  EXPECT_EQ(back->request.urdf().text(), req.urdf().text());
  EXPECT_EQ(back->request.name(), "r");
  // a request carrying field 1000 itself: dropped before the server's owner is written
  v1::RegisterModelRequest smuggled = req;
  smuggled.GetReflection()->MutableUnknownFields(&smuggled)->AddLengthDelimited(1000, "mallory");
  EXPECT_EQ(readRecord(storeRecord(smuggled, "bob"))->owner, "bob");
  EXPECT_EQ(unknownOwner(storeRecord(smuggled, "bob")), "bob");
  EXPECT_EQ(readRecord(storeRecord(smuggled, ""))->owner, "");
  EXPECT_EQ(unknownOwner(storeRecord(smuggled, "")), "");
  // bytes that are not a record
  EXPECT_FALSE(readRecord(std::string("\xff\xff\xff", 3)));
}

TEST(StoreRecord, DescriptionRoundTripVersionedAndCheckedAgainstTheId) {
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text("<robot name='r'/>");
  const std::string id(64, 'a'), other(64, 'b');
  v1::ModelInfo info;
  info.set_model_id(id);
  info.set_name("r");
  info.set_dof(7);
  info.set_pinned(true);  // never read back as pinned
  const std::optional<StoreRecord> back = readRecord(storeRecord(req, "alice", &info));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->owner, "alice");
  const std::optional<v1::ModelInfo> got = recordInfo(*back, id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->dof(), 7u);
  EXPECT_FALSE(got->pinned());
  // another id's file: not this record's description
  std::string problem;
  EXPECT_FALSE(recordInfo(*back, other, &problem));
  EXPECT_NE(problem.find("names model"), std::string::npos) << problem;
  // a record without one (an older server's), and one a client tried to smuggle in: none
  EXPECT_FALSE(recordInfo(*readRecord(storeRecord(req, "")), id));
  v1::RegisterModelRequest smuggled = req;
  smuggled.GetReflection()->MutableUnknownFields(&smuggled)->AddLengthDelimited(1001,
                                                                                info.SerializeAsString());
  smuggled.GetReflection()->MutableUnknownFields(&smuggled)->AddVarint(1002, kDescriptionVersion);
  EXPECT_FALSE(recordInfo(*readRecord(storeRecord(smuggled, "")), id));
  // another version's description is not read; garbage in its place is named
  v1::RegisterModelRequest versioned = req;
  versioned.GetReflection()
      ->MutableUnknownFields(&versioned)
      ->AddLengthDelimited(1001, info.SerializeAsString());
  versioned.GetReflection()->MutableUnknownFields(&versioned)->AddVarint(1002, kDescriptionVersion + 1);
  EXPECT_FALSE(recordInfo(*readRecord(versioned.SerializeAsString()), id));
  v1::RegisterModelRequest garbage = req;
  garbage.GetReflection()->MutableUnknownFields(&garbage)->AddLengthDelimited(1001, "\xff\xff\xff");
  garbage.GetReflection()->MutableUnknownFields(&garbage)->AddVarint(1002, kDescriptionVersion);
  problem.clear();
  EXPECT_FALSE(recordInfo(*readRecord(garbage.SerializeAsString()), id, &problem));
  EXPECT_NE(problem.find("does not parse"), std::string::npos) << problem;
}

}  // namespace
}  // namespace denoc::server
