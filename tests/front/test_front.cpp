// The hardened front (deploy/nginx) in front of denocd: Debian's nginx, configured from the shipped files
// by deploy/nginx/render.sh with test ports and certificates made at test time, terminating mutual TLS and
// HTTP/2 for a real denocd listening on a unix socket with --trusted-front-header. Checks that answers
// through the front are the core's (computed in this process) and the same as denocd's answered directly,
// that the verified client certificate is the principal of per-principal limits, that a client cannot
// name itself with the front's identity headers, and that a rapid-reset burst (CVE-2023-44487) is cut off
// by nginx while another client's calls all succeed. Counts and sizes are asserted, never times.
#include <gtest/gtest.h>

#include <cstdio>
#include <future>
#include <nlohmann/json.hpp>

#include "front_process.hpp"
#include "proc_probe.hpp"
#include "test_support.hpp"
#include "tls_material.hpp"

namespace denoc::test {
namespace {

constexpr const char* kSubject = "CN=denoc test client";  // tls_material.hpp's client certificate

class Front : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    tls_ = new TlsMaterial(dir_->str());
    socket_ = dir_->str("denocd.sock");
    denocd_ = new Child({DENOC_DENOCD, "--listen", "unix:" + socket_, "--trusted-front-header", "--store-dir",
                         dir_->str("store"), "--principal-streams", "1", "--shutdown-grace-ms", "0"},
                        dir_->str("denocd.log"));
    direct_ = grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials());
    ASSERT_TRUE(connects(direct_, 30s)) << denocd_->log();
    port_ = freePort();
    // the TLS files as a Kubernetes secret volume holds them: tls/{tls.crt,tls.key,ca.crt} through a link
    // that a rotation swaps (RotatedCertificatesServeNewConnections)
    const std::string secret = dir_->str("tls");
    TlsMaterial::swapLink(
        TlsMaterial::secretDirectory(dir_->str("tls-1"), tls_->server_cert, tls_->server_key, tls_->ca),
        secret);
    const std::string prefix = dir_->str("nginx");
    nginx_ =
        startFront(prefix,
                   "--listen 127.0.0.1:" + std::to_string(port_) + " --socket " + socket_ + " --cert " +
                       secret + "/tls.crt --key " + secret + "/tls.key --client-ca " + secret + "/ca.crt",
                   secret + "/tls.crt " + secret + "/tls.key " + secret + "/ca.crt", dir_->str("nginx.log"))
            .release();
    front_ = frontChannel(tls_->client_cert, tls_->client_key);
    ASSERT_TRUE(connects(front_, 30s)) << nginx_->log();
  }
  static void TearDownTestSuite() {
    front_.reset();
    direct_.reset();
    delete nginx_;
    delete denocd_;
    delete tls_;
    delete dir_;
  }

  /// What a well-behaved client saw while an attack ran: the attack's report, its calls and failures, and
  /// denocd's resident size before and at its peak; `text` is everything the attack printed (for a failure's
  /// message).
  struct UnderAttack {
    nlohmann::json report;
    std::string text;
    int calls = 0, failed = 0;
    long rss_before = 0, rss_peak = 0;
  };

  /// tests/front/h2_rapid_reset_tls.py with `args`, as another robot (its own valid client certificate:
  /// limit_conn and limit_req are per certificate subject) from the same address 127.0.0.1 as the
  /// well-behaved client.
  static std::string resetAttack(const std::string& args) {
    return std::string(DENOC_PYTHON3) + " " + DENOC_SOURCE_DIR +
           "/tests/front/h2_rapid_reset_tls.py --port " + std::to_string(port_) + " --ca " + tls_->ca +
           " --cert " + tls_->robot2_cert + " --key " + tls_->robot2_key + " --source 127.0.0.1 " + args;
  }
  /// server/tools/h2_probe.py's `command_and_args` over TLS as that other robot, `processes` at once: one
  /// JSON line each. Each process writes its own file (stdout, then stderr), printed one after another once
  /// all have ended, so that no line of one is cut by another's.
  static std::string probeAttack(const std::string& command_and_args, int processes) {
    const std::string one = std::string(DENOC_PYTHON3) + " " + DENOC_SOURCE_DIR +
                            "/server/tools/h2_probe.py " + command_and_args + " --port " +
                            std::to_string(port_) + " --tls-ca " + tls_->ca + " --tls-cert " +
                            tls_->robot2_cert + " --tls-key " + tls_->robot2_key;
    const std::string out = dir_->str("probe");
    std::string all = "(rm -f " + out + ".*; ";
    for (int k = 0; k < processes; ++k) {
      const std::string file = out + "." + std::to_string(k);
      all += one + " > " + file + ".out 2> " + file + ".err & ";
    }
    all += "wait; ";
    for (int k = 0; k < processes; ++k) {
      const std::string file = out + "." + std::to_string(k);
      all += "cat " + file + ".out " + file + ".err; ";
    }
    return all + ")";
  }

  /// Runs the attack `command` while a well-behaved client calls InverseDynamics on `id` (at least
  /// min_calls, at most 200 a second, every answer checked against the core) until the attack ends. The
  /// report is the attack's JSON output (an array when it printed several lines).
  static UnderAttack callWhileAttacked(const std::string& cmd, const std::string& id, const Model& m,
                                       int min_calls, int seed) {
    UnderAttack out;
    auto good = v1::Dynamics::NewStub(front_);
    out.rss_before = rssKiB(denocd_->pid());
    out.rss_peak = out.rss_before;
    auto attack = std::async(std::launch::async, [cmd] {
      std::string text;
      FILE* p = ::popen(cmd.c_str(), "r");
      if (!p) return text;
      char buf[4096];
      std::size_t got = 0;
      while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, got);
      ::pclose(p);
      return text;
    });
    while (out.calls < min_calls || attack.wait_for(0s) != std::future_status::ready) {
      const v1::InverseDynamicsRequest req = idRequest(id, m.n, 1, seed + out.calls);
      v1::InverseDynamicsResponse resp;
      const grpc::Status st = good->InverseDynamics(context(60s).get(), req, &resp);
      ++out.calls;
      if (!st.ok()) {
        if (++out.failed <= 3) ADD_FAILURE() << "call " << out.calls << ": " << st.error_message();
        continue;
      }
      expectCloseField(resp.tau(), coreOf(m, req), "tau during the attack");
      out.rss_peak = std::max(out.rss_peak, rssKiB(denocd_->pid()));
      if (out.calls > 100000) break;
      std::this_thread::sleep_for(5ms);
    }
    out.text = attack.get();
    std::vector<nlohmann::json> lines;
    std::istringstream in(out.text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] != '{') continue;
      nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
      lines.push_back(parsed.is_discarded() ? nlohmann::json(line)
                                            : std::move(parsed));  // kept for the message
    }
    out.report = lines.size() == 1 ? lines[0] : nlohmann::json(lines);
    if (lines.empty()) out.report = nlohmann::json::parse(out.text, nullptr, false);
    return out;
  }

  /// A mutual-TLS channel to the front with the given client certificate.
  static std::shared_ptr<grpc::Channel> frontChannel(const std::string& cert, const std::string& key) {
    return test::frontChannel(port_, tls_->ca, cert, key);
  }

  /// Registers the random 7-joint chain of `seed` through the front (the victim of an attack): its id.
  static std::string registerChain(unsigned seed) {
    auto stub = v1::Dynamics::NewStub(front_);
    return registerModel(*stub, randomChain(7, seed));
  }

  static std::string registerModel(v1::Dynamics::Stub& stub, const DHSpec& dh) {
    v1::RegisterModelResponse resp;
    const grpc::Status st = stub.RegisterModel(context().get(), dhRequest(dh), &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.model_id();
  }

  static v1::InverseDynamicsRequest idRequest(const std::string& id, int n, int count, unsigned seed) {
    v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(count);
    req.set_dof(n);
    const auto q = randomStates(count, n, seed, 1.5), qd = randomStates(count, n, seed + 1, 2.0),
               qdd = randomStates(count, n, seed + 2, 3.0);
    *req.mutable_q() = {q.begin(), q.end()};
    *req.mutable_qd() = {qd.begin(), qd.end()};
    *req.mutable_qdd() = {qdd.begin(), qdd.end()};
    return req;
  }

  static std::vector<double> coreOf(const Model& m, const v1::InverseDynamicsRequest& req) {
    return coreID(m, {req.q().begin(), req.q().end()}, {req.qd().begin(), req.qd().end()},
                  {req.qdd().begin(), req.qdd().end()});
  }

  /// Opens a Stream through the front with extra metadata and waits for an echo: the stream is admitted.
  struct OpenStream {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> rw;
  };
  static std::unique_ptr<OpenStream> openStream(v1::Dynamics::Stub& stub,
                                                const std::vector<std::pair<std::string, std::string>>& md) {
    auto s = std::make_unique<OpenStream>();
    s->ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    for (const auto& [k, v] : md) s->ctx.AddMetadata(k, v);
    s->rw = stub.Stream(&s->ctx);
    return s;
  }
  static bool echoes(OpenStream& s) {
    v1::StreamRequest echo;
    echo.set_computation(v1::COMPUTATION_ECHO);
    echo.set_sequence(7);
    v1::StreamResponse resp;
    return s.rw->Write(echo) && s.rw->Read(&resp) && resp.sequence() == 7u;
  }
  static grpc::Status finish(OpenStream& s) {
    s.rw->WritesDone();
    return s.rw->Finish();
  }

  /// With --principal-streams 1, a second Stream of the same principal is refused, naming the principal.
  static std::string secondStreamRefusal(const std::vector<std::pair<std::string, std::string>>& md) {
    auto stub = v1::Dynamics::NewStub(front_);
    auto first = openStream(*stub, md);
    EXPECT_TRUE(echoes(*first)) << "the first stream should be admitted";
    auto second = openStream(*stub, md);
    EXPECT_FALSE(echoes(*second));
    const grpc::Status refused = finish(*second);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
    const grpc::Status ok = finish(*first);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
    return refused.error_message();
  }

  static TempDir* dir_;
  static TlsMaterial* tls_;
  static std::string socket_;
  static Child* denocd_;
  static Child* nginx_;
  static int port_;
  static std::shared_ptr<grpc::Channel> direct_;
  static std::shared_ptr<grpc::Channel> front_;
};

TempDir* Front::dir_ = nullptr;
TlsMaterial* Front::tls_ = nullptr;
std::string Front::socket_;
Child* Front::denocd_ = nullptr;
Child* Front::nginx_ = nullptr;
int Front::port_ = 0;
std::shared_ptr<grpc::Channel> Front::direct_;
std::shared_ptr<grpc::Channel> Front::front_;

TEST_F(Front, AnswersThroughTheFrontAreTheCoresAndDenocdsDirectOnes) {
  const DHSpec dh = randomChain(7, 41);
  const Model m = buildModelFromDH(dh);
  auto front = v1::Dynamics::NewStub(front_);
  auto direct = v1::Dynamics::NewStub(direct_);
  const std::string id = registerModel(*front, dh);
  ASSERT_FALSE(id.empty());
  // a batch of inverse dynamics: the core's answer, and bit for bit what denocd answers directly
  const v1::InverseDynamicsRequest req = idRequest(id, 7, 64, 5);
  v1::InverseDynamicsResponse via_front, via_socket;
  grpc::Status st = front->InverseDynamics(context().get(), req, &via_front);
  ASSERT_TRUE(st.ok()) << st.error_message();
  st = direct->InverseDynamics(context().get(), req, &via_socket);
  ASSERT_TRUE(st.ok()) << st.error_message();
  expectCloseField(via_front.tau(), coreOf(m, req), "tau through the front");
  ASSERT_EQ(via_front.tau_size(), via_socket.tau_size());
  for (int i = 0; i < via_front.tau_size(); ++i) EXPECT_EQ(via_front.tau(i), via_socket.tau(i)) << i;
  // the bidirectional Stream through the front: answers in order, each the core's
  auto s = openStream(*front, {});
  for (int k = 0; k < 5; ++k) {
    const v1::InverseDynamicsRequest one = idRequest(id, 7, 1, 100 + k);
    v1::StreamRequest sr;
    sr.set_model_id(id);
    sr.set_sequence(k);
    sr.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
    *sr.mutable_q() = one.q();
    *sr.mutable_qd() = one.qd();
    *sr.mutable_qdd() = one.qdd();
    ASSERT_TRUE(s->rw->Write(sr));
    v1::StreamResponse resp;
    ASSERT_TRUE(s->rw->Read(&resp));
    EXPECT_EQ(resp.sequence(), static_cast<unsigned>(k));
    expectCloseField(resp.result(), coreOf(m, one), "stream result through the front");
  }
  st = finish(*s);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

TEST_F(Front, RotatedCertificatesServeNewConnections) {
  ChannelSetup before, after;
  before.credentials = TlsMaterial::credentials(tls_->ca, tls_->client_cert, tls_->client_key);
  after.credentials = TlsMaterial::credentials(tls_->rogue_ca, tls_->rogue_cert, tls_->rogue_key);
  before.tls_name = after.tls_name = "localhost";
  const std::string address = "127.0.0.1:" + std::to_string(port_);
  ASSERT_TRUE(newConnectionServed(address, before)) << nginx_->log();
  ASSERT_FALSE(newConnectionServed(address, after));
  // a call in flight across the reload: a Stream opened before it
  auto stub = v1::Dynamics::NewStub(front_);
  auto in_flight = openStream(*stub, {});
  ASSERT_TRUE(echoes(*in_flight));
  // the secret rotated: another CA's server certificate, key and client CA, swapped in one rename. The
  // suite's other tests share this front: its own secret goes back when this test ends, however it ends, and
  // the test waits until a new connection is served with it again
  struct SwapBack {
    std::string address;
    ChannelSetup setup;
    ~SwapBack() {
      TlsMaterial::swapLink(dir_->str("tls-1"), dir_->str("tls"));
      EXPECT_GE(secondsUntilServed(address, setup, 60s), 0)
          << "the suite's own certificates were not served again";
    }
  };
  TlsMaterial::swapLink(TlsMaterial::secretDirectory(dir_->str("tls-2"), tls_->rogue_server_cert,
                                                     tls_->rogue_server_key, tls_->rogue_ca),
                        dir_->str("tls"));
  const SwapBack swap_back{address, before};
  const double seconds = secondsUntilServed(address, after, 60s);
  ASSERT_GE(seconds, 0) << "the rotated certificates were not served within 60 s\n" << nginx_->log();
  std::printf(
      "rotated certificates served by the front to a new connection after %.1f s (looked at every 1 s)\n",
      seconds);
  EXPECT_NE(nginx_->log().find("the TLS files or the watched names"), std::string::npos) << nginx_->log();
  // the old CA's clients are refused on new connections once the old workers have stopped listening: nginx's
  // master starts the new workers before it tells the old ones to stop, so for a moment either may accept
  // (seen once on a loaded machine); the call in flight goes on on the old worker and ends OK (nginx's reload
  // ends the old workers' connections when their calls have finished)
  const double refused = secondsUntilServedIs(false, address, before, 10s);
  EXPECT_GE(refused, 0) << "the old CA's client was still served 10 s after the new one\n" << nginx_->log();
  EXPECT_TRUE(echoes(*in_flight));
  const grpc::Status ended = finish(*in_flight);
  EXPECT_TRUE(ended.ok()) << ended.error_message();
  EXPECT_TRUE(nginx_->alive());
}

TEST_F(Front, VerifiedCertificateIsThePrincipal) {
  const std::string message = secondStreamRefusal({});
  EXPECT_NE(message.find(std::string("principal 'cert:") + kSubject + "'"), std::string::npos) << message;
  // the refusal is logged with the principal it names
  EXPECT_NE(denocd_->log().find(std::string("cert:") + kSubject), std::string::npos) << denocd_->log();
}

TEST_F(Front, ClientCannotForgeTheIdentityHeaders) {
  const std::string message = secondStreamRefusal({{"x-denoc-client-verify", "SUCCESS"},
                                                   {"x-denoc-client-subject", "CN=someone else"},
                                                   {"x-denoc-client-addr", "192.0.2.7"}});
  EXPECT_NE(message.find(std::string("principal 'cert:") + kSubject + "'"), std::string::npos) << message;
  EXPECT_EQ(message.find("someone else"), std::string::npos) << message;
  EXPECT_EQ(denocd_->log().find("someone else"), std::string::npos);
  EXPECT_EQ(denocd_->log().find("192.0.2.7"), std::string::npos);
}

TEST_F(Front, CertificateOfAnotherCaIsRefused) {
  auto rogue = v1::Dynamics::NewStub(frontChannel(tls_->rogue_cert, tls_->rogue_key));
  v1::ListModelsResponse resp;
  const grpc::Status st = rogue->ListModels(context(10s).get(), {}, &resp);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(resp.models_size(), 0);
}

TEST_F(Front, RapidResetIsCutOffWhileAnotherClientIsAnswered) {
  const Model m = buildModelFromDH(randomChain(7, 43));
  const std::string id = registerChain(43);
  ASSERT_FALSE(id.empty());
  // the attacker: 20 connections, each trying 100,000 HEADERS+DATA+RST_STREAM; the well-behaved client makes
  // at least 50 calls (the front allows 500 a second per certificate, with a burst of 1000)
  constexpr int kConnections = 20, kStreams = 100000;
  const UnderAttack u =
      callWhileAttacked(resetAttack("--model " + id + " --connections " + std::to_string(kConnections) +
                                    " --streams " + std::to_string(kStreams)),
                        id, m, 50, 1000);
  const nlohmann::json& report = u.report;
  const int calls = u.calls, failed = u.failed;
  const long rss_before = u.rss_before, rss_peak = u.rss_peak;
  ASSERT_FALSE(report.is_discarded()) << "the attack printed no report:\n" << u.text;
  EXPECT_EQ(failed, 0) << "of " << calls << " calls";
  // every connection was ended by nginx (GOAWAY or closed) long before its 100,000 streams
  ASSERT_EQ(report["connections"].size(), static_cast<std::size_t>(kConnections)) << report.dump();
  EXPECT_EQ(report["cut_off"].get<int>(), kConnections) << report.dump();
  // streams nginx took on each connection before its GOAWAY: about keepalive_requests (1000), however many
  // more the attacker wrote into the socket meanwhile. nginx counts requests, and a stream reset before its
  // request was read is none, so a few more stream ids go by (1078 seen); 2000 is far from 100,000
  for (const auto& c : report["connections"]) {
    if (c.contains("error")) continue;  // refused at connect: cut off all the same
    ASSERT_TRUE(c["goaway"].is_object()) << c.dump();
    EXPECT_LE((c["goaway"]["last_stream_id"].get<long>() + 1) / 2, 2000) << c.dump();
    EXPECT_LT(c["streams_sent"].get<int>(), kStreams) << c.dump();
  }
  // the attacker's certificate subject met limit_req (429) from the same address as the well-behaved client,
  // whose subject was not limited (no call failed, above)
  long limited = 0;
  for (const auto& c : report["connections"])
    if (c.contains("http_status") && c["http_status"].contains("429"))
      limited += c["http_status"]["429"].get<long>();
  EXPECT_GT(limited, 0) << report.dump();
  // both processes alive, denocd's resident size bounded
  EXPECT_TRUE(denocd_->alive()) << denocd_->log();
  EXPECT_TRUE(nginx_->alive()) << nginx_->log();
  if (kResidentSizeBounded) {
    EXPECT_LT(rss_peak - rss_before, 256L * 1024) << "KiB grown during the attack";
  }
  long taken = 0;
  for (const auto& c : report["connections"])
    if (c.contains("goaway") && c["goaway"].is_object())
      taken += (c["goaway"]["last_stream_id"].get<long>() + 1) / 2;
  std::printf(
      "rapid reset through the front: %ld streams written on %d connections, %ld taken by nginx, %ld refused "
      "with 429 (the attacker's certificate); %d well-behaved calls from the same address, %d failed; denocd "
      "RSS "
      "%ld -> %ld KiB\n",
      report["streams_sent"].get<long>(), kConnections, taken, limited, calls, failed, rss_before, rss_peak);
}

TEST_F(Front, EndlessHeaderBlockIsCutOffEveryTime) {
  // CVE-2023-33953's third vector, which gRPC 1.51 buffers without bound before any token check: HEADERS
  // without END_HEADERS, then CONTINUATION frames of 16 KB literals. Repeated on 8 connections (against
  // denocd alone it was intermittent), while a well-behaved client calls
  const Model m = buildModelFromDH(randomChain(7, 44));
  const std::string id = registerChain(44);
  ASSERT_FALSE(id.empty());
  constexpr int kConnections = 8, kMiB = 64;
  const UnderAttack u = callWhileAttacked(resetAttack("--connections " + std::to_string(kConnections) +
                                                      " --continuation-mb " + std::to_string(kMiB)),
                                          id, m, 20, 2000);
  const nlohmann::json& report = u.report;
  const int calls = u.calls, failed = u.failed;
  const long rss_before = u.rss_before, rss_peak = u.rss_peak;
  ASSERT_FALSE(report.is_discarded()) << "the attack printed no report:\n" << u.text;
  EXPECT_EQ(failed, 0) << "of " << calls << " calls";
  ASSERT_EQ(report["connections"].size(), static_cast<std::size_t>(kConnections)) << report.dump();
  // every connection ended by nginx, with GOAWAY ENHANCE_YOUR_CALM (11) on stream 1 (nginx's bound is 4 x
  // 16 KiB of header); the bytes counted as sent are what the kernel's socket buffers took before the client
  // saw the GOAWAY (1.5-2.8 MB measured on loopback), never the 64 MiB offered
  EXPECT_EQ(report["cut_off"].get<int>(), kConnections) << report.dump();
  long most = 0;
  for (const auto& c : report["connections"]) {
    if (c.contains("error")) continue;
    most = std::max(most, c["header_bytes_sent"].get<long>());
    EXPECT_LE(c["header_bytes_sent"].get<long>(), 16L << 20) << c.dump();
    EXPECT_TRUE(c["goaway"].is_object() || c["closed"].get<bool>()) << c.dump();
    if (c["goaway"].is_object()) {
      EXPECT_EQ(c["goaway"]["error_code"].get<int>(), 11) << c.dump();
    }
  }
  EXPECT_TRUE(denocd_->alive()) << denocd_->log();
  EXPECT_TRUE(nginx_->alive()) << nginx_->log();
  if (kResidentSizeBounded) {
    EXPECT_LT(rss_peak - rss_before, 64L * 1024) << "KiB grown during the attack";
  }
  std::printf(
      "endless header block through the front: %d connections, all cut off after at most %ld bytes of "
      "header block written into the socket; %d well-behaved calls, %d failed; denocd RSS %ld -> %ld KiB\n",
      kConnections, most, calls, failed, rss_before, rss_peak);
}

TEST_F(Front, StalledBodiesOfOneRobotLeaveAnotherAlone) {
  // the stalled-body memory run through the front: another robot opens 3 connections of 100 InverseDynamics
  // calls, each announcing 1 MiB and sending half of it as the windows allow, held 4 s, while a well-behaved
  // client calls. Against denocd alone 600 such calls held 300 MiB and gRPC's memory quota answered with
  // GOAWAY, failing well-behaved calls (tests/hostile/hostile.py stalled-bodies). Through the front, nginx
  // takes at most 32 streams per connection (http2_max_concurrent_streams) and 64 per certificate
  // (limit_conn): the offender meets its own bound first
  const Model m = buildModelFromDH(randomChain(7, 45));
  const std::string id = registerChain(45);
  ASSERT_FALSE(id.empty());
  constexpr int kConnections = 3, kCalls = 100;
  const UnderAttack u = callWhileAttacked(
      probeAttack("half-sent --calls " + std::to_string(kCalls) + " --mb 1 --hold 4", kConnections), id, m,
      20, 3000);
  ASSERT_TRUE(u.report.is_array()) << u.text;
  ASSERT_EQ(u.report.size(), static_cast<std::size_t>(kConnections)) << u.text;
  long body_bytes = 0, refused = 0;
  for (const auto& r : u.report) {
    ASSERT_TRUE(r.is_object() && r["reset_by_server"].is_object()) << u.text;
    body_bytes += r.value("body_bytes_sent", 0L);
    for (const auto& [code, n] : r["reset_by_server"].items()) refused += n.get<long>();
  }
  EXPECT_EQ(u.failed, 0) << "of " << u.calls << " calls";
  EXPECT_TRUE(denocd_->alive()) << denocd_->log();
  // at most 64 streams of the robot reach denocd, each with at most half a MiB (the bytes sent count also
  // what nginx read and dropped of the streams it refused, within their first window)
  if (kResidentSizeBounded) {
    EXPECT_LT(u.rss_peak - u.rss_before, 96L * 1024) << "KiB grown during the attack";
  }
  std::printf(
      "stalled bodies through the front: %d calls offered on %d connections, %.1f MiB of bodies sent, %ld "
      "streams "
      "reset by nginx; %d well-behaved calls, %d failed; denocd RSS %ld -> %ld KiB\n",
      kConnections * kCalls, kConnections, body_bytes / 1048576.0, refused, u.calls, u.failed, u.rss_before,
      u.rss_peak);
}

}  // namespace
}  // namespace denoc::test
