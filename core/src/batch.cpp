#include "denoc/batch.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "batch_engine.hpp"
#include "batch_kernels.hpp"
#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/tree_local.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/forward_route.hpp"
#include "simd_dispatch.hpp"

namespace denoc {

// ---- SIMD widths

bool simdWidthSupported(SimdWidth width) {
  const int w = static_cast<int>(width);
  return w == 0 || ((w == 1 || w == 2 || w == 4 || w == 8) && w <= detail::widestLanes());
}

SimdWidth widestSimdWidth() { return static_cast<SimdWidth>(detail::widestLanes()); }

SimdWidth defaultSimdWidth() { return static_cast<SimdWidth>(detail::defaultLanes()); }

// ---- workspaces

/// A thread's workspace for one model: the scalar Data, and a lane workspace per width used (made at the
/// first batch of that width: a batch smaller than the widest width runs at a narrower one, and alternating
/// batch sizes must not rebuild them).
struct BatchWorkspace {
  std::shared_ptr<const Model> model;
  Data data;
  std::unique_ptr<detail::LaneWorkspace> lanes[3];  // widths 2, 4, 8

  explicit BatchWorkspace(std::shared_ptr<const Model> m) : model(std::move(m)), data(*model) {}

  detail::LaneWorkspace& lanesFor(int width) {
    std::unique_ptr<detail::LaneWorkspace>& ws = lanes[width == 2 ? 0 : width == 4 ? 1 : 2];
    if (!ws) ws = detail::makeLaneWorkspace(*model, width);
    return *ws;
  }
};

// ---- the pool

/// One batch: its chunks are claimed by an atomic counter; `done` counts finished chunks.
struct BatchPool::Task {
  std::shared_ptr<const Model> model;
  const Chunk* chunk = nullptr;
  std::size_t count = 0;
  std::size_t chunks = 0;
  std::size_t align = 1;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex error_mutex;  // only on the error path
  std::exception_ptr error;
  std::size_t error_begin = 0;

  /// First state of chunk c: an even share, rounded down to a multiple of align; chunk `chunks` ends at
  /// count.
  std::size_t begin(std::size_t c) const {
    if (c >= chunks) return count;
    const std::size_t b = count / chunks * c + count % chunks * c / chunks;  // no overflow
    return b - b % align;
  }
};

/// A worker's workspaces, most recently used first.
struct BatchPool::WorkerState {
  static constexpr std::size_t kSlots = 8;
  std::vector<std::unique_ptr<BatchWorkspace>> slots;

  BatchWorkspace& workspace(const std::shared_ptr<const Model>& model) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i]->model.get() == model.get()) {
        if (i != 0) std::swap(slots[0], slots[i]);
        return *slots[0];
      }
    }
    if (slots.size() >= kSlots) slots.pop_back();
    slots.insert(slots.begin(), std::make_unique<BatchWorkspace>(model));
    return *slots[0];
  }
};

namespace detail {

unsigned quotaCores(std::string_view cpu_max) {
  std::istringstream in{std::string(cpu_max)};
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  long long q = 0;
  try {
    std::size_t used = 0;
    q = std::stoll(quota, &used);
    if (used != quota.size()) return 0;
  } catch (const std::exception&) {
    return 0;
  }
  if (q <= 0) return 0;
  return static_cast<unsigned>(std::min<long long>((q + period - 1) / period, 1 << 20));
}

}  // namespace detail

namespace {

std::string readSmallFile(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  std::getline(f, text);
  return text;
}

/// The tightest CPU quota on the way from this process's cgroup to the root (0: none found).
unsigned cgroupQuotaCores() {
  unsigned cores = 0;
  const auto take = [&cores](unsigned c) {
    if (c > 0 && (cores == 0 || c < cores)) cores = c;
  };
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    if (line.rfind("0::", 0) == 0) {  // cgroup v2: the unified hierarchy
      std::string path = line.substr(3);
      for (;;) {
        take(detail::quotaCores(readSmallFile("/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max")));
        if (path.empty() || path == "/") break;
        path = path.substr(0, path.rfind('/'));
      }
    }
  }
  // cgroup v1 (the container's own cgroup is mounted at the root)
  for (const char* dir : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}) {
    const std::string quota = readSmallFile(std::string(dir) + "/cpu.cfs_quota_us");
    const std::string period = readSmallFile(std::string(dir) + "/cpu.cfs_period_us");
    if (!quota.empty() && !period.empty()) take(detail::quotaCores(quota + " " + period));
  }
  return cores;
}

}  // namespace

unsigned usableCores() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    cores = static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  if (const unsigned quota = cgroupQuotaCores(); quota > 0) cores = std::min(cores, quota);
  return std::max(1u, cores);
}

BatchPool::BatchPool(unsigned threads) {
  if (threads == 0) threads = usableCores();
  for (unsigned i = 1; i < threads; ++i) worker_state_.push_back(std::make_unique<WorkerState>());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i - 1); });
}

BatchPool::~BatchPool() {
  {
    const std::lock_guard<std::mutex> lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void BatchPool::claimChunks(Task& task, BatchWorkspace& workspace) {
  for (;;) {
    const std::size_t c = task.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= task.chunks) return;
    const std::size_t b = task.begin(c), e = task.begin(c + 1);
    try {
      if (b < e) (*task.chunk)(b, e, workspace);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(task.error_mutex);
      if (!task.error || b < task.error_begin) {
        task.error = std::current_exception();
        task.error_begin = b;
      }
    }
    if (task.done.fetch_add(1, std::memory_order_acq_rel) + 1 == task.chunks) task.done.notify_all();
  }
}

void BatchPool::workerLoop(unsigned index) {
  WorkerState& state = *worker_state_[index];
  for (;;) {
    std::shared_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    // a task whose chunks are all claimed already is dropped without touching its chunk function
    if (task->next.load(std::memory_order_relaxed) < task->chunks)
      claimChunks(*task, state.workspace(task->model));
  }
}

std::unique_ptr<BatchWorkspace> BatchPool::borrow(const std::shared_ptr<const Model>& model) {
  {
    const std::lock_guard<std::mutex> lock(spare_mutex_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      if ((*it)->model.get() == model.get()) {
        std::unique_ptr<BatchWorkspace> ws = std::move(*it);
        spare_.erase(it);
        return ws;
      }
    }
  }
  return std::make_unique<BatchWorkspace>(model);
}

void BatchPool::giveBack(std::unique_ptr<BatchWorkspace> workspace) {
  constexpr std::size_t kSpares = 16;
  const std::lock_guard<std::mutex> lock(spare_mutex_);
  spare_.insert(spare_.begin(), std::move(workspace));
  if (spare_.size() > kSpares) spare_.pop_back();
}

void BatchPool::runChunks(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
                          std::size_t align, unsigned max_threads, const Chunk& chunk) {
  if (!model) throw std::invalid_argument("BatchPool::run: the model is null");
  if (count == 0) return;
  align = std::max<std::size_t>(align, 1);
  grain = std::max<std::size_t>(grain, 1);
  const unsigned threads = max_threads == 0 ? this->threads() : std::min(max_threads, this->threads());
  const std::size_t chunks = std::min<std::size_t>(kChunksPerThread * threads, (count + grain - 1) / grain);
  std::unique_ptr<BatchWorkspace> ws = borrow(model);
  if (chunks <= 1 || threads == 1) {
    // inline: no worker is woken
    try {
      chunk(0, count, *ws);
    } catch (...) {
      giveBack(std::move(ws));
      throw;
    }
    giveBack(std::move(ws));
    return;
  }
  const auto task = std::make_shared<Task>();
  task->model = model;
  task->chunk = &chunk;
  task->count = count;
  task->chunks = chunks;
  task->align = align;
  // one queue entry per worker that can take part
  const std::size_t helpers = std::min<std::size_t>({workers_.size(), chunks - 1, threads - 1u});
  {
    const std::lock_guard<std::mutex> lock(queue_mutex_);
    for (std::size_t i = 0; i < helpers; ++i) queue_.push_back(task);
  }
  if (helpers == 1) {
    queue_cv_.notify_one();
  } else {
    queue_cv_.notify_all();
  }
  claimChunks(*task, *ws);
  giveBack(std::move(ws));
  for (std::size_t d = task->done.load(std::memory_order_acquire); d < chunks;
       d = task->done.load(std::memory_order_acquire)) {
    task->done.wait(d, std::memory_order_acquire);
  }
  if (task->error) std::rethrow_exception(task->error);
}

void BatchPool::run(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t, Data&)>& chunk, unsigned max_threads) {
  runChunks(model, count, grain, 1, max_threads,
            [&chunk](std::size_t b, std::size_t e, BatchWorkspace& ws) { chunk(b, e, ws.data); });
}

// ---- the batch functions

namespace {

using CMap = Eigen::Map<const Eigen::VectorXd>;
using OutMap = Eigen::Map<Eigen::VectorXd>;
using Wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>;

/// Row-major copy of an n x n column-major matrix.
void copyRowMajor(const Eigen::MatrixXd& m, double* out) {
  const Eigen::Index n = m.rows();
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) out[i * n + j] = m(i, j);
  }
}

/// What the chunks of one batch call share: the first failure (lowest state), the states completed.
class BatchRun {
 public:
  BatchRun(const char* function, std::size_t count, const StopCondition* stop)
      : function_(function), count_(count), stop_(stop) {}

  const char* function() const { return function_; }
  const StopCondition* stop() const { return stop_; }

  /// Records that state k failed with the exception in flight (of several, the lowest k is kept).
  void fail(std::size_t k) {
    std::exception_ptr e;
    try {
      throw;
    } catch (const std::invalid_argument& x) {
      e = std::make_exception_ptr(
          BatchError(k, std::current_exception(),
                     std::string(function_) + ": state " + std::to_string(k) + ": " + x.what()));
    } catch (const NumericalError& x) {
      e = std::make_exception_ptr(
          BatchError(k, std::current_exception(),
                     std::string(function_) + ": state " + std::to_string(k) + ": " + x.what()));
    } catch (...) {
      e = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    if (k < first_failure_.load(std::memory_order_relaxed)) {
      first_failure_.store(k, std::memory_order_relaxed);
      error_ = e;
    }
  }

  /// Whether a state at k or beyond need not be computed: a lower one failed already.
  bool pastFailure(std::size_t k) const { return k > first_failure_.load(std::memory_order_relaxed); }

  void completed(std::size_t lane_states, std::size_t single_states) {
    completed_.fetch_add(lane_states + single_states, std::memory_order_relaxed);
    lane_states_.fetch_add(lane_states, std::memory_order_relaxed);
    single_states_.fetch_add(single_states, std::memory_order_relaxed);
  }

  /// After every chunk has run: the statistics, then the failure, or Stopped when stopped before the end.
  void finish(const BatchOptions& o, int width) {
    if (o.stats) {
      o.stats->width = static_cast<SimdWidth>(width);
      o.stats->lane_states = lane_states_.load(std::memory_order_relaxed);
      o.stats->single_states = single_states_.load(std::memory_order_relaxed);
    }
    if (error_) std::rethrow_exception(error_);
    const std::size_t done = completed_.load(std::memory_order_relaxed);
    if (stop_ && done < count_) stop_->raise(function_, done, count_, "states");
  }

 private:
  const char* function_;
  std::size_t count_;
  const StopCondition* stop_;
  std::atomic<std::size_t> completed_{0};
  std::atomic<std::size_t> lane_states_{0};
  std::atomic<std::size_t> single_states_{0};
  std::atomic<std::size_t> first_failure_{std::numeric_limits<std::size_t>::max()};
  std::mutex mutex_;  // error_
  std::exception_ptr error_;
};

/// Rough single-thread cost of one state in ns (for chunk sizes and polling only).
double stateCost(int n, double per_joint, double per_entry) {
  const double dn = static_cast<double>(n);
  return 100.0 + per_joint * dn + per_entry * dn * dn;
}

std::size_t roundUp(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

/// How one batch call runs: the width, chunk size and polling interval.
struct Plan {
  int width = 1;
  std::size_t grain = 1;
  std::size_t poll = 1;  // states between two polls of the stop condition
};

Plan plan(const char* function, const Model& m, std::size_t count, const BatchOptions& o, int lanes_max_dof,
          double cost_ns, int auto_w8_max_dof = kLanesMaxDof) {
  if (!simdWidthSupported(o.width)) {
    throw std::invalid_argument(
        std::string(function) + ": SIMD width " + std::to_string(static_cast<int>(o.width)) +
        " is not run by this CPU (widest: " + std::to_string(detail::widestLanes()) + ")");
  }
  Plan p;
  p.width = o.width == SimdWidth::Auto ? detail::defaultLanes() : static_cast<int>(o.width);
  if (o.width == SimdWidth::Auto && m.nv > auto_w8_max_dof) p.width = std::min(p.width, 4);
  if (m.nv > lanes_max_dof) p.width = 1;
  // a batch smaller than the width: a narrower one wastes fewer lanes
  while (p.width > 1 && count < static_cast<std::size_t>(p.width)) p.width /= 2;
  if (p.width > 1) cost_ns /= 0.5 * p.width;  // lanes: roughly W / 2 times faster per state
  const std::size_t w = static_cast<std::size_t>(p.width);
  p.poll = roundUp(std::max<std::size_t>(1, static_cast<std::size_t>(20000.0 / cost_ns)), w);
  p.grain = o.grain != 0 ? roundUp(o.grain, w)
                         : roundUp(std::max<std::size_t>(1, static_cast<std::size_t>(50000.0 / cost_ns)), w);
  return p;
}

/// Runs states [begin, end) of a chunk: `lanes(workspace, j, stop_at)` computes a range W at a time and
/// returns where it stopped (a group to compute state by state), `scalar(k, data)` one state; polls the
/// stop condition every p.poll states; stops at the first failing state.
template <typename Lanes, typename Scalar>
void runChunk(BatchRun& run, const Plan& p, BatchWorkspace& ws, std::size_t begin, std::size_t end,
              Lanes&& lanes, Scalar&& scalar) {
  std::size_t lane_done = 0, single_done = 0;
  std::size_t k = begin;
  while (k < end) {
    if ((run.stop() && run.stop()->stopRequested()) || run.pastFailure(k)) break;
    const std::size_t stop_at = std::min(end, k + p.poll);
    bool failed = false;
    while (k < stop_at && !failed) {
      std::size_t group_end = stop_at;
      if (p.width > 1) {
        const std::size_t j = lanes(ws, k, stop_at);
        lane_done += j - k;
        k = j;
        group_end = std::min(k + static_cast<std::size_t>(p.width), stop_at);
      }
      // state by state: the scalar width, or a group the lanes refused
      for (; k < group_end; ++k) {
        try {
          scalar(k, ws.data);
        } catch (...) {
          run.fail(k);
          failed = true;
          break;
        }
        ++single_done;
      }
    }
    if (failed) break;
  }
  run.completed(lane_done, single_done);
}

/// Runs a batch call: its chunks over the pool, each by runChunk with `lanes` and `scalar`, then the
/// statistics and the error or stop (BatchRun::finish).
template <typename Lanes, typename Scalar>
void runBatch(BatchPool& pool, const char* function, const std::shared_ptr<const Model>& model,
              std::size_t count, const BatchOptions& options, const Plan& p, Lanes&& lanes, Scalar&& scalar) {
  BatchRun run(function, count, options.stop);
  pool.runChunks(model, count, p.grain, static_cast<std::size_t>(p.width), options.max_threads,
                 [&](std::size_t begin, std::size_t end, BatchWorkspace& ws) {
                   runChunk(run, p, ws, begin, end, lanes, scalar);
                 });
  run.finish(options, p.width);
}

/// A batch with a list of external wrenches (the std::vector<BatchWrench> overloads): the list checked
/// once, then the lanes (the width's `kernel`, the list in `arrays`) and, state by state,
/// `compute(k, data, wrenches, count)` with state k's wrenches gathered on the stack.
template <typename Arrays, typename Compute>
void runWrenchListBatch(BatchPool& pool, const char* function, const std::shared_ptr<const Model>& model,
                        std::size_t count, double cost_ns, const std::vector<BatchWrench>& wrenches,
                        const BatchOptions& options, Arrays arrays,
                        detail::LaneKernel<Arrays> detail::LaneKernels::*kernel, Compute&& compute) {
  const Model& m = *model;
  detail::checkBatchWrenches(function, m, wrenches);
  const int nw = static_cast<int>(wrenches.size());
  const Plan p = plan(function, m, count, options, kLanesMaxDof, cost_ns);
  arrays.wrenches = wrenches.data();
  arrays.wrench_count = nw;
  const detail::LaneKernel<Arrays> lanes = detail::laneKernels(p.width).*kernel;
  runBatch(
      pool, function, model, count, options, p,
      [&](BatchWorkspace& w, std::size_t b, std::size_t e) {
        return lanes(m, w.data, w.lanesFor(p.width), arrays, b, e);
      },
      [&](std::size_t k, Data& d) {
        std::array<ExternalWrench, kMaxBatchWrenches> ws;
        detail::gatherWrenches(wrenches, k, ws.data());
        compute(k, d, ws.data(), nw);
      });
}

}  // namespace

void detail::checkBatch(const char* function, const std::shared_ptr<const Model>& model, std::size_t count,
                        std::initializer_list<NamedArray> arrays) {
  if (!model) throw std::invalid_argument(std::string(function) + ": the model is null");
  for (const NamedArray& a : arrays) {
    if (count != 0 && a.data == nullptr)
      throw std::invalid_argument(std::string(function) + ": " + a.name + " is null");
  }
}

void detail::runStateByState(BatchPool& pool, const char* function, const std::shared_ptr<const Model>& model,
                             std::size_t count, double cost_ns, const BatchOptions& options,
                             const std::function<void(std::size_t k, Data& data)>& per_state) {
  if (!model) throw std::invalid_argument(std::string(function) + ": the model is null");
  const Plan p = plan(function, *model, count, options, 0, cost_ns);  // lanes up to 0 joints: none
  runBatch(
      pool, function, model, count, options, p, [](BatchWorkspace&, std::size_t b, std::size_t) { return b; },
      per_state);
}

void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const double* tip_wrench, const BatchOptions& options) {
  constexpr const char* kFn = "inverseDynamicsBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}, {qd, "qd"}, {qdd, "qdd"}, {tau, "tau"}});
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const Plan p = plan(kFn, m, count, options, kLanesMaxDof, stateCost(m.nv, 30.0, 0.0));
  const detail::IdArrays arrays{q, qd, qdd, tip_wrench, tau};
  const detail::LaneKernels& kernels = detail::laneKernels(p.width);
  runBatch(
      pool, kFn, model, count, options, p,
      [&](BatchWorkspace& w, std::size_t b, std::size_t e) {
        return kernels.inverse_dynamics(m, w.data, w.lanesFor(p.width), arrays, b, e);
      },
      [&](std::size_t k, Data& d) {
        const CMap qk(q + k * nq, m.nq), qdk(qd + k * nv, m.nv), qddk(qdd + k * nv, m.nv);
        OutMap(tau + k * nv, m.nv) = tip_wrench
                                         ? inverseDynamics(m, d, qk, qdk, qddk, Wrench(tip_wrench + 6 * k))
                                         : inverseDynamics(m, d, qk, qdk, qddk);
      });
}

namespace detail {

/// The checks of a batch's external wrenches, before any state: their number, frames and arrays.
void checkBatchWrenches(const char* function, const Model& m, const std::vector<BatchWrench>& wrenches) {
  if (wrenches.size() > static_cast<std::size_t>(kMaxBatchWrenches)) {
    throw std::invalid_argument(std::string(function) + ": " + std::to_string(wrenches.size()) +
                                " external wrenches, expected at most " + std::to_string(kMaxBatchWrenches));
  }
  for (std::size_t j = 0; j < wrenches.size(); ++j) {
    const BatchWrench& w = wrenches[j];
    if (w.frame < 0 || w.frame > m.n + 1 || w.values == nullptr) {
      throw std::invalid_argument(std::string(function) + ": wrench " + std::to_string(j) + " has frame " +
                                  std::to_string(w.frame) + (w.values ? "" : " and no values") +
                                  ", expected a frame in 0.." + std::to_string(m.n + 1) + " with values");
    }
  }
}

}  // namespace detail

void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const std::vector<BatchWrench>& wrenches, const BatchOptions& options) {
  constexpr const char* kFn = "inverseDynamicsBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}, {qd, "qd"}, {qdd, "qdd"}, {tau, "tau"}});
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  runWrenchListBatch(pool, kFn, model, count, stateCost(m.nv, 60.0, 0.0), wrenches, options,
                     detail::IdArrays{q, qd, qdd, nullptr, tau}, &detail::LaneKernels::inverse_dynamics,
                     [&](std::size_t k, Data& d, const ExternalWrench* ws, int nw) {
                       OutMap(tau + k * nv, m.nv) =
                           detail::treeInverseDynamics(m, d, CMap(q + k * nq, m.nq), CMap(qd + k * nv, m.nv),
                                                       CMap(qdd + k * nv, m.nv), ws, nw, "inverseDynamics");
                     });
}

void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* tau, double* qdd,
                          const std::vector<BatchWrench>& wrenches, const BatchOptions& options) {
  constexpr const char* kFn = "forwardDynamicsBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}, {qd, "qd"}, {tau, "tau"}, {qdd, "qdd"}});
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  runWrenchListBatch(pool, kFn, model, count, stateCost(m.nv, 150.0, 0.0), wrenches, options,
                     detail::FdArrays{q, qd, tau, qdd}, &detail::LaneKernels::forward_dynamics,
                     [&](std::size_t k, Data& d, const ExternalWrench* ws, int nw) {
                       OutMap(qdd + k * nv, m.nv) =
                           detail::treeForwardDynamics(m, d, CMap(q + k * nq, m.nq), CMap(qd + k * nv, m.nv),
                                                       CMap(tau + k * nv, m.nv), ws, nw, "forwardDynamics");
                     });
}

void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, ForwardRoute route,
                          std::size_t count, const double* q, const double* qd, const double* tau,
                          double* qdd, const BatchOptions& options) {
  constexpr const char* kFn = "forwardDynamicsBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}, {qd, "qd"}, {tau, "tau"}, {qdd, "qdd"}});
  checkRoute(route, kFn);
  const Model& m = *model;
  if (!m.serial && route == ForwardRoute::Fixman) {
    throw std::invalid_argument(std::string(kFn) +
                                ": ForwardRoute::Fixman is derived for serial chains and not available for a "
                                "tree model; ForwardRoute::Saha and Cholesky are (docs/trees.md)");
  }
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const double cost = route == ForwardRoute::Saha       ? stateCost(m.nv, 75.0, 0.0)
                      : route == ForwardRoute::Cholesky ? stateCost(m.nv, 60.0, 5.0 + 0.05 * m.nv)
                                                        : stateCost(m.nv, 350.0, 0.0);
  const Plan p = plan(kFn, m, count, options, route == ForwardRoute::Saha ? kLanesMaxDof : 0, cost);
  const detail::FdArrays arrays{q, qd, tau, qdd};
  const detail::LaneKernels& kernels = detail::laneKernels(p.width);
  runBatch(
      pool, kFn, model, count, options, p,
      [&](BatchWorkspace& w, std::size_t b, std::size_t e) {
        return kernels.forward_dynamics(m, w.data, w.lanesFor(p.width), arrays, b, e);
      },
      [&](std::size_t k, Data& d) {
        OutMap(qdd + k * nv, m.nv) = forwardDynamics(m, d, route, CMap(q + k * nq, m.nq),
                                                     CMap(qd + k * nv, m.nv), CMap(tau + k * nv, m.nv));
      });
}

void fullFactorBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const FullFactorBatchOutput& out,
                     const BatchOptions& options) {
  constexpr const char* kFn = "fullFactorBatch";
  detail::checkBatch(
      kFn, model, count,
      {{q, "q"}, {out.inertia, "inertia"}, {out.u, "u"}, {out.d, "d"}, {out.log_det, "log_det"}});
  if (out.convective || out.bias)
    detail::checkBatch(kFn, model, count, {{qd, "qd (needed for convective and bias)"}});
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const double per_entry = 8.0 + (detail::denseFactors(m.nv) ? 0.5 * m.nv : 0.0) + (out.inverse ? 8.0 : 0.0) +
                           (out.convective ? 10.0 : 0.0);
  const Plan p = plan(kFn, m, count, options, kLanesFullFactorMaxDof, stateCost(m.nv, 80.0, per_entry),
                      kLanesFullFactorAutoW8MaxDof);
  const detail::FfArrays arrays{q, out.inertia, out.u, out.d, out.log_det, out.inverse};
  const detail::LaneKernels& kernels = detail::laneKernels(p.width);
  const bool extras = out.convective || out.bias || out.gravity_torque;
  // the outputs computed state by state in every case: C, bias, g
  const auto extra = [&](std::size_t k, Data& d) {
    const std::size_t o = k * nv, oo = o * nv;
    const CMap qk(q + k * nq, m.nq);
    if (out.convective)
      copyRowMajor(computeConvectiveMatrix(m, d, qk, CMap(qd + o, m.nv)), out.convective + oo);
    if (out.bias) OutMap(out.bias + o, m.nv) = computeBias(m, d, qk, CMap(qd + o, m.nv));
    if (out.gravity_torque) OutMap(out.gravity_torque + o, m.nv) = computeGravity(m, d, qk);
  };
  runBatch(
      pool, kFn, model, count, options, p,
      [&](BatchWorkspace& w, std::size_t b, std::size_t e) {
        const std::size_t j = kernels.full_factor(m, w.data, w.lanesFor(p.width), arrays, b, e);
        if (!extras) return j;
        for (std::size_t k = b; k < j; ++k) {
          try {
            extra(k, w.data);
          } catch (...) {
            return k;  // computed again state by state, which raises the error
          }
        }
        return j;
      },
      [&](std::size_t k, Data& d) {
        const std::size_t o = k * nv, oo = o * nv;
        const CMap qk(q + k * nq, m.nq);
        computeFullFactor(m, d, qk);
        copyRowMajor(d.M, out.inertia + oo);
        copyRowMajor(d.U, out.u + oo);
        OutMap(out.d + o, m.nv) = d.D;
        out.log_det[k] = d.log_det;
        if (out.inverse) copyRowMajor(computeInverseInertia(m, d, qk), out.inverse + oo);
        extra(k, d);
      });
}

}  // namespace denoc
