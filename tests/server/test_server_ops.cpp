// Concurrency (8 client threads x 2000 mixed calls while models are registered and deleted), health during
// start-up and draining, graceful shutdown, server reflection.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server_process.hpp"
#include "support/run_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

using health = grpc::health::v1::HealthCheckResponse;

health::ServingStatus healthStatus(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                                   grpc::Status* status = nullptr) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse resp;
  const grpc::Status st = stub->Check(context(5s).get(), req, &resp);
  if (status) *status = st;
  return st.ok() ? resp.status() : health::UNKNOWN;
}

struct Prepared {
  std::string id;
  int n;
  std::vector<double> q, qd, qdd, tau;
  std::vector<double> id_answer, fd_answer, logdet;
};

TEST(ServerConcurrency, EightThreadsMixedCallsWithRegistrationsAndDeletions) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  // three models with precomputed answers from the in-process core
  std::vector<Prepared> models;
  for (unsigned seed : {1u, 2u, 3u}) {
    const DHSpec dh = randomChain(5 + static_cast<int>(seed), 100 + seed, seed == 2);
    const Model m = buildModelFromDH(dh);
    v1::RegisterModelResponse reg;
    ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(dh), &reg).ok());
    Prepared p;
    p.id = reg.model_id();
    p.n = m.n;
    p.q = randomStates(4, m.n, seed);
    p.qd = randomStates(4, m.n, seed + 10);
    p.qdd = randomStates(4, m.n, seed + 20);
    p.tau = randomStates(4, m.n, seed + 30, 5.0);
    p.id_answer = coreID(m, p.q, p.qd, p.qdd);
    p.fd_answer = coreFD(m, p.q, p.qd, p.tau, Route::Saha);
    Data d(m);
    for (int k = 0; k < 4; ++k) {
      computeUDU(m, d, Eigen::Map<const Eigen::VectorXd>(&p.q[k * m.n], m.n), false);
      p.logdet.push_back(d.log_det);
    }
    models.push_back(std::move(p));
  }

  std::atomic<bool> stop{false};
  std::atomic<int> churn_errors{0}, churn_done{0};
  // registrations and deletions of other models, concurrently
  std::thread churn([&] {
    auto s = server.stub();
    for (unsigned i = 0; i < 400 && !stop; ++i) {
      v1::RegisterModelResponse reg;
      if (!s->RegisterModel(context().get(), dhRequest(randomChain(4, 5000 + i)), &reg).ok()) ++churn_errors;
      v1::DeleteModelRequest del;
      del.set_model_id(reg.model_id());
      v1::DeleteModelResponse resp;
      if (!s->DeleteModel(context().get(), del, &resp).ok()) ++churn_errors;
      ++churn_done;
    }
  });

  constexpr int kThreads = 8, kCalls = 2000;
  std::atomic<int> errors{0}, wrong{0}, calls{0};
  std::vector<std::thread> clients;
  const auto deadline = std::chrono::steady_clock::now() + 100s;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      auto s = v1::Dynamics::NewStub(
          grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), [t] {
            grpc::ChannelArguments args;
            args.SetInt("denoc_test_channel", t);  // a connection per thread
            return args;
          }()));
      for (int c = 0; c < kCalls && std::chrono::steady_clock::now() < deadline; ++c) {
        const Prepared& p = models[static_cast<std::size_t>(c + t) % models.size()];
        const int k = c % 4;
        const auto slice = [&](const std::vector<double>& v) {
          return google::protobuf::RepeatedField<double>(v.begin() + k * p.n, v.begin() + (k + 1) * p.n);
        };
        const auto same = [&](const google::protobuf::RepeatedField<double>& got,
                              const std::vector<double>& want) {
          for (int j = 0; j < p.n; ++j) {
            if (!(std::abs(got.Get(j) - want[k * p.n + j]) <=
                  1e-12 * std::max(1.0, std::abs(want[k * p.n + j]))))
              return false;
          }
          return true;
        };
        grpc::Status st;
        bool ok = true;
        switch (c % 4) {
          case 0:
          case 1: {
            v1::InverseDynamicsRequest r;
            r.set_model_id(p.id);
            r.set_count(1);
            r.set_dof(p.n);
            *r.mutable_q() = slice(p.q);
            *r.mutable_qd() = slice(p.qd);
            *r.mutable_qdd() = slice(p.qdd);
            v1::InverseDynamicsResponse resp;
            st = s->InverseDynamics(context().get(), r, &resp);
            ok = st.ok() && resp.tau_size() == p.n && same(resp.tau(), p.id_answer);
            break;
          }
          case 2: {
            v1::ForwardDynamicsRequest r;
            r.set_model_id(p.id);
            r.set_count(1);
            r.set_dof(p.n);
            *r.mutable_q() = slice(p.q);
            *r.mutable_qd() = slice(p.qd);
            *r.mutable_tau() = slice(p.tau);
            v1::ForwardDynamicsResponse resp;
            st = s->ForwardDynamics(context().get(), r, &resp);
            ok = st.ok() && resp.qdd_size() == p.n && same(resp.qdd(), p.fd_answer);
            break;
          }
          default: {
            v1::FullFactorRequest r;
            r.set_model_id(p.id);
            r.set_count(1);
            r.set_dof(p.n);
            *r.mutable_q() = slice(p.q);
            v1::FullFactorResponse resp;
            st = s->FullFactor(context().get(), r, &resp);
            ok = st.ok() && resp.log_det_size() == 1 &&
                 std::abs(resp.log_det(0) - p.logdet[k]) <= 1e-12 * std::max(1.0, std::abs(p.logdet[k]));
            break;
          }
        }
        ++calls;
        if (!st.ok()) {
          if (++errors <= 3) ADD_FAILURE() << "call failed: " << st.error_message();
        } else if (!ok) {
          ++wrong;
        }
      }
    });
  }
  for (auto& c : clients) c.join();
  stop = true;
  churn.join();
  EXPECT_EQ(calls.load(), kThreads * kCalls) << "the time bound cut the run short";
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(churn_errors.load(), 0);
  EXPECT_GT(churn_done.load(), 0);
  // the registry holds exactly the two built-in models and the three test models
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &list).ok());
  EXPECT_EQ(list.models_size(), 5);
}

TEST(ServerOps, HealthServingThenNotServingWhileDrainingThenExitZero) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       {"--shutdown-grace-ms", "300", "--drain-timeout-ms", "180000"});
  EXPECT_EQ(healthStatus(server.channel(), ""), health::SERVING);
  EXPECT_EQ(healthStatus(server.channel(), "denoc.v1.Dynamics"), health::SERVING);
  auto stub = server.stub();
  v1::RegisterModelResponse reg;
  ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(planarArmDH()), &reg).ok());
  server.signal(SIGTERM);
  // NOT_SERVING during the grace period (bounded polling)
  bool not_serving = false;
  for (int i = 0; i < 200 && !not_serving; ++i) {
    not_serving = healthStatus(server.channel(), "denoc.v1.Dynamics") == health::NOT_SERVING;
    if (!not_serving) std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(not_serving);
  EXPECT_EQ(healthStatus(server.channel(), ""), health::NOT_SERVING);
  // a long call started during the grace period runs on through the drain and completes
  v1::SimulateRequest sim;
  sim.set_model_id(reg.model_id());
  sim.set_dof(3);
  for (double v : {0.3, -0.2, 0.1}) sim.add_q0(v);
  for (double v : {0.0, 0.0, 0.0}) sim.add_qd0(v);
  sim.set_integrator(v1::INTEGRATOR_RK4);
  sim.set_t_end(20.0);
  sim.set_step(5e-5);  // 400k steps: long enough to outlast the grace period on a fast machine
  sim.set_dt_out(0.01);
  // the drain timeout and the deadline leave room for a sanitizer build, where these steps take ~40 s
  const auto t0 = std::chrono::steady_clock::now();
  auto ctx = context(170s);
  auto reader = stub->Simulate(ctx.get(), sim);
  v1::SimulateResponse resp;
  std::size_t samples = 0;
  bool last = false;
  for (int i = 0; i < 100000 && reader->Read(&resp); ++i) {
    samples += resp.t_size();
    last = resp.last();
  }
  const grpc::Status st = reader->Finish();
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(samples, 2001u);
  EXPECT_TRUE(last);
  EXPECT_GT(elapsed, 300ms) << "the call ended before the drain began: make the simulation longer";
  const int status = server.wait(60s);
  ASSERT_NE(status, -1) << "denocd did not exit";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(server.log().find("SIGTERM received"), std::string::npos);
}

TEST(ServerOps, SigintAlsoShutsDownCleanly) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  server.signal(SIGINT);
  const int status = server.wait(20s);
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ServerOps, ReflectionListsTheService) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(server.channel());
  auto ctx = context(10s);
  auto stream = stub->ServerReflectionInfo(ctx.get());
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_list_services("");
  ASSERT_TRUE(stream->Write(req));
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  std::set<std::string> services;
  for (const auto& s : resp.list_services_response().service()) services.insert(s.name());
  EXPECT_TRUE(services.count("denoc.v1.Dynamics"));
  EXPECT_TRUE(services.count("grpc.health.v1.Health"));
}

TEST(ServerOps, ReflectionDescribesTheServiceAsTheClientsSchemaDoes) {
  // what grpcurl asks: the file holding a symbol, with its dependencies, once per stream; compared with the
  // descriptors compiled into this test (the clients' schema)
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  namespace rv = grpc::reflection::v1alpha;
  auto stub = rv::ServerReflection::NewStub(server.channel());
  auto ctx = context(10s);
  auto stream = stub->ServerReflectionInfo(ctx.get());
  const auto ask = [&](const rv::ServerReflectionRequest& req) {
    rv::ServerReflectionResponse resp;
    EXPECT_TRUE(stream->Write(req));
    EXPECT_TRUE(stream->Read(&resp));
    return resp;
  };
  rv::ServerReflectionRequest by_symbol;
  by_symbol.set_file_containing_symbol("denoc.v1.Dynamics.InverseDynamics");
  const rv::ServerReflectionResponse first = ask(by_symbol);
  ASSERT_TRUE(first.has_file_descriptor_response()) << first.DebugString().substr(0, 500);
  const google::protobuf::FileDescriptor* ours = v1::InverseDynamicsRequest::descriptor()->file();
  google::protobuf::FileDescriptorProto want;
  ours->CopyTo(&want);
  bool found = false;
  for (const std::string& bytes : first.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto got;
    ASSERT_TRUE(got.ParseFromString(bytes));
    if (got.name() != ours->name()) continue;
    found = true;
    EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString()) << got.name();
  }
  EXPECT_TRUE(found) << "no " << ours->name();
  // asked again on the same stream: the file is not sent twice
  const rv::ServerReflectionResponse again = ask(by_symbol);
  EXPECT_EQ(again.file_descriptor_response().file_descriptor_proto_size(), 0);
  // an unknown symbol: NOT_FOUND in the answer, and the stream goes on
  rv::ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("denoc.v1.NoSuchThing");
  const rv::ServerReflectionResponse missing = ask(unknown);
  EXPECT_EQ(missing.error_response().error_code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  rv::ServerReflectionRequest by_file;
  by_file.set_file_by_filename(std::string(5000, 'f'));
  EXPECT_EQ(ask(by_file).error_response().error_code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST(ServerOps, ReflectionWithoutATokenCannotHoldWhatOthersNeed) {
  // reflection needs no token; 12 idle reflection streams from one caller without a token: 4 are admitted,
  // the rest refused naming the bound; they hold no thread, so a token holder's reflection and calls go on,
  // and the idle ones end after --idle-stream-timeout-ms
  TempDir dir;
  std::ofstream(dir.str("tokens")) << "alice token-a\n";
  ServerProcess server(dir.str(), dir.str("store"),
                       {"--token-file", dir.str("tokens"), "--idle-stream-timeout-ms", "1500"});
  namespace rv = grpc::reflection::v1alpha;
  auto stub = rv::ServerReflection::NewStub(server.channel());
  struct Idle {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReaderWriter<rv::ServerReflectionRequest, rv::ServerReflectionResponse>>
        stream;
  };
  std::vector<Idle> idle;
  for (int i = 0; i < 12; ++i) {
    Idle c{context(30s), nullptr};
    c.stream = stub->ServerReflectionInfo(c.ctx.get());
    idle.push_back(std::move(c));
  }
  const auto t0 = std::chrono::steady_clock::now();
  // the token holder: reflection and a Dynamics call, answered at once
  const auto withToken = [] {
    auto ctx = context(10s);
    ctx->AddMetadata("authorization", "Bearer token-a");
    return ctx;
  };
  {
    auto ctx = withToken();
    auto stream = stub->ServerReflectionInfo(ctx.get());
    rv::ServerReflectionRequest req;
    req.set_list_services("");
    ASSERT_TRUE(stream->Write(req));
    rv::ServerReflectionResponse resp;
    ASSERT_TRUE(stream->Read(&resp)) << "the token holder's reflection";
    EXPECT_GE(resp.list_services_response().service_size(), 3);
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  v1::GetServerInfoResponse info;
  EXPECT_TRUE(server.stub()->GetServerInfo(withToken().get(), {}, &info).ok());
  const double answered_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(answered_s, 1.0);
  // the idle ones: 4 admitted, ended by the idle timeout; 8 refused at once, naming the bound
  int refused = 0, ended_idle = 0;
  for (Idle& c : idle) {
    const grpc::Status st = c.stream->Finish();  // the server ends each: refused, or idle
    if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
      EXPECT_NE(st.error_message().find("reflection streams open"), std::string::npos) << st.error_message();
    } else {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
      EXPECT_NE(st.error_message().find("no message for"), std::string::npos) << st.error_message();
      ++ended_idle;
    }
  }
  std::printf(
      "[ figures  ] 12 idle reflection streams without a token: %d admitted (ended idle), %d refused; "
      "the token holder answered in %.3f s\n",
      ended_idle, refused, answered_s);
  EXPECT_EQ(ended_idle, 4);
  EXPECT_EQ(refused, 8);
}

TEST(ServerOps, ExamplesPreloadedAndPinned) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       {"--preload", std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf@panda_link8"});
  v1::ListModelsResponse list;
  ASSERT_TRUE(server.stub()->ListModels(context().get(), {}, &list).ok());
  std::map<std::string, v1::ModelInfo> by_name;
  for (const auto& m : list.models()) by_name[m.name()] = m;
  ASSERT_TRUE(by_name.count("stanford_arm"));
  ASSERT_TRUE(by_name.count("planar_3r"));
  EXPECT_EQ(by_name["stanford_arm"].dof(), 6u);
  EXPECT_EQ(by_name["planar_3r"].dof(), 3u);
  EXPECT_TRUE(by_name["stanford_arm"].pinned());
  EXPECT_EQ(list.models_size(), 3);
  bool panda = false;
  for (const auto& m : list.models()) panda |= m.dof() == 7 && m.pinned() && m.source() == "urdf";
  EXPECT_TRUE(panda);
}

// A second denocd on a port another one listens on fails at start, naming the address, instead of sharing
// the port (gRPC's SO_REUSEPORT, off): the first keeps every call.
TEST(ServerOps, ASecondServerOnTheSamePortFailsNamingIt) {
  TempDir dir;
  ServerProcess first(dir.str(), dir.str("store"));
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  // at most 20 s: a second server that shares the port keeps running (timeout's 124)
  const auto r = testing::runProcess("timeout",
                                     {"20", DENOC_DENOCD, "--listen", address, "--store-dir",
                                      dir.str("store2"), "--port-file", dir.str("second.port")},
                                     dir.str("second"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("cannot listen on " + address), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir.str("second.port")));
  auto stub = first.stub();
  v1::GetServerInfoResponse info;
  grpc::ClientContext ctx;
  EXPECT_TRUE(stub->GetServerInfo(&ctx, {}, &info).ok());
}

}  // namespace
}  // namespace denoc::test
