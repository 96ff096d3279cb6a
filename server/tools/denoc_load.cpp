// denoc_load: a closed-loop load test of a running denocd. N client threads, each on its own connection,
// send mixed one-state calls (inverse dynamics, O(n) forward dynamics, full factor) on a 7-DOF model for a
// fixed time, and check every answer against the in-process core (1e-12 relative). Reports calls per second,
// latency percentiles, errors by status code and wrong answers; with the server's pid, its resident size
// sampled along the run (for soak tests: growth after warm-up). Exits 1 on any error or wrong answer, or
// when the resident size grew more than --max-rss-growth after warm-up.
//
//   denoc_load --server 127.0.0.1:PORT [--seconds 60] [--clients 8] [--states 1] [--token T]
//              [--server-pid PID] [--warmup-seconds 10] [--max-rss-growth 0.05] [--sample-seconds 10]
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"
#include "tool_support.hpp"

namespace {

using namespace denoc::tools;

struct Options {
  std::string server = "127.0.0.1:50051", token;
  double seconds = 60, warmup = 10, sample_every = 10, max_rss_growth = -1;
  int clients = 8, states = 1, pid = 0;
};

/// One request and its expected answer (computed in this process).
struct Prepared {
  int kind;  // 0 ID, 1 FD, 2 full factor
  std::vector<double> q, qd, x, expected;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--server")
      o.server = v;
    else if (k == "--seconds")
      o.seconds = std::stod(v);
    else if (k == "--clients")
      o.clients = std::stoi(v);
    else if (k == "--states")
      o.states = std::stoi(v);
    else if (k == "--token")
      o.token = v;
    else if (k == "--server-pid")
      o.pid = std::stoi(v);
    else if (k == "--warmup-seconds")
      o.warmup = std::stod(v);
    else if (k == "--sample-seconds")
      o.sample_every = std::stod(v);
    else if (k == "--max-rss-growth")
      o.max_rss_growth = std::stod(v);
    else {
      std::fprintf(stderr, "denoc_load: unknown option %s\n", k.c_str());
      return false;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "denoc_load: option %s has no value\n", argv[argc - 1]);
    return false;
  }
  return o.clients > 0 && o.states > 0 && o.seconds > 0;
}

std::vector<Prepared> prepare(const denoc::Model& m, int states, int variants) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  denoc::Data d(m);
  std::vector<Prepared> out;
  for (int v = 0; v < variants; ++v) {
    Prepared p;
    p.kind = v % 3;
    const std::size_t total = static_cast<std::size_t>(states) * static_cast<std::size_t>(m.n);
    for (std::size_t i = 0; i < total; ++i)
      p.q.push_back(u(rng)), p.qd.push_back(u(rng)), p.x.push_back(3 * u(rng));
    for (int k = 0; k < states; ++k) {
      const std::size_t o = static_cast<std::size_t>(k) * static_cast<std::size_t>(m.n);
      const Eigen::Map<const Eigen::VectorXd> q(&p.q[o], m.n), qd(&p.qd[o], m.n), x(&p.x[o], m.n);
      if (p.kind == 0) {
        const Eigen::VectorXd& tau = denoc::inverseDynamics(m, d, q, qd, x);
        p.expected.insert(p.expected.end(), tau.data(), tau.data() + m.n);
      } else if (p.kind == 1) {
        const Eigen::VectorXd& qdd = denoc::forwardDynamics(m, d, q, qd, x);
        p.expected.insert(p.expected.end(), qdd.data(), qdd.data() + m.n);
      } else {
        denoc::computeFullFactor(m, d, q);
        p.expected.insert(p.expected.end(), d.D.data(), d.D.data() + m.n);
        p.expected.push_back(d.log_det);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

bool matches(const google::protobuf::RepeatedField<double>& got, const double* want, std::size_t n) {
  if (static_cast<std::size_t>(got.size()) != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(std::abs(got[static_cast<int>(i)] - want[i]) <= 1e-12 * std::max(1.0, std::abs(want[i]))))
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: denoc_load --server HOST:PORT [--seconds S] [--clients N] [--states K] [--token T] "
                 "[--server-pid PID --warmup-seconds W --sample-seconds E --max-rss-growth F]\n");
    return 2;
  }
  const denoc::DHSpec dh = sevenDof(0);
  const denoc::Model model = denoc::buildModelFromDH(dh);
  const int n = model.n;
  auto setup = [&o](grpc::ClientContext& c) {
    c.set_deadline(std::chrono::system_clock::now() + 30s);
    if (!o.token.empty()) c.AddMetadata("authorization", "Bearer " + o.token);
  };
  std::string id;
  {
    auto stub =
        denoc::v1::Dynamics::NewStub(grpc::CreateChannel(o.server, grpc::InsecureChannelCredentials()));
    grpc::ClientContext c;
    setup(c);
    denoc::v1::RegisterModelResponse r;
    const grpc::Status st = stub->RegisterModel(&c, dhRequest(dh), &r);
    if (!st.ok()) {
      std::fprintf(stderr, "denoc_load: RegisterModel: %s\n", st.error_message().c_str());
      return 1;
    }
    id = r.model_id();
  }
  const std::vector<Prepared> work = prepare(model, o.states, 48);

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> calls{0}, wrong{0};
  std::mutex mu;
  std::map<std::string, std::uint64_t> errors;
  std::vector<double> latencies;  // microseconds
  auto client = [&](int index) {
    grpc::ChannelArguments args;
    args.SetInt("denoc.load.client", index);  // a connection of its own
    auto stub = denoc::v1::Dynamics::NewStub(
        grpc::CreateCustomChannel(o.server, grpc::InsecureChannelCredentials(), args));
    std::vector<double> mine;
    std::map<std::string, std::uint64_t> my_errors;
    std::uint64_t my_wrong = 0;
    denoc::v1::InverseDynamicsRequest idq;
    denoc::v1::ForwardDynamicsRequest fdq;
    denoc::v1::FullFactorRequest ffq;
    denoc::v1::InverseDynamicsResponse ida;
    denoc::v1::ForwardDynamicsResponse fda;
    denoc::v1::FullFactorResponse ffa;
    for (std::size_t k = static_cast<std::size_t>(index); !stop.load(std::memory_order_relaxed); ++k) {
      const Prepared& p = work[k % work.size()];
      grpc::ClientContext c;
      setup(c);
      const auto t0 = Clock::now();
      grpc::Status st;
      bool ok = false;
      if (p.kind == 0) {
        idq.Clear();
        idq.set_model_id(id);
        idq.set_count(static_cast<std::uint32_t>(o.states));
        idq.set_dof(static_cast<std::uint32_t>(n));
        idq.mutable_q()->Add(p.q.begin(), p.q.end());
        idq.mutable_qd()->Add(p.qd.begin(), p.qd.end());
        idq.mutable_qdd()->Add(p.x.begin(), p.x.end());
        st = stub->InverseDynamics(&c, idq, &ida);
        ok = st.ok() && matches(ida.tau(), p.expected.data(), p.expected.size());
      } else if (p.kind == 1) {
        fdq.Clear();
        fdq.set_model_id(id);
        fdq.set_count(static_cast<std::uint32_t>(o.states));
        fdq.set_dof(static_cast<std::uint32_t>(n));
        fdq.mutable_q()->Add(p.q.begin(), p.q.end());
        fdq.mutable_qd()->Add(p.qd.begin(), p.qd.end());
        fdq.mutable_tau()->Add(p.x.begin(), p.x.end());
        st = stub->ForwardDynamics(&c, fdq, &fda);
        ok = st.ok() && matches(fda.qdd(), p.expected.data(), p.expected.size());
      } else {
        ffq.Clear();
        ffq.set_model_id(id);
        ffq.set_count(static_cast<std::uint32_t>(o.states));
        ffq.set_dof(static_cast<std::uint32_t>(n));
        ffq.mutable_q()->Add(p.q.begin(), p.q.end());
        st = stub->FullFactor(&c, ffq, &ffa);
        if (st.ok()) {
          // D then log det, per state
          ok = true;
          for (int s = 0; s < o.states && ok; ++s) {
            const double* want = &p.expected[static_cast<std::size_t>(s) * (static_cast<std::size_t>(n) + 1)];
            for (int j = 0; j < n && ok; ++j)
              ok = std::abs(ffa.d(s * n + j) - want[j]) <= 1e-12 * std::max(1.0, std::abs(want[j]));
            ok = ok && std::abs(ffa.log_det(s) - want[n]) <= 1e-12 * std::max(1.0, std::abs(want[n]));
          }
        }
      }
      mine.push_back(micros(Clock::now() - t0));
      if (!st.ok())
        ++my_errors[std::to_string(st.error_code()) + " " + st.error_message().substr(0, 120)];
      else if (!ok)
        ++my_wrong;
      calls.fetch_add(1, std::memory_order_relaxed);
    }
    std::lock_guard lock(mu);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
    for (const auto& [k, v] : my_errors) errors[k] += v;
    wrong += my_wrong;
  };

  std::printf("denoc_load: %s, model %s (%d dof), %d clients, %d state(s) per call, %.0f s\n",
              o.server.c_str(), id.substr(0, 12).c_str(), n, o.clients, o.states, o.seconds);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < o.clients; ++i) threads.emplace_back(client, i);
  // the server's resident size along the run
  std::vector<std::pair<double, long>> rss;
  double next_sample = 0;
  while (true) {
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    if (o.pid > 0 && t >= next_sample) {
      rss.emplace_back(t, rssKiB(o.pid));
      std::printf("  t = %6.1f s  calls %10llu  server RSS %.1f MiB\n", t,
                  static_cast<unsigned long long>(calls.load()),
                  static_cast<double>(rss.back().second) / 1024.0);
      std::fflush(stdout);
      next_sample += o.sample_every;
    }
    if (t >= o.seconds) break;
    std::this_thread::sleep_for(50ms);
  }
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  if (o.pid > 0) rss.emplace_back(elapsed, rssKiB(o.pid));

  const Stats s = stats(latencies);
  std::uint64_t error_count = 0;
  for (const auto& [k, v] : errors) error_count += v;
  std::printf(
      "calls %llu in %.1f s: %.0f calls/s (%.0f states/s); latency p50 %.1f us, p99 %.1f us, p99.9 %.1f us, "
      "max %.1f us\n",
      static_cast<unsigned long long>(calls.load()), elapsed, static_cast<double>(calls.load()) / elapsed,
      static_cast<double>(calls.load()) * o.states / elapsed, s.p50, s.p99, s.p999, s.max);
  std::printf("errors %llu, wrong answers %llu\n", static_cast<unsigned long long>(error_count),
              static_cast<unsigned long long>(wrong.load()));
  for (const auto& [k, v] : errors)
    std::printf("  %llu x %s\n", static_cast<unsigned long long>(v), k.c_str());
  bool rss_ok = true;
  if (o.pid > 0 && rss.size() >= 2) {
    // growth from the first sample at or after warm-up to the last
    long base = -1;
    for (const auto& [t, kib] : rss) {
      if (t >= o.warmup) {
        base = kib;
        break;
      }
    }
    const long end = rss.back().second;
    if (base > 0) {
      const double growth = static_cast<double>(end - base) / static_cast<double>(base);
      std::printf(
          "server RSS: %.1f MiB at start, %.1f MiB after %.0f s warm-up, %.1f MiB at the end: %+.2f%%\n",
          static_cast<double>(rss.front().second) / 1024.0, static_cast<double>(base) / 1024.0, o.warmup,
          static_cast<double>(end) / 1024.0, 100.0 * growth);
      if (o.max_rss_growth >= 0 && growth > o.max_rss_growth) {
        std::printf("FAIL: RSS grew more than %.1f%% after warm-up\n", 100.0 * o.max_rss_growth);
        rss_ok = false;
      }
    }
  }
  return error_count == 0 && wrong == 0 && calls > 0 && rss_ok ? 0 : 1;
}
