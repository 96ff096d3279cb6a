// denoc::client types: the options of a client and the values its calls take and answer. Batches are
// Eigen::MatrixXd with one state per row: count x nq for q, count x nv (= dof) for qd, qdd and tau (nq = nv =
// dof for a fixed root; a floating root's 7 coordinates and 6 velocities come first, a planar root's 3:
// docs/trees.md); units are SI (m, kg, s, rad, N, N m).
#pragma once

#include <grpcpp/support/status.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace denoc::client {

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
  /// gRPC's load-balancing policy: "round_robin" spreads calls over every address of the target,
  /// "pick_first" sends them all to one. Empty: round_robin for the targets that name several servers
  /// (dns:///..., such as a headless service, and ipv4:/ipv6: address lists), pick_first otherwise.
  std::string load_balancing;
};

/// A joint's kind; Floating and Planar only for a moving root (ModelInfo::joints[0]).
enum class JointType { Revolute, Prismatic, Floating, Planar };

/// How a model's root link moves relative to the world (v1::RootJoint, docs/trees.md): Fixed (q and qd hold
/// the joints only), Floating (q starts with [x y z qx qy qz qw], qd with [wx wy wz vx vy vz] in the root
/// link's axes), Planar (q and qd start with [x y yaw]).
enum class RootJoint { Fixed, Floating, Planar };

/// One joint of a model's tree (v1::Joint): a moving root is joints[0] ("root_joint"), the others follow in
/// the order of their coordinates, every parent before its children.
struct Joint {
  std::string name;
  JointType type = JointType::Revolute;
  int parent = -1;  // index in ModelInfo::joints of the joint that moves this one's parent link; -1: none
  int q_index = 0, v_index = 0;  // its first coordinate in q and in qd (qdd, tau)
  int nq = 1, nv = 1;            // 1, or 7 and 6 (floating), or 3 and 3 (planar)
  std::string link;              // the link it moves
  int depth = 1;                 // joints on its path from the world, itself included
};

/// A frame a request may name (v1::Frame): a link, "tip", the root link, or a link merged into one of these
/// by fixed joints (a foot, a flange: a fixed frame).
struct Frame {
  std::string name;
  int joint = -1;        // index in ModelInfo::joints of the joint that moves it; -1: fixed to the world
  std::string fixed_to;  // a fixed frame: the frame (link) it is fixed to; else empty
};

/// A registered model as the server describes it (v1::ModelInfo).
struct ModelInfo {
  std::string model_id;
  std::string name;
  int dof = 0;                                       // velocity coordinates nv
  std::vector<std::string> joint_names, link_names;  // the nu non-root joints, in their order in q
  std::vector<JointType> joint_types;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  Eigen::VectorXd lower, upper, velocity_limit, effort_limit, armature;  // -inf/+inf: unlimited
  bool pinned = false;
  std::string source;  // "urdf", "dh" or "builtin"
  // the tree (a fixed-root serial arm: nq = nv = nu = dof, root Fixed, depth = dof)
  int nq = 0;  // configuration coordinates: q has nq values per state
  int nv = 0;  // velocity coordinates (= dof)
  int nu = 0;  // actuated coordinates (the joints besides the root)
  RootJoint root = RootJoint::Fixed;
  std::vector<Joint> joints;  // a moving root first, then the joints of joint_names
  std::vector<Frame> frames;  // the links of joint_names (0 .. nu-1), "tip" (nu), the root link (nu + 1),
                              // then the fixed frames
  int depth = 0;              // most joints on a path from the root link to a leaf
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
  std::uint32_t max_depth = 0;     // most joints on a path from a model's root
  std::uint32_t max_wrenches = 0;  // most external wrenches (LinkWrench) in one request
  std::uint32_t max_frames = 0;    // most frames named in one kinematics request (KinematicsOptions::links)
};

struct Registration {
  std::string model_id;
  ModelInfo model;
  bool created = false;  // false when the server already had the model
  std::chrono::nanoseconds compute_time{0};
};

/// Axes of a Jacobian, (dJ/dt) qd, operational-space inertia or external wrench.
enum class Reference { Base, Local };

/// An external wrench the environment applies on a frame of the model (v1::LinkWrench): a foot's contact
/// force, a tool's load. Rows [mx, my, mz, fx, fy, fz], the moment about the frame's origin; one row per
/// state (count x 6), or one row for every state (1 x 6).
struct LinkWrench {
  std::string link;                       // a name of ModelInfo::frames; empty: the tip frame
  Reference reference = Reference::Base;  // Base: world axes; Local: the frame's own axes
  Eigen::MatrixXd wrench;                 // count x 6 or 1 x 6

  LinkWrench() = default;
  LinkWrench(std::string link_, const Eigen::MatrixXd& wrench_, Reference reference_ = Reference::Base)
      : link(std::move(link_)), reference(reference_), wrench(wrench_) {
    if (wrench.cols() == 1 && wrench.rows() == 6) wrench.transposeInPlace();  // a 6-vector: one row
  }
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
  Eigen::MatrixXd q, qd;  // count x nq, count x dof
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

/// A rigid body held by a frame for one call (v1::Payload): merged into that frame's link (the tip's by
/// default) for that call only. Checked by the server as a link's inertia; an all-zero inertia is a point
/// mass.
struct Payload {
  double mass = 0.0;                              // kg, > 0
  Eigen::Vector3d com = Eigen::Vector3d::Zero();  // mass centre in the holding frame, m
  Eigen::Matrix3d inertia =
      Eigen::Matrix3d::Zero();  // about the mass centre, the holding frame's axes, kg m^2
  std::string link;             // the holding frame (ModelInfo::frames); empty: the tip
};
/// The rows of a task for its operational-space inertia: 6 x 6 (Full) or 3 x 3.
enum class TaskRows { Full, Linear, Angular };

/// What Client::kinematics computes besides the frame's pose (v1::KinematicsRequest).
struct KinematicsOptions {
  std::string link;  // a name of ModelInfo::frames; empty: the tip
  // several frames at once (four feet, two hands; at most ServerInfo::max_frames), instead of `link`: the
  // result's rotation, origin, jacobian, jdot_qd and lambda then hold L = links.size() entries per state
  std::vector<std::string> links;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // a point on that link, in the frame's coordinates
  Reference reference = Reference::Base;
  bool jacobian = false;  // 6 x dof, rows [angular; linear]
  bool jdot_qd = false;   // (dJ/dt) qd: needs Qd
  bool lambda = false;    // operational-space inertia (J I^-1 J^T)^-1
  TaskRows lambda_rows = TaskRows::Full;
  bool all_frames =
      false;  // the poses of every frame (ModelInfo::frames: the links, the tip, a moving root's)
  std::optional<Payload> payload;
  bool center_of_mass = false;       // the centre of mass (world) and the total mass
  bool com_jacobian = false;         // the 3 x dof Jacobian of the centre of mass (world axes)
  bool centroidal = false;           // the centroidal momentum matrix A_G (6 x dof, rows [angular; linear])
  bool centroidal_momentum = false;  // h_G = A_G qd: needs Qd
};

/// The frames' entries are state by state: with L frames (KinematicsOptions::links, or 1), entry k * L + l
/// (row k * L + l of origin and jdot_qd) is frame l of state k.
struct KinematicsResult : AnswerInfo {
  int frames = 1;                                             // L
  std::vector<Eigen::Matrix3d> rotation;                      // count * L: world <- frame
  Eigen::MatrixXd origin;                                     // (count * L) x 3
  std::vector<Eigen::MatrixXd> jacobian;                      // count * L matrices 6 x dof when requested
  Eigen::MatrixXd jdot_qd;                                    // (count * L) x 6 when requested
  std::vector<Eigen::MatrixXd> lambda;                        // count * L matrices r x r when requested
  std::vector<std::vector<Eigen::Matrix3d>> frame_rotations;  // all_frames: count x F (F = frames.size())
  std::vector<Eigen::MatrixXd> frame_origins;                 // all_frames: count matrices F x 3
  Eigen::MatrixXd com;                                        // center_of_mass: count x 3
  Eigen::VectorXd mass;                                       // center_of_mass: count
  std::vector<Eigen::MatrixXd> com_jacobian;                  // com_jacobian: count matrices 3 x dof
  std::vector<Eigen::MatrixXd> centroidal;                    // centroidal: count matrices 6 x dof
  Eigen::MatrixXd centroidal_momentum;                        // centroidal_momentum: count x 6
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
  bool linearize = false;  // also A_t (2 nv x 2 nv) and B_t (2 nv x nu) per step, in the tangent space
  std::optional<Payload> payload;
  // external wrenches on named frames, each held constant over the whole rollout: a LinkWrench's wrench is
  // 1 x 6 (shared by all K rollouts) or K x 6 (one per rollout)
  std::vector<LinkWrench> wrenches;
};

struct RolloutResult : AnswerInfo {
  std::uint32_t steps = 0;
  std::vector<Eigen::MatrixXd> states;          // K matrices (T + 1) x (nq + nv): x_0 .. x_T, x = [q; qd]
  std::vector<std::vector<Eigen::MatrixXd>> A;  // linearize: K x T matrices 2 nv x 2 nv
  std::vector<std::vector<Eigen::MatrixXd>> B;  // linearize: K x T matrices 2 nv x nu
};

}  // namespace denoc::client
