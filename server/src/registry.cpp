#include "registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "errors.hpp"

namespace denoc::server {

v1::ModelInfo describe(const BuiltModel& built, bool pinned) {
  const Model& m = *built.model;
  v1::ModelInfo info;
  info.set_model_id(built.id);
  info.set_name(built.name);
  info.set_dof(static_cast<std::uint32_t>(m.n));
  for (const JointSpec& j : m.spec.joints) {
    info.add_joint_names(j.name);
    info.add_link_names(j.link);
    info.add_joint_types(j.type == JointType::Revolute ? v1::JOINT_TYPE_REVOLUTE : v1::JOINT_TYPE_PRISMATIC);
    info.add_lower(j.lower);
    info.add_upper(j.upper);
    info.add_velocity_limit(j.velocity_limit);
    info.add_effort_limit(j.effort_limit);
    info.add_armature(j.armature);
  }
  info.mutable_gravity()->set_x(m.gravity.x());
  info.mutable_gravity()->set_y(m.gravity.y());
  info.mutable_gravity()->set_z(m.gravity.z());
  info.set_pinned(pinned);
  info.set_source(built.source);
  return info;
}

Registry::Registry(const ModelStore& store, std::size_t max_models, Limits limits)
    : store_(store), max_models_(max_models), limits_(limits) {}

void Registry::touch(const Entry& e) const {
  e.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
}

std::shared_ptr<Entry> Registry::makeEntry(BuiltModel built, bool pinned, std::string owner) const {
  auto e = std::make_shared<Entry>();
  e->owner = std::move(owner);
  e->info = describe(built, pinned);
  e->id = built.id;
  e->model = std::move(built.model);
  e->pinned = pinned;
  touch(*e);
  return e;
}

std::shared_ptr<const Entry> Registry::find(const std::string& id) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = entries_.find(id); it != entries_.end()) {
      touch(*it->second);
      return it->second;
    }
  }
  return fromStore(id, true);
}

std::shared_ptr<const Entry> Registry::fromStore(const std::string& id, bool cache) {
  const std::optional<std::string> bytes = store_.get(id);
  if (!bytes) return nullptr;
  v1::RegisterModelRequest request;
  if (!request.ParseFromString(*bytes)) {
    spdlog::error("model store: {}/{}.pb does not parse as a RegisterModelRequest; skipped", store_.dir(),
                  id);
    return nullptr;
  }
  BuiltModel built;
  try {
    built = buildFromRequest(request, limits_);
  } catch (const std::exception& e) {
    spdlog::error("model store: {}/{}.pb does not build ({}); skipped", store_.dir(), id, e.what());
    return nullptr;
  }
  if (built.id != id) {
    spdlog::error("model store: {}/{}.pb holds model {}; skipped", store_.dir(), id, built.id);
    return nullptr;
  }
  if (!cache) return makeEntry(std::move(built), false, recordOwner(request));
  try {
    return add(std::move(built), nullptr, false, recordOwner(request)).first;
  } catch (const RequestError& e) {
    spdlog::error("model store: {} not cached: {}", id, e.what());
    return nullptr;
  }
}

void Registry::evictLocked() {
  while (entries_.size() >= max_models_) {
    auto victim = entries_.end();
    std::uint64_t oldest = UINT64_MAX;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second->pinned) continue;
      const std::uint64_t t = it->second->last_used.load(std::memory_order_relaxed);
      if (t < oldest) {
        oldest = t;
        victim = it;
      }
    }
    if (victim == entries_.end()) {
      fail(ErrorCode::ResourceExhausted, "the model cache holds max_models = " + std::to_string(max_models_) +
                                             " pinned models (--max-models, DENOC_MAX_MODELS)");
    }
    spdlog::debug("registry: evicting {} (least recently used)", victim->first);
    entries_.erase(victim);
  }
}

std::pair<std::shared_ptr<const Entry>, bool> Registry::add(BuiltModel built, const std::string* record,
                                                            bool pinned, const std::string& owner) {
  bool stored_now = false;
  std::string stored_owner = owner;
  if (record) {
    stored_now = store_.put(built.id, *record);  // persisted before it becomes visible
    if (!stored_now) {
      // stored before (by this server or another replica): its first registration's owner stays
      if (auto bytes = store_.get(built.id)) {
        v1::RegisterModelRequest stored;
        if (stored.ParseFromString(*bytes)) stored_owner = recordOwner(stored);
      }
    }
  }
  std::shared_ptr<Entry> fresh = makeEntry(std::move(built), pinned, std::move(stored_owner));
  std::unique_lock lock(mutex_);
  if (auto it = entries_.find(fresh->id); it != entries_.end()) {
    touch(*it->second);
    return {it->second, false};
  }
  evictLocked();
  auto it = entries_.emplace(fresh->id, fresh).first;
  // new to this server: neither cached nor stored before (a model evicted from the cache is not new)
  return {it->second, record ? stored_now : true};
}

namespace {

void requireOwner(const std::string& id, const std::string& owner, const std::string* caller) {
  if (caller && !owner.empty() && owner != *caller) {
    fail(ErrorCode::PermissionDenied,
         "model " + id + " was registered by another token; only its owner can delete it");
  }
}

}  // namespace

void Registry::remove(const std::string& id, const std::string* caller) {
  {
    std::unique_lock lock(mutex_);
    if (auto it = entries_.find(id); it != entries_.end()) {
      if (it->second->pinned) {
        fail(ErrorCode::FailedPrecondition,
             "model " + id + " is a built-in (pinned) model and cannot be deleted");
      }
      requireOwner(id, it->second->owner, caller);
      store_.remove(id);  // first: a store that cannot remove it leaves the model registered
      entries_.erase(it);
      return;
    }
  }
  if (caller) {
    if (auto bytes = store_.get(id)) {
      v1::RegisterModelRequest stored;
      if (stored.ParseFromString(*bytes)) requireOwner(id, recordOwner(stored), caller);
    }
  }
  if (!store_.remove(id)) fail(ErrorCode::NotFound, "model_id " + id + " is not registered");
}

std::vector<v1::ModelInfo> Registry::list() {
  std::vector<v1::ModelInfo> out;
  std::vector<std::string> cached;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, e] : entries_) {
      out.push_back(e->info);
      cached.push_back(id);
    }
  }
  std::sort(cached.begin(), cached.end());
  for (const std::string& id : store_.ids()) {
    if (std::binary_search(cached.begin(), cached.end(), id)) continue;
    if (auto e = fromStore(id, false)) out.push_back(e->info);
  }
  std::sort(out.begin(), out.end(),
            [](const v1::ModelInfo& a, const v1::ModelInfo& b) { return a.model_id() < b.model_id(); });
  return out;
}

void Registry::list(const std::string& after, const std::function<bool(const v1::ModelInfo&)>& take) {
  std::vector<std::shared_ptr<const Entry>> cached;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, e] : entries_) {
      if (id > after) cached.push_back(e);
    }
  }
  std::sort(cached.begin(), cached.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  const std::vector<std::string> stored = store_.ids();  // sorted
  auto s = std::upper_bound(stored.begin(), stored.end(), after);
  auto c = cached.begin();
  // merge the two sorted lists, each id once
  while (c != cached.end() || s != stored.end()) {
    if (s == stored.end() || (c != cached.end() && (*c)->id <= *s)) {
      if (s != stored.end() && (*c)->id == *s) ++s;
      if (!take((*c)->info)) return;
      ++c;
    } else {
      const std::shared_ptr<const Entry> e = fromStore(*s, false);
      ++s;
      if (e && !take(e->info)) return;
    }
  }
}

std::size_t Registry::loadStore() {
  std::size_t loaded = 0;
  for (const std::string& id : store_.ids()) {
    if (size() >= max_models_) break;
    {
      std::shared_lock lock(mutex_);
      if (entries_.count(id)) continue;
    }
    if (fromStore(id, true)) ++loaded;
  }
  return loaded;
}

std::size_t Registry::size() const {
  std::shared_lock lock(mutex_);
  return entries_.size();
}

std::size_t Registry::pinnedCount() const {
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [id, e] : entries_) n += e->pinned ? 1 : 0;
  return n;
}

}  // namespace denoc::server
