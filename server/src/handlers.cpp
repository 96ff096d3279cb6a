#include "handlers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "convert.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/forward_route.hpp"
#include "denoc/version.hpp"
#include "errors.hpp"
#include "log.hpp"
#include "registration.hpp"
#include "store_record.hpp"

namespace denoc::server {

namespace {

using VecX = Eigen::VectorXd;
using CMap = Eigen::Map<const VecX>;
using Wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>;

// room in an answer for everything but its models (the page token, framing)
constexpr std::size_t kListOverhead = 1024;

}  // namespace

BatchOptions batchOptions(const StopCondition& stop) {
  BatchOptions o;
  o.stop = &stop;
  return o;
}

template <typename Response>
Admission::Ticket Handlers::open(const Caller& caller, const BatchInput& in, std::uint64_t states,
                                 Response& resp) {
  Admission::Ticket ticket = admission_.admitStates(caller.principal, states);
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(static_cast<std::uint32_t>(in.model->nv));
  return ticket;
}

// explicit instantiations for the planners' handlers (planning_handlers.cpp)
template Admission::Ticket Handlers::open(const Caller&, const BatchInput&, std::uint64_t,
                                          v1::KinematicsResponse&);
template Admission::Ticket Handlers::open(const Caller&, const BatchInput&, std::uint64_t,
                                          v1::DerivativesResponse&);
template Admission::Ticket Handlers::open(const Caller&, const BatchInput&, std::uint64_t,
                                          v1::RolloutResponse&);

std::uint64_t Handlers::registerModel(const Caller& caller, const v1::RegisterModelRequest& req,
                                      v1::RegisterModelResponse& resp, const StopCondition& stop) {
  const ComputeTime time(resp);
  const std::string owner = caller.authenticated ? caller.principal : std::string();
  registry_.checkQuota(owner, req);  // before the build: a principal at its quota costs no build
  BuiltModel built = buildFromRequest(req, limits_, &stop);  // the registration's validator, then the core
  // the record keeps the model's description for listings (when it fits an answer; else it is built)
  const v1::ModelInfo info = describe(built, false);
  const bool keep_info = info.ByteSizeLong() + kListOverhead <= limits_.max_message_bytes;
  const std::string record = storeRecord(req, owner, keep_info ? &info : nullptr);
  auto [entry, created] = registry_.add(std::move(built), &record, false, &stop, &owner);
  resp.set_model_id(entry->id);
  *resp.mutable_model() = entry->info;
  resp.set_created(created);
  if (created)
    spdlog::info("registered model {} ({}, {} dof)", entry->id, escaped(entry->info.name()),
                 entry->info.dof());
  return 0;
}

std::uint64_t Handlers::getModel(const Caller&, const v1::GetModelRequest& req, v1::GetModelResponse& resp,
                                 const StopCondition& stop) {
  *resp.mutable_model() = validateGetModel(registry_, req, &stop)->info;
  return 0;
}

std::uint64_t Handlers::listModels(const Caller&, const v1::ListModelsRequest& req,
                                   v1::ListModelsResponse& resp, const StopCondition& stop) {
  const ListPage page = validateListModels(req);
  const std::size_t budget =
      limits_.max_message_bytes > kListOverhead ? limits_.max_message_bytes - kListOverhead : 0;
  std::size_t bytes = 0;
  std::uint32_t taken = 0;
  bool more = false;
  std::string too_large;
  registry_.list(
      page.after,
      [&](const v1::ModelInfo& info) {
        // each model: its bytes, a tag and a length of at most 5 bytes
        const std::size_t size = info.ByteSizeLong() + 6;
        if ((page.page_size != 0 && taken >= page.page_size) || bytes + size > budget) {
          more = true;
          if (taken == 0) too_large = info.model_id();
          return false;
        }
        *resp.add_models() = info;
        bytes += size;
        ++taken;
        return true;
      },
      &stop);
  if (!too_large.empty()) {
    fail(ErrorCode::ResourceExhausted,
         "the description of model " + too_large + " alone exceeds the message limit max_message_bytes = " +
             std::to_string(limits_.max_message_bytes) + " (--max-message-bytes, DENOC_MAX_MESSAGE_BYTES)");
  }
  if (more) resp.set_next_page_token(resp.models(resp.models_size() - 1).model_id());
  return 0;
}

std::uint64_t Handlers::deleteModel(const Caller& caller, const v1::DeleteModelRequest& req,
                                    v1::DeleteModelResponse& resp, const StopCondition&) {
  validateDeleteModel(req);
  registry_.remove(req.model_id(), caller.authenticated ? &caller.principal : nullptr);
  resp.set_model_id(req.model_id());
  spdlog::info("deleted model {}{}", escaped(req.model_id()),
               caller.authenticated ? " (by " + escaped(caller.principal) + ")" : "");
  return 0;
}

std::uint64_t Handlers::serverInfo(const Caller& caller, const v1::GetServerInfoRequest&,
                                   v1::GetServerInfoResponse& resp, const StopCondition&) {
  resp.set_version(DENOC_VERSION_STRING);
  resp.set_proto_package(v1::GetServerInfoRequest::descriptor()->file()->package());
  resp.set_max_dof(limits_.max_dof);
  resp.set_max_states(limits_.max_states);
  resp.set_max_receive_message_bytes(limits_.max_message_bytes);
  resp.set_max_send_message_bytes(limits_.max_message_bytes);
  resp.set_max_streams(static_cast<std::uint32_t>(
      std::min<std::uint64_t>(admission_.bounds().streams, std::numeric_limits<std::uint32_t>::max())));
  resp.set_tokens_required(caller.authenticated);
  resp.set_max_depth(limits_.max_depth);
  resp.set_max_wrenches(kMaxWrenches);
  resp.set_max_frames(kMaxFrames);
  return 0;
}

std::uint64_t Handlers::inverseDynamics(const Caller& caller, const v1::InverseDynamicsRequest& req,
                                        v1::InverseDynamicsResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateInverseDynamics(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  double* tau = resized(resp.mutable_tau(), in.total);
  const ComputeTime time(resp);
  if (!in.wrenches.empty()) {
    inverseDynamicsBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(), req.qdd().data(), tau,
                         in.wrenches, batchOptions(stop));
  } else {
    inverseDynamicsBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(), req.qdd().data(), tau,
                         req.tip_wrench_size() != 0 ? req.tip_wrench().data() : nullptr, batchOptions(stop));
  }
  return in.count;
}

std::uint64_t Handlers::forwardDynamics(const Caller& caller, const v1::ForwardDynamicsRequest& req,
                                        v1::ForwardDynamicsResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateForwardDynamics(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  resp.set_route(req.route());
  double* qdd = resized(resp.mutable_qdd(), in.total);
  const ComputeTime time(resp);
  if (!in.wrenches.empty()) {
    forwardDynamicsBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(), req.tau().data(), qdd,
                         in.wrenches, batchOptions(stop));
  } else {
    forwardDynamicsBatch(*pool_, in.model, toForwardRoute(req.route()), in.count, req.q().data(),
                         req.qd().data(), req.tau().data(), qdd, batchOptions(stop));
  }
  return in.count;
}

std::uint64_t Handlers::fullFactor(const Caller& caller, const v1::FullFactorRequest& req,
                                   v1::FullFactorResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateFullFactor(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  const std::uint64_t square = in.total * req.dof();
  FullFactorBatchOutput out{resized(resp.mutable_inertia(), square), resized(resp.mutable_u(), square),
                            resized(resp.mutable_d(), in.total), resized(resp.mutable_log_det(), in.count)};
  if (req.inverse()) out.inverse = resized(resp.mutable_inverse(), square);
  if (req.convective()) out.convective = resized(resp.mutable_convective(), square);
  if (req.bias()) out.bias = resized(resp.mutable_bias(), in.total);
  if (req.gravity_torque()) out.gravity_torque = resized(resp.mutable_gravity_torque(), in.total);
  const ComputeTime time(resp);
  fullFactorBatch(*pool_, in.model, in.count, req.q().data(),
                  (out.convective || out.bias) ? req.qd().data() : nullptr, out, batchOptions(stop));
  return in.count;
}

SimulationRun::SimulationRun(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                             const StopCondition& stop)
    : input_(validateSimulate(registry, limits, req, &stop)), simulator_(input_.entry->model) {
  input_.options.stop = &stop;
  const Model& m = *input_.entry->model;
  simulator_.start(CMap(req.q0().data(), m.nq), CMap(req.qd0().data(), m.nv), input_.options);
}

void SimulationRun::next(v1::SimulateResponse& out) {
  const Model& m = *input_.entry->model;
  out.Clear();
  setHeader(out, *input_.entry);
  out.set_dof(static_cast<std::uint32_t>(m.nv));
  bool more = false;
  {
    const ComputeTime time(out);
    finished_ = true;  // unless the run goes on
    more = simulator_.advance(input_.batch, [&](const Sample& s) {
      out.add_t(s.t);
      out.mutable_q()->Add(s.q.data(), s.q.data() + s.q.size());
      out.mutable_qd()->Add(s.qd.data(), s.qd.data() + s.qd.size());
      out.add_energy(s.energy);
      out.add_kinetic(s.kinetic);
      out.add_potential(s.potential);
      return true;
    });
    finished_ = !more;
  }
  out.set_count(static_cast<std::uint32_t>(out.t_size()));
  if (!more) {
    const SimulationStats& stats = simulator_.stats();
    out.set_last(true);
    out.set_steps(static_cast<std::uint64_t>(stats.steps));
    out.set_rejected_steps(static_cast<std::uint64_t>(stats.rejected));
    out.set_evaluations(static_cast<std::uint64_t>(stats.evaluations));
  }
}

void StreamSession::answer(const v1::StreamRequest& req, v1::StreamResponse& resp,
                           const StopCondition& stop) {
  input_ = validateStreamMessage(registry_, req, std::move(input_), &stop);
  resp.Clear();
  resp.set_computation(req.computation());
  resp.set_sequence(req.sequence());
  ++messages_;
  if (req.computation() == v1::COMPUTATION_ECHO) return;
  if (data_model_ != input_.model) {
    data_ = std::make_unique<Data>(*input_.model);
    data_model_ = input_.model;
  }
  const Model& m = *input_.model;
  Data& d = *data_;
  setHeader(resp, *input_.entry);
  const CMap q(req.q().data(), m.nq), qd(req.qd().data(), m.nv);
  const VecX* result;
  {
    const ComputeTime time(resp);
    if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
      const CMap qdd(req.qdd().data(), m.nv);
      result = !input_.wrenches.empty() ? &inverseDynamics(m, d, q, qd, qdd, input_.wrenches)
               : req.tip_wrench_size() == 6
                   ? &inverseDynamics(m, d, q, qd, qdd, Wrench(req.tip_wrench().data()))
                   : &inverseDynamics(m, d, q, qd, qdd);
    } else if (!input_.wrenches.empty()) {
      result = &denoc::forwardDynamics(m, d, q, qd, CMap(req.tau().data(), m.nv), input_.wrenches);
    } else {
      result =
          &denoc::forwardDynamics(m, d, toForwardRoute(req.route()), q, qd, CMap(req.tau().data(), m.nv));
    }
  }
  resp.mutable_result()->Add(result->data(), result->data() + m.nv);
  ++computed_;
}

}  // namespace denoc::server
