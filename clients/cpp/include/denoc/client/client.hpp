// denoc::client: a C++ client of the denoc dynamics service (denoc.v1.Dynamics) with Eigen types in and out.
//
// Batches are Eigen::MatrixXd with one state per row (count x dof); on the wire they are flat row-major
// arrays (proto/denoc/v1/dynamics.proto), and the mapping is done here. Every call has a deadline
// (ClientOptions::deadline, per attempt). Idempotent calls (RegisterModel, GetModel, ListModels,
// InverseDynamics, ForwardDynamics, FullFactor, and Simulate before its first batch) are retried on
// UNAVAILABLE with bounded attempts and exponential backoff. The client remembers the source of every model
// it registered (ModelSources, keyed by id, shareable between clients): when a dynamics call answers
// NOT_FOUND for such an id (a server with an empty store, a deleted or evicted model), the model is
// registered again and the call retried once. Failures are thrown as denoc::client::Error, carrying the gRPC
// status code and the server's message.
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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "denoc/client/version.hpp"
#include "denoc/dh.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"

namespace denoc::client {

/// A failed call: the gRPC status code and the server's message (or the client's, for failures detected
/// before sending, such as an unreadable model file: then code() is INVALID_ARGUMENT or NOT_FOUND).
class Error : public std::runtime_error {
 public:
  Error(grpc::StatusCode code, std::string message, std::string call = {});
  grpc::StatusCode code() const { return code_; }
  /// The status message as the server sent it.
  const std::string& message() const { return message_; }
  /// The RPC that failed, e.g. "InverseDynamics".
  const std::string& call() const { return call_; }

 private:
  grpc::StatusCode code_;
  std::string message_;
  std::string call_;
};

/// Name of a status code, e.g. "NOT_FOUND".
std::string codeName(grpc::StatusCode code);

/// TLS on the channel (grpc::SslCredentials). Paths to PEM files; empty paths use gRPC's defaults.
struct TlsOptions {
  std::string root_certs;   // CA certificates that sign the server's certificate (empty: system roots)
  std::string client_cert;  // client certificate chain for mutual TLS (with client_key)
  std::string client_key;   // client private key for mutual TLS
  /// Name the server's certificate must carry when it differs from the target's host, e.g. "localhost" for a
  /// certificate issued to localhost reached at 127.0.0.1 (the channel's SSL target name override).
  std::string server_name;
};

/// Retries of idempotent calls on UNAVAILABLE.
struct RetryPolicy {
  int max_attempts = 5;                           // attempts in all, >= 1 (1: no retry)
  std::chrono::milliseconds initial_backoff{50};  // wait before the second attempt
  double multiplier = 2.0;                        // growth of the wait per attempt
  std::chrono::milliseconds max_backoff{2000};    // cap of the wait
  double jitter = 0.2;                            // each wait is scaled by a random factor 1 +- jitter
};

/// What the client reports before each retry (for logs and tests).
struct RetryEvent {
  std::string call;       // e.g. "InverseDynamics"
  int attempt;            // the attempt that failed, 1-based
  grpc::StatusCode code;  // UNAVAILABLE
  std::string message;
  std::chrono::milliseconds backoff;  // wait before the next attempt
};

class ModelSources;

struct ClientOptions {
  std::string target = "127.0.0.1:50051";     // host:port, or any gRPC target (dns:///..., unix:...)
  std::chrono::milliseconds deadline{30000};  // per attempt of a unary call, and for a whole Simulate run
  std::optional<std::chrono::milliseconds> stream_deadline;  // a Stream session; none: no deadline
  std::optional<TlsOptions> tls;                             // none: plaintext
  /// Sent as "authorization: Bearer <token>" on every call when not empty; visible ASCII only (the
  /// constructor throws Error INVALID_ARGUMENT otherwise).
  std::string bearer_token;
  RetryPolicy retry;
  std::function<void(const RetryEvent&)> on_retry;  // called before each retry's wait
  bool reregister = true;                           // transparent re-registration on NOT_FOUND
  /// Sources of registered models; none: the client creates its own. Give several clients the same one to
  /// let any of them re-register what another registered.
  std::shared_ptr<ModelSources> sources;
  int max_receive_message_bytes = 64 << 20;  // largest answer accepted (-1: unlimited)
  int max_send_message_bytes = 64 << 20;
};

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

enum class JointType { Revolute, Prismatic };

/// A registered model as the server describes it (v1::ModelInfo).
struct ModelInfo {
  std::string model_id;
  std::string name;
  int dof = 0;
  std::vector<std::string> joint_names, link_names;
  std::vector<JointType> joint_types;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  Eigen::VectorXd lower, upper, velocity_limit, effort_limit, armature;  // -inf/+inf: unlimited
  bool pinned = false;
  std::string source;  // "urdf", "dh" or "builtin"
};

/// What every dynamics answer carries.
struct AnswerInfo {
  std::string model_id;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();  // the gravity used, base frame, m/s^2
  std::chrono::nanoseconds compute_time{0};           // the server's time in the dynamics core
};

/// The server's version and the limits it enforces (v1::GetServerInfoResponse).
struct ServerInfo {
  std::string version;        // denocd's version, e.g. "0.2.0"
  std::string proto_package;  // "denoc.v1"
  std::uint32_t max_dof = 0;
  std::uint32_t max_states = 0;  // most states per batch call
  std::uint64_t max_receive_message_bytes = 0, max_send_message_bytes = 0;
  std::uint32_t max_streams = 0;
  bool tokens_required = false;
};

struct Registration {
  std::string model_id;
  ModelInfo model;
  bool created = false;  // false when the server already had the model
  std::chrono::nanoseconds compute_time{0};
};

struct InverseDynamicsResult : AnswerInfo {
  Eigen::MatrixXd tau;  // count x dof
};

enum class Route { Saha, Fixman, Cholesky };

struct ForwardDynamicsResult : AnswerInfo {
  Eigen::MatrixXd qdd;  // count x dof
  Route route = Route::Saha;
};

/// Extra terms of a full factor.
struct FactorFlags {
  bool convective = false;      // C(q, qd): needs Qd
  bool bias = false;            // C(q, qd) qd + g(q): needs Qd
  bool gravity_torque = false;  // g(q)
  bool inverse = false;         // I(q)^-1
};

struct FullFactorResult : AnswerInfo {
  std::vector<Eigen::MatrixXd> inertia;     // count matrices dof x dof: I(q)
  std::vector<Eigen::MatrixXd> u;           // count unit upper triangular U, I = U D U^T
  Eigen::MatrixXd d;                        // count x dof: the diagonal of D per state
  Eigen::VectorXd log_det;                  // count: log det I(q)
  std::vector<Eigen::MatrixXd> convective;  // count matrices when requested, else empty
  Eigen::MatrixXd bias;                     // count x dof when requested, else 0 x 0
  Eigen::MatrixXd gravity_torque;           // count x dof when requested, else 0 x 0
  std::vector<Eigen::MatrixXd> inverse;     // count matrices when requested, else empty
};

enum class Integrator { Dopri5, RK4 };

/// Options of a simulation (v1::SimulateRequest); zeros mean the server's defaults.
struct SimulateOptions {
  double t_end = 1.0;
  Integrator integrator = Integrator::Dopri5;
  Route route = Route::Saha;  // Saha or Cholesky
  double dt_out = 0.0;        // 0: 0.01 s
  std::vector<double> sample_times;
  double step = 0.0;  // RK4 step (0: 1e-3 s)
  double rtol = 0.0, atol = 0.0, initial_step = 0.0, max_step = 0.0;
  std::uint64_t max_steps = 0;
  /// Torque input: empty: zero; one row (or a vector): constant; k rows with torque_times of k entries:
  /// piecewise linear.
  Eigen::MatrixXd torque;
  std::vector<double> torque_times;
  Eigen::VectorXd damping;       // empty: none
  std::uint32_t batch_size = 0;  // samples per streamed message (0: 64)
};

/// One streamed batch of samples.
struct SimulationBatch : AnswerInfo {
  Eigen::VectorXd t;      // count sample times
  Eigen::MatrixXd q, qd;  // count x dof
  Eigen::VectorXd energy, kinetic, potential;
  bool last = false;
};

/// What a run did (from the last batch).
struct SimulationSummary {
  std::size_t batches = 0;
  std::size_t samples = 0;
  std::uint64_t steps = 0, rejected_steps = 0, evaluations = 0;
  std::chrono::nanoseconds compute_time{0};  // sum over the batches
  bool complete = false;  // the last batch arrived (false when the callback stopped the run)
};

/// Called per batch, in order; return false to cancel the run.
using BatchCallback = std::function<bool(const SimulationBatch&)>;

/// Every sample of a run.
struct SimulationResult {
  Eigen::VectorXd t;
  Eigen::MatrixXd q, qd;
  Eigen::VectorXd energy, kinetic, potential;
  SimulationSummary summary;
  AnswerInfo info;
};

/// A rigid body held by the tip for one call (v1::Payload): merged into the last link of the model for that
/// call only. Checked by the server as a link's inertia; an all-zero inertia is a point mass.
struct Payload {
  double mass = 0.0;                                  // kg, > 0
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // mass centre in the tip frame, m
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about the mass centre, tip-frame axes, kg m^2
};

/// Axes of a Jacobian, (dJ/dt) qd or operational-space inertia.
enum class Reference { Base, Local };
/// The rows of a task for its operational-space inertia: 6 x 6 (Full) or 3 x 3.
enum class TaskRows { Full, Linear, Angular };

/// What Client::kinematics computes besides the frame's pose (v1::KinematicsRequest).
struct KinematicsOptions {
  std::string link;                                 // a link name of ModelInfo::link_names; empty: the tip
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // a point on that link, in the frame's coordinates
  Reference reference = Reference::Base;
  bool jacobian = false;  // 6 x dof, rows [angular; linear]
  bool jdot_qd = false;   // (dJ/dt) qd: needs Qd
  bool lambda = false;    // operational-space inertia (J I^-1 J^T)^-1
  TaskRows lambda_rows = TaskRows::Full;
  bool all_frames = false;  // the poses of every link frame and the tip frame
  std::optional<Payload> payload;
};

struct KinematicsResult : AnswerInfo {
  std::vector<Eigen::Matrix3d> rotation;                      // count: base <- frame
  Eigen::MatrixXd origin;                                     // count x 3
  std::vector<Eigen::MatrixXd> jacobian;                      // count matrices 6 x dof when requested
  Eigen::MatrixXd jdot_qd;                                    // count x 6 when requested
  std::vector<Eigen::MatrixXd> lambda;                        // count matrices r x r when requested
  std::vector<std::vector<Eigen::Matrix3d>> frame_rotations;  // all_frames: count x (dof + 1)
  std::vector<Eigen::MatrixXd> frame_origins;                 // all_frames: count matrices (dof + 1) x 3
};

/// Analytic derivatives per state (entry (i, j) is d out_i / d in_j); the inverse-dynamics fields or the
/// forward-dynamics ones are filled, the others empty.
struct DerivativesResult : AnswerInfo {
  std::vector<Eigen::MatrixXd> dtau_dq, dtau_dqd;             // inverse dynamics
  Eigen::MatrixXd tau;                                        // inverse dynamics: count x dof
  std::vector<Eigen::MatrixXd> dqdd_dq, dqdd_dqd, dqdd_dtau;  // forward dynamics (dqdd_dtau = I^-1)
  Eigen::MatrixXd qdd;                                        // forward dynamics: count x dof
};

enum class StepScheme { RK4, SemiImplicitEuler };

/// Options of Client::rollout (v1::RolloutRequest).
struct RolloutOptions {
  std::uint32_t steps = 0;  // T
  double dt = 1e-3;         // s
  StepScheme scheme = StepScheme::RK4;
  bool linearize = false;  // also A_t (2n x 2n) and B_t (2n x n) per step
  std::optional<Payload> payload;
};

struct RolloutResult : AnswerInfo {
  std::uint32_t steps = 0;
  std::vector<Eigen::MatrixXd> states;          // K matrices (T + 1) x 2n: x_0 .. x_T, x = [q; qd]
  std::vector<std::vector<Eigen::MatrixXd>> A;  // linearize: K x T matrices 2n x 2n
  std::vector<std::vector<Eigen::MatrixXd>> B;  // linearize: K x T matrices 2n x n
};

class Client;

/// A bidirectional Stream session for control loops: one state in, one answer out, in order. Not
/// thread-safe (one control loop per session). When the server ends the stream with NOT_FOUND for a model
/// this client registered, the session re-registers it, reopens the stream and sends the state again.
class StreamSession {
 public:
  ~StreamSession();
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  /// tau for one state; info (if given) receives the answer's model id, gravity and compute time.
  Eigen::VectorXd inverseDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                  AnswerInfo* info = nullptr);
  /// qdd for one state.
  Eigen::VectorXd forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                  Route route = Route::Saha, AnswerInfo* info = nullptr);
  /// The payload held by the tip that every following message declares (none: the model as registered); the
  /// server keeps the model with it while it stays the same.
  void setPayload(const std::optional<Payload>& payload);
  /// Ends the stream (WritesDone, then the final status); throws Error if the server ended it with an error.
  void close();
  /// Messages answered so far.
  std::uint64_t answered() const { return sequence_; }

 private:
  friend class Client;
  explicit StreamSession(const Client& client);
  void open();
  v1::StreamResponse exchange(v1::StreamRequest request);

  const Client* client_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::shared_ptr<v1::Dynamics::Stub> stub_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> stream_;
  std::uint64_t sequence_ = 0;
  bool closed_ = false;
  std::optional<v1::Payload> payload_;
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
  /// A URDF model: the chain from base_link (empty: the root) to tip_link (empty: the single leaf).
  Registration registerUrdf(const std::string& urdf_text, const std::string& base_link = {},
                            const std::string& tip_link = {},
                            const std::optional<Eigen::Vector3d>& gravity = std::nullopt,
                            const std::optional<std::string>& name = std::nullopt,
                            const std::vector<double>& armature = {});
  /// A DH model (its gravity and name are sent).
  Registration registerDH(const DHSpec& dh);
  /// A model file: ".json" (denoc-dh/1) or ".urdf" (with base_link/tip_link). Throws Error
  /// (INVALID_ARGUMENT) for an unreadable file or a DH file that does not parse.
  Registration registerModelFile(const std::string& path, const std::string& base_link = {},
                                 const std::string& tip_link = {},
                                 const std::optional<Eigen::Vector3d>& gravity = std::nullopt);
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
  /// and the answers joined in order.
  std::uint32_t maxStates();
  /// Deletes a model (not retried: a retry could answer NOT_FOUND for a deletion that happened). The model's
  /// source is forgotten too, so it is not re-registered behind the caller's back.
  void deleteModel(const std::string& model_id);

  // --- dynamics: batches are count x dof matrices, one state per row (any Eigen matrix expression); a single
  // state may be given as vectors (any expression with one column at compile time), answered as a 1-row
  // batch. payload: a body held by the tip for this call only (none: the model as registered).
  template <typename A, typename B, typename C>
  InverseDynamicsResult inverseDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Qdd,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return idBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Qdd), Eigen::MatrixXd(), payload);
  }
  /// With a wrench on the last link per state (count x 6: moment, force; tip frame, moment about its origin).
  template <typename A, typename B, typename C, typename W>
  InverseDynamicsResult inverseDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Qdd,
                                        const Eigen::MatrixBase<W>& tip_wrench,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return idBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Qdd), batchOf(tip_wrench), payload);
  }
  template <typename A, typename B, typename C>
  ForwardDynamicsResult forwardDynamics(const std::string& model_id, const Eigen::MatrixBase<A>& Q,
                                        const Eigen::MatrixBase<B>& Qd, const Eigen::MatrixBase<C>& Tau,
                                        Route route = Route::Saha,
                                        const std::optional<Payload>& payload = std::nullopt) {
    return fdBatch(model_id, batchOf(Q), batchOf(Qd), batchOf(Tau), route, payload);
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

  // --- for planners: batches of count x dof matrices as above. Batches above maxStates() are split like the
  // dynamics ones: kinematics and derivatives by states, rollouts by rollouts (floor(max_states / steps) per
  // call; a shared control sequence goes whole to every call).

  /// The pose of a link frame (options.link; empty: the tip) per state, and on request the Jacobian of a
  /// point on it, (dJ/dt) qd (needs Qd), the operational-space inertia and the poses of every frame.
  KinematicsResult kinematics(const std::string& model_id, const Eigen::MatrixXd& Q,
                              const KinematicsOptions& options,
                              const Eigen::MatrixXd& Qd = Eigen::MatrixXd());
  /// dtau/dq, dtau/dqd (and tau) per state; tip_wrench count x 6 or empty.
  DerivativesResult inverseDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                               const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                               const std::optional<Payload>& payload = std::nullopt,
                                               const Eigen::MatrixXd& tip_wrench = Eigen::MatrixXd());
  /// dqdd/dq, dqdd/dqd, dqdd/dtau = I^-1 (and qdd) per state.
  DerivativesResult forwardDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                               const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau,
                                               const std::optional<Payload>& payload = std::nullopt,
                                               const Eigen::MatrixXd& tip_wrench = Eigen::MatrixXd());
  /// K rollouts from X0 (K x 2n, rows [q; qd]) under U: K matrices T x n, or one shared by all.
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
  /// Re-registers model_id from the sources; false when the id is unknown to them.
  bool reregister(const std::string& model_id) const;
  Registration registerRaw(const v1::RegisterModelRequest& request, bool remember) const;
  InverseDynamicsResult idBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                const Eigen::MatrixXd& tip_wrench, const std::optional<Payload>& payload);
  ForwardDynamicsResult fdBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route,
                                const std::optional<Payload>& payload);
  FullFactorResult factorBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                               const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                               const std::optional<Payload>& payload);
  /// Both directions of Derivatives: Third is Qdd (inverse dynamics) or Tau (forward dynamics).
  DerivativesResult derivativesBatch(const std::string& model_id, bool inverse, const Eigen::MatrixXd& Q,
                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Third,
                                     const std::optional<Payload>& payload,
                                     const Eigen::MatrixXd& tip_wrench);

  /// The row ranges [first, first + size) a batch of `rows` items is split into, each item counting
  /// `states_per_row` states against the server's max_states (1 for a state, T for a rollout of T steps):
  /// one range when it fits, or when one item alone exceeds the limit (the server refuses it with its
  /// message).
  std::vector<std::pair<Eigen::Index, Eigen::Index>> chunks(Eigen::Index rows,
                                                            std::uint64_t states_per_row = 1);

  ClientOptions options_;
  std::shared_ptr<ModelSources> sources_;
  std::optional<std::uint32_t> max_states_;  // guarded by mutex_
  mutable std::mutex mutex_;                 // guards channel_ and stub_
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<v1::Dynamics::Stub> stub_;
};

// --- conversions (used by the client and by tools): row-major wire arrays <-> Eigen
namespace convert {
/// count x dof matrix from a flat row-major array.
Eigen::MatrixXd rows(const double* data, int count, int dof);
/// Appends a matrix row-major to a repeated field.
void append(google::protobuf::RepeatedField<double>* out, const Eigen::MatrixXd& m);
/// A registration request for a DH table.
v1::RegisterModelRequest dhRequest(const DHSpec& dh);
ModelInfo modelInfo(const v1::ModelInfo& m);
}  // namespace convert

}  // namespace denoc::client
