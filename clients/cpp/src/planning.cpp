// The calls for planners: Client::kinematics, the analytic derivatives of inverse and forward dynamics, and
// rollouts, each split above the server's max_states like the dynamics batches.
#include <cstdint>
#include <vector>

#include "convert_internal.hpp"
#include "denoc/client/client.hpp"
#include "split.hpp"

namespace denoc::client {

namespace {

// the parts of a Derivatives request both directions share: model, shape, direction, q, qd, tip wrench,
// payload (the caller adds qdd or tau)
v1::DerivativesRequest derivativesRequest(const std::string& model_id, int dof, v1::DerivativeOf of,
                                          const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd,
                                          const std::optional<Payload>& payload,
                                          const Eigen::MatrixXd& tip_wrench) {
  v1::DerivativesRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(dof));
  request.set_of(of);
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_tip_wrench(), tip_wrench);
  if (payload) convert::writePayload(request.mutable_payload(), *payload);
  return request;
}

}  // namespace

KinematicsResult Client::kinematics(const std::string& model_id, const Eigen::MatrixXd& Q,
                                    const KinematicsOptions& o, const Eigen::MatrixXd& Qd) {
  return resplit([&] { return kinematicsSplit(model_id, Q, o, Qd); });
}

KinematicsResult Client::kinematicsSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                         const KinematicsOptions& o, const Eigen::MatrixXd& Qd) {
  const auto parts =
      Qd.size() == 0 || Qd.rows() == Q.rows() ? chunks(Q.rows()) : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    KinematicsResult r;
    std::vector<Eigen::MatrixXd> origin, jdot_qd, com, mass, momentum;
    for (const auto& [first, size] : parts) {
      KinematicsResult p =
          kinematicsSplit(model_id, Q.middleRows(first, size), o, split::rowsOf(Qd, first, size));
      split::joinInfo(r, p, origin.empty());
      r.frames = p.frames;
      split::moveAppend(r.rotation, p.rotation);
      split::moveAppend(r.jacobian, p.jacobian);
      split::moveAppend(r.lambda, p.lambda);
      split::moveAppend(r.frame_rotations, p.frame_rotations);
      split::moveAppend(r.frame_origins, p.frame_origins);
      split::moveAppend(r.com_jacobian, p.com_jacobian);
      split::moveAppend(r.centroidal, p.centroidal);
      origin.push_back(std::move(p.origin));
      jdot_qd.push_back(std::move(p.jdot_qd));
      com.push_back(std::move(p.com));
      mass.emplace_back(p.mass);
      momentum.push_back(std::move(p.centroidal_momentum));
    }
    r.origin = split::stackRows(origin);
    r.jdot_qd = split::stackRows(jdot_qd);
    r.com = split::stackRows(com);
    const Eigen::MatrixXd m = split::stackRows(mass);
    if (m.size() != 0) r.mass = m.col(0);
    r.centroidal_momentum = split::stackRows(momentum);
    return r;
  }
  v1::KinematicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(dofOf(model_id, Q, Qd)));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  request.set_link(o.link);
  for (const std::string& link : o.links) request.add_links(link);
  request.set_center_of_mass(o.center_of_mass);
  request.set_com_jacobian(o.com_jacobian);
  request.set_centroidal(o.centroidal);
  request.set_centroidal_momentum(o.centroidal_momentum);
  *request.mutable_point() = convert::vec3(o.point);
  request.set_reference(o.reference == Reference::Local ? v1::REFERENCE_FRAME_LOCAL
                                                        : v1::REFERENCE_FRAME_BASE);
  request.set_jacobian(o.jacobian);
  request.set_jdot_qd(o.jdot_qd);
  request.set_lambda(o.lambda);
  request.set_lambda_rows(o.lambda_rows == TaskRows::Linear    ? v1::TASK_ROWS_LINEAR
                          : o.lambda_rows == TaskRows::Angular ? v1::TASK_ROWS_ANGULAR
                                                               : v1::TASK_ROWS_FULL);
  request.set_all_frames(o.all_frames);
  if (o.payload) convert::writePayload(request.mutable_payload(), *o.payload);
  v1::KinematicsResponse response;
  call("Kinematics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Kinematics(&ctx, request, &response);
  });
  KinematicsResult r;
  convert::fillInfo(r, response);
  const int count = static_cast<int>(response.count()), n = static_cast<int>(response.dof());
  const char* call = "Kinematics";
  const int L = o.links.empty() ? 1 : static_cast<int>(o.links.size());
  const std::int64_t blocks = static_cast<std::int64_t>(count) * L;
  r.frames = L;
  for (const auto& m : convert::checkedBlocks(response.rotation(), blocks, 3, 3, "rotation", call))
    r.rotation.emplace_back(m);
  convert::expectSize(response.rotation_size(), 9LL * blocks, "rotation", call);
  r.origin = convert::checkedRows(response.origin(), static_cast<int>(blocks), 3, "origin", call);
  r.jacobian = convert::checkedBlocks(response.jacobian(), blocks, 6, n, "jacobian", call);
  r.jdot_qd = convert::checkedRows(response.jdot_qd(), static_cast<int>(blocks), 6, "jdot_qd", call);
  const int rr = o.lambda_rows == TaskRows::Full ? 6 : 3;
  r.lambda = convert::checkedBlocks(response.lambda(), blocks, rr, rr, "lambda", call);
  if (!response.frame_rotations().empty()) {
    // F frames per state: nu + 1 for a fixed root, nu + 2 with a moving root's link; the answer says which
    const int F = count > 0 ? response.frame_origins_size() / (3 * count) : 0;
    const auto rot = convert::checkedBlocks(response.frame_rotations(), static_cast<std::int64_t>(count) * F,
                                            3, 3, "frame_rotations", call);
    r.frame_origins = convert::checkedBlocks(response.frame_origins(), count, F, 3, "frame_origins", call);
    for (int k = 0; k < count; ++k) {
      r.frame_rotations.emplace_back();
      for (int i = 0; i < F; ++i)
        r.frame_rotations.back().emplace_back(rot[static_cast<std::size_t>(k * F + i)]);
    }
  }
  r.com = convert::checkedRows(response.com(), count, 3, "com", call);
  if (!response.mass().empty()) {
    convert::expectSize(response.mass_size(), count, "mass", call);
    r.mass = convert::vector(response.mass());
  }
  r.com_jacobian = convert::checkedBlocks(response.com_jacobian(), count, 3, n, "com_jacobian", call);
  r.centroidal = convert::checkedBlocks(response.centroidal(), count, 6, n, "centroidal", call);
  r.centroidal_momentum =
      convert::checkedRows(response.centroidal_momentum(), count, 6, "centroidal_momentum", call);
  return r;
}

DerivativesResult Client::inverseDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                                     const std::optional<Payload>& payload,
                                                     const Eigen::MatrixXd& tip_wrench,
                                                     const std::vector<LinkWrench>& wrenches) {
  return resplit([&] { return derivativesSplit(model_id, true, Q, Qd, Qdd, payload, tip_wrench, wrenches); });
}

DerivativesResult Client::forwardDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau,
                                                     const std::optional<Payload>& payload,
                                                     const Eigen::MatrixXd& tip_wrench,
                                                     const std::vector<LinkWrench>& wrenches) {
  return resplit(
      [&] { return derivativesSplit(model_id, false, Q, Qd, Tau, payload, tip_wrench, wrenches); });
}

DerivativesResult Client::derivativesSplit(const std::string& model_id, bool inverse,
                                           const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd,
                                           const Eigen::MatrixXd& Third,
                                           const std::optional<Payload>& payload,
                                           const Eigen::MatrixXd& tip_wrench,
                                           const std::vector<LinkWrench>& wrenches) {
  const auto parts = Qd.rows() == Q.rows() && Third.rows() == Q.rows() &&
                             (tip_wrench.size() == 0 || tip_wrench.rows() == Q.rows()) &&
                             split::wrenchesFit(wrenches, Q.rows())
                         ? chunks(Q.rows())
                         : decltype(chunks(0)){{0, Q.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    DerivativesResult r;
    std::vector<Eigen::MatrixXd> tau, qdd;
    for (const auto& [first, size] : parts) {
      DerivativesResult p =
          derivativesSplit(model_id, inverse, Q.middleRows(first, size), Qd.middleRows(first, size),
                           Third.middleRows(first, size), payload, split::rowsOf(tip_wrench, first, size),
                           split::wrenchesOf(wrenches, Q.rows(), first, size));
      split::joinInfo(r, p, tau.empty() && qdd.empty());
      split::moveAppend(r.dtau_dq, p.dtau_dq);
      split::moveAppend(r.dtau_dqd, p.dtau_dqd);
      split::moveAppend(r.dqdd_dq, p.dqdd_dq);
      split::moveAppend(r.dqdd_dqd, p.dqdd_dqd);
      split::moveAppend(r.dqdd_dtau, p.dqdd_dtau);
      tau.push_back(std::move(p.tau));
      qdd.push_back(std::move(p.qdd));
    }
    r.tau = split::stackRows(tau);
    r.qdd = split::stackRows(qdd);
    return r;
  }
  v1::DerivativesRequest request =
      derivativesRequest(model_id, dofOf(model_id, Q, Qd),
                         inverse ? v1::DERIVATIVE_OF_INVERSE_DYNAMICS : v1::DERIVATIVE_OF_FORWARD_DYNAMICS, Q,
                         Qd, payload, tip_wrench);
  convert::append(inverse ? request.mutable_qdd() : request.mutable_tau(), Third);
  convert::appendWrenches(request.mutable_wrenches(), wrenches);
  v1::DerivativesResponse response;
  call("Derivatives", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Derivatives(&ctx, request, &response);
  });
  DerivativesResult r;
  convert::fillInfo(r, response);
  const int count = static_cast<int>(response.count()), n = static_cast<int>(response.dof());
  const std::int64_t nn = static_cast<std::int64_t>(count) * n * n;
  if (inverse) {
    convert::expectSize(response.dtau_dq_size(), nn, "dtau_dq", "Derivatives");
    r.dtau_dq = convert::checkedBlocks(response.dtau_dq(), count, n, n, "dtau_dq", "Derivatives");
    r.dtau_dqd = convert::checkedBlocks(response.dtau_dqd(), count, n, n, "dtau_dqd", "Derivatives");
    r.tau = convert::checkedRows(response.tau(), count, n, "tau", "Derivatives");
  } else {
    convert::expectSize(response.dqdd_dq_size(), nn, "dqdd_dq", "Derivatives");
    r.dqdd_dq = convert::checkedBlocks(response.dqdd_dq(), count, n, n, "dqdd_dq", "Derivatives");
    r.dqdd_dqd = convert::checkedBlocks(response.dqdd_dqd(), count, n, n, "dqdd_dqd", "Derivatives");
    r.dqdd_dtau = convert::checkedBlocks(response.dqdd_dtau(), count, n, n, "dqdd_dtau", "Derivatives");
    r.qdd = convert::checkedRows(response.qdd(), count, n, "qdd", "Derivatives");
  }
  return r;
}

RolloutResult Client::rollout(const std::string& model_id, const Eigen::MatrixXd& X0,
                              const std::vector<Eigen::MatrixXd>& U, const RolloutOptions& options) {
  return resplit([&] { return rolloutSplit(model_id, X0, U, options); });
}

RolloutResult Client::rolloutSplit(const std::string& model_id, const Eigen::MatrixXd& X0,
                                   const std::vector<Eigen::MatrixXd>& U, const RolloutOptions& options) {
  // K * steps states per call: floor(max_states / steps) rollouts per part; controls per rollout travel with
  // their rollout, a shared sequence goes whole to every part
  const bool shared = U.size() == 1 && X0.rows() != 1;
  const auto parts = (shared || static_cast<Eigen::Index>(U.size()) == X0.rows()) &&
                             split::wrenchesFit(options.wrenches, X0.rows())
                         ? chunks(X0.rows(), options.steps)
                         : decltype(chunks(0)){{0, X0.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    RolloutResult r;
    for (const auto& [first, size] : parts) {
      std::vector<Eigen::MatrixXd> u;
      if (shared) {
        u = U;
      } else {
        u.assign(U.begin() + first, U.begin() + first + size);
      }
      RolloutOptions o = options;
      o.wrenches = split::wrenchesOf(options.wrenches, X0.rows(), first, size);  // one per rollout: cut
      RolloutResult p = rolloutSplit(model_id, X0.middleRows(first, size), u, o);
      split::joinInfo(r, p, r.states.empty());
      r.steps = p.steps;
      split::moveAppend(r.states, p.states);
      split::moveAppend(r.A, p.A);
      split::moveAppend(r.B, p.B);
    }
    return r;
  }
  v1::RolloutRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(X0.rows()));
  // x = [q; qd] has nq + nv = 2 nv values, or 2 nv + 1 for a floating root (its quaternion): nv = x / 2
  request.set_dof(static_cast<std::uint32_t>(X0.cols() / 2));
  request.set_steps(options.steps);
  request.set_dt(options.dt);
  request.set_scheme(options.scheme == StepScheme::SemiImplicitEuler ? v1::STEP_SCHEME_SEMI_IMPLICIT_EULER
                                                                     : v1::STEP_SCHEME_RK4);
  convert::append(request.mutable_x0(), X0);
  for (const Eigen::MatrixXd& u : U) convert::append(request.mutable_u(), u);
  request.set_shared_controls(U.size() == 1 && X0.rows() != 1);
  request.set_linearize(options.linearize);
  if (options.payload) convert::writePayload(request.mutable_payload(), *options.payload);
  convert::appendWrenches(request.mutable_wrenches(), options.wrenches);
  v1::RolloutResponse response;
  call("Rollout", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Rollout(&ctx, request, &response);
  });
  RolloutResult r;
  convert::fillInfo(r, response);
  r.steps = response.steps();
  const std::int64_t K = response.count(), T = response.steps();
  const int n = static_cast<int>(response.dof()), t = 2 * n;  // the tangent space: 2 nv
  // a state has nq + nv values: 2 nv, or 2 nv + 1 for a floating root; the controls nu (B's columns)
  const int x = K * (T + 1) > 0 && response.states_size() == K * (T + 1) * (t + 1) ? t + 1 : t;
  r.states = convert::checkedBlocks(response.states(), K, static_cast<int>(T + 1), x, "states", "Rollout");
  convert::expectSize(response.states_size(), K * (T + 1) * x, "states", "Rollout");
  const std::int64_t b_rows = K * T * t;
  const int nu = b_rows > 0 ? static_cast<int>(response.b_size() / b_rows) : 0;
  const auto a = convert::checkedBlocks(response.a(), K * T, t, t, "a", "Rollout");
  const auto b = convert::checkedBlocks(response.b(), K * T, t, nu, "b", "Rollout");
  if (!a.empty() && !b.empty()) {
    r.A.resize(static_cast<std::size_t>(K));
    r.B.resize(static_cast<std::size_t>(K));
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t t = 0; t < T; ++t) {
        r.A[static_cast<std::size_t>(k)].push_back(a[static_cast<std::size_t>(k * T + t)]);
        r.B[static_cast<std::size_t>(k)].push_back(b[static_cast<std::size_t>(k * T + t)]);
      }
    }
  }
  return r;
}

}  // namespace denoc::client
