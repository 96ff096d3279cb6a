// A fleet on one machine: three denocd replicas on 127.0.0.1 sharing one store directory, one client
// channel with gRPC's round_robin over the three addresses. Models are registered through the fleet, then
// 3000 mixed calls run from four client threads; after a third of them one replica is killed with SIGKILL,
// after half of them it is restarted on its port. Every call must succeed with the right answer, possibly
// after retries on UNAVAILABLE; the same request must get bit-identical answers from every replica; after
// the run every replica lists the same models. The figures (calls, retries, wrong answers, time lost around
// the kill) are printed.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

using Clock = std::chrono::steady_clock;

struct Request {
  int kind;  // 0 inverse dynamics, 1 forward dynamics, 2 full factor
  std::size_t model;
  std::vector<double> q, qd, x;  // x: qdd or tau
  std::vector<double> expected;  // tau, qdd, or I followed by log det
};

struct FleetModel {
  std::string id;
  std::unique_ptr<Model> model;
};

/// The answer of a request (the doubles compared), or a status.
grpc::Status call(v1::Dynamics::Stub& stub, const FleetModel& fm, const Request& r, std::vector<double>& out,
                  std::string& peer) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  const auto n = static_cast<std::uint32_t>(fm.model->n);
  grpc::Status s;
  out.clear();
  if (r.kind == 0) {
    v1::InverseDynamicsRequest q;
    q.set_model_id(fm.id);
    q.set_count(1);
    q.set_dof(n);
    q.mutable_q()->Add(r.q.begin(), r.q.end());
    q.mutable_qd()->Add(r.qd.begin(), r.qd.end());
    q.mutable_qdd()->Add(r.x.begin(), r.x.end());
    v1::InverseDynamicsResponse a;
    s = stub.InverseDynamics(&ctx, q, &a);
    out.assign(a.tau().begin(), a.tau().end());
  } else if (r.kind == 1) {
    v1::ForwardDynamicsRequest q;
    q.set_model_id(fm.id);
    q.set_count(1);
    q.set_dof(n);
    q.mutable_q()->Add(r.q.begin(), r.q.end());
    q.mutable_qd()->Add(r.qd.begin(), r.qd.end());
    q.mutable_tau()->Add(r.x.begin(), r.x.end());
    v1::ForwardDynamicsResponse a;
    s = stub.ForwardDynamics(&ctx, q, &a);
    out.assign(a.qdd().begin(), a.qdd().end());
  } else {
    v1::FullFactorRequest q;
    q.set_model_id(fm.id);
    q.set_count(1);
    q.set_dof(n);
    q.mutable_q()->Add(r.q.begin(), r.q.end());
    v1::FullFactorResponse a;
    s = stub.FullFactor(&ctx, q, &a);
    out.assign(a.inertia().begin(), a.inertia().end());
    out.insert(out.end(), a.log_det().begin(), a.log_det().end());
  }
  peer = ctx.peer();
  return s;
}

bool close(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= 1e-12 * std::max(1.0, std::abs(want[i])))) return false;
  }
  return true;
}

TEST(Fleet, ThreeReplicasOneKilledAndRestartedMidRun) {
  TempDir dir;
  const std::string store = dir.str("store");
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  for (int i = 0; i < 3; ++i)
    replicas.push_back(std::make_unique<ServerProcess>(dir.str(), store, std::vector<std::string>{},
                                                       "r" + std::to_string(i)));
  std::vector<int> ports;
  std::string target = "ipv4:";
  for (int i = 0; i < 3; ++i) {
    ports.push_back(replicas[static_cast<std::size_t>(i)]->port());
    target += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports.back());
  }
  // the client a fleet should use: round_robin, and quick reconnects to a replica that comes back
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Dynamics::NewStub(channel);

  // models registered through the fleet: each lands on one replica, the others find it in the store
  std::vector<FleetModel> models;
  std::vector<DHSpec> specs = {stanfordArmDH(), randomChain(7, 71), randomChain(12, 72, true)};
  for (const DHSpec& dh : specs) {
    v1::RegisterModelResponse r;
    ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(dh), &r).ok());
    models.push_back({r.model_id(), std::make_unique<Model>(buildModelFromDH(dh))});
  }
  // 30 distinct requests with answers from the in-process core
  std::vector<Request> requests;
  for (int k = 0; k < 30; ++k) {
    Request r;
    r.kind = k % 3;
    r.model = static_cast<std::size_t>(k / 3) % models.size();
    const Model& m = *models[r.model].model;
    r.q = randomStates(1, m.n, 1000u + static_cast<unsigned>(k));
    r.qd = randomStates(1, m.n, 2000u + static_cast<unsigned>(k));
    r.x = randomStates(1, m.n, 3000u + static_cast<unsigned>(k), 3.0);
    if (r.kind == 0) {
      r.expected = coreID(m, r.q, r.qd, r.x);
    } else if (r.kind == 1) {
      r.expected = coreFD(m, r.q, r.qd, r.x, Route::Saha);
    } else {
      Data d(m);
      computeFullFactor(m, d, Eigen::Map<const Eigen::VectorXd>(r.q.data(), m.n));
      for (Eigen::Index i = 0; i < m.n; ++i)
        for (Eigen::Index j = 0; j < m.n; ++j) r.expected.push_back(d.M(i, j));
      r.expected.push_back(d.log_det);
    }
    requests.push_back(std::move(r));
  }

  constexpr int kCalls = 3000, kThreads = 4;
  std::atomic<int> next{0}, retries{0}, wrong{0}, other_errors{0}, after_restart_on_restarted{0};
  std::atomic<bool> restarted{false};
  std::mutex mu;
  std::map<int, std::map<std::string, std::vector<double>>> answers;  // request -> peer -> answer
  std::map<std::string, int> per_peer;
  std::vector<std::string> error_samples;
  double lost_ms = 0, worst_call_ms = 0;
  Clock::time_point killed_at{}, restarted_at{};
  const std::string restarted_peer = "ipv4:127.0.0.1:" + std::to_string(ports[1]);

  auto worker = [&] {
    auto s = v1::Dynamics::NewStub(channel);
    std::vector<double> out;
    std::string peer;
    for (int k; (k = next.fetch_add(1)) < kCalls;) {
      if (k == kCalls / 3) {
        std::lock_guard lock(mu);
        replicas[1]->signal(SIGKILL);
        replicas[1]->wait(10s);
        killed_at = Clock::now();
      }
      if (k == kCalls / 2) {
        // restart on the same port, same store
        auto r = std::make_unique<ServerProcess>(
            dir.str(), store, std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(ports[1])},
            "r1-restarted");
        std::lock_guard lock(mu);
        replicas[1] = std::move(r);
        restarted_at = Clock::now();
        restarted = true;
      }
      const Request& r = requests[static_cast<std::size_t>(k) % requests.size()];
      const auto t0 = Clock::now();
      double failed_ms = 0;
      grpc::Status st;
      for (int attempt = 0; attempt < 50; ++attempt) {
        const auto ta = Clock::now();
        st = call(*s, models[r.model], r, out, peer);
        if (st.ok() || st.error_code() != grpc::StatusCode::UNAVAILABLE) break;
        ++retries;
        std::this_thread::sleep_for(10ms);
        failed_ms += std::chrono::duration<double, std::milli>(Clock::now() - ta).count();
      }
      const double call_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      std::lock_guard lock(mu);
      lost_ms += failed_ms;
      worst_call_ms = std::max(worst_call_ms, call_ms);
      if (!st.ok()) {
        ++other_errors;
        if (error_samples.size() < 5)
          error_samples.push_back(std::to_string(st.error_code()) + " " + st.error_message());
        continue;
      }
      if (!close(out, r.expected)) ++wrong;
      // a fleet of control loops, not a benchmark: about 2 ms between a thread's calls
      std::this_thread::sleep_for(2ms);
      ++per_peer[peer];
      if (restarted && peer == restarted_peer) ++after_restart_on_restarted;
      auto& by_peer = answers[k % static_cast<int>(requests.size())];
      if (!by_peer.count(peer))
        by_peer[peer] = out;
      else if (by_peer[peer] != out)
        ++wrong;  // the same replica, a different answer
    }
  };
  const auto t_start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const double total_s = std::chrono::duration<double>(Clock::now() - t_start).count();

  EXPECT_EQ(other_errors.load(), 0) << (error_samples.empty() ? "" : error_samples.front());
  EXPECT_EQ(wrong.load(), 0);
  // identical answers from every replica that answered the same request
  int compared = 0;
  for (const auto& [k, by_peer] : answers) {
    const std::vector<double>& first = by_peer.begin()->second;
    for (const auto& [peer, a] : by_peer) {
      EXPECT_EQ(a, first) << "request " << k << " from " << peer;
      ++compared;
    }
  }
  EXPECT_EQ(per_peer.size(), 3u);  // all three replicas answered
  EXPECT_GT(after_restart_on_restarted.load(), 0) << "the restarted replica never got a call";
  // every replica lists the same models: the ones registered (the Stanford arm is also a built-in) and the
  // two built-in examples
  std::set<std::string> expected_ids;
  for (const auto& fm : models) expected_ids.insert(fm.id);
  std::vector<std::set<std::string>> listed;
  for (auto& r : replicas) {
    v1::ListModelsResponse list;
    ASSERT_TRUE(r->stub()->ListModels(context().get(), {}, &list).ok());
    std::set<std::string> ids;
    int pinned = 0;
    for (const auto& info : list.models()) {
      ids.insert(info.model_id());
      if (info.pinned())
        ++pinned;
      else
        EXPECT_TRUE(expected_ids.count(info.model_id())) << "unexpected model " << info.model_id();
    }
    EXPECT_EQ(pinned, 2);
    for (const std::string& id : expected_ids) EXPECT_TRUE(ids.count(id)) << id;
    listed.push_back(ids);
  }
  EXPECT_EQ(listed[0], listed[1]);
  EXPECT_EQ(listed[1], listed[2]);

  std::printf(
      "[ figures  ] fleet: %d calls in %.2f s from %d threads, %d retries on UNAVAILABLE, %d wrong answers, "
      "%d other errors\n",
      kCalls, total_s, kThreads, retries.load(), wrong.load(), other_errors.load());
  std::printf(
      "[ figures  ] fleet: time lost in failed attempts %.1f ms, slowest call %.1f ms, restart took %.0f ms "
      "after the kill\n",
      lost_ms, worst_call_ms, std::chrono::duration<double, std::milli>(restarted_at - killed_at).count());
  for (const auto& [peer, n] : per_peer)
    std::printf("[ figures  ] fleet: %s answered %d calls\n", peer.c_str(), n);
  std::printf(
      "[ figures  ] fleet: restarted replica answered %d calls after its restart; %d answers compared "
      "across replicas\n",
      after_restart_on_restarted.load(), compared);
}

}  // namespace
}  // namespace denoc::test
