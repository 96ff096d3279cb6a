#include "service.hpp"

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/batch.hpp"
#include "denoc/simulate.hpp"
#include "errors.hpp"
#include "log.hpp"
#include "validate.hpp"

namespace denoc::server {

namespace {

using Clock = std::chrono::steady_clock;
using VecX = Eigen::VectorXd;
using CMap = Eigen::Map<const VecX>;

std::int64_t nanosSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

/// Stops a batch between two states when the call was cancelled (by the client, or its deadline passed).
/// Asking gRPC is not free (about 15 us on the synchronous API, where it polls the call's completion
/// queue), so it is asked at most once per millisecond of work: the clock is read every few states (about
/// 2000 n^2-sized units of work: every 32 states at n = 7, every state at n >= 45), and the call's deadline
/// is checked then too. The threads computing one batch share it: one of them asks at a time. A cancelled
/// batch stops within about a millisecond of work.
class Interrupt {
 public:
  Interrupt(grpc::ServerContextBase* ctx, Eigen::Index dof)
      : ctx_(ctx), deadline_(ctx->deadline()), last_(Clock::now().time_since_epoch().count()) {
    const Eigen::Index every = 2048 / std::max<Eigen::Index>(1, dof * dof);
    mask_ = 1;
    while (mask_ * 2 <= static_cast<std::uint64_t>(std::clamp<Eigen::Index>(every, 1, 64))) mask_ *= 2;
    mask_ -= 1;
  }

  /// Whether the batch must stop before its state k (k counts from the start of the caller's range).
  bool stop(std::uint64_t k) {
    if (stopped_.load(std::memory_order_relaxed)) return true;
    if ((k & mask_) != 0 || k == 0) return false;
    const std::int64_t now = Clock::now().time_since_epoch().count();
    std::int64_t last = last_.load(std::memory_order_relaxed);
    if (now - last < std::chrono::nanoseconds(std::chrono::milliseconds(1)).count()) return false;
    if (!last_.compare_exchange_strong(last, now)) return false;  // another thread is asking
    if (ctx_->IsCancelled() || std::chrono::system_clock::now() > deadline_) stopped_ = true;
    return stopped_.load();
  }

  [[noreturn]] static void fail(std::uint64_t done, std::uint64_t count) {
    server::fail(ErrorCode::Cancelled,
                 "stopped after " + std::to_string(done) + " of " + std::to_string(count) +
                     " states: the call was cancelled (by the client, or its deadline passed)");
  }

 private:
  grpc::ServerContextBase* ctx_;
  std::chrono::system_clock::time_point deadline_;
  std::atomic<std::int64_t> last_;
  std::atomic<bool> stopped_{false};
  std::uint64_t mask_;
};

/// The calling thread's workspace for a model, reused across calls (most recently used first, bounded).
Data& workspace(const Entry& entry, std::size_t max_slots) {
  struct Slot {
    std::shared_ptr<const Model> model;
    std::unique_ptr<Data> data;
  };
  thread_local std::vector<Slot> slots;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].model.get() == entry.model.get()) {
      if (i != 0) std::swap(slots[0], slots[i]);
      return *slots[0].data;
    }
  }
  if (slots.size() >= max_slots) slots.pop_back();
  slots.insert(slots.begin(), Slot{entry.model, std::make_unique<Data>(*entry.model)});
  return *slots[0].data;
}

template <typename R>
void header(R& resp, const Entry& entry) {
  resp.set_model_id(entry.id);
  *resp.mutable_gravity() = entry.info.gravity();
}

void copyRowMajor(const Eigen::MatrixXd& m, double* out) {
  const Eigen::Index n = m.rows();
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) out[i * n + j] = m(i, j);
  }
}

/// The simulation options of a request (checked: shapes and enums here, values by the core's
/// validateSimulation, which names the field).
SimulationOptions simulationOptions(const v1::SimulateRequest& req, int n) {
  SimulationOptions o;
  switch (req.integrator()) {
    case v1::INTEGRATOR_DOPRI5:
      o.integrator = Integrator::DormandPrince45;
      break;
    case v1::INTEGRATOR_RK4:
      o.integrator = Integrator::RK4;
      break;
    default:
      fail(ErrorCode::InvalidArgument, "integrator is " + std::to_string(static_cast<int>(req.integrator())) +
                                           ", expected INTEGRATOR_DOPRI5 or INTEGRATOR_RK4");
  }
  switch (req.route()) {
    case v1::FORWARD_ROUTE_SAHA:
      o.route = ForwardDynamicsRoute::Saha;
      break;
    case v1::FORWARD_ROUTE_CHOLESKY:
      o.route = ForwardDynamicsRoute::Cholesky;
      break;
    default:
      fail(ErrorCode::InvalidArgument,
           "route is " + std::to_string(static_cast<int>(req.route())) +
               ", expected FORWARD_ROUTE_SAHA or FORWARD_ROUTE_CHOLESKY for Simulate");
  }
  o.t_end = req.t_end();
  if (req.dt_out() != 0.0) o.dt_out = req.dt_out();
  o.sample_times.assign(req.sample_times().begin(), req.sample_times().end());
  if (req.step() != 0.0) o.step = req.step();
  if (req.rtol() != 0.0) o.rtol = req.rtol();
  if (req.atol() != 0.0) o.atol = req.atol();
  o.initial_step = req.initial_step();
  if (req.max_step() != 0.0) o.max_step = req.max_step();
  if (req.max_steps() != 0) {
    if (req.max_steps() > static_cast<std::uint64_t>(o.max_steps)) {
      fail(ErrorCode::ResourceExhausted, "max_steps is " + std::to_string(req.max_steps()) +
                                             ", more than the server's limit of " +
                                             std::to_string(o.max_steps));
    }
    o.max_steps = static_cast<std::int64_t>(req.max_steps());
  }
  checkFinite(req.torque_times(), "torque_times", 0);
  checkFinite(req.torque_values(), "torque_values", static_cast<std::uint64_t>(n));
  if (req.torque_times_size() == 0 && req.torque_values_size() != 0) {
    checkLength(req.torque_values(), "torque_values", static_cast<std::uint64_t>(n),
                "dof (a constant torque; give torque_times for a schedule)");
    o.torque = TorqueInput::constant(Eigen::Map<const VecX>(req.torque_values().data(), n));
  } else if (req.torque_times_size() != 0) {
    checkLength(req.torque_values(), "torque_values",
                checkedProduct(static_cast<std::uint64_t>(req.torque_times_size()),
                               static_cast<std::uint64_t>(n), "torque_times*dof"),
                "torque_times*dof");
    std::vector<double> times(req.torque_times().begin(), req.torque_times().end());
    std::vector<VecX> values;
    for (int k = 0; k < req.torque_times_size(); ++k) {
      values.emplace_back(
          Eigen::Map<const VecX>(req.torque_values().data() + static_cast<std::size_t>(k) * n, n));
    }
    o.torque = TorqueInput::piecewiseLinear(std::move(times), std::move(values));
  }
  if (req.damping_size() != 0) {
    checkLength(req.damping(), "damping", static_cast<std::uint64_t>(n), "dof (or 0 for none)");
    checkFinite(req.damping(), "damping", 0);
    o.damping = Eigen::Map<const VecX>(req.damping().data(), n);
  }
  return o;
}

double* resized(google::protobuf::RepeatedField<double>* field, std::uint64_t n) {
  field->Resize(static_cast<int>(n), 0.0);
  return field->mutable_data();
}

void checkRoute(v1::ForwardRoute route, const char* field) {
  if (!v1::ForwardRoute_IsValid(route)) {
    fail(ErrorCode::InvalidArgument,
         std::string(field) + " is " + std::to_string(static_cast<int>(route)) +
             ", expected FORWARD_ROUTE_SAHA, FORWARD_ROUTE_FIXMAN or FORWARD_ROUTE_CHOLESKY");
  }
}

const VecX& forward(const Model& m, Data& d, v1::ForwardRoute route, const Eigen::Ref<const VecX>& q,
                    const Eigen::Ref<const VecX>& qd, const Eigen::Ref<const VecX>& tau) {
  switch (route) {
    case v1::FORWARD_ROUTE_CHOLESKY:
      return forwardDynamicsCholesky(m, d, q, qd, tau);
    case v1::FORWARD_ROUTE_FIXMAN:
      return forwardDynamicsFixman(m, d, q, qd, tau);
    default:
      return forwardDynamics(m, d, q, qd, tau);
  }
}

}  // namespace

/// Runs a handler: authenticates the caller, turns any exception into a status (toStatus, the one mapping),
/// logs failures and records the call's metrics.
template <typename F>
grpc::Status Handlers::run(Rpc rpc, grpc::ServerContextBase* ctx, F&& handler) {
  const auto t0 = Clock::now();
  if (metrics_) metrics_->callStarted(rpc);
  Call call;
  grpc::Status status;
  try {
    call.principal = authenticate(*ctx);
    handler(call);
  } catch (...) {
    status = toStatus(std::current_exception());
  }
  const std::int64_t ns = nanosSince(t0);
  if (metrics_) {
    metrics_->callEnded(rpc);
    metrics_->record(rpc, status.error_code(), static_cast<double>(ns) * 1e-9, call.states);
  }
  if (!status.ok()) {
    logFailedCall(rpcName(rpc), ctx->peer(), status);
  } else if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} from {}{} OK in {} us", rpcName(rpc), ctx->peer(),
                  call.principal.empty() ? "" : " (" + call.principal + ")", ns / 1000);
  }
  return status;
}

std::string Handlers::authenticate(const grpc::ServerContextBase& ctx) const {
  if (!auth_) return {};
  const auto& md = ctx.client_metadata();
  const auto it = md.find("authorization");
  if (it == md.end()) {
    fail(ErrorCode::Unauthenticated,
         "this server requires a bearer token: send the metadata 'authorization: Bearer <token>'");
  }
  const std::string_view value(it->second.data(), it->second.size());
  const std::string_view token = bearerToken(value);
  if (token.empty())
    fail(ErrorCode::Unauthenticated, "the authorization metadata is not of the form 'Bearer <token>'");
  std::string who = auth_->principal(token);
  if (who.empty()) fail(ErrorCode::Unauthenticated, "the bearer token is not known to this server");
  return who;
}

template <typename F>
void Handlers::forEachState(grpc::ServerContextBase* ctx, const Entry& entry, std::uint32_t count,
                            F&& per_state) {
  const Eigen::Index n = entry.model->n;
  Interrupt interrupt(ctx, n);
  // chunks of about 16000 n^2-sized units of work (about 100 us of inverse dynamics at n = 7)
  const std::size_t grain = static_cast<std::size_t>(std::clamp<Eigen::Index>(16384 / (n * n), 4, 1024));
  if (!pool_ || pool_->threads() < 2 || count < 2 * grain) {
    Data& d = workspace(entry, workspaces_per_thread_);
    for (std::uint32_t k = 0; k < count; ++k) {
      if (interrupt.stop(k)) Interrupt::fail(k, count);
      per_state(k, d);
    }
    return;
  }
  std::atomic<std::uint64_t> done{0};
  pool_->run(entry.model, count, grain, [&](std::size_t begin, std::size_t end, Data& d) {
    std::size_t k = begin;
    for (; k < end && !interrupt.stop(k - begin); ++k) per_state(static_cast<std::uint32_t>(k), d);
    done.fetch_add(k - begin, std::memory_order_relaxed);
  });
  if (done.load() < count) Interrupt::fail(done.load(), count);
}

grpc::Status Handlers::RegisterModel(grpc::ServerContextBase* ctx, const v1::RegisterModelRequest* req,
                                     v1::RegisterModelResponse* resp) {
  return run(Rpc::RegisterModel, ctx, [&](Call& call) {
    const auto t0 = Clock::now();
    BuiltModel built = buildFromRequest(*req, limits_);
    const std::string record = storeRecord(*req, call.principal);
    auto [entry, created] = registry_.add(std::move(built), &record, false, call.principal);
    resp->set_model_id(entry->id);
    *resp->mutable_model() = entry->info;
    resp->set_created(created);
    resp->set_compute_time_ns(nanosSince(t0));
    if (created)
      spdlog::info("registered model {} ({}, {} dof)", entry->id, entry->info.name(), entry->info.dof());
  });
}

grpc::Status Handlers::GetModel(grpc::ServerContextBase* ctx, const v1::GetModelRequest* req,
                                v1::GetModelResponse* resp) {
  return run(Rpc::GetModel, ctx,
             [&](Call&) { *resp->mutable_model() = requireModel(registry_, req->model_id())->info; });
}

grpc::Status Handlers::ListModels(grpc::ServerContextBase* ctx, const v1::ListModelsRequest*,
                                  v1::ListModelsResponse* resp) {
  return run(Rpc::ListModels, ctx, [&](Call&) {
    for (auto& info : registry_.list()) *resp->add_models() = std::move(info);
  });
}

grpc::Status Handlers::DeleteModel(grpc::ServerContextBase* ctx, const v1::DeleteModelRequest* req,
                                   v1::DeleteModelResponse* resp) {
  return run(Rpc::DeleteModel, ctx, [&](Call& call) {
    const std::string& id = req->model_id();
    if (!isModelId(id)) {
      fail(ErrorCode::InvalidArgument,
           "model_id '" + id.substr(0, 80) + "' is not a model id, expected 64 lower-case hex digits");
    }
    registry_.remove(id, auth_ ? &call.principal : nullptr);
    resp->set_model_id(id);
    spdlog::info("deleted model {}{}", id, call.principal.empty() ? "" : " (by " + call.principal + ")");
  });
}

grpc::Status Handlers::InverseDynamics(grpc::ServerContextBase* ctx, const v1::InverseDynamicsRequest* req,
                                       v1::InverseDynamicsResponse* resp) {
  return run(Rpc::InverseDynamics, ctx, [&](Call& call) {
    // validation
    const auto entry = requireModel(registry_, req->model_id());
    const Model& m = *entry->model;
    const std::uint64_t total = checkBatch(req->count(), req->dof(), m, limits_);
    checkLength(req->q(), "q", total, "count*dof");
    checkLength(req->qd(), "qd", total, "count*dof");
    checkLength(req->qdd(), "qdd", total, "count*dof");
    const bool wrench = req->tip_wrench_size() != 0;
    if (wrench)
      checkLength(req->tip_wrench(), "tip_wrench", checkedProduct(req->count(), 6, "count*6"), "count*6");
    checkFinite(req->q(), "q", m.n);
    checkFinite(req->qd(), "qd", m.n);
    checkFinite(req->qdd(), "qdd", m.n);
    checkFinite(req->tip_wrench(), "tip_wrench", 6);
    checkAnswerSize(total, limits_);
    const Admission::Ticket ticket = admission_.admitStates(req->count());
    // computation
    header(*resp, *entry);
    resp->set_count(req->count());
    resp->set_dof(req->dof());
    double* out = resized(resp->mutable_tau(), total);
    const auto t0 = Clock::now();
    const Eigen::Index n = m.n;
    forEachState(ctx, *entry, req->count(), [&](std::uint32_t k, Data& d) {
      const std::size_t o = static_cast<std::size_t>(k) * static_cast<std::size_t>(n);
      const CMap q(req->q().data() + o, n), qd(req->qd().data() + o, n), qdd(req->qdd().data() + o, n);
      const VecX& tau = wrench
                            ? inverseDynamics(m, d, q, qd, qdd,
                                              Eigen::Map<const Eigen::Matrix<double, 6, 1>>(
                                                  req->tip_wrench().data() + 6 * static_cast<std::size_t>(k)))
                            : inverseDynamics(m, d, q, qd, qdd);
      Eigen::Map<VecX>(out + o, n) = tau;
    });
    resp->set_compute_time_ns(nanosSince(t0));
    call.states = req->count();
  });
}

grpc::Status Handlers::ForwardDynamics(grpc::ServerContextBase* ctx, const v1::ForwardDynamicsRequest* req,
                                       v1::ForwardDynamicsResponse* resp) {
  return run(Rpc::ForwardDynamics, ctx, [&](Call& call) {
    const auto entry = requireModel(registry_, req->model_id());
    const Model& m = *entry->model;
    const std::uint64_t total = checkBatch(req->count(), req->dof(), m, limits_);
    checkRoute(req->route(), "route");
    checkLength(req->q(), "q", total, "count*dof");
    checkLength(req->qd(), "qd", total, "count*dof");
    checkLength(req->tau(), "tau", total, "count*dof");
    checkFinite(req->q(), "q", m.n);
    checkFinite(req->qd(), "qd", m.n);
    checkFinite(req->tau(), "tau", m.n);
    checkAnswerSize(total, limits_);
    const Admission::Ticket ticket = admission_.admitStates(req->count());
    header(*resp, *entry);
    resp->set_count(req->count());
    resp->set_dof(req->dof());
    resp->set_route(req->route());
    double* out = resized(resp->mutable_qdd(), total);
    const auto t0 = Clock::now();
    const Eigen::Index n = m.n;
    forEachState(ctx, *entry, req->count(), [&](std::uint32_t k, Data& d) {
      const std::size_t o = static_cast<std::size_t>(k) * static_cast<std::size_t>(n);
      const CMap q(req->q().data() + o, n), qd(req->qd().data() + o, n), tau(req->tau().data() + o, n);
      Eigen::Map<VecX>(out + o, n) = forward(m, d, req->route(), q, qd, tau);
    });
    resp->set_compute_time_ns(nanosSince(t0));
    call.states = req->count();
  });
}

grpc::Status Handlers::FullFactor(grpc::ServerContextBase* ctx, const v1::FullFactorRequest* req,
                                  v1::FullFactorResponse* resp) {
  return run(Rpc::FullFactor, ctx, [&](Call& call) {
    const auto entry = requireModel(registry_, req->model_id());
    const Model& m = *entry->model;
    const std::uint64_t total = checkBatch(req->count(), req->dof(), m, limits_);
    const std::uint64_t square = checkedProduct(total, req->dof(), "count*dof*dof");
    checkLength(req->q(), "q", total, "count*dof");
    const bool need_qd = req->convective() || req->bias();
    if (need_qd || req->qd_size() != 0) {
      checkLength(req->qd(), "qd", total,
                  need_qd ? "count*dof (qd is needed for convective and bias)" : "count*dof (or none)");
    }
    checkFinite(req->q(), "q", m.n);
    checkFinite(req->qd(), "qd", m.n);
    const std::uint64_t squares = 2 + (req->inverse() ? 1 : 0) + (req->convective() ? 1 : 0);
    const std::uint64_t vectors = 1 + (req->bias() ? 1 : 0) + (req->gravity_torque() ? 1 : 0);
    checkAnswerSize(checkedProduct(square, squares, "answer size") +
                        checkedProduct(total, vectors, "answer size") + req->count(),
                    limits_);
    const Admission::Ticket ticket = admission_.admitStates(req->count());
    header(*resp, *entry);
    resp->set_count(req->count());
    resp->set_dof(req->dof());
    double* I = resized(resp->mutable_inertia(), square);
    double* U = resized(resp->mutable_u(), square);
    double* D = resized(resp->mutable_d(), total);
    double* logdet = resized(resp->mutable_log_det(), req->count());
    double* Minv = req->inverse() ? resized(resp->mutable_inverse(), square) : nullptr;
    double* C = req->convective() ? resized(resp->mutable_convective(), square) : nullptr;
    double* bias = req->bias() ? resized(resp->mutable_bias(), total) : nullptr;
    double* grav = req->gravity_torque() ? resized(resp->mutable_gravity_torque(), total) : nullptr;
    const Eigen::Index n = m.n;
    const auto t0 = Clock::now();
    forEachState(ctx, *entry, req->count(), [&](std::uint32_t k, Data& d) {
      const std::size_t o = static_cast<std::size_t>(k) * static_cast<std::size_t>(n);
      const std::size_t oo = o * static_cast<std::size_t>(n);
      const CMap q(req->q().data() + o, n);
      computeFullFactor(m, d, q);
      copyRowMajor(d.M, I + oo);
      copyRowMajor(d.U, U + oo);
      Eigen::Map<VecX>(D + o, n) = d.D;
      logdet[k] = d.log_det;
      if (Minv) copyRowMajor(computeInverseInertia(m, d, q), Minv + oo);
      if (C) copyRowMajor(computeConvectiveMatrix(m, d, q, CMap(req->qd().data() + o, n)), C + oo);
      if (bias) Eigen::Map<VecX>(bias + o, n) = computeBias(m, d, q, CMap(req->qd().data() + o, n));
      if (grav) Eigen::Map<VecX>(grav + o, n) = computeGravity(m, d, q);
    });
    resp->set_compute_time_ns(nanosSince(t0));
    call.states = req->count();
  });
}

grpc::Status Handlers::Simulate(grpc::ServerContext* ctx, const v1::SimulateRequest* req,
                                grpc::ServerWriter<v1::SimulateResponse>* writer) {
  return run(Rpc::Simulate, ctx, [&](Call& call) {
    // validation
    const auto entry = requireModel(registry_, req->model_id());
    const Model& m = *entry->model;
    if (req->dof() != static_cast<std::uint32_t>(m.n)) {
      fail(ErrorCode::InvalidArgument,
           "dof is " + std::to_string(req->dof()) + ", expected the model's dof = " + std::to_string(m.n));
    }
    checkLength(req->q0(), "q0", req->dof(), "dof");
    checkLength(req->qd0(), "qd0", req->dof(), "dof");
    checkFinite(req->q0(), "q0", 0);
    checkFinite(req->qd0(), "qd0", 0);
    const SimulationOptions options = simulationOptions(*req, m.n);
    const CMap q0(req->q0().data(), m.n), qd0(req->qd0().data(), m.n);
    validateSimulation(m, q0, qd0, options);
    const std::size_t samples = sampleCount(options);
    if (samples > limits_.max_states) {
      fail(ErrorCode::ResourceExhausted,
           "the run would report " + std::to_string(samples) + " samples, more than the limit max_states = " +
               std::to_string(limits_.max_states) + " (--max-states, DENOC_MAX_STATES)");
    }
    const std::uint32_t batch = req->batch_size() == 0 ? 64u : req->batch_size();
    checkAnswerSize(checkedProduct(batch, 2ull * m.n + 4, "batch_size*(2*dof+4)"), limits_);
    const Admission::Ticket ticket = admission_.admitStream();
    // integration, streamed in batches; a cancelled call stops within 64 steps after the next millisecond
    SimulationOptions run_options = options;
    run_options.keep_going = [ctx, last = Clock::now()]() mutable {
      // asked every 64 steps; gRPC is asked at most once per millisecond (see Interrupt)
      const auto now = Clock::now();
      if (now - last < std::chrono::milliseconds(1)) return true;
      last = now;
      return !ctx->IsCancelled();
    };
    Simulator simulator(entry->model);
    v1::SimulateResponse out;
    auto start_batch = [&] {
      out.Clear();
      header(out, *entry);
      out.set_dof(req->dof());
    };
    start_batch();
    auto mark = Clock::now();
    bool client_gone = false;
    auto flush = [&](bool last) {
      out.set_count(static_cast<std::uint32_t>(out.t_size()));
      out.set_compute_time_ns(nanosSince(mark));
      out.set_last(last);
      const bool ok = writer->Write(out);
      start_batch();
      mark = Clock::now();
      return ok;
    };
    SimulationStats stats;
    try {
      stats = simulator.run(q0, qd0, run_options, [&](const Sample& s) {
        out.add_t(s.t);
        out.mutable_q()->Add(s.q.data(), s.q.data() + m.n);
        out.mutable_qd()->Add(s.qd.data(), s.qd.data() + m.n);
        out.add_energy(s.energy);
        out.add_kinetic(s.kinetic);
        out.add_potential(s.potential);
        ++call.states;
        if (static_cast<std::uint32_t>(out.t_size()) >= batch && s.index + 1 < samples) {
          if (ctx->IsCancelled() || !flush(false)) {
            client_gone = true;
            return false;
          }
        }
        return true;
      });
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::runtime_error& e) {
      fail(ErrorCode::Aborted, std::string("simulation stopped: ") + e.what());
    }
    if (client_gone || (stats.stopped_early && ctx->IsCancelled()))
      fail(ErrorCode::Cancelled, "the client went away during the simulation (after " +
                                     std::to_string(call.states) + " samples, " +
                                     std::to_string(stats.steps) + " steps)");
    out.set_steps(static_cast<std::uint64_t>(stats.steps));
    out.set_rejected_steps(static_cast<std::uint64_t>(stats.rejected));
    out.set_evaluations(static_cast<std::uint64_t>(stats.evaluations));
    flush(true);
  });
}

grpc::Status Handlers::Stream(grpc::ServerContext* ctx,
                              grpc::ServerReaderWriter<v1::StreamResponse, v1::StreamRequest>* stream) {
  return run(Rpc::Stream, ctx, [&](Call& call) {
    v1::StreamRequest req;
    v1::StreamResponse resp;
    std::shared_ptr<const Entry> entry;
    std::uint64_t index = 0;
    const Admission::Ticket ticket = admission_.admitStream();
    while (stream->Read(&req)) {
      if (req.computation() == v1::COMPUTATION_ECHO) {
        resp.Clear();
        resp.set_computation(v1::COMPUTATION_ECHO);
        resp.set_sequence(req.sequence());
        if (!stream->Write(resp)) break;
        ++index;
        continue;
      }
      // validation
      if (!entry || entry->id != req.model_id()) entry = requireModel(registry_, req.model_id());
      const Model& m = *entry->model;
      const std::uint64_t n = static_cast<std::uint64_t>(m.n);
      const std::string where = "message " + std::to_string(index) + ": ";
      try {
        checkLength(req.q(), "q", n, "dof");
        checkLength(req.qd(), "qd", n, "dof");
        checkFinite(req.q(), "q", 0);
        checkFinite(req.qd(), "qd", 0);
        if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
          checkLength(req.qdd(), "qdd", n, "dof");
          checkFinite(req.qdd(), "qdd", 0);
          if (req.tip_wrench_size() != 0) checkLength(req.tip_wrench(), "tip_wrench", 6, "6 (or 0 for none)");
          checkFinite(req.tip_wrench(), "tip_wrench", 0);
        } else if (req.computation() == v1::COMPUTATION_FORWARD_DYNAMICS) {
          checkRoute(req.route(), "route");
          checkLength(req.tau(), "tau", n, "dof");
          checkFinite(req.tau(), "tau", 0);
        } else {
          fail(ErrorCode::InvalidArgument, "computation is " +
                                               std::to_string(static_cast<int>(req.computation())) +
                                               ", expected COMPUTATION_INVERSE_DYNAMICS, "
                                               "COMPUTATION_FORWARD_DYNAMICS or COMPUTATION_ECHO");
        }
      } catch (const RequestError& e) {
        throw RequestError(e.code(), where + e.what());
      }
      // computation
      resp.Clear();
      header(resp, *entry);
      resp.set_computation(req.computation());
      resp.set_sequence(req.sequence());
      Data& d = workspace(*entry, workspaces_per_thread_);
      const auto t0 = Clock::now();
      const CMap q(req.q().data(), m.n), qd(req.qd().data(), m.n);
      const VecX* result;
      if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
        const CMap qdd(req.qdd().data(), m.n);
        result =
            req.tip_wrench_size() == 6
                ? &inverseDynamics(m, d, q, qd, qdd,
                                   Eigen::Map<const Eigen::Matrix<double, 6, 1>>(req.tip_wrench().data()))
                : &inverseDynamics(m, d, q, qd, qdd);
      } else {
        result = &forward(m, d, req.route(), q, qd, CMap(req.tau().data(), m.n));
      }
      resp.mutable_result()->Add(result->data(), result->data() + m.n);
      resp.set_compute_time_ns(nanosSince(t0));
      if (!stream->Write(resp)) break;  // the client went away
      ++index;
      call.states = index;
    }
  });
}

namespace {

/// Request and response of one call on a protobuf arena whose first block lives in the holder itself, so a
/// call of a few states costs one allocation for both messages and their arrays (larger ones grow it).
template <typename Req, typename Resp>
class ArenaAllocator final : public grpc::MessageAllocator<Req, Resp> {
  class Holder final : public grpc::MessageHolder<Req, Resp> {
   public:
    Holder() : arena_(options(block_)) {
      this->set_request(google::protobuf::Arena::CreateMessage<Req>(&arena_));
      this->set_response(google::protobuf::Arena::CreateMessage<Resp>(&arena_));
    }
    void Release() override { delete this; }

   private:
    static google::protobuf::ArenaOptions options(char* block) {
      google::protobuf::ArenaOptions o;
      o.initial_block = block;
      o.initial_block_size = sizeof block_;
      return o;
    }
    alignas(16) char block_[4096];
    google::protobuf::Arena arena_;
  };

 public:
  grpc::MessageHolder<Req, Resp>* AllocateMessages() override { return new Holder; }
};

}  // namespace

struct DynamicsCallbackService::Allocators {
  ArenaAllocator<v1::InverseDynamicsRequest, v1::InverseDynamicsResponse> id;
  ArenaAllocator<v1::ForwardDynamicsRequest, v1::ForwardDynamicsResponse> fd;
  ArenaAllocator<v1::FullFactorRequest, v1::FullFactorResponse> ff;
};

DynamicsCallbackService::DynamicsCallbackService(Handlers& h)
    : h_(h), allocators_(std::make_unique<Allocators>()) {
  SetMessageAllocatorFor_InverseDynamics(&allocators_->id);
  SetMessageAllocatorFor_ForwardDynamics(&allocators_->fd);
  SetMessageAllocatorFor_FullFactor(&allocators_->ff);
}

DynamicsCallbackService::~DynamicsCallbackService() = default;

}  // namespace denoc::server
