// Batches of states: the core's one engine for computing many states of one model (inverse dynamics,
// forward dynamics by every route, the full factor and its optional outputs), across a pool of threads and,
// within a thread, across SIMD lanes. The batch functions read and write raw row-major arrays (count x dof,
// the layout of the service's packed repeated fields). docs/batches.md describes the design and its numbers.
//
// Strides. Every model is accepted, serial chains and trees (docs/trees.md). State k of a batch reads
// q[k * nq, (k + 1) * nq) and v, a, tau (qd, qdd) at k * nv, and an nv x nv matrix at k * nv * nv
// (Model::nq, Model::nv). For a serial chain nq = nv = n, so the layouts are count x n and count x n x n.
// A tree model runs in the SIMD lanes as a chain does (inverse dynamics, Saha's forward dynamics, the full
// factor; docs/batches.md, "Trees"). What stays derived for serial chains is refused for a tree before any
// state, naming itself: ForwardRoute::Fixman.
//
// How a batch runs. The states [0, count) are cut into contiguous chunks of at least `grain` states each
// (a multiple of the SIMD width), at most kChunksPerThread per thread. The calling thread asks the workers
// once, runs chunks itself and waits for the rest; every thread claims chunks by one atomic increment. A
// batch of one chunk, a pool of one thread, or BatchOptions::max_threads = 1 runs on the calling thread
// without touching the workers.
//
// SIMD lanes. Within a chunk, inverse dynamics, the O(n) forward dynamics (ForwardRoute::Saha) and the full
// factor (I, U, D, log det and I^-1) compute W states at once, one per lane of a SIMD register (W = 2 with
// SSE2, 4 with AVX2, 8 with AVX-512, chosen at run time from the CPU; see SimdWidth), by the same
// scalar-templated algorithms as the single-state functions run with a W-lane scalar type, with exactly
// their operations: every width gives bit for bit the single-state results (in the default build, which
// contracts no multiply-add; see docs/batches.md). A chunk whose size is not a multiple of W fills the
// last group's spare lanes with copies of its last state and discards their results. The other routes
// (Cholesky, Fixman), the convective matrix, the bias and g(q) run state by state.
//
// Bad states. A group of W states with a non-finite input or output is computed again state by state with
// the single-state functions, so a batch raises exactly the error the single-state function raises for the
// same state. The error is a BatchError naming the state; of several failing states the lowest index wins
// (every chunk runs in order and stops at its first failure; the chunks before it run to their end).
//
// Stopping. With a StopCondition (denoc/stop.hpp), every thread polls it before each chunk and every ~20 us
// of work within one (a clock read; its cancellation callable at most once per its poll interval); a
// stopped batch throws denoc::Stopped carrying the number of states completed. The outputs of a batch that
// throws are unspecified.
//
// Workspaces. Each worker thread keeps its own workspace per model (a Data, and for the SIMD kernels of
// each width used the model cast to the lane type with its Data; a few most recently used models; the pool
// holds a shared_ptr to those models until they drop out). A calling thread borrows one from a small free
// list of the pool, locked once per batch call. No batch function allocates per state.
//
// Threads. One pool may serve several calling threads at the same time (the server's RPC threads, say):
// their chunks share the workers, and a caller whose chunks wait behind another caller's runs them itself.
// A pool must not be destroyed while a batch runs on it. There is no global mutable state.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc {

/// States computed at once per thread: one per SIMD lane.
enum class SimdWidth : std::uint8_t {
  Auto = 0,    // defaultSimdWidth()
  Scalar = 1,  // state by state, the single-state functions
  W2 = 2,      // SSE2 (every x86-64 CPU) or the target's 128-bit vectors
  W4 = 4,      // AVX2
  W8 = 8,      // AVX-512F
};

/// Whether this CPU runs `width` (Auto, Scalar and W2 always; W4 with AVX2; W8 with AVX-512F).
bool simdWidthSupported(SimdWidth width);

/// The widest width this CPU runs.
SimdWidth widestSimdWidth();

/// What SimdWidth::Auto means: the environment variable DENOC_SIMD_WIDTH (1, 2, 4 or 8) when it is set to
/// a width this CPU runs, else widestSimdWidth(). Read once, at the first call.
SimdWidth defaultSimdWidth();

/// Models with more joints than this run state by state (a lane workspace holds W copies of every n x n
/// matrix of Data).
inline constexpr int kLanesMaxDof = 128;

/// The full factor runs in lanes up to this many joints: all that run in lanes. It was 48 (a measurement
/// had the lanes slower than the scalar loop at n = 96); writing U to the outputs directly instead of
/// forming it in lanes, the lanes are 3.4x faster than the loop at 96 joints with AVX2 and 3.2x faster than
/// the engine's state-by-state path at 128 (docs/batches.md, SIMD lanes).
inline constexpr int kLanesFullFactorMaxDof = kLanesMaxDof;

/// With SimdWidth::Auto, the full factor of a model with more joints than this runs at most 4 lanes wide:
/// its W-fold lane copy of I(q) outgrows the cache, and on a CPU that runs 512-bit operations as two halves
/// (AMD Zen 4) W8 has no more arithmetic than W4. Measured, one thread, two runs: W8 as fast as W4 or faster
/// at 48 joints (4382 and 4395, 3956 and 4643 ns per state), slower at 96 (18.6 and 19.4 against 16.7 and
/// 16.8 us; docs/batches.md, "What is not met"). An explicit width is honoured.
inline constexpr int kLanesFullFactorAutoW8MaxDof = 48;

/// What a batch did (for metrics and tests), filled in when the batch returns or throws.
struct BatchStats {
  SimdWidth width = SimdWidth::Scalar;  // the width it ran at (narrower than asked for small batches, 1
                                        // for the routes and models the lanes do not cover)
  std::size_t lane_states = 0;          // states computed in SIMD lanes
  std::size_t single_states = 0;        // states computed one at a time (width 1, or a refused group)
};

/// How a batch runs; the defaults suit most callers.
struct BatchOptions {
  const StopCondition* stop = nullptr;  // polled between chunks and within them; null: never stops
  SimdWidth width = SimdWidth::Auto;    // a width the CPU does not run throws std::invalid_argument
  std::size_t grain = 0;                // minimum states per chunk; 0: about 50 us of work (model size)
  unsigned max_threads = 0;             // threads at most, the calling thread included; 0: the pool's
  BatchStats* stats = nullptr;          // when not null, what the batch did
};

/// A state of a batch failed: the message is the batch function's name, the state index and the
/// single-state function's message ("inverseDynamicsBatch: state 40: inverseDynamics: qd[2] is inf, ...").
/// cause() is that function's exception (std::invalid_argument for a bad argument, NumericalError for
/// numbers beyond double precision); both are the state's fault, hence std::invalid_argument.
class BatchError : public std::invalid_argument {
 public:
  BatchError(std::size_t state, std::exception_ptr cause, const std::string& what)
      : std::invalid_argument(what), state_(state), cause_(std::move(cause)) {}
  std::size_t state() const { return state_; }
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::size_t state_;
  std::exception_ptr cause_;
};

struct BatchWorkspace;

/// Cores the calling thread may use: its CPU affinity mask (taskset, cpusets, a container's cpuset), not the
/// host's count (std::thread::hardware_concurrency() where the mask cannot be read), bounded by the CPU time
/// quota of its cgroup and the cgroups above it (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
/// `cpu.cfs_period_us`), rounded up: a container limited to 2 CPUs on a 64-core node gets 2, so that its
/// threads are not throttled by the quota. At least 1.
unsigned usableCores();

namespace detail {
/// The cores a CFS quota allows, ceil(quota / period), from cgroup v2's `cpu.max` text ("200000 100000" ->
/// 2); 0 for no limit ("max 100000") or text that is not a quota.
unsigned quotaCores(std::string_view cpu_max);
}  // namespace detail

/// A pool of worker threads for batches of states. Thread-safe; not copyable.
class BatchPool {
 public:
  /// A pool that runs batches on `threads` threads in all, the calling thread included (threads - 1
  /// workers are started). 0: usableCores().
  explicit BatchPool(unsigned threads = 0);
  ~BatchPool();
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  /// Threads that run a batch, the calling thread included.
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1u; }

  /// Chunks per thread, at most (see the file comment).
  static constexpr std::size_t kChunksPerThread = 4;

  /// Runs chunk(begin, end, data) over [0, count) cut into at most kChunksPerThread * threads() contiguous
  /// chunks of at least `grain` (>= 1) states, each with a workspace for `model`, on at most `max_threads`
  /// threads (0: all); returns when all have run. An exception from a chunk is rethrown here (the chunk that
  /// threw it stops; the others run to their end; of several, the one with the lowest `begin`). For work
  /// other than the batch functions below (rolloutBatch).
  void run(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
           const std::function<void(std::size_t begin, std::size_t end, Data& data)>& chunk,
           unsigned max_threads = 0);

  /// The engine's form of run(): chunk boundaries are multiples of `align`, at most `max_threads` threads
  /// take part (0: all), and chunks get the thread's whole workspace.
  using Chunk = std::function<void(std::size_t begin, std::size_t end, BatchWorkspace& workspace)>;
  void runChunks(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
                 std::size_t align, unsigned max_threads, const Chunk& chunk);

 private:
  struct Task;
  struct WorkerState;
  void workerLoop(unsigned index);
  static void claimChunks(Task& task, BatchWorkspace& workspace);
  std::unique_ptr<BatchWorkspace> borrow(const std::shared_ptr<const Model>& model);
  void giveBack(std::unique_ptr<BatchWorkspace> workspace);

  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<WorkerState>> worker_state_;  // one per worker, touched by that worker only
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Task>> queue_;  // one entry per worker asked to join a batch
  bool stopping_ = false;
  std::mutex spare_mutex_;  // the calling threads' workspaces
  std::vector<std::unique_ptr<BatchWorkspace>> spare_;
};

/// Row-major outputs of fullFactorBatch: each matrix count x nv x nv, each vector count x nv (nv = n for a
/// serial chain). I, U, D and log_det are required; the others are computed when not null (C and bias need
/// qd). C is derived for serial chains: asking for it with a tree model throws std::invalid_argument.
struct FullFactorBatchOutput {
  double* inertia = nullptr;         // I(q)
  double* u = nullptr;               // unit upper triangular U of I = U D U^T
  double* d = nullptr;               // D
  double* log_det = nullptr;         // count entries
  double* inverse = nullptr;         // I(q)^-1 (computeInverseInertia)
  double* convective = nullptr;      // C(q, qd) (computeConvectiveMatrix)
  double* bias = nullptr;            // C(q, qd) qd + g(q) (computeBias)
  double* gravity_torque = nullptr;  // g(q) (computeGravity)
};

/// tau = inverseDynamics(q, qd, qdd[, tip wrench]) for each of `count` states. q: count x nq; qd, qdd, tau:
/// count x nv (count x n each for a serial chain); tip_wrench: null or count x 6 ([moment; force] in the tip
/// frame, as inverseDynamics takes it).
/// Throws BatchError for a failing state, Stopped when stopped, std::invalid_argument for a null model or
/// array or an unsupported width.
void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const double* tip_wrench = nullptr, const BatchOptions& options = {});

/// Most external wrenches of one batch call (BatchWrench): a state's wrenches are kept on the stack.
inline constexpr int kMaxBatchWrenches = 64;

/// An external wrench of a batch call on frame `frame` (frameIndex: a link, the tip n, the root link n + 1),
/// [moment; force] about the frame's origin in the axes of `reference`: state k's is the 6 values at
/// values + k * stride (stride 6: one per state; 0: the same wrench for every state).
struct BatchWrench {
  int frame = 0;
  ReferenceFrame reference = ReferenceFrame::Base;
  const double* values = nullptr;
  std::size_t stride = 6;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // ExternalWrench::point: the moment is about it
};

/// tau = inverseDynamics(q, qd, qdd, wrenches) (the form with external wrenches on any frames) for each of
/// `count` states, in SIMD lanes (the local recursions of every model, eq. TL.7). At most kMaxBatchWrenches
/// wrenches; a wrench on a frame out of range or with a null array throws std::invalid_argument before any
/// state.
void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const std::vector<BatchWrench>& wrenches, const BatchOptions& options = {});

/// qdd = forwardDynamics(q, qd, tau, wrenches) (the O(n) route with external wrenches) for each of `count`
/// states, in SIMD lanes. Checks as the inverse form.
void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* tau, double* qdd,
                          const std::vector<BatchWrench>& wrenches, const BatchOptions& options = {});

/// qdd = forward dynamics by `route` for each of `count` states. q: count x nq; qd, tau, qdd: count x nv.
/// For a tree model Saha is the tree's O(n) articulated-body route (forwardDynamics) and Cholesky its
/// factor route (forwardDynamicsCholesky); Fixman is refused. Throws as inverseDynamicsBatch, and
/// std::invalid_argument for an unknown route or Fixman with a tree model.
void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, ForwardRoute route,
                          std::size_t count, const double* q, const double* qd, const double* tau,
                          double* qdd, const BatchOptions& options = {});

/// computeFullFactor (and the optional outputs) for each of `count` states. q: count x nq; qd: count x nv,
/// or null when neither convective nor bias is asked for. Throws as inverseDynamicsBatch. The convective
/// matrix of a tree model is computeConvectiveMatrix's (the tree's, nv x nv) state by state.
void fullFactorBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const FullFactorBatchOutput& out,
                     const BatchOptions& options = {});

}  // namespace denoc
