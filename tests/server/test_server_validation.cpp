// A table of bad requests: each answered with the right status code and a message naming the field;
// afterwards the server answers good requests correctly and its registry and store are unchanged.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <set>

#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

using Stub = v1::Dynamics::Stub;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct BadCase {
  std::string name;
  grpc::StatusCode code;
  std::string message;  // a substring the status message must contain
  std::function<grpc::Status(Stub&)> call;
};

v1::InverseDynamicsRequest goodID(const std::string& id, int count, int dof) {
  v1::InverseDynamicsRequest r;
  r.set_model_id(id);
  r.set_count(count);
  r.set_dof(dof);
  const auto v = randomStates(count, dof, 9);
  *r.mutable_q() = {v.begin(), v.end()};
  *r.mutable_qd() = {v.begin(), v.end()};
  *r.mutable_qdd() = {v.begin(), v.end()};
  return r;
}

v1::ForwardDynamicsRequest goodFD(const std::string& id, int count, int dof) {
  v1::ForwardDynamicsRequest r;
  r.set_model_id(id);
  r.set_count(count);
  r.set_dof(dof);
  const auto v = randomStates(count, dof, 10);
  *r.mutable_q() = {v.begin(), v.end()};
  *r.mutable_qd() = {v.begin(), v.end()};
  *r.mutable_tau() = {v.begin(), v.end()};
  return r;
}

v1::SimulateRequest goodSim(const std::string& id, int dof) {
  v1::SimulateRequest r;
  r.set_model_id(id);
  r.set_dof(dof);
  for (int i = 0; i < dof; ++i) {
    r.add_q0(0.1);
    r.add_qd0(0.0);
  }
  r.set_t_end(0.1);
  return r;
}

grpc::Status simulate(Stub& s, const v1::SimulateRequest& r) {
  auto ctx = context();
  auto reader = s.Simulate(ctx.get(), r);
  v1::SimulateResponse resp;
  for (int i = 0; i < 10000 && reader->Read(&resp); ++i) {
  }
  return reader->Finish();
}

grpc::Status stream(Stub& s, const std::vector<v1::StreamRequest>& messages) {
  auto ctx = context();
  auto st = s.Stream(ctx.get());
  v1::StreamResponse resp;
  for (const auto& m : messages) {
    if (!st->Write(m)) break;
    if (!st->Read(&resp)) break;
  }
  st->WritesDone();
  return st->Finish();
}

v1::StreamRequest streamID(const std::string& id, int dof) {
  v1::StreamRequest m;
  m.set_model_id(id);
  m.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
  for (int i = 0; i < dof; ++i) {
    m.add_q(0.1);
    m.add_qd(0.2);
    m.add_qdd(0.3);
  }
  return m;
}

v1::RegisterModelRequest urdf(const std::string& text) {
  v1::RegisterModelRequest r;
  r.mutable_urdf()->set_text(text);
  return r;
}

std::set<std::string> storeFiles(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  return files;
}

TEST(ServerValidation, BadRequestsAreRefusedAndChangeNothing) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"),
                       {"--max-dof", "12", "--max-states", "1000", "--max-message-bytes", "262144"});
  auto stub = server.stub();
  const DHSpec dh7 = randomChain(7, 3);
  v1::RegisterModelResponse reg;
  ASSERT_TRUE(stub->RegisterModel(context().get(), dhRequest(dh7), &reg).ok());
  const std::string id = reg.model_id();
  const std::string unknown(64, 'c');
  v1::ListModelsResponse before;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &before).ok());
  std::string builtin;
  for (const auto& m : before.models()) {
    if (m.pinned()) builtin = m.model_id();
  }
  const auto files_before = storeFiles(dir.path() / "store" / "v1");
  const std::string ur5 = readText(std::string(DENOC_MODELS_DIR) + "/ur5.urdf");

  using C = grpc::StatusCode;
  auto id_with = [&](std::function<void(v1::InverseDynamicsRequest&)> f) {
    return [&, f](Stub& s) {
      auto r = goodID(id, 2, 7);
      f(r);
      v1::InverseDynamicsResponse resp;
      return s.InverseDynamics(context().get(), r, &resp);
    };
  };
  auto fd_with = [&](std::function<void(v1::ForwardDynamicsRequest&)> f) {
    return [&, f](Stub& s) {
      auto r = goodFD(id, 2, 7);
      f(r);
      v1::ForwardDynamicsResponse resp;
      return s.ForwardDynamics(context().get(), r, &resp);
    };
  };
  auto ff_with = [&](std::function<void(v1::FullFactorRequest&)> f) {
    return [&, f](Stub& s) {
      v1::FullFactorRequest r;
      r.set_model_id(id);
      r.set_count(2);
      r.set_dof(7);
      const auto v = randomStates(2, 7, 1);
      *r.mutable_q() = {v.begin(), v.end()};
      f(r);
      v1::FullFactorResponse resp;
      return s.FullFactor(context().get(), r, &resp);
    };
  };
  auto reg_with = [&](std::function<void(v1::RegisterModelRequest&)> f) {
    return [&, f](Stub& s) {
      auto r = dhRequest(randomChain(4, 99));
      f(r);
      v1::RegisterModelResponse resp;
      return s.RegisterModel(context().get(), r, &resp);
    };
  };
  auto sim_with = [&](std::function<void(v1::SimulateRequest&)> f) {
    return [&, f](Stub& s) {
      auto r = goodSim(id, 7);
      f(r);
      return simulate(s, r);
    };
  };

  const std::vector<BadCase> cases = {
      {"unknown model", C::NOT_FOUND, "is not registered",
       id_with([&](auto& r) { r.set_model_id(unknown); })},
      {"empty model id", C::INVALID_ARGUMENT, "model_id is empty",
       id_with([](auto& r) { r.set_model_id(""); })},
      {"malformed model id", C::INVALID_ARGUMENT, "is not a model id",
       id_with([](auto& r) { r.set_model_id("xyz"); })},
      {"upper-case model id", C::INVALID_ARGUMENT, "is not a model id",
       id_with([&](auto& r) { r.set_model_id(std::string(64, 'C')); })},
      {"count 0", C::INVALID_ARGUMENT, "count is 0", id_with([](auto& r) { r.set_count(0); })},
      {"wrong dof", C::INVALID_ARGUMENT, "dof is 6, expected the model's dof = 7",
       id_with([](auto& r) { r.set_dof(6); })},
      {"q too short", C::INVALID_ARGUMENT, "q has 13 values, expected count*dof = 14",
       id_with([](auto& r) { r.mutable_q()->RemoveLast(); })},
      {"qd too long", C::INVALID_ARGUMENT, "qd has 15 values, expected count*dof = 14",
       id_with([](auto& r) { r.add_qd(0.0); })},
      {"qdd missing", C::INVALID_ARGUMENT, "qdd has 0 values", id_with([](auto& r) { r.clear_qdd(); })},
      {"q NaN", C::INVALID_ARGUMENT, "q[9] (state 1, column 2) is nan",
       id_with([](auto& r) { r.set_q(9, kNaN); })},
      {"qd Inf", C::INVALID_ARGUMENT, "qd[0] (state 0, column 0) is inf",
       id_with([](auto& r) { r.set_qd(0, kInf); })},
      {"tip wrench length", C::INVALID_ARGUMENT, "tip_wrench has 5 values, expected count*6 = 12",
       id_with([](auto& r) {
         for (int i = 0; i < 5; ++i) r.add_tip_wrench(1.0);
       })},
      {"tip wrench -Inf", C::INVALID_ARGUMENT, "tip_wrench[3] (state 0, column 3) is -inf",
       id_with([](auto& r) {
         for (int i = 0; i < 12; ++i) r.add_tip_wrench(i == 3 ? -kInf : 1.0);
       })},
      {"count above max_states", C::RESOURCE_EXHAUSTED, "max_states = 1000 (--max-states, DENOC_MAX_STATES)",
       id_with([](auto& r) { r.set_count(1001); })},
      {"count*dof far beyond limits", C::RESOURCE_EXHAUSTED, "count is 4294967295",
       id_with([](auto& r) { r.set_count(4294967295u); })},
      {"request above max_message_bytes", C::RESOURCE_EXHAUSTED, "", id_with([](auto& r) {
         for (int i = 0; i < 40000; ++i) r.add_q(0.0);
       })},
      {"unknown route", C::INVALID_ARGUMENT, "route is 7",
       fd_with([](auto& r) { r.set_route(static_cast<v1::ForwardRoute>(7)); })},
      // joint 2 of the random chain is prismatic: 1e200 m is beyond the range every route accepts
      // (kMaxPosition)
      {"prismatic joint at 1e200 m, Cholesky route", C::INVALID_ARGUMENT, "q[2] is 1e+200, expected",
       fd_with([](auto& r) {
         r.set_route(v1::FORWARD_ROUTE_CHOLESKY);
         r.set_q(2, 1e200);
       })},
      {"prismatic joint at 1e200 m, Fixman route", C::INVALID_ARGUMENT, "q[2] is 1e+200, expected",
       fd_with([](auto& r) {
         r.set_route(v1::FORWARD_ROUTE_FIXMAN);
         r.set_q(2, 1e200);
       })},
      {"tau wrong length", C::INVALID_ARGUMENT, "tau has 13 values",
       fd_with([](auto& r) { r.mutable_tau()->RemoveLast(); })},
      {"FD unknown model", C::NOT_FOUND, "is not registered",
       fd_with([&](auto& r) { r.set_model_id(unknown); })},
      {"bias without qd", C::INVALID_ARGUMENT, "qd has 0 values, expected count*dof (qd is needed",
       ff_with([](auto& r) { r.set_bias(true); })},
      {"full factor answer above max_message_bytes", C::RESOURCE_EXHAUSTED,
       "(--max-message-bytes, DENOC_MAX_MESSAGE_BYTES)", ff_with([](auto& r) {
         r.set_count(1000);
         const auto v = randomStates(1000, 7, 2);
         *r.mutable_q() = {v.begin(), v.end()};
         r.set_inverse(true);
       })},
      {"register without source", C::INVALID_ARGUMENT, "source is not set",
       reg_with([](auto& r) { r.clear_dh(); })},
      {"malformed URDF", C::INVALID_ARGUMENT, "invalid model",
       reg_with([](auto& r) { r = urdf("<robot name='x'><link name='a'></robot"); })},
      {"empty URDF", C::INVALID_ARGUMENT, "urdf.text is empty", reg_with([](auto& r) { r = urdf(""); })},
      {"URDF unknown tip link", C::INVALID_ARGUMENT, "no_such_link", reg_with([&](auto& r) {
         r = urdf(ur5);
         r.mutable_urdf()->set_tip_link("no_such_link");
       })},
      {"URDF armature count", C::INVALID_ARGUMENT, "armature", reg_with([&](auto& r) {
         r = urdf(ur5);
         r.add_armature(0.1);
         r.add_armature(0.1);
       })},
      {"DH with top-level armature", C::INVALID_ARGUMENT, "armature is for URDF models",
       reg_with([](auto& r) { r.add_armature(0.1); })},
      {"DH zero mass", C::INVALID_ARGUMENT, "mass",
       reg_with([](auto& r) { r.mutable_dh()->mutable_links(1)->set_mass(0.0); })},
      {"DH inertia violates the triangle inequality", C::INVALID_ARGUMENT, "triangle", reg_with([](auto& r) {
         auto* I = r.mutable_dh()->mutable_links(2)->mutable_inertia();
         I->set_ixx(0.01);
         I->set_iyy(0.01);
         I->set_izz(1.0);
         I->set_ixy(0);
         I->set_ixz(0);
         I->set_iyz(0);
       })},
      {"DH joint type unspecified", C::INVALID_ARGUMENT, "dh.links[0].type is 0",
       reg_with([](auto& r) { r.mutable_dh()->mutable_links(0)->set_type(v1::JOINT_TYPE_UNSPECIFIED); })},
      {"DH alpha NaN", C::INVALID_ARGUMENT, "dh.links[1].alpha is nan",
       reg_with([](auto& r) { r.mutable_dh()->mutable_links(1)->set_alpha(kNaN); })},
      {"DH inverted limits", C::INVALID_ARGUMENT, "position limits", reg_with([](auto& r) {
         r.mutable_dh()->mutable_links(0)->mutable_limits()->set_lower(1.0);
         r.mutable_dh()->mutable_links(0)->mutable_limits()->set_upper(-1.0);
       })},
      {"DH above max_dof", C::RESOURCE_EXHAUSTED, "max_dof = 12 (--max-dof, DENOC_MAX_DOF)",
       reg_with([](auto& r) { r = dhRequest(randomChain(13, 5)); })},
      {"DH without links", C::INVALID_ARGUMENT, "dh.links is empty",
       reg_with([](auto& r) { r.mutable_dh()->clear_links(); })},
      {"gravity Inf", C::INVALID_ARGUMENT, "gravity.z is inf",
       reg_with([](auto& r) { r.mutable_gravity()->set_z(kInf); })},
      {"delete a built-in model", C::FAILED_PRECONDITION, "cannot be deleted",
       [&](Stub& s) {
         v1::DeleteModelRequest r;
         r.set_model_id(builtin);
         v1::DeleteModelResponse resp;
         return s.DeleteModel(context().get(), r, &resp);
       }},
      {"delete an unknown model", C::NOT_FOUND, "is not registered",
       [&](Stub& s) {
         v1::DeleteModelRequest r;
         r.set_model_id(unknown);
         v1::DeleteModelResponse resp;
         return s.DeleteModel(context().get(), r, &resp);
       }},
      {"get an unknown model", C::NOT_FOUND, "is not registered",
       [&](Stub& s) {
         v1::GetModelRequest r;
         r.set_model_id(unknown);
         v1::GetModelResponse resp;
         return s.GetModel(context().get(), r, &resp);
       }},
      {"stream computation unspecified", C::INVALID_ARGUMENT, "message 0: computation is 0",
       [&](Stub& s) {
         auto m = streamID(id, 7);
         m.set_computation(v1::COMPUTATION_UNSPECIFIED);
         return stream(s, {m});
       }},
      {"stream second message short", C::INVALID_ARGUMENT, "message 1: q has 6 values, expected dof = 7",
       [&](Stub& s) {
         auto bad = streamID(id, 7);
         bad.mutable_q()->RemoveLast();
         return stream(s, {streamID(id, 7), bad});
       }},
      {"simulate t_end 0", C::INVALID_ARGUMENT, "t_end", sim_with([](auto& r) { r.set_t_end(0.0); })},
      {"simulate with the Fixman route", C::INVALID_ARGUMENT, "route is 1",
       sim_with([](auto& r) { r.set_route(v1::FORWARD_ROUTE_FIXMAN); })},
      {"simulate too many samples", C::RESOURCE_EXHAUSTED, "max_states = 1000",
       sim_with([](auto& r) { r.set_t_end(100.0); })},
      {"simulate q0 NaN", C::INVALID_ARGUMENT, "q0[2] is nan", sim_with([](auto& r) { r.set_q0(2, kNaN); })},
  };
  ASSERT_GE(cases.size(), 25u);
  std::set<std::string> names;
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name";
    const grpc::Status st = c.call(*stub);
    EXPECT_EQ(st.error_code(), c.code) << st.error_message();
    EXPECT_NE(st.error_message().find(c.message), std::string::npos) << "message: " << st.error_message();
  }

  // the server is alive, answers good requests correctly, its registry and store are unchanged
  EXPECT_EQ(server.wait(0ms), -1) << "denocd exited";
  v1::ListModelsResponse after;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &after).ok());
  ASSERT_EQ(after.models_size(), before.models_size());
  for (int i = 0; i < after.models_size(); ++i)
    EXPECT_EQ(after.models(i).model_id(), before.models(i).model_id());
  EXPECT_EQ(storeFiles(dir.path() / "store" / "v1"), files_before);
  const auto r = goodID(id, 3, 7);
  v1::InverseDynamicsResponse resp;
  ASSERT_TRUE(stub->InverseDynamics(context().get(), r, &resp).ok());
  const std::vector<double> q(r.q().begin(), r.q().end());
  expectCloseField(resp.tau(), coreID(buildModelFromDH(dh7), q, q, q), "tau after the bad requests");
  // every failure was logged with its status
  const std::string log = server.log();
  EXPECT_NE(log.find("InverseDynamics from"), std::string::npos);
  EXPECT_NE(log.find("failed: NOT_FOUND"), std::string::npos);
}

// Found by fuzzing (tests/fuzz): urdfdom leaked the links of a cycle of joints on every such registration.
// The cycles are refused before urdfdom; the server then exits cleanly (under the sanitizer presets
// LeakSanitizer checks at exit and fails the exit status on a leak).
TEST(ServerValidation, CyclicUrdfsAreRefusedAndLeakNothing) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const fs::path corpus = fs::path(DENOC_SOURCE_DIR) / "tests" / "data" / "urdf";
  const std::string self_loop =
      "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" "
      "ixz=\"0\" "
      "iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link><joint name=\"spin\" type=\"revolute\"><parent "
      "link=\"a\"/><child link=\"a\"/><axis xyz=\"0 0 1\"/></joint></robot>";
  for (const std::string& text :
       {readText(corpus / "closed_loop.urdf"), readText(corpus / "cycle_no_root.urdf"), self_loop}) {
    v1::RegisterModelResponse resp;
    const grpc::Status st = stub->RegisterModel(context().get(), urdf(text), &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
    EXPECT_NE(st.error_message().find("closed kinematic loop"), std::string::npos) << st.error_message();
  }
  server.signal(SIGTERM);
  const int status = server.wait(30s);
  ASSERT_NE(status, -1) << "denocd did not exit";
  ASSERT_TRUE(WIFEXITED(status)) << "denocd was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << server.log();
}

}  // namespace
}  // namespace denoc::test
