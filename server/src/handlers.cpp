#include "handlers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "convert.hpp"
#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/version.hpp"
#include "errors.hpp"
#include "log.hpp"
#include "model_source.hpp"
#include "planning_validate.hpp"

namespace denoc::server {

namespace {

using Clock = std::chrono::steady_clock;
using VecX = Eigen::VectorXd;
using CMap = Eigen::Map<const VecX>;
using Wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>;

std::int64_t nanosSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// room in an answer for everything but its models (the page token, framing)
constexpr std::size_t kListOverhead = 1024;

}  // namespace

BatchOptions batchOptions(const StopCondition& stop) {
  BatchOptions o;
  o.stop = &stop;
  return o;
}

void Handlers::registerModel(const Caller& caller, const v1::RegisterModelRequest& req,
                             v1::RegisterModelResponse& resp, const StopCondition& stop) {
  const auto t0 = Clock::now();
  BuiltModel built =
      buildFromRequest(req, limits_, stop);  // the registration's validator: shape, then the core
  const std::string owner = caller.authenticated ? caller.principal : std::string();
  const std::string record = storeRecord(req, owner);
  auto [entry, created] = registry_.add(std::move(built), &record, false, owner);
  resp.set_model_id(entry->id);
  *resp.mutable_model() = entry->info;
  resp.set_created(created);
  resp.set_compute_time_ns(nanosSince(t0));
  if (created)
    spdlog::info("registered model {} ({}, {} dof)", entry->id, escaped(entry->info.name()),
                 entry->info.dof());
}

void Handlers::getModel(const v1::GetModelRequest& req, v1::GetModelResponse& resp) {
  *resp.mutable_model() = validateGetModel(registry_, req)->info;
}

void Handlers::listModels(const v1::ListModelsRequest& req, v1::ListModelsResponse& resp) {
  const ListPage page = validateListModels(req);
  const std::size_t budget =
      limits_.max_message_bytes > kListOverhead ? limits_.max_message_bytes - kListOverhead : 0;
  std::size_t bytes = 0;
  std::uint32_t taken = 0;
  bool more = false;
  std::string too_large;
  registry_.list(page.after, [&](const v1::ModelInfo& info) {
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
  });
  if (!too_large.empty()) {
    fail(ErrorCode::ResourceExhausted,
         "the description of model " + too_large + " alone exceeds the message limit max_message_bytes = " +
             std::to_string(limits_.max_message_bytes) + " (--max-message-bytes, DENOC_MAX_MESSAGE_BYTES)");
  }
  if (more) resp.set_next_page_token(resp.models(resp.models_size() - 1).model_id());
}

void Handlers::deleteModel(const Caller& caller, const v1::DeleteModelRequest& req,
                           v1::DeleteModelResponse& resp) {
  validateDeleteModel(req);
  registry_.remove(req.model_id(), caller.authenticated ? &caller.principal : nullptr);
  resp.set_model_id(req.model_id());
  spdlog::info("deleted model {}{}", escaped(req.model_id()),
               caller.authenticated ? " (by " + escaped(caller.principal) + ")" : "");
}

void Handlers::serverInfo(const Caller& caller, const v1::GetServerInfoRequest&,
                          v1::GetServerInfoResponse& resp) {
  resp.set_version(DENOC_VERSION_STRING);
  resp.set_proto_package(v1::GetServerInfoRequest::descriptor()->file()->package());
  resp.set_max_dof(limits_.max_dof);
  resp.set_max_states(limits_.max_states);
  resp.set_max_receive_message_bytes(limits_.max_message_bytes);
  resp.set_max_send_message_bytes(limits_.max_message_bytes);
  resp.set_max_streams(static_cast<std::uint32_t>(
      std::min<std::uint64_t>(admission_.bounds().streams, std::numeric_limits<std::uint32_t>::max())));
  resp.set_tokens_required(caller.authenticated);
}

std::uint64_t Handlers::inverseDynamics(const Caller& caller, const v1::InverseDynamicsRequest& req,
                                        v1::InverseDynamicsResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateInverseDynamics(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  // a payload: this call's own copy of the model (planning_validate.hpp)
  const std::shared_ptr<const Model> model =
      modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  double* out = resized(resp.mutable_tau(), in.total);
  const auto t0 = Clock::now();
  inverseDynamicsBatch(*pool_, model, in.count, req.q().data(), req.qd().data(), req.qdd().data(), out,
                       req.tip_wrench_size() != 0 ? req.tip_wrench().data() : nullptr, batchOptions(stop));
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

std::uint64_t Handlers::forwardDynamics(const Caller& caller, const v1::ForwardDynamicsRequest& req,
                                        v1::ForwardDynamicsResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateForwardDynamics(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  // a payload: this call's own copy of the model (planning_validate.hpp)
  const std::shared_ptr<const Model> model =
      modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  resp.set_route(req.route());
  double* out = resized(resp.mutable_qdd(), in.total);
  const auto t0 = Clock::now();
  forwardDynamicsBatch(*pool_, model, forwardRoute(req.route()), in.count, req.q().data(), req.qd().data(),
                       req.tau().data(), out, batchOptions(stop));
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

std::uint64_t Handlers::fullFactor(const Caller& caller, const v1::FullFactorRequest& req,
                                   v1::FullFactorResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateFullFactor(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  // a payload: this call's own copy of the model (planning_validate.hpp)
  const std::shared_ptr<const Model> model =
      modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  const std::uint64_t square = in.total * req.dof();
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  double* I = resized(resp.mutable_inertia(), square);
  double* U = resized(resp.mutable_u(), square);
  double* D = resized(resp.mutable_d(), in.total);
  double* logdet = resized(resp.mutable_log_det(), in.count);
  double* Minv = req.inverse() ? resized(resp.mutable_inverse(), square) : nullptr;
  double* C = req.convective() ? resized(resp.mutable_convective(), square) : nullptr;
  double* bias = req.bias() ? resized(resp.mutable_bias(), in.total) : nullptr;
  double* grav = req.gravity_torque() ? resized(resp.mutable_gravity_torque(), in.total) : nullptr;
  const auto t0 = Clock::now();
  fullFactorBatch(*pool_, model, in.count, req.q().data(), (C || bias) ? req.qd().data() : nullptr,
                  FullFactorBatchOutput{I, U, D, logdet, Minv, C, bias, grav}, batchOptions(stop));
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

SimulationRun::SimulationRun(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                             std::function<bool()> keep_going)
    : input_(validateSimulate(registry, limits, req)), simulator_(input_.entry->model) {
  input_.options.keep_going = std::move(keep_going);
  const int n = input_.entry->model->n;
  simulator_.start(CMap(req.q0().data(), n), CMap(req.qd0().data(), n), input_.options);
}

void SimulationRun::next(v1::SimulateResponse& out) {
  const Model& m = *input_.entry->model;
  out.Clear();
  setHeader(out, *input_.entry);
  out.set_dof(static_cast<std::uint32_t>(m.n));
  const auto t0 = Clock::now();
  bool more = false;
  try {
    more = simulator_.advance(input_.batch, [&](const Sample& s) {
      out.add_t(s.t);
      out.mutable_q()->Add(s.q.data(), s.q.data() + m.n);
      out.mutable_qd()->Add(s.qd.data(), s.qd.data() + m.n);
      out.add_energy(s.energy);
      out.add_kinetic(s.kinetic);
      out.add_potential(s.potential);
      return true;
    });
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::runtime_error& e) {
    finished_ = true;
    fail(ErrorCode::Aborted, std::string("simulation stopped: ") + e.what());
  }
  const SimulationStats& stats = simulator_.stats();
  if (stats.stopped_early) {
    finished_ = true;
    fail(ErrorCode::Cancelled, "the client went away during the simulation (after " +
                                   std::to_string(stats.samples) + " samples, " +
                                   std::to_string(stats.steps) + " steps)");
  }
  out.set_count(static_cast<std::uint32_t>(out.t_size()));
  out.set_compute_time_ns(nanosSince(t0));
  if (!more) {
    finished_ = true;
    out.set_last(true);
    out.set_steps(static_cast<std::uint64_t>(stats.steps));
    out.set_rejected_steps(static_cast<std::uint64_t>(stats.rejected));
    out.set_evaluations(static_cast<std::uint64_t>(stats.evaluations));
  }
}

void StreamSession::answer(const v1::StreamRequest& req, v1::StreamResponse& resp) {
  if (auto entry = validateStreamMessage(registry_, req, entry_)) entry_ = std::move(entry);
  resp.Clear();
  resp.set_computation(req.computation());
  resp.set_sequence(req.sequence());
  ++messages_;
  if (req.computation() == v1::COMPUTATION_ECHO) return;
  const Model* model = entry_->model.get();
  Data* data = nullptr;
  if (req.has_payload()) {
    // the model with this payload, kept while the messages send the same one
    std::string key = entry_->id + req.payload().SerializeAsString();
    if (key != payload_key_) {
      payload_model_ = modelWithPayload(entry_->model, true, req.payload());
      payload_data_ = std::make_unique<Data>(*payload_model_);
      payload_key_ = std::move(key);
    }
    model = payload_model_.get();
    data = payload_data_.get();
  } else {
    if (data_model_ != entry_->model) {
      data_ = std::make_unique<Data>(*entry_->model);
      data_model_ = entry_->model;
    }
    data = data_.get();
  }
  const Model& m = *model;
  Data& d = *data;
  setHeader(resp, *entry_);
  const auto t0 = Clock::now();
  const CMap q(req.q().data(), m.n), qd(req.qd().data(), m.n);
  const VecX* result;
  if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
    const CMap qdd(req.qdd().data(), m.n);
    result = req.tip_wrench_size() == 6 ? &inverseDynamics(m, d, q, qd, qdd, Wrench(req.tip_wrench().data()))
                                        : &inverseDynamics(m, d, q, qd, qdd);
  } else {
    result = &forwardDynamicsBy(req.route(), m, d, q, qd, CMap(req.tau().data(), m.n));
  }
  resp.mutable_result()->Add(result->data(), result->data() + m.n);
  resp.set_compute_time_ns(nanosSince(t0));
  ++computed_;
}

}  // namespace denoc::server
