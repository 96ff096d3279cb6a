// Resource protection, cancellation, metrics and faults against real denocd processes on 127.0.0.1:
// the Prometheus endpoint's counts against the calls made and the store directory; bounds on streams and
// states in flight; cancelled and timed-out batches and simulations stopping part way; a client killed
// mid-stream; a store that fills up, then turns read-only.
#include <gtest/gtest.h>

#include <future>
#include <regex>

#include "grpc/health/v1/health.grpc.pb.h"
#include "metrics_scrape.hpp"
#include "server_process.hpp"
#include "support/run_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

int metricsPort(const TempDir& dir, const std::string& tag) {
  std::ifstream f(dir.str(tag + ".metrics-port"));
  int port = 0;
  f >> port;
  return port;
}

std::vector<std::string> withMetrics(const TempDir& dir, const std::string& tag,
                                     std::vector<std::string> extra = {}) {
  extra.insert(extra.end(),
               {"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir.str(tag + ".metrics-port")});
  return extra;
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

std::string registerDH(v1::Dynamics::Stub& stub, const DHSpec& dh) {
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(context().get(), dhRequest(dh), &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r.model_id();
}

std::string series(const std::string& name, const std::string& rpc, const std::string& code = "") {
  return code.empty() ? name + "{rpc=\"" + rpc + "\"}" : name + "{code=\"" + code + "\",rpc=\"" + rpc + "\"}";
}

TEST(ServerMetrics, CountsEveryCallByRpcAndCodeAndReadsTheStore) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), withMetrics(dir, "m"), "m");
  const int port = metricsPort(dir, "m");
  ASSERT_GT(port, 0);
  auto stub = server.stub();
  const DHSpec dh = randomChain(4, 31);
  const std::string id = registerDH(*stub, dh);
  registerDH(*stub, randomChain(5, 32));
  // 3 good inverse-dynamics calls of 5, 7 and 9 states; 2 refused ones; 1 unknown model
  for (int count : {5, 7, 9}) {
    v1::InverseDynamicsResponse r;
    ASSERT_TRUE(stub->InverseDynamics(context().get(), idRequest(id, 4, count, 1), &r).ok());
  }
  for (int bad = 0; bad < 2; ++bad) {
    auto req = idRequest(id, 4, 2, 1);
    req.mutable_q()->RemoveLast();
    v1::InverseDynamicsResponse r;
    ASSERT_EQ(stub->InverseDynamics(context().get(), req, &r).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  v1::GetModelRequest unknown;
  unknown.set_model_id(std::string(64, 'a'));
  v1::GetModelResponse got;
  ASSERT_EQ(stub->GetModel(context().get(), unknown, &got).error_code(), grpc::StatusCode::NOT_FOUND);
  // a stream of 4 messages and a simulation of 11 samples
  {
    auto ctx = context();
    auto stream = stub->Stream(ctx.get());
    for (int k = 0; k < 4; ++k) {
      v1::StreamRequest q;
      q.set_model_id(id);
      q.set_computation(v1::COMPUTATION_FORWARD_DYNAMICS);
      for (int j = 0; j < 4; ++j) q.add_q(0.1 * j), q.add_qd(0.0), q.add_tau(0.0);
      ASSERT_TRUE(stream->Write(q));
      v1::StreamResponse a;
      ASSERT_TRUE(stream->Read(&a));
    }
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
  }
  {
    v1::SimulateRequest q;
    q.set_model_id(id);
    q.set_dof(4);
    for (int j = 0; j < 4; ++j) q.add_q0(0.2), q.add_qd0(0.0);
    q.set_t_end(0.1);
    q.set_dt_out(0.01);
    auto ctx = context();
    auto reader = stub->Simulate(ctx.get(), q);
    v1::SimulateResponse r;
    int samples = 0;
    while (reader->Read(&r)) samples += r.t_size();
    ASSERT_TRUE(reader->Finish().ok());
    ASSERT_EQ(samples, 11);
  }
  const auto m = scrapeMetrics(port);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "InverseDynamics", "OK")), 3);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "InverseDynamics", "INVALID_ARGUMENT")), 2);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "GetModel", "NOT_FOUND")), 1);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "RegisterModel", "OK")), 2);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "Stream", "OK")), 1);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "Simulate", "OK")), 1);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "FullFactor", "OK")), 0);
  EXPECT_EQ(metric(m, series("denoc_states_total", "InverseDynamics")), 5 + 7 + 9);
  EXPECT_EQ(metric(m, series("denoc_states_total", "Stream")), 4);
  EXPECT_EQ(metric(m, series("denoc_states_total", "Simulate")), 11);
  EXPECT_EQ(metric(m, series("denoc_request_duration_seconds_count", "InverseDynamics")), 5);
  EXPECT_GT(metric(m, series("denoc_request_duration_seconds_sum", "InverseDynamics")), 0);
  EXPECT_EQ(metric(m, "denoc_request_duration_seconds_bucket{rpc=\"InverseDynamics\",le=\"+Inf\"}"), 5);
  for (const char* rpc : {"InverseDynamics", "Stream", "Simulate"})
    EXPECT_EQ(metric(m, series("denoc_calls_in_flight", rpc)), 0) << rpc;
  EXPECT_EQ(metric(m, "denoc_states_in_flight"), 0);
  // models: the registry's answer, and the store directory as this process sees it
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &list).ok());
  EXPECT_EQ(metric(m, "denoc_models_cached"), list.models_size());
  EXPECT_EQ(metric(m, "denoc_models_pinned"), 2);  // the two built-in examples
  std::size_t files = 0;
  std::uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir.str("store/v1"))) {
    if (e.path().extension() == ".pb") ++files, bytes += fs::file_size(e.path());
  }
  EXPECT_EQ(files, 2u);
  EXPECT_EQ(metric(m, "denoc_store_models"), static_cast<double>(files));
  EXPECT_EQ(metric(m, "denoc_store_bytes"), static_cast<double>(bytes));
  // a scrape of another path is not the metrics
  EXPECT_EQ(httpGet(port, "/nothing").find("denoc_requests_total"), std::string::npos);
}

TEST(ServerLimits, StreamsBeyondTheBoundAreRefusedAndTheirSlotsComeBack) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--max-streams", "2", "--principal-streams", "2"});
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(3, 41));
  struct Open {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> rw;
  };
  auto open = [&](bool expect_ok) {
    Open o{context(), nullptr};
    o.rw = stub->Stream(o.ctx.get());
    v1::StreamRequest q;
    q.set_model_id(id);
    q.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
    for (int j = 0; j < 3; ++j) q.add_q(0.0), q.add_qd(0.0), q.add_qdd(0.0);
    o.rw->Write(q);
    v1::StreamResponse a;
    EXPECT_EQ(o.rw->Read(&a), expect_ok);
    return o;
  };
  Open a = open(true), b = open(true);
  {
    Open c = open(false);
    const grpc::Status st = c.rw->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(st.error_message().find("--max-streams"), std::string::npos) << st.error_message();
  }
  // a simulation counts as a stream too
  v1::SimulateRequest sim;
  sim.set_model_id(id);
  sim.set_dof(3);
  for (int j = 0; j < 3; ++j) sim.add_q0(0.0), sim.add_qd0(0.0);
  sim.set_t_end(0.1);
  sim.set_dt_out(0.01);
  {
    auto ctx = context();
    auto reader = stub->Simulate(ctx.get(), sim);
    v1::SimulateResponse r;
    while (reader->Read(&r)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  // unary calls are not streams
  v1::InverseDynamicsResponse r;
  EXPECT_TRUE(stub->InverseDynamics(context().get(), idRequest(id, 3, 4, 1), &r).ok());
  // closing one frees its slot
  a.rw->WritesDone();
  EXPECT_TRUE(a.rw->Finish().ok());
  Open d = open(true);
  for (Open* o : {&b, &d}) {
    o->rw->WritesDone();
    EXPECT_TRUE(o->rw->Finish().ok());
  }
}

TEST(ServerLimits, LargeBatchesSplitOverThreadsEqualTheCore) {
  // four threads whatever the machine, so the batches are split even on one core
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--batch-threads", "4"});
  EXPECT_NE(server.log().find("large batches split over 4 threads"), std::string::npos) << server.log();
  auto stub = server.stub();
  const DHSpec dh = randomChain(7, 91, true);
  const Model m = buildModelFromDH(dh);
  const std::string id = registerDH(*stub, dh);
  for (int count : {1, 600, 3001}) {
    const auto req = idRequest(id, m.n, count, 17u + static_cast<unsigned>(count));
    const std::vector<double> q(req.q().begin(), req.q().end()), qd(req.qd().begin(), req.qd().end()),
        qdd(req.qdd().begin(), req.qdd().end());
    v1::InverseDynamicsResponse id_resp;
    ASSERT_TRUE(stub->InverseDynamics(context().get(), req, &id_resp).ok());
    expectCloseField(id_resp.tau(), coreID(m, q, qd, qdd), "tau of a split batch");
    v1::ForwardDynamicsRequest fd;
    fd.set_model_id(id);
    fd.set_count(static_cast<std::uint32_t>(count));
    fd.set_dof(static_cast<std::uint32_t>(m.n));
    fd.set_route(v1::FORWARD_ROUTE_FIXMAN);
    *fd.mutable_q() = req.q();
    *fd.mutable_qd() = req.qd();
    *fd.mutable_tau() = req.qdd();
    v1::ForwardDynamicsResponse fd_resp;
    ASSERT_TRUE(stub->ForwardDynamics(context().get(), fd, &fd_resp).ok());
    expectCloseField(fd_resp.qdd(), coreFD(m, q, qd, qdd, Route::Fixman), "qdd of a split batch");
    v1::FullFactorRequest ff;
    ff.set_model_id(id);
    ff.set_count(static_cast<std::uint32_t>(count));
    ff.set_dof(static_cast<std::uint32_t>(m.n));
    *ff.mutable_q() = req.q();
    v1::FullFactorResponse ff_resp;
    ASSERT_TRUE(stub->FullFactor(context().get(), ff, &ff_resp).ok());
    ASSERT_EQ(ff_resp.log_det_size(), count);
    Data d(m);
    for (int k = 0; k < count; k += std::max(1, count / 50)) {
      computeFullFactor(m, d, Eigen::Map<const Eigen::VectorXd>(&q[static_cast<std::size_t>(k) * m.n], m.n));
      EXPECT_NEAR(ff_resp.log_det(k), d.log_det, 1e-12 * std::max(1.0, std::abs(d.log_det))) << "state " << k;
      for (int j = 0; j < m.n; ++j) EXPECT_NEAR(ff_resp.d(k * m.n + j), d.D[j], 1e-12 * std::abs(d.D[j]));
    }
  }
}

TEST(ServerLimits, CancelledMillionStateBatchStopsPartWayAndABusyServerRefusesMore) {
  TempDir dir;
  constexpr int kStates = 1000000;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, "c",
                                   {"--max-states", "1000000", "--max-inflight-states", "1000000",
                                    "--max-message-bytes", "200000000"}),
                       "c");
  const int port = metricsPort(dir, "c");
  auto stub = server.unlimitedStub();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerDH(*stub, stanfordArmDH());
  // a million states of O(n) forward dynamics by Fixman's route: seconds of work
  v1::ForwardDynamicsRequest big;
  big.set_model_id(id);
  big.set_count(kStates);
  big.set_dof(static_cast<std::uint32_t>(m.n));
  big.set_route(v1::FORWARD_ROUTE_FIXMAN);
  big.mutable_q()->Resize(kStates * m.n, 0.3);
  big.mutable_qd()->Resize(kStates * m.n, 0.1);
  big.mutable_tau()->Resize(kStates * m.n, 1.0);
  grpc::ClientContext big_ctx;
  big_ctx.set_deadline(std::chrono::system_clock::now() + 120s);
  auto pending = std::async(std::launch::async, [&] {
    v1::ForwardDynamicsResponse r;
    return stub->ForwardDynamics(&big_ctx, big, &r);
  });
  // wait until the server computes it
  const bool computing = eventually(
      [&] {
        return metric(scrapeMetrics(port), "denoc_states_in_flight") == kStates ||
               pending.wait_for(0s) == std::future_status::ready;
      },
      60s);
  ASSERT_TRUE(computing && pending.wait_for(0s) != std::future_status::ready)
      << (pending.wait_for(0s) == std::future_status::ready
              ? "the batch ended: " + pending.get().error_message()
              : std::string("never computed"))
      << "\n"
      << server.log();
  // the autoscaling signals: one compute thread busy with it, of the server's threads (2 by default here: at
  // least 2, at most the usable cores)
  const auto during = scrapeMetrics(port);
  EXPECT_GE(metric(during, "denoc_compute_threads_busy"), 1);
  EXPECT_GE(metric(during, "denoc_compute_threads"), 2);
  EXPECT_LE(metric(during, "denoc_compute_threads_busy"), metric(during, "denoc_compute_threads"));
  EXPECT_EQ(during.count("denoc_compute_queue_depth"), 1u);
  // meanwhile, any other batch is refused: the server is busy
  v1::InverseDynamicsResponse r;
  const grpc::Status busy = stub->InverseDynamics(context().get(), idRequest(id, m.n, 1, 3), &r);
  EXPECT_EQ(busy.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(busy.error_message().find("server busy"), std::string::npos) << busy.error_message();
  // let it run a little (not needed for the test to pass: stopping before the first state is stopping too)
  std::this_thread::sleep_for(200ms);
  big_ctx.TryCancel();
  EXPECT_EQ(pending.get().error_code(), grpc::StatusCode::CANCELLED);
  // the server stopped part way, let go of the states and serves again
  ASSERT_TRUE(eventually([&] { return stoppedAfter(server.log()) >= 0; })) << server.log();
  const long long k = stoppedAfter(server.log());
  EXPECT_GE(k, 0);
  EXPECT_LT(k, kStates);
  std::printf("[ figures  ] cancelled batch stopped after %lld of %d states\n", k, kStates);
  EXPECT_TRUE(eventually([&] { return metric(scrapeMetrics(port), "denoc_states_in_flight") == 0; }));
  EXPECT_TRUE(eventually([&] {
    const auto idle = scrapeMetrics(port);
    return metric(idle, "denoc_compute_threads_busy") == 0 && metric(idle, "denoc_compute_queue_depth") == 0;
  }));
  EXPECT_TRUE(stub->InverseDynamics(context().get(), idRequest(id, m.n, 2, 3), &r).ok());
  EXPECT_EQ(metric(scrapeMetrics(port), series("denoc_requests_total", "ForwardDynamics", "CANCELLED")), 1);
}

TEST(ServerLimits, CancelledKinematicsAndDerivativesBatchesStopPartWay) {
  // the planners' batches run on the core's batch engine too: a cancelled call stops part way
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, "p",
                                   {"--max-states", "100000", "--max-inflight-states", "100000",
                                    "--max-message-bytes", "200000000", "--batch-threads", "1"}),
                       "p");
  const int port = metricsPort(dir, "p");
  auto stub = server.unlimitedStub();
  constexpr int kDof = 60;
  const std::string id = registerDH(*stub, randomChain(kDof, 91));
  // operational-space inertias of 10^5 states (seconds of work), derivatives of forward dynamics of 1500
  // (about a second of work at 60 joints)
  v1::KinematicsRequest kin;
  kin.set_model_id(id);
  kin.set_count(100000);
  kin.set_dof(kDof);
  kin.set_lambda(true);
  for (double v : randomStates(100000, kDof, 92)) kin.add_q(v);
  v1::DerivativesRequest der;
  der.set_model_id(id);
  der.set_count(1500);
  der.set_dof(kDof);
  der.set_of(v1::DERIVATIVE_OF_FORWARD_DYNAMICS);
  for (double v : randomStates(1500, kDof, 93)) der.add_q(v);
  for (double v : randomStates(1500, kDof, 94)) der.add_qd(v);
  for (double v : randomStates(1500, kDof, 95)) der.add_tau(v);
  for (const std::string rpc : {"Kinematics", "Derivatives"}) {
    const std::uint32_t count = rpc == "Kinematics" ? kin.count() : der.count();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 120s);
    auto pending = std::async(std::launch::async, [&] {
      if (rpc == "Kinematics") {
        v1::KinematicsResponse r;
        return stub->Kinematics(&ctx, kin, &r);
      }
      v1::DerivativesResponse r;
      return stub->Derivatives(&ctx, der, &r);
    });
    ASSERT_TRUE(eventually([&] {
      return metric(scrapeMetrics(port), "denoc_states_in_flight") == count ||
             pending.wait_for(0s) == std::future_status::ready;
    }));
    ctx.TryCancel();
    EXPECT_EQ(pending.get().error_code(), grpc::StatusCode::CANCELLED) << rpc;
    ASSERT_TRUE(eventually([&] {
      return server.log().find(rpc == "Kinematics"
                                   ? "frameBatch: stopped after"
                                   : "forwardDynamicsDerivativesBatch: stopped after") != std::string::npos;
    })) << rpc
        << "\n"
        << server.log();
    const long long k = stoppedAfter(server.log());
    EXPECT_GE(k, 0) << rpc;  // the last such line: this batch's (its own message was found above)
    EXPECT_LT(k, count) << rpc;
    std::printf("[ figures  ] cancelled %s batch stopped after %lld of %u states\n", rpc.c_str(), k, count);
    EXPECT_TRUE(eventually([&] { return metric(scrapeMetrics(port), "denoc_states_in_flight") == 0; }))
        << rpc;
    EXPECT_EQ(metric(scrapeMetrics(port), series("denoc_requests_total", rpc, "CANCELLED")), 1) << rpc;
  }
}

TEST(ServerLimits, SimulationPastItsDeadlineStopsBetweenSamples) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const std::string id = registerDH(*stub, stanfordArmDH());
  // 5,000,000 RK4 steps to the only sample after t = 0: tens of seconds of work, with a 300 ms deadline
  v1::SimulateRequest q;
  q.set_model_id(id);
  q.set_dof(6);
  for (int j = 0; j < 6; ++j) q.add_q0(0.3), q.add_qd0(0.0);
  q.set_integrator(v1::INTEGRATOR_RK4);
  q.set_step(1e-3);
  q.set_t_end(5000.0);
  q.set_dt_out(5000.0);
  auto ctx = context(300ms);
  auto reader = stub->Simulate(ctx.get(), q);
  v1::SimulateResponse r;
  while (reader->Read(&r)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // the server's own status (its log line), not the one the client's library makes at the deadline
  static const std::regex re(
      "Simulate from [^ ]+ failed: DEADLINE_EXCEEDED: simulate: stopped after [0-9]+ of 2 samples "
      "\\(([0-9]+) "
      "steps\\): the deadline passed");
  std::smatch match;
  ASSERT_TRUE(eventually([&] {
    const std::string log = server.log();
    return std::regex_search(log, match, re);
  })) << server.log();
  const std::string log = server.log();
  ASSERT_TRUE(std::regex_search(log, match, re));
  const long long steps = std::stoll(match[1]);
  EXPECT_LT(steps, 5000000);
  std::printf("[ figures  ] simulation stopped at its deadline after %lld of 5000000 steps\n", steps);
  // and the server goes on
  v1::InverseDynamicsResponse a;
  EXPECT_TRUE(stub->InverseDynamics(context().get(), idRequest(id, 6, 2, 5), &a).ok());
}

TEST(ServerFaults, ClientKilledMidStreamReleasesItsStreams) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       withMetrics(dir, "k", {"--max-streams", "2", "--principal-streams", "2"}), "k");
  const int port = metricsPort(dir, "k");
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(4, 51));
  for (int round = 0; round < 3; ++round) {
    const std::string out = dir.str("client.out");
    pid_t pid = -1;
    std::vector<std::string> args = {DENOC_STREAM_CLIENT, server.address(), id, "4"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(posix_spawn(&pid, DENOC_STREAM_CLIENT, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    // both of its streams are open (the server's bound is 2)
    ASSERT_TRUE(eventually([&] {
      const auto m = scrapeMetrics(port);
      return metric(m, series("denoc_calls_in_flight", "Stream")) == 1 &&
             metric(m, series("denoc_calls_in_flight", "Simulate")) == 1;
    })) << server.log();
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // the server notices, ends both calls and frees their slots
    ASSERT_TRUE(eventually([&] {
      const auto m = scrapeMetrics(port);
      return metric(m, series("denoc_calls_in_flight", "Stream")) == 0 &&
             metric(m, series("denoc_calls_in_flight", "Simulate")) == 0;
    })) << server.log();
  }
  // still serving, with both slots free
  v1::InverseDynamicsResponse r;
  EXPECT_TRUE(stub->InverseDynamics(context().get(), idRequest(id, 4, 3, 7), &r).ok());
  const auto m = scrapeMetrics(port);
  EXPECT_EQ(metric(m, series("denoc_requests_total", "Simulate", "CANCELLED")), 3);
}

/// A wrapper that starts denocd in a mount namespace of its own with a tmpfs of `size` at store, or empty
/// when this machine does not allow it (not root, no unshare).
std::vector<std::string> tmpfsStore(const std::string& store, const std::string& size) {
  if (::geteuid() != 0) return {};
  if (std::system("unshare --mount --propagation private true >/dev/null 2>&1") != 0) return {};
  return {
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      "mkdir -p '" + store + "' && mount -t tmpfs -o size=" + size + " tmpfs '" + store + "' && exec \"$@\"",
      "sh"};
}

TEST(ServerFaults, FullStoreThenReadOnlyStoreRefuseRegistrationsAndKeepServing) {
  TempDir dir;
  const std::string store = dir.str("store");
  ChannelSetup setup;
  setup.wrapper = tmpfsStore(store, "64k");
  if (setup.wrapper.empty()) GTEST_SKIP() << "needs root and unshare --mount for a tmpfs store";
  ServerProcess server(dir.str(), store, {"--examples", "false"}, "tmpfs", setup);
  auto stub = server.stub();
  // fill it: 64 kB hold a handful of model files (each takes a 4 kB page at least)
  std::vector<std::pair<std::string, DHSpec>> registered;
  grpc::Status full;
  for (unsigned i = 0; i < 200; ++i) {
    const DHSpec dh = randomChain(3, 600 + i);
    v1::RegisterModelResponse r;
    const grpc::Status s = stub->RegisterModel(context().get(), dhRequest(dh), &r);
    if (!s.ok()) {
      full = s;
      break;
    }
    registered.emplace_back(r.model_id(), dh);
  }
  ASSERT_FALSE(full.ok()) << "the store never filled up";
  EXPECT_EQ(full.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(full.error_message().find("No space left on device"), std::string::npos) << full.error_message();
  ASSERT_GE(registered.size(), 2u);
  std::printf("[ figures  ] %zu models fit in the 64 kB store\n", registered.size());
  // the refused model is not registered, and left no file behind (no temporary file either)
  {
    v1::ListModelsResponse list;
    ASSERT_TRUE(stub->ListModels(context().get(), {}, &list).ok());
    EXPECT_EQ(list.models_size(), static_cast<int>(registered.size()));
  }
  // the store as the server sees it, in its own mount namespace
  const std::string seen = "/proc/" + std::to_string(server.pid()) + "/root" + store;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(seen + "/v1")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".pb") << e.path();
  }
  EXPECT_EQ(files, registered.size());
  // cached models answer correctly
  auto check = [&](const std::string& id, const DHSpec& dh, unsigned seed) {
    const Model m = buildModelFromDH(dh);
    auto req = idRequest(id, m.n, 3, seed);
    v1::InverseDynamicsResponse r;
    ASSERT_TRUE(stub->InverseDynamics(context().get(), req, &r).ok());
    expectCloseField(r.tau(),
                     coreID(m, {req.q().begin(), req.q().end()}, {req.qd().begin(), req.qd().end()},
                            {req.qdd().begin(), req.qdd().end()}),
                     "tau with a full store");
  };
  check(registered[0].first, registered[0].second, 1);
  // now read-only: delete and register are refused with the reason, the model stays
  const std::string remount =
      "nsenter --target " + std::to_string(server.pid()) + " --mount mount -o remount,ro '" + store + "'";
  ASSERT_EQ(std::system(remount.c_str()), 0) << remount;
  v1::DeleteModelRequest del;
  del.set_model_id(registered[1].first);
  v1::DeleteModelResponse deleted;
  const grpc::Status ro = stub->DeleteModel(context().get(), del, &deleted);
  EXPECT_EQ(ro.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(ro.error_message().find("Read-only file system"), std::string::npos) << ro.error_message();
  v1::RegisterModelResponse r;
  const grpc::Status reg = stub->RegisterModel(context().get(), dhRequest(randomChain(2, 999)), &r);
  EXPECT_EQ(reg.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(reg.error_message().find("Read-only file system"), std::string::npos) << reg.error_message();
  check(registered[1].first, registered[1].second, 2);
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &list).ok());
  EXPECT_EQ(list.models_size(), static_cast<int>(registered.size()));
  auto health = grpc::health::v1::Health::NewStub(server.channel());
  grpc::health::v1::HealthCheckResponse h;
  ASSERT_TRUE(health->Check(context().get(), {}, &h).ok());
  EXPECT_EQ(h.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

}  // namespace
}  // namespace denoc::test
