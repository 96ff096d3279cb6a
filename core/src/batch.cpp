#include "denoc/batch.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {

/// One batch: its chunks are claimed by an atomic counter; `done` counts finished chunks.
struct BatchPool::Task {
  std::shared_ptr<const Model> model;
  const std::function<void(std::size_t, std::size_t, Data&)>* chunk = nullptr;
  std::size_t count = 0;
  std::size_t chunks = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex error_mutex;  // only on the error path
  std::exception_ptr error;
  std::size_t error_begin = 0;

  std::size_t begin(std::size_t c) const { return count * c / chunks; }
};

/// A worker's workspaces, most recently used first.
struct BatchPool::WorkerState {
  static constexpr std::size_t kSlots = 8;
  std::vector<std::pair<std::shared_ptr<const Model>, std::unique_ptr<Data>>> slots;

  Data& workspace(const std::shared_ptr<const Model>& model) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].first.get() == model.get()) {
        if (i != 0) std::swap(slots[0], slots[i]);
        return *slots[0].second;
      }
    }
    if (slots.size() >= kSlots) slots.pop_back();
    slots.insert(slots.begin(), {model, std::make_unique<Data>(*model)});
    return *slots[0].second;
  }
};

BatchPool::BatchPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
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

void BatchPool::runChunks(Task& task, Data& data) {
  for (;;) {
    const std::size_t c = task.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= task.chunks) return;
    const std::size_t b = task.begin(c), e = task.begin(c + 1);
    try {
      (*task.chunk)(b, e, data);
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
      runChunks(*task, state.workspace(task->model));
  }
}

std::unique_ptr<Data> BatchPool::borrow(const std::shared_ptr<const Model>& model) {
  {
    const std::lock_guard<std::mutex> lock(spare_mutex_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      if (it->first.get() == model.get()) {
        std::unique_ptr<Data> data = std::move(it->second);
        spare_.erase(it);
        return data;
      }
    }
  }
  return std::make_unique<Data>(*model);
}

void BatchPool::giveBack(const std::shared_ptr<const Model>& model, std::unique_ptr<Data> data) {
  constexpr std::size_t kSpares = 16;
  const std::lock_guard<std::mutex> lock(spare_mutex_);
  spare_.insert(spare_.begin(), {model, std::move(data)});
  if (spare_.size() > kSpares) spare_.pop_back();
}

void BatchPool::run(const std::shared_ptr<const Model>& model, std::size_t count, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t, Data&)>& chunk) {
  if (!model) throw std::invalid_argument("BatchPool::run: the model is null");
  if (count == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = std::min<std::size_t>(kChunksPerThread * threads(), (count + grain - 1) / grain);
  std::unique_ptr<Data> data = borrow(model);
  if (chunks <= 1 || threads() == 1) {
    // inline: no worker is woken
    try {
      chunk(0, count, *data);
    } catch (...) {
      giveBack(model, std::move(data));
      throw;
    }
    giveBack(model, std::move(data));
    return;
  }
  const auto task = std::make_shared<Task>();
  task->model = model;
  task->chunk = &chunk;
  task->count = count;
  task->chunks = chunks;
  // one queue entry per worker that can take part
  const std::size_t helpers = std::min<std::size_t>(workers_.size(), chunks - 1);
  {
    const std::lock_guard<std::mutex> lock(queue_mutex_);
    for (std::size_t i = 0; i < helpers; ++i) queue_.push_back(task);
  }
  if (helpers == 1) {
    queue_cv_.notify_one();
  } else {
    queue_cv_.notify_all();
  }
  runChunks(*task, *data);
  giveBack(model, std::move(data));
  for (std::size_t d = task->done.load(std::memory_order_acquire); d < chunks;
       d = task->done.load(std::memory_order_acquire)) {
    task->done.wait(d, std::memory_order_acquire);
  }
  if (task->error) std::rethrow_exception(task->error);
}

namespace {

using CMap = Eigen::Map<const Eigen::VectorXd>;
using OutMap = Eigen::Map<Eigen::VectorXd>;

void requireArray(const void* p, std::size_t count, const char* function, const char* name) {
  if (count != 0 && p == nullptr)
    throw std::invalid_argument(std::string(function) + ": " + name + " is null");
}

/// Runs one state's computation; an argument error gets the batch function and the state index in front.
template <typename F>
void state(const char* function, std::size_t k, F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(function) + ": state " + std::to_string(k) + ": " + e.what());
  }
}

/// Row-major copy of an n x n column-major matrix.
void copyRowMajor(const Eigen::MatrixXd& m, double* out) {
  const Eigen::Index n = m.rows();
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) out[i * n + j] = m(i, j);
  }
}

}  // namespace

void inverseDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                          const double* q, const double* qd, const double* qdd, double* tau,
                          const double* tip_wrench, std::size_t grain) {
  constexpr const char* kFn = "inverseDynamicsBatch";
  if (!model) throw std::invalid_argument(std::string(kFn) + ": the model is null");
  requireArray(q, count, kFn, "q");
  requireArray(qd, count, kFn, "qd");
  requireArray(qdd, count, kFn, "qdd");
  requireArray(tau, count, kFn, "tau");
  const Model& m = *model;
  const std::size_t n = static_cast<std::size_t>(m.n);
  pool.run(model, count, grain, [&](std::size_t begin, std::size_t end, Data& d) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t o = k * n;
      const CMap qk(q + o, m.n), qdk(qd + o, m.n), qddk(qdd + o, m.n);
      state(kFn, k, [&] {
        OutMap(tau + o, m.n) =
            tip_wrench ? inverseDynamics(m, d, qk, qdk, qddk,
                                         Eigen::Map<const Eigen::Matrix<double, 6, 1>>(tip_wrench + 6 * k))
                       : inverseDynamics(m, d, qk, qdk, qddk);
      });
    }
  });
}

void forwardDynamicsBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, ForwardRoute route,
                          std::size_t count, const double* q, const double* qd, const double* tau,
                          double* qdd, std::size_t grain) {
  constexpr const char* kFn = "forwardDynamicsBatch";
  if (!model) throw std::invalid_argument(std::string(kFn) + ": the model is null");
  requireArray(q, count, kFn, "q");
  requireArray(qd, count, kFn, "qd");
  requireArray(tau, count, kFn, "tau");
  requireArray(qdd, count, kFn, "qdd");
  if (route != ForwardRoute::Saha && route != ForwardRoute::Cholesky && route != ForwardRoute::Fixman) {
    throw std::invalid_argument(std::string(kFn) + ": unknown route " +
                                std::to_string(static_cast<int>(route)));
  }
  const Model& m = *model;
  const std::size_t n = static_cast<std::size_t>(m.n);
  pool.run(model, count, grain, [&](std::size_t begin, std::size_t end, Data& d) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t o = k * n;
      const CMap qk(q + o, m.n), qdk(qd + o, m.n), tauk(tau + o, m.n);
      state(kFn, k, [&] {
        switch (route) {
          case ForwardRoute::Saha:
            OutMap(qdd + o, m.n) = forwardDynamics(m, d, qk, qdk, tauk);
            break;
          case ForwardRoute::Cholesky:
            OutMap(qdd + o, m.n) = forwardDynamicsCholesky(m, d, qk, qdk, tauk);
            break;
          case ForwardRoute::Fixman:
            OutMap(qdd + o, m.n) = forwardDynamicsFixman(m, d, qk, qdk, tauk);
            break;
        }
      });
    }
  });
}

void fullFactorBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const FullFactorBatchOutput& out, std::size_t grain) {
  constexpr const char* kFn = "fullFactorBatch";
  if (!model) throw std::invalid_argument(std::string(kFn) + ": the model is null");
  requireArray(q, count, kFn, "q");
  requireArray(out.inertia, count, kFn, "inertia");
  requireArray(out.u, count, kFn, "u");
  requireArray(out.d, count, kFn, "d");
  requireArray(out.log_det, count, kFn, "log_det");
  if (out.convective || out.bias) requireArray(qd, count, kFn, "qd (needed for convective and bias)");
  const Model& m = *model;
  const std::size_t n = static_cast<std::size_t>(m.n);
  pool.run(model, count, grain, [&](std::size_t begin, std::size_t end, Data& d) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t o = k * n, oo = o * n;
      const CMap qk(q + o, m.n);
      state(kFn, k, [&] {
        computeFullFactor(m, d, qk);
        copyRowMajor(d.M, out.inertia + oo);
        copyRowMajor(d.U, out.u + oo);
        OutMap(out.d + o, m.n) = d.D;
        out.log_det[k] = d.log_det;
        if (out.inverse) copyRowMajor(computeInverseInertia(m, d, qk), out.inverse + oo);
        if (out.convective)
          copyRowMajor(computeConvectiveMatrix(m, d, qk, CMap(qd + o, m.n)), out.convective + oo);
        if (out.bias) OutMap(out.bias + o, m.n) = computeBias(m, d, qk, CMap(qd + o, m.n));
        if (out.gravity_torque) OutMap(out.gravity_torque + o, m.n) = computeGravity(m, d, qk);
      });
    }
  });
}

}  // namespace denoc
