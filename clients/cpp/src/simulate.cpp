// Client::simulate: a Simulate run streamed batch by batch, retried and re-registered before its first batch.
#include <vector>

#include "convert_internal.hpp"
#include "denoc/client/client.hpp"
#include "retry.hpp"

namespace denoc::client {

SimulationSummary Client::simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                                   const Eigen::VectorXd& qd0, const SimulateOptions& o,
                                   const BatchCallback& on_batch) {
  v1::SimulateRequest request;
  request.set_model_id(model_id);
  // dof is nv, qd0's size (q0 has nq: one more for a floating root's quaternion)
  request.set_dof(static_cast<std::uint32_t>(qd0.size() != 0 ? qd0.size() : q0.size()));
  for (Eigen::Index i = 0; i < q0.size(); ++i) request.add_q0(q0[i]);
  for (Eigen::Index i = 0; i < qd0.size(); ++i) request.add_qd0(qd0[i]);
  request.set_t_end(o.t_end);
  request.set_integrator(o.integrator == Integrator::RK4 ? v1::INTEGRATOR_RK4 : v1::INTEGRATOR_DOPRI5);
  request.set_route(convert::wireRoute(o.route));
  request.set_dt_out(o.dt_out);
  for (double t : o.sample_times) request.add_sample_times(t);
  request.set_step(o.step);
  request.set_rtol(o.rtol);
  request.set_atol(o.atol);
  request.set_initial_step(o.initial_step);
  request.set_max_step(o.max_step);
  request.set_max_steps(o.max_steps);
  for (double t : o.torque_times) request.add_torque_times(t);
  if (o.torque_times.empty() && o.torque.cols() == 1 && o.torque.rows() > 1) {
    convert::append(request.mutable_torque_values(), o.torque.transpose());  // a constant given as a column
  } else {
    convert::append(request.mutable_torque_values(), o.torque);
  }
  for (Eigen::Index i = 0; i < o.damping.size(); ++i) request.add_damping(o.damping[i]);
  request.set_batch_size(o.batch_size);

  Backoff backoff(options_, "Simulate", false);
  bool reregistered = false;
  for (int attempt_no = 1;; ++attempt_no) {
    SimulationSummary summary;
    const auto stub = this->stub();
    const auto ctx = context(options_.deadline);
    auto reader = stub->Simulate(ctx.get(), request);
    v1::SimulateResponse message;
    bool stopped = false;
    while (!stopped && reader->Read(&message)) {
      SimulationBatch b;
      convert::fillInfo(b, message);
      const int count = static_cast<int>(message.count()), dof = static_cast<int>(message.dof());
      convert::expectSize(message.t_size(), count, "t", "Simulate");
      b.t = convert::vector(message.t());
      const int nq = count > 0 && message.q_size() == count * (dof + 1) ? dof + 1 : dof;  // a floating root
      b.q = convert::checkedRows(message.q(), count, nq, "q", "Simulate");
      b.qd = convert::checkedRows(message.qd(), count, dof, "qd", "Simulate");
      b.energy = convert::vector(message.energy());
      b.kinetic = convert::vector(message.kinetic());
      b.potential = convert::vector(message.potential());
      b.last = message.last();
      ++summary.batches;
      summary.samples += static_cast<std::size_t>(count);
      summary.compute_time += b.compute_time;
      if (b.last) {
        summary.steps = message.steps();
        summary.rejected_steps = message.rejected_steps();
        summary.evaluations = message.evaluations();
        summary.complete = true;
      }
      if (on_batch && !on_batch(b)) {
        stopped = true;
        ctx->TryCancel();
      }
    }
    const grpc::Status status = reader->Finish();
    if (stopped) return summary;
    if (status.ok()) {
      if (!summary.complete) {
        throw Error(grpc::StatusCode::DATA_LOSS, "the stream ended without its last batch", "Simulate");
      }
      return summary;
    }
    const grpc::StatusCode code = status.error_code();
    // before the first batch a run can start again unseen by the caller
    if (summary.batches == 0 && code == grpc::StatusCode::UNAVAILABLE && backoff.more(attempt_no)) {
      backoff.wait(attempt_no, code, status.error_message());
      continue;
    }
    if (summary.batches == 0 && code == grpc::StatusCode::NOT_FOUND && !reregistered &&
        reregister(model_id, status.error_message())) {
      reregistered = true;
      --attempt_no;
      continue;
    }
    throw Error(code, status.error_message(), "Simulate");
  }
}

SimulationResult Client::simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                                  const Eigen::VectorXd& qd0, const SimulateOptions& options) {
  std::vector<SimulationBatch> batches;
  SimulationResult result;
  result.summary = simulate(model_id, q0, qd0, options, [&](const SimulationBatch& b) {
    batches.push_back(b);
    return true;
  });
  const auto n = static_cast<Eigen::Index>(result.summary.samples);
  const Eigen::Index dof = q0.size();
  result.t.resize(n);
  result.q.resize(n, dof);
  result.qd.resize(n, dof);
  result.energy.resize(n);
  result.kinetic.resize(n);
  result.potential.resize(n);
  Eigen::Index row = 0;
  for (const SimulationBatch& b : batches) {
    const Eigen::Index c = b.t.size();
    result.t.segment(row, c) = b.t;
    if (b.q.size() != 0) result.q.middleRows(row, c) = b.q;
    if (b.qd.size() != 0) result.qd.middleRows(row, c) = b.qd;
    if (b.energy.size() == c) result.energy.segment(row, c) = b.energy;
    if (b.kinetic.size() == c) result.kinetic.segment(row, c) = b.kinetic;
    if (b.potential.size() == c) result.potential.segment(row, c) = b.potential;
    row += c;
  }
  if (!batches.empty()) {
    result.info.model_id = batches.back().model_id;
    result.info.gravity = batches.back().gravity;
  }
  result.info.compute_time = result.summary.compute_time;
  return result;
}

}  // namespace denoc::client
