// Every number of every request at the edge of double precision, through a real denocd: each request type
// is filled in completely once (a base request that the server answers OK; the test checks, through the
// message descriptors, that every double field of the request and of the messages inside it is set, so a
// field added later cannot miss this test), then each double in it, one at a time, is set to +1.7e308 and
// to -1.7e308. The server must refuse it with INVALID_ARGUMENT or RESOURCE_EXHAUSTED (ABORTED for an
// integration that diverged), or answer OK with every number of the answer finite; never another code
// (INTERNAL, UNKNOWN) and never inf or nan in an OK answer. The server stays healthy.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using test::ServerProcess;
using test::TempDir;

// One double of a message: the fields and repeated indices from the top message down to it.
struct Step {
  const FieldDescriptor* field;
  int index;  // -1: a singular field
};
using Path = std::vector<Step>;

std::string name(const Path& p) {
  std::string s;
  for (const Step& st : p) {
    s += (s.empty() ? "" : ".") + st.field->name();
    if (st.index >= 0) s += "[" + std::to_string(st.index) + "]";
  }
  return s;
}

// every double of m (singular and set, or repeated: its first entry), and the full names of their fields
void collect(const Message& m, Path prefix, std::vector<Path>& out, std::set<std::string>& fields) {
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const FieldDescriptor* f : set) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      fields.insert(f->full_name());
      Path p = prefix;
      p.push_back({f, f->is_repeated() ? 0 : -1});
      out.push_back(p);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < count; ++i) {
        Path p = prefix;
        p.push_back({f, f->is_repeated() ? i : -1});
        collect(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f), p, out, fields);
      }
    }
  }
}

// the double fields a message type has, itself and inside its message fields
void declared(const google::protobuf::Descriptor* d, std::set<std::string>& out, int depth = 0) {
  if (depth > 4) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) out.insert(f->full_name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) declared(f->message_type(), out, depth + 1);
  }
}

void setAt(Message& m, const Path& p, double v) {
  Message* at = &m;
  for (std::size_t k = 0; k + 1 < p.size(); ++k) {
    const Step& s = p[k];
    const Reflection* r = at->GetReflection();
    at = s.index >= 0 ? r->MutableRepeatedMessage(at, s.field, s.index) : r->MutableMessage(at, s.field);
  }
  const Step& s = p.back();
  if (s.index >= 0) {
    at->GetReflection()->SetRepeatedDouble(at, s.field, s.index, v);
  } else {
    at->GetReflection()->SetDouble(at, s.field, v);
  }
}

// the first double of m that is not finite, or "" when all are
std::string nonFinite(const Message& m) {
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const FieldDescriptor* f : set) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < count; ++i) {
        const double v = f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
        if (!std::isfinite(v)) return f->name() + "[" + std::to_string(i) + "] = " + std::to_string(v);
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < count; ++i) {
        const std::string bad =
            nonFinite(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f));
        if (!bad.empty()) return f->name() + "." + bad;
      }
    }
  }
  return "";
}

// a call of one RPC: the status and the answers (a stream's every message)
using Call =
    std::function<grpc::Status(const Message& request, std::vector<std::unique_ptr<Message>>& answers)>;

class ServerRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"));
    stub_ = server_->stub();
    v1::RegisterModelResponse reg;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RegisterModel(&ctx, test::dhRequest(test::randomChain(7, 41)), &reg).ok());
    arm_ = reg.model_id();
  }

  // The base request is answered OK; then every double of it at +-1.7e308 is refused with
  // INVALID_ARGUMENT or RESOURCE_EXHAUSTED or answered OK with finite numbers. Every double field the
  // request's type declares, except those in `unset` (with the reason), is set in the base request.
  void sweep(const Message& base, const Call& call, const std::set<std::string>& unset = {}) {
    SCOPED_TRACE(base.GetDescriptor()->name());
    std::vector<std::unique_ptr<Message>> answers;
    const grpc::Status ok = call(base, answers);
    ASSERT_TRUE(ok.ok()) << "the base request: " << ok.error_message();
    std::vector<Path> paths;
    std::set<std::string> fields, all;
    collect(base, {}, paths, fields);
    declared(base.GetDescriptor(), all);
    for (const std::string& f : all) {
      if (fields.count(f) == 0 && unset.count(f) == 0)
        ADD_FAILURE() << f << " is not set in the base request";
    }
    int refused = 0;
    for (const Path& p : paths) {
      for (double v : {1.7e308, -1.7e308}) {
        std::unique_ptr<Message> req(base.New());
        req->CopyFrom(base);
        setAt(*req, p, v);
        answers.clear();
        const grpc::Status s = call(*req, answers);
        const std::string what = name(p) + " = " + std::to_string(v);
        if (s.ok()) {
          for (const auto& a : answers)
            EXPECT_EQ(nonFinite(*a), "") << what << ": OK with a non-finite number";
        } else {
          ++refused;
          // ABORTED: a valid integration that diverged (docs/service.md), as a rollout of dt = 1e12 does
          EXPECT_TRUE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                      s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                      s.error_code() == grpc::StatusCode::ABORTED)
              << what << ": " << s.error_code() << " " << s.error_message();
        }
      }
    }
    EXPECT_GT(refused, 0);
    answers.clear();
    EXPECT_TRUE(call(base, answers).ok()) << "the server after the sweep";
  }

  template <typename Req, typename Resp, typename Method>
  Call unary(Method method) {
    return [this, method](const Message& m, std::vector<std::unique_ptr<Message>>& out) {
      auto resp = std::make_unique<Resp>();
      grpc::ClientContext ctx;
      const grpc::Status s = ((*stub_).*method)(&ctx, static_cast<const Req&>(m), resp.get());
      out.push_back(std::move(resp));
      return s;
    };
  }

  template <typename Req>
  void states(Req& r, bool qdd, bool tau) {
    r.set_model_id(arm_);
    r.set_count(2);
    r.set_dof(7);
    for (int i = 0; i < 14; ++i) {
      r.add_q(0.1 * i);
      r.add_qd(0.05 * i);
      if constexpr (requires { r.add_qdd(0.0); }) {
        if (qdd) r.add_qdd(0.2);
      }
      if constexpr (requires { r.add_tau(0.0); }) {
        if (tau) r.add_tau(1.0);
      }
    }
  }

  static void payload(v1::Payload* p) {
    p->set_mass(0.5);
    p->mutable_com()->set_x(0.01);
    p->mutable_com()->set_y(0.02);
    p->mutable_com()->set_z(0.03);
    p->mutable_inertia()->set_ixx(1e-3);
    p->mutable_inertia()->set_ixy(1e-5);
    p->mutable_inertia()->set_ixz(2e-5);
    p->mutable_inertia()->set_iyy(1e-3);
    p->mutable_inertia()->set_iyz(3e-5);
    p->mutable_inertia()->set_izz(1e-3);
  }

  static void wrench(google::protobuf::RepeatedPtrField<v1::LinkWrench>* ws) {
    v1::LinkWrench* w = ws->Add();
    w->set_link("link3");
    for (int i = 0; i < 6; ++i) w->add_wrench(0.5 * i);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Dynamics::Stub> stub_;
  std::string arm_;
};

TEST_F(ServerRanges, TheDynamicsCalls) {
  v1::InverseDynamicsRequest id;
  states(id, true, false);
  for (int i = 0; i < 12; ++i) id.add_tip_wrench(0.1 * i);
  payload(id.mutable_payload());
  wrench(id.mutable_wrenches());
  sweep(id,
        unary<v1::InverseDynamicsRequest, v1::InverseDynamicsResponse>(&v1::Dynamics::Stub::InverseDynamics));

  v1::ForwardDynamicsRequest fd;
  states(fd, false, true);
  payload(fd.mutable_payload());
  wrench(fd.mutable_wrenches());
  sweep(fd,
        unary<v1::ForwardDynamicsRequest, v1::ForwardDynamicsResponse>(&v1::Dynamics::Stub::ForwardDynamics));

  v1::FullFactorRequest ff;
  states(ff, false, false);
  ff.set_convective(true);
  ff.set_bias(true);
  ff.set_gravity_torque(true);
  ff.set_inverse(true);
  payload(ff.mutable_payload());
  sweep(ff, unary<v1::FullFactorRequest, v1::FullFactorResponse>(&v1::Dynamics::Stub::FullFactor));
}

TEST_F(ServerRanges, ThePlannersCalls) {
  v1::KinematicsRequest k;
  states(k, false, false);
  k.set_link("");  // the tip: 7 joints for lambda's 6 rows
  k.mutable_point()->set_x(0.01);
  k.mutable_point()->set_y(0.02);
  k.mutable_point()->set_z(0.03);
  k.set_jacobian(true);
  k.set_jdot_qd(true);
  k.set_lambda(true);
  k.set_all_frames(true);
  k.set_center_of_mass(true);
  k.set_com_jacobian(true);
  k.set_centroidal(true);
  k.set_centroidal_momentum(true);
  payload(k.mutable_payload());
  sweep(k, unary<v1::KinematicsRequest, v1::KinematicsResponse>(&v1::Dynamics::Stub::Kinematics));

  for (v1::DerivativeOf of : {v1::DERIVATIVE_OF_INVERSE_DYNAMICS, v1::DERIVATIVE_OF_FORWARD_DYNAMICS}) {
    v1::DerivativesRequest d;
    const bool inverse = of == v1::DERIVATIVE_OF_INVERSE_DYNAMICS;
    states(d, inverse, !inverse);
    d.set_of(of);
    for (int i = 0; i < 12; ++i) d.add_tip_wrench(0.1 * i);
    payload(d.mutable_payload());
    wrench(d.mutable_wrenches());
    // the other direction's array stays empty
    sweep(d, unary<v1::DerivativesRequest, v1::DerivativesResponse>(&v1::Dynamics::Stub::Derivatives),
          {inverse ? "denoc.v1.DerivativesRequest.tau" : "denoc.v1.DerivativesRequest.qdd"});
  }

  v1::RolloutRequest r;
  r.set_model_id(arm_);
  r.set_count(2);
  r.set_dof(7);
  r.set_steps(3);
  r.set_dt(1e-3);
  r.set_linearize(true);
  for (int i = 0; i < 28; ++i) r.add_x0(0.05 * i);
  for (int i = 0; i < 42; ++i) r.add_u(0.1);
  payload(r.mutable_payload());
  wrench(r.mutable_wrenches());  // held over both rollouts
  sweep(r, unary<v1::RolloutRequest, v1::RolloutResponse>(&v1::Dynamics::Stub::Rollout));
}

TEST_F(ServerRanges, TheStreams) {
  v1::SimulateRequest s;
  s.set_model_id(arm_);
  s.set_dof(7);
  for (int i = 0; i < 7; ++i) {
    s.add_q0(0.1 * i);
    s.add_qd0(0.0);
    s.add_damping(0.1);
  }
  s.set_t_end(0.02);
  s.set_dt_out(0.01);
  s.set_rtol(1e-8);
  s.set_atol(1e-10);
  s.set_initial_step(1e-4);
  s.set_max_step(1e-2);
  s.set_step(1e-3);  // RK4's; unused by DOPRI5, set so that every number of the request is swept
  s.add_sample_times(0.0);
  s.add_sample_times(0.02);
  s.add_torque_times(0.0);
  for (int i = 0; i < 7; ++i) s.add_torque_values(0.5);
  sweep(s, [this](const Message& m, std::vector<std::unique_ptr<Message>>& out) {
    grpc::ClientContext ctx;
    auto reader = stub_->Simulate(&ctx, static_cast<const v1::SimulateRequest&>(m));
    auto batch = std::make_unique<v1::SimulateResponse>();
    while (reader->Read(batch.get())) {
      out.push_back(std::move(batch));
      batch = std::make_unique<v1::SimulateResponse>();
    }
    return reader->Finish();
  });

  v1::StreamRequest st;
  st.set_model_id(arm_);
  st.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
  for (int i = 0; i < 7; ++i) {
    st.add_q(0.1 * i);
    st.add_qd(0.1);
    st.add_qdd(0.2);
    st.add_tau(1.0);  // forward dynamics' (unused by inverse dynamics): swept all the same
  }
  for (int i = 0; i < 6; ++i) st.add_tip_wrench(0.1 * i);
  payload(st.mutable_payload());
  wrench(st.mutable_wrenches());
  sweep(st, [this](const Message& m, std::vector<std::unique_ptr<Message>>& out) {
    grpc::ClientContext ctx;
    auto stream = stub_->Stream(&ctx);
    stream->Write(static_cast<const v1::StreamRequest&>(m));
    stream->WritesDone();
    auto resp = std::make_unique<v1::StreamResponse>();
    while (stream->Read(resp.get())) {
      out.push_back(std::move(resp));
      resp = std::make_unique<v1::StreamResponse>();
    }
    return stream->Finish();
  });
}

TEST_F(ServerRanges, Registration) {
  // every number of a DH table and the request's gravity (armature is for URDF models: its own request)
  v1::RegisterModelRequest dh = test::dhRequest(test::randomChain(3, 43));
  for (v1::DHLink& l : *dh.mutable_dh()->mutable_links()) {
    l.mutable_limits()->set_lower(-1.0);
    l.mutable_limits()->set_upper(1.0);
    l.mutable_limits()->set_velocity(2.0);
    l.mutable_limits()->set_effort(50.0);
    l.set_armature(0.01);
  }
  const auto reg =
      unary<v1::RegisterModelRequest, v1::RegisterModelResponse>(&v1::Dynamics::Stub::RegisterModel);
  // an OK registration answers the model's limits, where +-inf means unlimited: only the codes are judged
  const Call codes = [&](const Message& m, std::vector<std::unique_ptr<Message>>& out) {
    const grpc::Status s = reg(m, out);
    out.clear();
    return s;
  };
  sweep(dh, codes, {"denoc.v1.RegisterModelRequest.armature"});
  v1::RegisterModelRequest urdf;
  urdf.mutable_urdf()->set_text(test::readText(std::string(DENOC_MODELS_DIR) + "/double_pendulum.urdf"));
  *urdf.mutable_gravity() = test::vec3(Eigen::Vector3d(0, 0, -9.81));
  urdf.add_armature(0.01);
  urdf.add_armature(0.02);
  std::set<std::string> dh_fields;
  declared(v1::DHModel::descriptor(), dh_fields);
  sweep(urdf, codes, dh_fields);
}

}  // namespace
}  // namespace denoc
