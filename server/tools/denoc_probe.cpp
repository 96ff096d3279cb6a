// denoc_probe: latency and throughput of a running denocd, measured from one client thread on this machine.
//  - unary 7-DOF inverse dynamics (one state) beside the empty health-check call, interleaved in one run;
//  - batched inverse dynamics at 1, 10, ..., 100000 states per call (states/s, and the server's compute
//    time per state beside the in-process core's);
//  - the round trip of one inverse-dynamics step on the bidirectional Stream, beside an echo on it;
//  - a 10^4-state batch split into chunks sent as concurrent calls on one channel (pipelined: the transfer
//    and parsing of one chunk overlap the others' compute);
//  - 64 rollouts x 100 RK4 steps of 1 ms with A and B per step (Rollout) against rolloutBatch in this
//    process, one thread and a pool of all cores;
//  - optionally the server's resident size (its pid given) before and after registering N distinct models.
//  The batched rows compare with the core in this process: a plain loop on one thread, and the batch API on
//  a pool of all cores (what denocd does with a large batch).
// Timing only: no pass/fail. Usage: denoc_probe --server 127.0.0.1:PORT [--iterations N] [--urdf FILE
// [--tip LINK] [--root fixed|floating|planar]] [--server-pid PID --register-models N]
// [--parts unary,batch,pipelined,stream,rollout] [--grpc-arg NAME=INT ...]. A URDF under a floating or planar
// root (a legged robot) is measured with its configurations on the manifold: q of nq, qd of nv, controls of
// nu.
#include <grpcpp/grpcpp.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/batch.hpp"
#include "denoc/configuration.hpp"
#include "denoc/dh.hpp"
#include "denoc/rollout.hpp"
#include "denoc/urdf.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"
#include "denoc/version.hpp"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tool_support.hpp"

namespace {

using namespace denoc::tools;

std::unique_ptr<grpc::ClientContext> ctx() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + 60s);
  return c;
}

}  // namespace

constexpr const char* kUsage =
    "usage: denoc_probe [--server HOST:PORT] [--iterations N] [--urdf FILE [--tip LINK] [--root "
    "fixed|floating|planar]]\n"
    "                   [--server-pid PID --register-models N] [--parts "
    "unary,batch,pipelined,stream,rollout]\n"
    "                   [--grpc-arg NAME=INT ...]\n"
    "Latency and throughput of a running denocd from one client (timing only). It registers a model on the\n"
    "server (a 7-DOF DH arm, or --urdf) and calls it for about a minute. Defaults: --server "
    "127.0.0.1:50051,\n"
    "--iterations 2000, every part.\n";

int main(int argc, char** argv) {
  std::string server = "127.0.0.1:50051", urdf, tip, root = "fixed";
  int iterations = 2000, pid = 0, register_models = 0;
  std::string parts = "unary,batch,pipelined,stream,rollout";
  std::vector<std::string> grpc_args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (a == "--version") {
      std::printf("denoc_probe %s\n", DENOC_VERSION_STRING);
      return 0;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s has no value\n%s", argv[argc - 1], kUsage);
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--server")
      server = v;
    else if (k == "--iterations")
      iterations = std::stoi(v);
    else if (k == "--urdf")
      urdf = v;
    else if (k == "--tip")
      tip = v;
    else if (k == "--root")
      root = v;
    else if (k == "--server-pid")
      pid = std::stoi(v);
    else if (k == "--register-models")
      register_models = std::stoi(v);
    else if (k == "--parts")
      parts = v;
    else if (k == "--grpc-arg")
      grpc_args.push_back(v);
    else {
      std::fprintf(stderr, "unknown option %s\n%s", k.c_str(), kUsage);
      return 2;
    }
  }
  if (root != "fixed" && root != "floating" && root != "planar") {
    std::fprintf(stderr, "--root %s: expected fixed, floating or planar\n", root.c_str());
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);        // answers of 10^5 states
  for (const std::string& a : grpc_args) {  // NAME=INTEGER, as denocd's --grpc-arg
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "--grpc-arg %s is not NAME=VALUE\n", a.c_str());
      return 2;
    }
    args.SetInt(a.substr(0, eq), std::stoi(a.substr(eq + 1)));
  }
  const std::string part_list = std::string(",").append(parts).append(",");
  auto wants = [&](const char* part) {
    return part_list.find(std::string(",").append(part).append(",")) != std::string::npos;
  };
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + 10s)) {
    std::fprintf(stderr, "cannot connect to %s\n", server.c_str());
    return 1;
  }
  auto stub = denoc::v1::Dynamics::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);

  // the 7-DOF model, registered on the server and built here
  denoc::v1::RegisterModelRequest reg;
  std::unique_ptr<denoc::Model> model;
  if (!urdf.empty()) {
    std::ifstream f(urdf);
    std::stringstream ss;
    ss << f.rdbuf();
    reg.mutable_urdf()->set_text(ss.str());
    reg.mutable_urdf()->set_tip_link(tip);
    denoc::UrdfOptions options;
    options.tip_link = tip;
    options.root = root == "floating" ? denoc::RootJoint::Floating
                   : root == "planar" ? denoc::RootJoint::Planar
                                      : denoc::RootJoint::Fixed;
    reg.mutable_urdf()->set_root(root == "floating" ? denoc::v1::ROOT_JOINT_FLOATING
                                 : root == "planar" ? denoc::v1::ROOT_JOINT_PLANAR
                                                    : denoc::v1::ROOT_JOINT_FIXED);
    model = std::make_unique<denoc::Model>(denoc::buildModelFromUrdf(ss.str(), options));
  } else {
    reg = dhRequest(sevenDof(0));
    model = std::make_unique<denoc::Model>(denoc::buildModelFromDH(sevenDof(0)));
  }
  denoc::v1::RegisterModelResponse reg_resp;
  grpc::Status st = stub->RegisterModel(ctx().get(), reg, &reg_resp);
  if (!st.ok()) {
    std::fprintf(stderr, "RegisterModel: %s\n", st.error_message().c_str());
    return 1;
  }
  const std::string id = reg_resp.model_id();
  // n: velocity coordinates (dof); nq: configuration coordinates; nu: controls (a rollout's)
  const int n = static_cast<int>(reg_resp.model().dof());
  const int nq = static_cast<int>(reg_resp.model().nq()), nu = static_cast<int>(reg_resp.model().nu());
  std::printf("server %s, model %s (%d dof, nq %d, root %s)\n", server.c_str(), id.substr(0, 12).c_str(), n,
              nq, root.c_str());
  if (pid > 0) std::printf("server RSS idle: %.1f MiB\n", rssKiB(pid) / 1024.0);

  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  auto randomVec = [&](std::size_t k) {
    std::vector<double> v(k);
    for (double& x : v) x = u(rng);
    return v;
  };
  // count configurations (nq each): uniform in [-1, 1] for a fixed root, on the manifold for a moving one
  std::mt19937_64 rng64(2);
  auto randomQ = [&](std::size_t count) {
    if (nq == n) return randomVec(count * static_cast<std::size_t>(nq));
    std::vector<double> v;
    for (std::size_t k = 0; k < count; ++k) {
      const Eigen::VectorXd q = denoc::randomConfiguration(*model, rng64);
      v.insert(v.end(), q.data(), q.data() + q.size());
    }
    return v;
  };

  // 1. unary: health check vs one-state inverse dynamics, interleaved
  if (wants("unary")) {
    grpc::health::v1::HealthCheckRequest hreq;
    grpc::health::v1::HealthCheckResponse hresp;
    denoc::v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(1);
    req.set_dof(n);
    const auto q = randomQ(1), v = randomVec(static_cast<std::size_t>(n));
    *req.mutable_q() = {q.begin(), q.end()};
    *req.mutable_qd() = {v.begin(), v.end()};
    *req.mutable_qdd() = {v.begin(), v.end()};
    denoc::v1::InverseDynamicsResponse resp;
    std::vector<double> th, tid, compute;
    for (int i = 0; i < iterations + 200; ++i) {
      const auto t0 = Clock::now();
      grpc::ClientContext c1;
      health->Check(&c1, hreq, &hresp);
      const auto t1 = Clock::now();
      grpc::ClientContext c2;
      st = stub->InverseDynamics(&c2, req, &resp);
      const auto t2 = Clock::now();
      if (!st.ok()) {
        std::fprintf(stderr, "InverseDynamics: %s\n", st.error_message().c_str());
        return 1;
      }
      if (i >= 200) {  // warm-up
        th.push_back(micros(t1 - t0));
        tid.push_back(micros(t2 - t1));
        compute.push_back(resp.compute_time_ns() / 1000.0);
      }
    }
    const Stats h = stats(th), d = stats(tid), c = stats(compute);
    std::printf("\nunary calls (%d each, interleaved)          p50 us    p99 us\n", iterations);
    std::printf("  health check (empty call)              %8.1f  %8.1f\n", h.p50, h.p99);
    std::printf("  inverse dynamics, 1 state, %d dof       %8.1f  %8.1f   (server compute p50 %.2f us)\n", n,
                d.p50, d.p99, c.p50);
    std::printf("  ratio ID / empty (p50)                 %8.2f\n", d.p50 / h.p50);
  }

  // 2. batched inverse dynamics
  denoc::BatchPool pool;  // all cores, as denocd's default --batch-threads
  const std::shared_ptr<const denoc::Model> shared(model.get(), [](const denoc::Model*) {});
  if (wants("batch"))
    std::printf(
        "\nbatched inverse dynamics      calls   states/s     us/state  server us/state  "
        "in-process us/state: loop  pool(%u)  ratio: loop  pool\n",
        pool.threads());
  for (int count : {1, 10, 100, 1000, 10000, 100000}) {
    if (!wants("batch")) break;
    denoc::v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(count);
    req.set_dof(n);
    const auto q = randomQ(static_cast<std::size_t>(count)),
               v = randomVec(static_cast<std::size_t>(count) * n);
    *req.mutable_q() = {q.begin(), q.end()};
    *req.mutable_qd() = {v.begin(), v.end()};
    *req.mutable_qdd() = {v.begin(), v.end()};
    denoc::v1::InverseDynamicsResponse resp;
    const int calls = std::max(5, std::min(iterations, 200000 / count));
    double compute_ns = 0;
    for (int i = 0; i < 3; ++i) stub->InverseDynamics(ctx().get(), req, &resp);  // warm-up
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      st = stub->InverseDynamics(ctx().get(), req, &resp);
      if (!st.ok()) {
        std::fprintf(stderr, "InverseDynamics: %s\n", st.error_message().c_str());
        return 1;
      }
      compute_ns += static_cast<double>(resp.compute_time_ns());
    }
    const double total_us = micros(Clock::now() - t0);
    const double states = static_cast<double>(calls) * count;
    // the in-process core on the same states
    double local_us = 0, pool_us = 0;
    if (model) {
      denoc::Data d(*model);
      const auto l0 = Clock::now();
      int reps = std::max(1, 20000 / count);
      double sink = 0;
      for (int r = 0; r < reps; ++r) {
        for (int k = 0; k < count; ++k) {
          const Eigen::Map<const Eigen::VectorXd> Q(&q[static_cast<std::size_t>(k) * nq], nq),
              V(&v[static_cast<std::size_t>(k) * n], n);
          sink += denoc::inverseDynamics(*model, d, Q, V, V)[0];
        }
      }
      local_us = micros(Clock::now() - l0) / (static_cast<double>(reps) * count);
      if (sink == 12345.678) std::printf(" ");
      // the core's batch API on a pool of all cores, as an in-process caller would run the same batch
      std::vector<double> tau(v.size());
      denoc::inverseDynamicsBatch(pool, shared, count, q.data(), v.data(), v.data(), tau.data());
      const auto p0 = Clock::now();
      for (int r = 0; r < reps; ++r)
        denoc::inverseDynamicsBatch(pool, shared, count, q.data(), v.data(), v.data(), tau.data());
      pool_us = micros(Clock::now() - p0) / (static_cast<double>(reps) * count);
    }
    std::printf("  %6d states per call     %6d  %10.0f  %10.3f  %14.3f  %11.3f  %11.3f  %6.2f  %6.2f\n",
                count, calls, states / (total_us * 1e-6), total_us / states, compute_ns / 1000.0 / states,
                local_us, pool_us, total_us / states / local_us, total_us / states / pool_us);
  }

  // 2b. a 10^4-state batch as concurrent chunk calls on the one channel
  if (wants("pipelined") && model) {
    constexpr int kCount = 10000;
    const auto q = randomQ(kCount), v = randomVec(static_cast<std::size_t>(kCount) * n);
    denoc::Data d(*model);
    std::printf(
        "\n10^4-state inverse dynamics in chunks, concurrent calls   us/state  in-process loop  ratio\n");
    for (int chunks : {1, 2, 4, 8, 16}) {
      const int per = kCount / chunks;
      std::vector<denoc::v1::InverseDynamicsRequest> reqs(static_cast<std::size_t>(chunks));
      for (int c = 0; c < chunks; ++c) {
        auto& r = reqs[static_cast<std::size_t>(c)];
        r.set_model_id(id);
        r.set_count(per);
        r.set_dof(n);
        const auto* b = q.data() + static_cast<std::size_t>(c) * per * nq;
        r.mutable_q()->Add(b, b + static_cast<std::size_t>(per) * nq);
        const auto* bv = v.data() + static_cast<std::size_t>(c) * per * n;
        r.mutable_qd()->Add(bv, bv + static_cast<std::size_t>(per) * n);
        *r.mutable_qdd() = r.qd();
      }
      const auto once = [&] {
        std::vector<std::future<grpc::Status>> f;
        std::vector<denoc::v1::InverseDynamicsResponse> resp(static_cast<std::size_t>(chunks));
        for (int c = 1; c < chunks; ++c)
          f.push_back(std::async(std::launch::async, [&, c] {
            return stub->InverseDynamics(ctx().get(), reqs[static_cast<std::size_t>(c)],
                                         &resp[static_cast<std::size_t>(c)]);
          }));
        bool ok = stub->InverseDynamics(ctx().get(), reqs[0], &resp[0]).ok();
        for (auto& x : f) ok = x.get().ok() && ok;
        return ok;
      };
      for (int i = 0; i < 3; ++i) once();
      const int calls = 40;
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) {
        if (!once()) {
          std::fprintf(stderr, "pipelined InverseDynamics failed\n");
          return 1;
        }
      }
      const double us = micros(Clock::now() - t0) / (static_cast<double>(calls) * kCount);
      // the plain in-process loop, timed right after (same machine state)
      const auto l0 = Clock::now();
      double sink = 0;
      for (int r = 0; r < 4; ++r) {
        for (int k = 0; k < kCount; ++k) {
          const Eigen::Map<const Eigen::VectorXd> Q(&q[static_cast<std::size_t>(k) * nq], nq),
              V(&v[static_cast<std::size_t>(k) * n], n);
          sink += denoc::inverseDynamics(*model, d, Q, V, V)[0];
        }
      }
      const double loop = micros(Clock::now() - l0) / (4.0 * kCount);
      if (sink == 12345.678) std::printf(" ");
      std::printf("  %2d chunk(s) of %5d states                               %8.3f  %15.3f  %5.2f\n", chunks,
                  per, us, loop, us / loop);
    }
  }

  // 2c. rollouts with their linearizations
  if (wants("rollout") && model) {
    constexpr std::size_t K = 64, T = 100;
    // a state [q; qd] of nq + nv, its tangent 2 nv, the controls nu
    const std::size_t X = static_cast<std::size_t>(nq + n), N = 2 * static_cast<std::size_t>(n),
                      U = static_cast<std::size_t>(nu);
    std::vector<double> x0;
    for (std::size_t k = 0; k < K; ++k) {
      const auto qk = randomQ(1), vk = randomVec(static_cast<std::size_t>(n));
      x0.insert(x0.end(), qk.begin(), qk.end());
      x0.insert(x0.end(), vk.begin(), vk.end());
    }
    const auto u = randomVec(K * T * U);
    denoc::v1::RolloutRequest req;
    req.set_model_id(id);
    req.set_count(K);
    req.set_dof(n);
    req.set_steps(T);
    req.set_dt(1e-3);
    req.set_linearize(true);
    req.mutable_x0()->Add(x0.begin(), x0.end());
    req.mutable_u()->Add(u.begin(), u.end());
    grpc::ChannelArguments big;
    big.SetMaxReceiveMessageSize(-1);
    auto rstub = denoc::v1::Dynamics::NewStub(
        grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), big));
    denoc::v1::RolloutResponse resp;
    std::vector<double> states(K * (T + 1) * X), A(K * T * N * N), B(K * T * N * U);
    denoc::RolloutOptions o;
    o.steps = T;
    o.step = 1e-3;
    denoc::RolloutArrays arrays;
    arrays.count = K;
    arrays.x0 = x0.data();
    arrays.u = u.data();
    arrays.states = states.data();
    arrays.A = A.data();
    arrays.B = B.data();
    denoc::BatchPool one(1);
    const int reps = std::max(3, iterations / 200);
    double service = 0, compute = 0, local1 = 0, localp = 0;
    for (int i = 0; i < reps + 1; ++i) {  // interleaved; the first round warms up
      auto t0 = Clock::now();
      st = rstub->Rollout(ctx().get(), req, &resp);
      if (!st.ok()) {
        std::fprintf(stderr, "Rollout: %s\n", st.error_message().c_str());
        return 1;
      }
      const double s_us = micros(Clock::now() - t0);
      t0 = Clock::now();
      denoc::rolloutBatch(one, shared, o, arrays);
      const double l_us = micros(Clock::now() - t0);
      t0 = Clock::now();
      denoc::rolloutBatch(pool, shared, o, arrays);
      const double p_us = micros(Clock::now() - t0);
      if (i == 0) continue;
      service += s_us;
      compute += static_cast<double>(resp.compute_time_ns()) / 1000.0;
      local1 += l_us;
      localp += p_us;
    }
    const double steps = static_cast<double>(reps) * K * T;
    std::printf("\nrollouts: %zu x %zu RK4 steps of 1 ms with A, B (%d rounds)   us/step  steps/s\n", K, T,
                reps);
    std::printf("  through the service                                      %8.3f  %8.0f\n", service / steps,
                steps / (service * 1e-6));
    std::printf("  the server's compute                                     %8.3f  %8.0f\n", compute / steps,
                steps / (compute * 1e-6));
    std::printf("  in-process rolloutBatch, 1 thread                        %8.3f  %8.0f\n", local1 / steps,
                steps / (local1 * 1e-6));
    std::printf("  in-process rolloutBatch, pool(%u)                         %8.3f  %8.0f\n", pool.threads(),
                localp / steps, steps / (localp * 1e-6));
    std::printf("  service / in-process pool: %.2f; service / 1 thread: %.2f\n", service / localp,
                service / local1);
  }

  // 3. Stream round trip: one inverse-dynamics step against an echo (the stream's own round trip), the
  // two alternating on one stream
  if (wants("stream")) {
    auto c = ctx();
    auto stream = stub->Stream(c.get());
    denoc::v1::StreamRequest req, echo;
    req.set_model_id(id);
    req.set_computation(denoc::v1::COMPUTATION_INVERSE_DYNAMICS);
    const auto q = randomQ(1), v = randomVec(static_cast<std::size_t>(n));
    *req.mutable_q() = {q.begin(), q.end()};
    *req.mutable_qd() = {v.begin(), v.end()};
    *req.mutable_qdd() = {v.begin(), v.end()};
    echo.set_computation(denoc::v1::COMPUTATION_ECHO);
    denoc::v1::StreamResponse resp;
    std::vector<double> rt, rt_echo;
    for (int i = 0; i < iterations + 200; ++i) {
      for (denoc::v1::StreamRequest* m : {&echo, &req}) {
        m->set_sequence(static_cast<std::uint64_t>(i));
        const auto t0 = Clock::now();
        if (!stream->Write(*m) || !stream->Read(&resp)) {
          std::fprintf(stderr, "Stream broke\n");
          return 1;
        }
        if (i >= 200) (m == &req ? rt : rt_echo).push_back(micros(Clock::now() - t0));
      }
    }
    stream->WritesDone();
    st = stream->Finish();
    const Stats s = stats(rt), e = stats(rt_echo);
    std::printf("\nStream round trip (%d each, alternating on one stream)  p50 us    p99 us\n", iterations);
    std::printf("  echo (no computation)                          %8.1f  %8.1f\n", e.p50, e.p99);
    std::printf("  inverse dynamics, 1 state                      %8.1f  %8.1f\n", s.p50, s.p99);
    std::printf("  ratio ID / echo (p50)                          %8.2f\n", s.p50 / e.p50);
  }

  // 4. memory after registering distinct models
  if (register_models > 0) {
    for (int i = 1; i <= register_models; ++i) {
      denoc::v1::RegisterModelResponse r;
      st = stub->RegisterModel(ctx().get(), dhRequest(sevenDof(static_cast<unsigned>(i))), &r);
      if (!st.ok()) {
        std::fprintf(stderr, "RegisterModel %d: %s\n", i, st.error_message().c_str());
        return 1;
      }
    }
    if (pid > 0) {
      std::printf("\nserver RSS after registering %d distinct 7-dof models: %.1f MiB\n", register_models,
                  rssKiB(pid) / 1024.0);
    }
  }
  return 0;
}
