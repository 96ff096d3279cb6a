// denoc::client: a C++ client of the denoc dynamics service (denoc.v1.Dynamics) with Eigen types in and out.
//
// Batches are Eigen::MatrixXd with one state per row (count x dof); on the wire they are flat row-major
// arrays (proto/denoc/v1/dynamics.proto), and the mapping is done here. Every call has a deadline
// (ClientOptions::deadline, per attempt). Idempotent calls (RegisterModel, GetModel, ListModels,
// InverseDynamics, ForwardDynamics, FullFactor, and Simulate before its first batch) are retried on
// UNAVAILABLE with bounded attempts and exponential backoff. The client remembers the source of every model
// it registered (ModelSources, keyed by id, shareable between clients): when a dynamics call answers
// NOT_FOUND for such an id (a server with another or an empty store), the model is registered again and
// the call retried once; not when the server says the model "was deleted" (by DeleteModel, from any client
// or replica: docs/service.md, "Replicas"): then the source is forgotten and NOT_FOUND thrown. Failures are
// thrown as denoc::client::Error, carrying the gRPC status code and the server's message.
//
// This header includes the whole client: errors.hpp (Error), types.hpp (options and results), stream.hpp
// (StreamSession) and convert.hpp (wire arrays <-> Eigen).
#pragma once

#include <grpcpp/grpcpp.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "denoc/client/convert.hpp"
#include "denoc/client/errors.hpp"
#include "denoc/client/stream.hpp"
#include "denoc/client/types.hpp"
#include "denoc/client/version.hpp"
#include "denoc/dh.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"

namespace denoc::client {

/// The registration requests of models, keyed by model id. Thread-safe.
class ModelSources {
 public:
  void put(const std::string& id, const v1::RegisterModelRequest& request);
  std::optional<v1::RegisterModelRequest> find(const std::string& id) const;
  bool contains(const std::string& id) const;
  std::vector<std::string> ids() const;
  std::size_t size() const;
  void erase(const std::string& id);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, v1::RegisterModelRequest> requests_;
};

class Client {
 public:
  explicit Client(ClientOptions options);
  /// Plaintext to host:port with the default options.
  explicit Client(const std::string& target);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Points the client at another server (a new channel, same options and model sources).
  void retarget(const std::string& target);
  const ClientOptions& options() const { return options_; }
  /// The model sources this client registers into and re-registers from.
  std::shared_ptr<ModelSources> sources() const { return sources_; }
  /// Waits for the channel to connect; false on timeout.
  bool waitForConnected(std::chrono::milliseconds timeout) const;

  // --- models
  /// A URDF model: the whole tree below base_link (empty: the root link), or the chain from base_link to
  /// tip_link; `root` says how base_link moves (fixed, floating or planar; docs/trees.md).
  Registration registerUrdf(const std::string& urdf_text, const std::string& base_link = {},
                            const std::string& tip_link = {},
                            const std::optional<Eigen::Vector3d>& gravity = std::nullopt,
                            const std::optional<std::string>& name = std::nullopt,
                            const std::vector<double>& armature = {}, RootJoint root = RootJoint::Fixed);
  /// A DH model (its gravity and name are sent).
  Registration registerDH(const DHSpec& dh);
  /// A model file: ".json" (denoc-dh/1) or ".urdf" (with base_link/tip_link and root). Throws Error
  /// (INVALID_ARGUMENT) for an unreadable file, a DH file that does not parse or a DH file with a moving
  /// root.
  Registration registerModelFile(const std::string& path, const std::string& base_link = {},
                                 const std::string& tip_link = {},
                                 const std::optional<Eigen::Vector3d>& gravity = std::nullopt,
                                 RootJoint root = RootJoint::Fixed);
  /// Any registration request.
  Registration registerModel(const v1::RegisterModelRequest& request);
  ModelInfo getModel(const std::string& model_id);
  /// Every model on the server, sorted by id (all pages of ListModels).
  std::vector<ModelInfo> listModels();
  /// The one model with this display name. Throws Error NOT_FOUND when there is none, FAILED_PRECONDITION
  /// listing the ids when several models carry the name.
  ModelInfo findModel(const std::string& name);

  // --- the server
  /// The server's version and limits (GetServerInfo, asked every time).
  ServerInfo serverInfo();
  /// The server's max_states, asked once and kept until retarget(); 0 when the server does not say (a
  /// server without GetServerInfo). Batches above it are split into calls of at most max_states states
  /// and the answers joined in order. A batch refused with RESOURCE_EXHAUSTED naming max_states (a replica
  /// with a smaller limit) makes the client ask again, once per call, and send the batch again split by the
  /// new limit when it is smaller (namesCachedLimit, docs/clients.md).
  std::uint32_t maxStates();
  /// Deletes a model (not retried: a retry could answer NOT_FOUND for a deletion that happened). The model's
  /// source is forgotten too, so it is not re-registered behind the caller's back.
  void deleteModel(const std::string& model_id);

  // --- dynamics: batches are matrices with one state per row (any Eigen matrix expression), count x nq for
  // Q and count x nv (dof) for Qd, Qdd and Tau (nq = nv for a fixed root); a single state may be given as
  // vectors (any expression with one column at compile time), answered as a 1-row batch. payload: a body
  // held by a frame (the tip by default) for this call only (none: the model as registered). wrenches:
  // external wrenches on named frames (LinkWrench, at most ServerInfo::max_wrenches).
  template <typename A, typename B, typename C>
  InverseDynamicsResult inverseDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Qdd,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return idBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Qdd), Eigen::MatrixXd(), {}, payload);
  }
  /// With external wrenches on named frames (a foot's contact force, world axes by default): tau less the
  /// wrenches' joint forces, sum of J_k^T f_k.
  template <typename A, typename B, typename C>
  InverseDynamicsResult inverseDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Qdd,
                                        const std::vector<LinkWrench>& wrenches,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return idBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Qdd), Eigen::MatrixXd(), wrenches, payload);
  }
  /// With a wrench on the last link per state (count x 6: moment, force; tip frame, moment about its origin).
  template <typename A, typename B, typename C, typename W>
  InverseDynamicsResult inverseDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Qdd,
                                        const Eigen::MatrixBase<W>& tip_wrench,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return idBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Qdd), batchOf(tip_wrench), {}, payload);
  }
  template <typename A, typename B, typename C>
  ForwardDynamicsResult forwardDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Tau,
                                        Route route = Route::Saha,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return fdBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Tau), route, {}, payload);
  }
  /// With external wrenches on named frames: qdd = I^-1 (tau + sum of J_k^T f_k - C qd - g).
  template <typename A, typename B, typename C>
  ForwardDynamicsResult forwardDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Tau,
                                        const std::vector<LinkWrench>& wrenches, Route route = Route::Saha,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return fdBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Tau), route, wrenches, payload);
  }
  /// I, U, D, log det per state, and the terms flags asks for (convective and bias need Qd).
  template <typename A>
  FullFactorResult fullFactor(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                              const FactorFlags& flags = {},
                              const std::optional<Payload>& payload = std::nullopt) {
    return factorBatch(model_id, batchOf(Q), flags, Eigen::MatrixXd(), payload);
  }
  template <typename A, typename B>
  FullFactorResult fullFactor(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                              const FactorFlags& flags, const Eigen::MatrixBase<B>& Qd,
                              const std::optional<Payload>& payload = std::nullopt) {
    return factorBatch(model_id, batchOf(Q), flags, batchOf(Qd), payload);
  }

  // --- for planners: batches as above (Q count x nq, the others count x nv). Batches above maxStates() are
  // split like the dynamics ones: kinematics and derivatives by states, rollouts by rollouts
  // (floor(max_states / steps) per call; a shared control sequence goes whole to every call).

  /// The pose of a frame (options.link; empty: the tip), or of several (options.links), per state, and on
  /// request the Jacobian of a point on it, (dJ/dt) qd (needs Qd), the operational-space inertia, the poses
  /// of every frame, the centre of mass, its Jacobian, the centroidal map and momentum (needs Qd).
  KinematicsResult kinematics(const std::string& model_id, const Eigen::MatrixXd& Q,
                              const KinematicsOptions& options,
                              const Eigen::MatrixXd& Qd = Eigen::MatrixXd());
  /// dtau/dq, dtau/dqd (and tau) per state; tip_wrench count x 6 or empty; wrenches: external wrenches on
  /// named frames (LinkWrench: count x 6 or 1 x 6 each), their own dependence on q included (a Base wrench
  /// keeps its world axes while its point moves with the link).
  DerivativesResult inverseDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                               const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                               const std::optional<Payload>& payload = std::nullopt,
                                               const Eigen::MatrixXd& tip_wrench = Eigen::MatrixXd(),
                                               const std::vector<LinkWrench>& wrenches = {});
  /// dqdd/dq, dqdd/dqd, dqdd/dtau = I^-1 (and qdd) per state; wrenches as above.
  DerivativesResult forwardDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                               const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau,
                                               const std::optional<Payload>& payload = std::nullopt,
                                               const Eigen::MatrixXd& tip_wrench = Eigen::MatrixXd(),
                                               const std::vector<LinkWrench>& wrenches = {});
  /// K rollouts from X0 (K x (nq + nv), rows [q; qd]) under U: K matrices T x nu, or one shared by all.
  RolloutResult rollout(const std::string& model_id, const Eigen::MatrixXd& X0,
                        const std::vector<Eigen::MatrixXd>& U, const RolloutOptions& options);

  /// A batch from a matrix (as it is) or a compile-time vector (one row).
  template <typename A>
  static Eigen::MatrixXd batchOf(const Eigen::MatrixBase<A>& m) {
    if constexpr (A::ColsAtCompileTime == 1) {
      return m.transpose();
    } else {
      return m;
    }
  }

  /// Runs a simulation, calling on_batch for each streamed batch in order.
  SimulationSummary simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                             const Eigen::VectorXd& qd0, const SimulateOptions& options,
                             const BatchCallback& on_batch);
  /// Runs a simulation and gathers every sample.
  SimulationResult simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                            const Eigen::VectorXd& qd0, const SimulateOptions& options);

  /// Opens a Stream session.
  std::unique_ptr<StreamSession> openStream() const;

 private:
  friend class StreamSession;
  std::shared_ptr<v1::Dynamics::Stub> stub() const;
  std::unique_ptr<grpc::ClientContext> context(std::optional<std::chrono::milliseconds> timeout) const;
  /// Runs attempt() with retries on UNAVAILABLE (when retry) and one re-registration on NOT_FOUND of
  /// model_id (when not empty). Throws Error.
  void call(const char* name, const std::string& model_id, bool retry,
            const std::function<grpc::Status(v1::Dynamics::Stub&, grpc::ClientContext&)>& attempt) const;
  /// Re-registers model_id from the sources after NOT_FOUND with `message`; false when the id is unknown to
  /// them, ClientOptions::reregister is off, or the message says the model was deleted (wasDeleted: its
  /// source is forgotten then).
  bool reregister(const std::string& model_id, const std::string& message) const;
  Registration registerRaw(const v1::RegisterModelRequest& request, bool remember) const;
  /// Each batch call is two functions: xBatch (or the public kinematics, derivatives and rollout) sends the
  /// batch through resplit; xSplit sends it in parts of at most max_states states (chunks), each part by
  /// xSplit again.
  InverseDynamicsResult idBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                const Eigen::MatrixXd& tip_wrench, const std::vector<LinkWrench>& wrenches,
                                const std::optional<Payload>& payload);
  InverseDynamicsResult idSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                const Eigen::MatrixXd& tip_wrench, const std::vector<LinkWrench>& wrenches,
                                const std::optional<Payload>& payload);
  ForwardDynamicsResult fdBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route,
                                const std::vector<LinkWrench>& wrenches,
                                const std::optional<Payload>& payload);
  ForwardDynamicsResult fdSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route,
                                const std::vector<LinkWrench>& wrenches,
                                const std::optional<Payload>& payload);
  /// Remembers what a model's root adds to q (nq - nv: 1 for a floating root, else 0).
  void rememberShape(const ModelInfo& info) const;
  /// The velocity coordinates (dof) of a call on model_id with Q (count x nq): Q's columns less what the
  /// root adds to q when this client has seen the model's description (so a wrong Qd is named by the
  /// server, as for a serial arm), else Qd's columns when given, else as Q's after asking GetModel once.
  int dofOf(const std::string& model_id, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd);
  FullFactorResult factorBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                               const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                               const std::optional<Payload>& payload);
  FullFactorResult factorSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                               const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                               const std::optional<Payload>& payload);
  /// Both directions of Derivatives: Third is Qdd (inverse dynamics) or Tau (forward dynamics).
  DerivativesResult derivativesSplit(const std::string& model_id, bool inverse, const Eigen::MatrixXd& Q,
                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Third,
                                     const std::optional<Payload>& payload, const Eigen::MatrixXd& tip_wrench,
                                     const std::vector<LinkWrench>& wrenches);
  KinematicsResult kinematicsSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                   const KinematicsOptions& options, const Eigen::MatrixXd& Qd);
  RolloutResult rolloutSplit(const std::string& model_id, const Eigen::MatrixXd& X0,
                             const std::vector<Eigen::MatrixXd>& U, const RolloutOptions& options);

  /// Runs send(), a batch call split by the cached max_states (an xSplit). When the server refuses it with
  /// RESOURCE_EXHAUSTED naming a limit this client caches (namesCachedLimit), the cached limits are
  /// dropped and read again, once; when max_states shrank, send() runs once more, split by the new limit,
  /// else the refusal is thrown. A refusal of that second run is thrown as it is: one re-read per call.
  template <typename Send>
  auto resplit(const Send& send) -> decltype(send()) {
    const std::optional<std::uint32_t> before = cachedMaxStates();
    try {
      return send();
    } catch (const Error& e) {
      if (!limitsShrank(e, before)) throw;
    }
    return send();
  }
  /// The max_states this client keeps, if it has asked.
  std::optional<std::uint32_t> cachedMaxStates() const;
  /// Whether `refusal` names a cached limit and max_states, dropped and asked again, is now smaller than
  /// the one the batch was split by (`before`, the kept value when the call began, else the one kept now).
  /// False, with the refusal to be thrown, when the server does not answer the new question.
  bool limitsShrank(const Error& refusal, std::optional<std::uint32_t> before);

  /// The row ranges [first, first + size) a batch of `rows` items is split into, each item counting
  /// `states_per_row` states against the server's max_states (1 for a state, T for a rollout of T steps):
  /// one range when it fits, or when one item alone exceeds the limit (the server refuses it with its
  /// message).
  std::vector<std::pair<Eigen::Index, Eigen::Index>> chunks(Eigen::Index rows,
                                                            std::uint64_t states_per_row = 1);

  ClientOptions options_;
  std::shared_ptr<ModelSources> sources_;
  std::optional<std::uint32_t> max_states_;     // guarded by mutex_
  mutable std::map<std::string, int> q_extra_;  // model id -> nq - nv; guarded by mutex_
  mutable std::mutex mutex_;                    // guards channel_ and stub_
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<v1::Dynamics::Stub> stub_;
};

}  // namespace denoc::client
