// Fuzz target: denocd's request decoding, validation and computation.
//
// Input: a selector byte and a serialized request (request_harness.hpp). The bytes are parsed as the
// message of the selected RPC (unparsable bytes are dropped, as gRPC would refuse them) and served by the
// real handlers of server/src/service.cpp on a registry holding three pinned models:
//  - RegisterModel: buildFromRequest (validation, the URDF or DH builder, the canonical form and its id)
//    and describe(); the registry and store steps of the handler are left out so that the run does not
//    write a file per accepted model. An accepted model then runs through every algorithm of the core.
//  - InverseDynamics, ForwardDynamics, FullFactor, GetModel, DeleteModel: the handlers (handlers.hpp)
//    called directly, their exceptions mapped by toStatus as the service maps them.
//  - Simulate and Stream (they need a call): through an in-process gRPC channel to the service itself.
// The contract checked: no sanitizer report, no INTERNAL or UNKNOWN status (an exception the handlers did
// not expect), an error status always carries a message, an OK answer has the promised sizes, and a
// registration request gives the same model id after a round trip through its wire form (what the store
// keeps and reloads).
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "executor.hpp"
#include "exercise.hpp"
#include "handlers.hpp"
#include "model_id.hpp"
#include "registration.hpp"
#include "registry.hpp"
#include "request_harness.hpp"
#include "service.hpp"
#include "store.hpp"
#include "transport.hpp"
#include "watchdog.hpp"

namespace {

namespace v1 = denoc::v1;
namespace ds = denoc::server;
using denoc::fuzz::Rpc;
using denoc::fuzz::Target;

// simulations are bounded by a step count below the server's default (10 million) so that one input
// takes at most seconds; the step-limit path is still reached
constexpr std::uint64_t kMaxSimulationSteps = 300;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_request: %s\n", what.c_str());
  std::abort();
}

/// The server under test: a registry with the three models, the service, an in-process gRPC server.
struct Harness {
  ds::Limits limits{64, 200, 128u << 10};  // max_dof, max_states, max_message_bytes
  std::string store_dir;
  std::unique_ptr<ds::ModelStore> store;
  std::unique_ptr<ds::Registry> registry;
  std::unique_ptr<ds::Admission> admission;
  std::unique_ptr<ds::Handlers> handlers;
  std::unique_ptr<ds::ComputeExecutor> executor;
  std::unique_ptr<ds::Watchdog> watchdog;
  std::unique_ptr<ds::ServiceContext> context;
  std::unique_ptr<ds::DynamicsService> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Dynamics::Stub> stub;
  std::string ids[3];

  Harness() {
    spdlog::set_level(spdlog::level::off);     // every refused request is logged at warn level
    google::protobuf::SetLogHandler(nullptr);  // and every string field that is not UTF-8
    std::string tmpl = (std::filesystem::temp_directory_path() / "denoc_fuzz_store.XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) broken("mkdtemp failed");
    store_dir = tmpl;
    store = std::make_unique<ds::ModelStore>(store_dir);
    registry = std::make_unique<ds::Registry>(*store, 16, limits);
    ids[0] = registry->add(ds::buildBuiltin(denoc::stanfordArmDH()), nullptr, true).first->id;
    ids[1] = registry->add(ds::buildBuiltin(denoc::planarArmDH()), nullptr, true).first->id;
    v1::RegisterModelRequest panda;
    panda.mutable_urdf()->set_text(ds::readFile(denoc::fuzz::pandaUrdfPath()));
    ds::BuiltModel built = ds::buildFromRequest(panda, limits);
    if (built.model->n != denoc::fuzz::dofOf(Target::PandaUrdf)) broken("the Panda model is not 7 dof");
    ids[2] = registry->add(std::move(built), nullptr, true).first->id;
    admission = std::make_unique<ds::Admission>(
        ds::AdmissionBounds{8 * limits.max_states, 8 * limits.max_states, 4, 4});
    // no access control, no metrics, no batch pool (batches of at most max_states run on the calling thread)
    handlers = std::make_unique<ds::Handlers>(*registry, limits, *admission, nullptr);
    executor = std::make_unique<ds::ComputeExecutor>(ds::ExecutorBounds{1, 16, 16});
    const ds::StreamTimeouts timeouts;
    watchdog = std::make_unique<ds::Watchdog>(ds::Watchdog::tickFor(timeouts.idle, timeouts.write_stall));
    context = std::make_unique<ds::ServiceContext>(
        ds::ServiceContext{*handlers, *executor, *admission, *watchdog, ds::Identity{}, timeouts, nullptr});
    service = std::make_unique<ds::DynamicsService>(*context);
    grpc::ServerBuilder builder;
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    if (!server) broken("the in-process gRPC server did not start");
    stub = v1::Dynamics::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  }
};

Harness& harness() {
  // never destroyed: gRPC's threads may outlive static destruction
  static Harness* h = [] {
    auto* p = new Harness();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(harness().store_dir, ec);
    });
    return p;
  }();
  return *h;
}

void checkStatus(const grpc::Status& status, const char* rpc) {
  if (status.error_code() == grpc::StatusCode::INTERNAL || status.error_code() == grpc::StatusCode::UNKNOWN)
    broken(std::string(rpc) + " answered " + ds::codeName(status.error_code()) + ": " +
           status.error_message());
  if (!status.ok() && status.error_message().empty()) broken(std::string(rpc) + " failed without a message");
}

template <typename Field>
void checkSize(const Field& field, std::uint64_t expected, const char* what) {
  if (static_cast<std::uint64_t>(field.size()) != expected) {
    broken(std::string(what) + " has " + std::to_string(field.size()) + " values, expected " +
           std::to_string(expected));
  }
}

std::unique_ptr<grpc::ClientContext> clientContext() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return ctx;
}

void registerModel(const v1::RegisterModelRequest& req, std::uint64_t seed) {
  Harness& h = harness();
  ds::BuiltModel built;
  try {
    built = ds::buildFromRequest(req, h.limits);
  } catch (...) {
    checkStatus(ds::toStatus(std::current_exception()), "RegisterModel");
    return;
  }
  const v1::ModelInfo info = ds::describe(built, false);
  if (!ds::isModelId(built.id)) broken("RegisterModel: the id is not 64 hex digits");
  if (info.dof() != static_cast<std::uint32_t>(built.model->n) || info.joint_names_size() != built.model->n)
    broken("RegisterModel: the description does not match the model");
  // the stored form (the request's wire bytes) gives back the same id
  std::string bytes;
  if (!req.SerializeToString(&bytes)) broken("RegisterModel: the request does not serialize");
  v1::RegisterModelRequest again;
  if (!again.ParseFromString(bytes)) broken("RegisterModel: the serialized request does not parse");
  if (ds::buildFromRequest(again, h.limits).id != built.id)
    broken("RegisterModel: the stored request gives another model id");
  denoc::fuzz::exerciseModel(*built.model, seed);
}

void simulate(const v1::SimulateRequest& req) {
  v1::SimulateRequest r = req;
  if (r.max_steps() == 0 || r.max_steps() > kMaxSimulationSteps) r.set_max_steps(kMaxSimulationSteps);
  auto ctx = clientContext();
  auto reader = harness().stub->Simulate(ctx.get(), r);
  v1::SimulateResponse resp;
  std::uint64_t samples = 0;
  bool last = false;
  while (reader->Read(&resp)) {
    if (last) broken("Simulate: a message after the last one");
    checkSize(resp.q(), static_cast<std::uint64_t>(resp.count()) * r.dof(), "Simulate q");
    checkSize(resp.t(), resp.count(), "Simulate t");
    samples += resp.count();
    last = resp.last();
  }
  const grpc::Status status = reader->Finish();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) broken("Simulate: took more than 20 s");
  checkStatus(status, "Simulate");
  if (status.ok() && (!last || samples == 0)) broken("Simulate: OK without a last message or samples");
}

void stream(const v1::StreamRequest& req) {
  auto ctx = clientContext();
  auto st = harness().stub->Stream(ctx.get());
  v1::StreamResponse resp;
  if (st->Write(req) && st->Read(&resp)) {
    if (resp.sequence() != req.sequence()) broken("Stream: the answer has another sequence number");
    checkSize(resp.result(), static_cast<std::uint64_t>(req.q_size()), "Stream result");
  }
  st->WritesDone();
  checkStatus(st->Finish(), "Stream");
}

/// A handler's outcome as the service answers it.
template <typename F>
grpc::Status served(F&& handler) {
  try {
    handler();
    return grpc::Status::OK;
  } catch (...) {
    return ds::toStatus(std::current_exception());
  }
}

template <typename Message>
bool parse(Message& m, const std::uint8_t* data, std::size_t size, Target target) {
  if (!m.ParseFromArray(data, static_cast<int>(size))) return false;
  if constexpr (requires { m.set_model_id(std::string()); }) {
    if (target != Target::AsSent) m.set_model_id(harness().ids[static_cast<int>(target)]);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > (1u << 20)) return 0;
  Harness& h = harness();
  const Rpc rpc = denoc::fuzz::rpcOf(data[0]);
  const Target target = denoc::fuzz::targetOf(data[0]);
  const std::uint8_t* body = data + 1;
  const std::size_t n = size - 1;
  const ds::Caller caller{"fuzz", false};
  const denoc::StopCondition never;
  switch (rpc) {
    case Rpc::RegisterModel: {
      v1::RegisterModelRequest req;
      if (parse(req, body, n, target)) registerModel(req, denoc::fuzz::hashBytes(data, size));
      break;
    }
    case Rpc::InverseDynamics: {
      v1::InverseDynamicsRequest req;
      v1::InverseDynamicsResponse resp;
      if (!parse(req, body, n, target)) break;
      const grpc::Status st = served([&] { h.handlers->inverseDynamics(caller, req, resp, never); });
      checkStatus(st, "InverseDynamics");
      if (st.ok()) checkSize(resp.tau(), std::uint64_t{req.count()} * req.dof(), "InverseDynamics tau");
      break;
    }
    case Rpc::ForwardDynamics: {
      v1::ForwardDynamicsRequest req;
      v1::ForwardDynamicsResponse resp;
      if (!parse(req, body, n, target)) break;
      const grpc::Status st = served([&] { h.handlers->forwardDynamics(caller, req, resp, never); });
      checkStatus(st, "ForwardDynamics");
      if (st.ok()) checkSize(resp.qdd(), std::uint64_t{req.count()} * req.dof(), "ForwardDynamics qdd");
      break;
    }
    case Rpc::FullFactor: {
      v1::FullFactorRequest req;
      v1::FullFactorResponse resp;
      if (!parse(req, body, n, target)) break;
      const grpc::Status st = served([&] { h.handlers->fullFactor(caller, req, resp, never); });
      checkStatus(st, "FullFactor");
      if (st.ok()) {
        const std::uint64_t total = std::uint64_t{req.count()} * req.dof();
        checkSize(resp.inertia(), total * req.dof(), "FullFactor inertia");
        checkSize(resp.d(), total, "FullFactor d");
        checkSize(resp.log_det(), req.count(), "FullFactor log_det");
        checkSize(resp.inverse(), req.inverse() ? total * req.dof() : 0, "FullFactor inverse");
        checkSize(resp.bias(), req.bias() ? total : 0, "FullFactor bias");
      }
      break;
    }
    case Rpc::Simulate: {
      v1::SimulateRequest req;
      if (parse(req, body, n, target)) simulate(req);
      break;
    }
    case Rpc::Stream: {
      v1::StreamRequest req;
      if (parse(req, body, n, target)) stream(req);
      break;
    }
    case Rpc::GetModel: {
      v1::GetModelRequest req;
      v1::GetModelResponse resp;
      if (parse(req, body, n, target))
        checkStatus(served([&] { h.handlers->getModel(caller, req, resp, never); }), "GetModel");
      break;
    }
    case Rpc::DeleteModel: {
      v1::DeleteModelRequest req;
      v1::DeleteModelResponse resp;
      if (parse(req, body, n, target))
        checkStatus(served([&] { h.handlers->deleteModel(caller, req, resp, never); }), "DeleteModel");
      break;
    }
  }
  return 0;
}
