// Writes the seed corpus of the request fuzz target (request_harness.hpp format): the good requests and the
// bad ones of tests/server/test_server_validation.cpp and test_server_rpc.cpp, re-aimed at the target's
// models, and a registration request for every URDF of the bad-URDF corpus and of the example
// model directories (tests/data/urdf, examples/models).
//
// usage: fuzz_request_seeds OUT_DIR URDF_DIR...
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "request_harness.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
namespace v1 = denoc::v1;
using denoc::fuzz::Rpc;
using denoc::fuzz::Target;
using denoc::test::dhRequest;
using denoc::test::randomChain;
using denoc::test::randomStates;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Target kModels[] = {Target::Stanford, Target::Planar, Target::PandaUrdf};

fs::path g_out;
int g_count = 0;

void write(const std::string& name, Rpc rpc, Target target, const google::protobuf::Message& m) {
  std::string bytes(1, static_cast<char>(denoc::fuzz::selector(rpc, target)));
  if (!m.AppendToString(&bytes)) throw std::runtime_error("cannot serialize " + name);
  std::ofstream f(g_out / name, std::ios::binary | std::ios::trunc);
  f << bytes;
  if (!f) throw std::runtime_error("cannot write " + (g_out / name).string());
  ++g_count;
}

v1::InverseDynamicsRequest goodID(int count, int dof, unsigned seed) {
  v1::InverseDynamicsRequest r;
  r.set_count(count);
  r.set_dof(dof);
  const auto v = randomStates(count, dof, seed);
  *r.mutable_q() = {v.begin(), v.end()};
  *r.mutable_qd() = {v.begin(), v.end()};
  *r.mutable_qdd() = {v.begin(), v.end()};
  return r;
}

v1::ForwardDynamicsRequest goodFD(int count, int dof, unsigned seed) {
  v1::ForwardDynamicsRequest r;
  r.set_count(count);
  r.set_dof(dof);
  const auto v = randomStates(count, dof, seed);
  *r.mutable_q() = {v.begin(), v.end()};
  *r.mutable_qd() = {v.begin(), v.end()};
  *r.mutable_tau() = {v.begin(), v.end()};
  return r;
}

v1::FullFactorRequest goodFF(int count, int dof, unsigned seed) {
  v1::FullFactorRequest r;
  r.set_count(count);
  r.set_dof(dof);
  const auto v = randomStates(count, dof, seed);
  *r.mutable_q() = {v.begin(), v.end()};
  return r;
}

v1::SimulateRequest goodSim(int dof) {
  v1::SimulateRequest r;
  r.set_dof(dof);
  for (int i = 0; i < dof; ++i) {
    r.add_q0(0.1);
    r.add_qd0(0.0);
  }
  r.set_t_end(0.1);
  return r;
}

v1::StreamRequest streamMessage(int dof, v1::Computation c) {
  v1::StreamRequest m;
  m.set_computation(c);
  m.set_sequence(7);
  for (int i = 0; i < dof; ++i) {
    m.add_q(0.1);
    m.add_qd(0.2);
    if (c == v1::COMPUTATION_INVERSE_DYNAMICS) m.add_qdd(0.3);
    if (c == v1::COMPUTATION_FORWARD_DYNAMICS) m.add_tau(0.4);
  }
  return m;
}

void registrations(const std::vector<fs::path>& urdf_dirs) {
  // DH models
  write("register-dh-random4", Rpc::RegisterModel, Target::AsSent, dhRequest(randomChain(4, 99)));
  write("register-dh-random7-armature", Rpc::RegisterModel, Target::AsSent,
        dhRequest(randomChain(7, 3, true)));
  write("register-dh-stanford", Rpc::RegisterModel, Target::AsSent, dhRequest(denoc::stanfordArmDH(), false));
  const std::vector<std::pair<std::string, std::function<void(v1::RegisterModelRequest&)>>> bad = {
      {"no-source", [](auto& r) { r.clear_dh(); }},
      {"top-level-armature", [](auto& r) { r.add_armature(0.1); }},
      {"zero-mass", [](auto& r) { r.mutable_dh()->mutable_links(1)->set_mass(0.0); }},
      {"triangle",
       [](auto& r) {
         auto* I = r.mutable_dh()->mutable_links(2)->mutable_inertia();
         I->set_ixx(0.01);
         I->set_iyy(0.01);
         I->set_izz(1.0);
       }},
      {"type-unspecified",
       [](auto& r) { r.mutable_dh()->mutable_links(0)->set_type(v1::JOINT_TYPE_UNSPECIFIED); }},
      {"alpha-nan", [](auto& r) { r.mutable_dh()->mutable_links(1)->set_alpha(kNaN); }},
      {"inverted-limits",
       [](auto& r) {
         r.mutable_dh()->mutable_links(0)->mutable_limits()->set_lower(1.0);
         r.mutable_dh()->mutable_links(0)->mutable_limits()->set_upper(-1.0);
       }},
      {"above-max-dof", [](auto& r) { r = dhRequest(randomChain(65, 5)); }},
      {"no-links", [](auto& r) { r.mutable_dh()->clear_links(); }},
      {"gravity-inf", [](auto& r) { r.mutable_gravity()->set_z(kInf); }},
      {"long-name", [](auto& r) { r.set_name(std::string(300, 'n')); }},
      {"limits-nan", [](auto& r) { r.mutable_dh()->mutable_links(0)->mutable_limits()->set_velocity(kNaN); }},
  };
  for (const auto& [name, edit] : bad) {
    auto r = dhRequest(randomChain(4, 99));
    edit(r);
    write("register-dh-" + name, Rpc::RegisterModel, Target::AsSent, r);
  }
  // URDF models: every file, with and without a tip link and armature
  v1::RegisterModelRequest empty;
  empty.mutable_urdf();
  write("register-urdf-empty", Rpc::RegisterModel, Target::AsSent, empty);
  for (const fs::path& dir : urdf_dirs) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".urdf") continue;
      std::ifstream f(e.path(), std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      v1::RegisterModelRequest r;
      r.mutable_urdf()->set_text(text);
      const std::string stem = e.path().stem().string();
      write("register-urdf-" + stem, Rpc::RegisterModel, Target::AsSent, r);
      r.mutable_urdf()->set_tip_link("no_such_link");
      r.add_armature(0.1);
      write("register-urdf-" + stem + "-tip-armature", Rpc::RegisterModel, Target::AsSent, r);
    }
  }
}

void computations() {
  const std::string unknown(64, 'c');
  for (Target t : kModels) {
    const int n = denoc::fuzz::dofOf(t);
    const std::string m = std::to_string(static_cast<int>(t));
    // good requests
    write("id-good-" + m, Rpc::InverseDynamics, t, goodID(3, n, 9));
    auto wrench = goodID(2, n, 4);
    for (int i = 0; i < 12; ++i) wrench.add_tip_wrench(0.5 * i);
    write("id-wrench-" + m, Rpc::InverseDynamics, t, wrench);
    for (auto route : {v1::FORWARD_ROUTE_SAHA, v1::FORWARD_ROUTE_FIXMAN, v1::FORWARD_ROUTE_CHOLESKY}) {
      auto r = goodFD(2, n, 10);
      r.set_route(route);
      write("fd-route" + std::to_string(static_cast<int>(route)) + "-" + m, Rpc::ForwardDynamics, t, r);
    }
    auto ff = goodFF(2, n, 1);
    const auto qd = randomStates(2, n, 8);
    *ff.mutable_qd() = {qd.begin(), qd.end()};
    ff.set_convective(true);
    ff.set_bias(true);
    ff.set_gravity_torque(true);
    ff.set_inverse(true);
    write("ff-all-" + m, Rpc::FullFactor, t, ff);
    write("ff-plain-" + m, Rpc::FullFactor, t, goodFF(1, n, 2));
    write("sim-dopri-" + m, Rpc::Simulate, t, goodSim(n));
    auto rk4 = goodSim(n);
    rk4.set_integrator(v1::INTEGRATOR_RK4);
    rk4.set_route(v1::FORWARD_ROUTE_CHOLESKY);
    rk4.set_step(0.01);
    for (int i = 0; i < n; ++i) rk4.add_damping(0.1);
    write("sim-rk4-damping-" + m, Rpc::Simulate, t, rk4);
    auto sched = goodSim(n);
    sched.add_torque_times(0.0);
    sched.add_torque_times(0.05);
    for (int i = 0; i < 2 * n; ++i) sched.add_torque_values(0.1 * i);
    sched.add_sample_times(0.0);
    sched.add_sample_times(0.02);
    sched.add_sample_times(0.1);
    sched.set_batch_size(1);
    write("sim-schedule-" + m, Rpc::Simulate, t, sched);
    write("stream-id-" + m, Rpc::Stream, t, streamMessage(n, v1::COMPUTATION_INVERSE_DYNAMICS));
    write("stream-fd-" + m, Rpc::Stream, t, streamMessage(n, v1::COMPUTATION_FORWARD_DYNAMICS));
    write("get-" + m, Rpc::GetModel, t, v1::GetModelRequest());
    write("delete-pinned-" + m, Rpc::DeleteModel, t, v1::DeleteModelRequest());
  }

  // the bad requests of the validation test, on the Stanford arm (6 dof)
  const Target t = Target::Stanford;
  const int n = denoc::fuzz::dofOf(t);
  auto id = [&](const std::string& name, const std::function<void(v1::InverseDynamicsRequest&)>& f,
                Target target = Target::Stanford) {
    auto r = goodID(2, n, 9);
    f(r);
    write("id-" + name, Rpc::InverseDynamics, target, r);
  };
  id(
      "unknown-model", [&](auto& r) { r.set_model_id(unknown); }, Target::AsSent);
  id(
      "empty-model-id", [](auto& r) { r.set_model_id(""); }, Target::AsSent);
  id(
      "malformed-model-id", [](auto& r) { r.set_model_id("xyz"); }, Target::AsSent);
  id(
      "upper-case-model-id", [](auto& r) { r.set_model_id(std::string(64, 'C')); }, Target::AsSent);
  id("count0", [](auto& r) { r.set_count(0); });
  id("wrong-dof", [](auto& r) { r.set_dof(5); });
  id("q-short", [](auto& r) { r.mutable_q()->RemoveLast(); });
  id("qd-long", [](auto& r) { r.add_qd(0.0); });
  id("qdd-missing", [](auto& r) { r.clear_qdd(); });
  id("q-nan", [](auto& r) { r.set_q(9, kNaN); });
  id("qd-inf", [](auto& r) { r.set_qd(0, kInf); });
  id("wrench-length", [](auto& r) {
    for (int i = 0; i < 5; ++i) r.add_tip_wrench(1.0);
  });
  id("wrench-minus-inf", [](auto& r) {
    for (int i = 0; i < 12; ++i) r.add_tip_wrench(i == 3 ? -kInf : 1.0);
  });
  id("count-above-max-states", [](auto& r) { r.set_count(201); });
  id("count-max", [](auto& r) { r.set_count(4294967295u); });
  id("dof-max", [](auto& r) { r.set_dof(4294967295u); });

  auto fd = [&](const std::string& name, const std::function<void(v1::ForwardDynamicsRequest&)>& f) {
    auto r = goodFD(2, n, 10);
    f(r);
    write("fd-" + name, Rpc::ForwardDynamics, t, r);
  };
  fd("unknown-route", [](auto& r) { r.set_route(static_cast<v1::ForwardRoute>(7)); });
  fd("tau-short", [](auto& r) { r.mutable_tau()->RemoveLast(); });
  fd("tau-nan", [](auto& r) { r.set_tau(1, kNaN); });

  auto ff = [&](const std::string& name, const std::function<void(v1::FullFactorRequest&)>& f) {
    auto r = goodFF(2, n, 1);
    f(r);
    write("ff-" + name, Rpc::FullFactor, t, r);
  };
  ff("bias-without-qd", [](auto& r) { r.set_bias(true); });
  ff("convective-short-qd", [](auto& r) {
    r.set_convective(true);
    r.add_qd(1.0);
  });
  // the target's limits: max_states 200, max_message_bytes 128 KiB (fuzz_request.cpp)
  ff("answer-above-max-message-bytes", [&](auto& r) {
    r.set_count(200);
    const auto v = randomStates(200, n, 2);
    *r.mutable_q() = {v.begin(), v.end()};
    r.set_inverse(true);
  });

  auto sim = [&](const std::string& name, const std::function<void(v1::SimulateRequest&)>& f) {
    auto r = goodSim(n);
    f(r);
    write("sim-" + name, Rpc::Simulate, t, r);
  };
  sim("t-end-0", [](auto& r) { r.set_t_end(0.0); });
  sim("fixman-route", [](auto& r) { r.set_route(v1::FORWARD_ROUTE_FIXMAN); });
  sim("too-many-samples", [](auto& r) { r.set_t_end(10.0); });
  sim("q0-nan", [](auto& r) { r.set_q0(2, kNaN); });
  sim("unknown-integrator", [](auto& r) { r.set_integrator(static_cast<v1::Integrator>(5)); });
  sim("step-limit", [](auto& r) {
    r.set_integrator(v1::INTEGRATOR_RK4);
    r.set_step(1e-9);
  });
  sim("torque-values-short", [](auto& r) {
    r.add_torque_times(0.0);
    r.add_torque_values(1.0);
  });
  sim("sample-times-decreasing", [](auto& r) {
    r.add_sample_times(0.05);
    r.add_sample_times(0.01);
  });
  sim("damping-negative", [&](auto& r) {
    for (int i = 0; i < n; ++i) r.add_damping(-1.0);
  });

  auto unspecified = streamMessage(n, v1::COMPUTATION_INVERSE_DYNAMICS);
  unspecified.set_computation(v1::COMPUTATION_UNSPECIFIED);
  write("stream-computation-unspecified", Rpc::Stream, t, unspecified);
  auto short_q = streamMessage(n, v1::COMPUTATION_FORWARD_DYNAMICS);
  short_q.mutable_q()->RemoveLast();
  write("stream-q-short", Rpc::Stream, t, short_q);
  v1::GetModelRequest get;
  get.set_model_id(unknown);
  write("get-unknown", Rpc::GetModel, Target::AsSent, get);
  v1::DeleteModelRequest del;
  del.set_model_id("not-an-id");
  write("delete-malformed", Rpc::DeleteModel, Target::AsSent, del);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR URDF_DIR...\n", argv[0]);
    return 2;
  }
  try {
    g_out = argv[1];
    fs::create_directories(g_out);
    std::vector<fs::path> urdf_dirs(argv + 2, argv + argc);
    registrations(urdf_dirs);
    computations();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::printf("%d seeds written to %s\n", g_count, g_out.string().c_str());
  return 0;
}
