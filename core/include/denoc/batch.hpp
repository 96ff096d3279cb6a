// Batches of states across cores: a pool of worker threads and batch versions of inverse dynamics, forward
// dynamics (every route) and the full factor that read and write raw row-major arrays (count x dof, the
// layout of the service's packed repeated fields).
//
// How a batch runs. The states [0, count) are cut into contiguous chunks of at least `grain` states each,
// at most kChunksPerThread per thread (static chunking; a few per thread, so that a thread the operating
// system holds back on a shared machine delays the batch by a small chunk only). The calling thread asks
// the workers once, runs chunks itself, and waits for the rest; every thread claims chunks by one atomic
// increment, so nothing is locked while states are computed. A batch of at most `grain` states (or a pool of
// one thread) runs inline on the calling thread without touching the workers. Each chunk computes its states
// with the single-state functions of the core (inverseDynamics, forwardDynamics, ...) in one workspace, so a
// batch gives bit for bit the results of calling them state by state.
//
// Workspaces. Each worker thread keeps its own Data per model (a few most recently used models; the pool
// holds a shared_ptr to those models until they drop out). A calling thread borrows a Data from a small
// free list of the pool, locked once per batch call.
//
// Threads. One pool may serve several calling threads at the same time (the server's RPC threads, say):
// their chunks share the workers, and a caller whose chunks wait behind another caller's runs them itself.
// A pool must not be destroyed while a batch runs on it. There is no global state.
//
// Errors. Arguments are checked as the single-state functions check them: a non-finite entry throws
// std::invalid_argument naming the batch function, the array, the state and the joint; a failure inside a
// state (a Cholesky factor that does not exist, say) is rethrown on the calling thread after every chunk
// has finished, the one of the lowest state index; the outputs are then unspecified.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "denoc/data.hpp"
#include "denoc/model.hpp"

namespace denoc {

/// Which forward-dynamics route a batch uses.
enum class ForwardRoute : std::uint8_t {
  Saha,      // O(n) three sweeps (forwardDynamics)
  Cholesky,  // I(q) and its Cholesky factor (forwardDynamicsCholesky)
  Fixman,    // O(n) Fixman route (forwardDynamicsFixman)
};

/// A pool of worker threads for batches of states. Thread-safe; not copyable.
class BatchPool {
 public:
  /// A pool that runs batches on `threads` threads in all, the calling thread included (threads - 1
  /// workers are started). 0: std::thread::hardware_concurrency() (at least 1).
  explicit BatchPool(unsigned threads = 0);
  ~BatchPool();
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  /// Threads that run a batch, the calling thread included.
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1u; }

  /// Chunks per thread, at most (see the file comment).
  static constexpr std::size_t kChunksPerThread = 4;

  /// Runs chunk(begin, end, data) over [0, count) cut into at most kChunksPerThread * threads() contiguous
  /// chunks of at least `grain` (>= 1) states, each with a workspace for `model`; returns when all have run.
  /// An exception from a chunk is rethrown here (the chunk that threw it stops; the others run to their end;
  /// of several, the one with the lowest `begin`).
  void run(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
           const std::function<void(std::size_t begin, std::size_t end, Data& data)>& chunk);

 private:
  struct Task;
  struct WorkerState;
  void workerLoop(unsigned index);
  static void runChunks(Task& task, Data& data);
  std::unique_ptr<Data> borrow(const std::shared_ptr<const Model>& model);
  void giveBack(const std::shared_ptr<const Model>& model, std::unique_ptr<Data> data);

  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<WorkerState>> worker_state_;  // one per worker, touched by that worker only
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Task>> queue_;  // one entry per worker asked to join a batch
  bool stopping_ = false;
  std::mutex spare_mutex_;  // the calling threads' workspaces
  std::vector<std::pair<std::shared_ptr<const Model>, std::unique_ptr<Data>>> spare_;
};

/// Default minimum number of states per chunk: below it a batch runs inline.
inline constexpr std::size_t kDefaultBatchGrain = 16;

/// Row-major outputs of fullFactorBatch: each matrix count x dof x dof, each vector count x dof. I, U, D and
/// log_det are required; the others are computed when not null (C and bias need qd).
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

/// tau = inverseDynamics(q, qd, qdd[, tip wrench]) for each of `count` states. q, qd, qdd, tau: count x n;
/// tip_wrench: null or count x 6 ([moment; force] in the tip frame, as inverseDynamics takes it).
void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const double* tip_wrench = nullptr, std::size_t grain = kDefaultBatchGrain);

/// qdd = forward dynamics by `route` for each of `count` states. q, qd, tau, qdd: count x n.
void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, ForwardRoute route,
                          std::size_t count, const double* q, const double* qd, const double* tau,
                          double* qdd, std::size_t grain = kDefaultBatchGrain);

/// computeFullFactor (and the optional outputs) for each of `count` states. q: count x n; qd: count x n, or
/// null when neither convective nor bias is asked for.
void fullFactorBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const FullFactorBatchOutput& out,
                     std::size_t grain = kDefaultBatchGrain);

}  // namespace denoc
