#include "registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "errors.hpp"
#include "log.hpp"
#include "model_id.hpp"
#include "store_record.hpp"

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
  // the tree: the moving root first, then the joints in q's order
  info.set_dof(static_cast<std::uint32_t>(m.nv));
  info.set_nq(static_cast<std::uint32_t>(m.nq));
  info.set_nv(static_cast<std::uint32_t>(m.nv));
  info.set_nu(static_cast<std::uint32_t>(m.n));
  info.set_depth(static_cast<std::uint32_t>(m.depth));
  const bool moving = m.root != RootJoint::Fixed;
  info.set_root(m.root == RootJoint::Floating ? v1::ROOT_JOINT_FLOATING
                : m.root == RootJoint::Planar ? v1::ROOT_JOINT_PLANAR
                                              : v1::ROOT_JOINT_FIXED);
  const int off = moving ? 1 : 0;
  std::vector<std::uint32_t> depth(static_cast<std::size_t>(m.n + off), 1);
  if (moving) {
    v1::Joint* root = info.add_joints();
    root->set_name("root_joint");
    root->set_type(m.root == RootJoint::Floating ? v1::JOINT_TYPE_FLOATING : v1::JOINT_TYPE_PLANAR);
    root->set_parent(-1);
    root->set_nq(static_cast<std::uint32_t>(m.nqr));
    root->set_nv(static_cast<std::uint32_t>(m.nr));
    root->set_link(m.spec.root_link);
    root->set_depth(1);
  }
  for (int i = 0; i < m.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const JointSpec& j = m.spec.joints[ui];
    const int p = m.parent[ui];
    const int parent = p >= 0 ? p + off : (moving ? 0 : -1);
    depth[ui + off] = parent >= 0 ? depth[static_cast<std::size_t>(parent)] + 1 : 1;
    v1::Joint* joint = info.add_joints();
    joint->set_name(j.name);
    joint->set_type(j.type == JointType::Revolute ? v1::JOINT_TYPE_REVOLUTE : v1::JOINT_TYPE_PRISMATIC);
    joint->set_parent(parent);
    joint->set_q_index(static_cast<std::uint32_t>(m.nqr + i));
    joint->set_v_index(static_cast<std::uint32_t>(m.nr + i));
    joint->set_nq(1);
    joint->set_nv(1);
    joint->set_link(j.link);
    joint->set_depth(depth[ui + off]);
  }
  // the frames in the core's order: the links, the tip (on the last link), the root link
  for (int i = 0; i < m.n; ++i) {
    v1::Frame* f = info.add_frames();
    f->set_name(m.spec.joints[static_cast<std::size_t>(i)].link);
    f->set_joint(i + off);
  }
  v1::Frame* tip = info.add_frames();
  tip->set_name("tip");
  tip->set_joint(m.n > 0 ? m.n - 1 + off : (moving ? 0 : -1));
  v1::Frame* root_link = info.add_frames();
  root_link->set_name(m.spec.root_link);
  root_link->set_joint(moving ? 0 : -1);
  for (const FixedFrameSpec& f : m.spec.fixed_frames) {
    v1::Frame* frame = info.add_frames();
    frame->set_name(f.name);
    frame->set_joint(f.joint >= 0 ? f.joint + off : (moving ? 0 : -1));
    frame->set_fixed_to(f.joint >= 0 ? m.spec.joints[static_cast<std::size_t>(f.joint)].link
                                     : m.spec.root_link);
  }
  return info;
}

Registry::Registry(const ModelStore& store, std::size_t max_models, Limits limits,
                   std::size_t max_per_principal)
    : store_(store), max_models_(max_models), limits_(limits), max_per_principal_(max_per_principal) {}

namespace {

// looks at a store entry again when it changed between judging it and locking its id (another thread or
// replica wrote or removed it); a few times, then the call gives up with UNAVAILABLE
constexpr int kAttempts = 16;

// descriptions of store records kept for listings: at most this many, of at most this many bytes in all
constexpr std::size_t kMaxInfos = 65536;
constexpr std::size_t kMaxInfoBytes = std::size_t{256} << 20;

[[noreturn]] void keepsChanging(const std::string& id) {
  fail(ErrorCode::Unavailable, "model store: the entry of " + id +
                                   " kept changing (other servers writing or deleting it); try again");
}

void requireOwner(const std::string& id, const std::string& owner, const std::string* caller) {
  if (caller && !owner.empty() && owner != *caller) {
    fail(ErrorCode::PermissionDenied,
         "model " + id + " was registered by another token; only its owner can delete it");
  }
}

}  // namespace

bool sameFile(const FileStamp& a, const FileStamp& b) {
  return a.exists && b.exists && a.dev == b.dev && a.ino == b.ino && a.size == b.size &&
         a.mtime_ns == b.mtime_ns;
}

Registry::IdLocks::Guard::Guard(IdLocks& locks, const std::string& id) : locks_(locks), id_(id) {
  {
    std::lock_guard table(locks_.mutex_);
    std::unique_ptr<Slot>& slot = locks_.slots_[id_];
    if (!slot) slot = std::make_unique<Slot>();
    ++slot->users;
    slot_ = slot.get();
  }
  slot_->mutex.lock();
}

Registry::IdLocks::Guard::~Guard() {
  slot_->mutex.unlock();
  std::lock_guard table(locks_.mutex_);
  if (--slot_->users == 0) locks_.slots_.erase(id_);
}

void Registry::touch(const Entry& e) const {
  e.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
}

std::shared_ptr<Entry> Registry::makeEntry(BuiltModel built, bool pinned) const {
  auto e = std::make_shared<Entry>();
  e->info = describe(built, pinned);
  e->id = built.id;
  e->model = std::move(built.model);
  e->pinned = pinned;
  touch(*e);
  return e;
}

StoreEntry Registry::readStore(const std::string& id) const {
  return store_.read(id, ModelStore::recordBound(limits_));
}

Registry::Judged Registry::judge(const std::string& id, const std::string& bytes,
                                 const StopCondition* stop) const {
  Judged j;
  std::optional<StoreRecord> record = readRecord(bytes);
  if (!record) {
    j.problem = "does not parse as a RegisterModelRequest";
    return j;
  }
  try {
    j.built = buildFromRequest(record->request, limits_, stop);
  } catch (const Stopped&) {
    throw;  // the caller's stop: no verdict on the record
  } catch (const std::exception& e) {
    j.problem = std::string("does not build: ") + e.what();
    return j;
  }
  if (j.built->id != id) {
    j.problem = "holds model " + j.built->id + ", not " + id;
    j.built.reset();
    return j;
  }
  return j;
}

std::shared_ptr<const Entry> Registry::find(const std::string& id, const StopCondition* stop) {
  std::shared_ptr<const Entry> cached;
  {
    std::shared_lock lock(mutex_);
    if (auto it = entries_.find(id); it != entries_.end()) cached = it->second;
  }
  if (cached) {
    // served while its record is the file it came from: another replica may have deleted or replaced it
    if (cached->pinned || sameFile(store_.stamp(id), cached->stamp)) {
      touch(*cached);
      return cached;
    }
    drop(cached);
  }
  return fromStore(id, true, stop);
}

void Registry::drop(const std::shared_ptr<const Entry>& stale) {
  std::unique_lock lock(mutex_);
  if (auto it = entries_.find(stale->id); it != entries_.end() && it->second == stale) entries_.erase(it);
}

std::string Registry::notFoundMessage(const std::string& id) const {
  if (store_.buried(id)) return "model_id " + id + " was deleted (DeleteModel); register it again to use it";
  return "model_id " + id + " is not registered";
}

std::shared_ptr<const Entry> Registry::fromStore(const std::string& id, bool cache,
                                                 const StopCondition* stop) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // read and build outside every lock
    const StoreEntry found = readStore(id);
    if (found.state == StoreEntry::State::Absent) return nullptr;
    if (found.state == StoreEntry::State::Bad) {
      store_.reportBad(id, found.stamp, found.reason);
      return nullptr;
    }
    Judged judged = judge(id, found.bytes, stop);
    if (!judged.problem.empty()) {
      store_.reportBad(id, found.stamp, judged.problem);
      return nullptr;
    }
    std::shared_ptr<Entry> fresh = makeEntry(std::move(*judged.built), false);
    fresh->stamp = found.stamp;
    if (!cache) return fresh;
    // cached only if the file read is still the one in place (not deleted or replaced meanwhile)
    const IdLocks::Guard guard(locks_, id);
    if (store_.stamp(id) != found.stamp) continue;
    try {
      return publish(std::move(fresh), false).first;
    } catch (const RequestError& e) {
      spdlog::error("model store: {} not cached: {}", id, e.what());
      return nullptr;
    }
  }
  return nullptr;
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

std::pair<std::shared_ptr<const Entry>, bool> Registry::publish(std::shared_ptr<Entry> fresh, bool replace) {
  std::unique_lock lock(mutex_);
  if (auto it = entries_.find(fresh->id); it != entries_.end()) {
    // an entry of another record than the one in place (deleted and registered again meanwhile) is stale
    if ((replace || !sameFile(it->second->stamp, fresh->stamp)) && !it->second->pinned) {
      it->second = std::move(fresh);
    } else {
      touch(*it->second);
    }
    return {it->second, false};
  }
  evictLocked();
  auto it = entries_.emplace(fresh->id, std::move(fresh)).first;
  return {it->second, true};
}

std::pair<std::shared_ptr<const Entry>, bool> Registry::add(BuiltModel built, const std::string* record,
                                                            bool pinned, const StopCondition* stop,
                                                            const std::string* owner) {
  std::shared_ptr<Entry> fresh = makeEntry(std::move(built), pinned);
  const std::string id = fresh->id;
  if (!record) {
    const IdLocks::Guard guard(locks_, id);
    return publish(std::move(fresh), false);
  }
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // judge the entry in place outside every lock (judging another record builds its model)
    const StoreEntry found = readStore(id);
    bool good = false;
    std::string problem = found.reason;
    if (found.state == StoreEntry::State::Regular) {
      if (found.bytes == *record) {
        good = true;  // this very registration, stored before
      } else {
        Judged judged = judge(id, found.bytes, stop);
        good = judged.problem.empty();
        problem = std::move(judged.problem);
      }
    }
    // then, with the id locked, act on it if it is still what was judged
    const IdLocks::Guard guard(locks_, id);
    if (store_.stamp(id) != found.stamp) continue;
    std::unique_lock quota(quota_mutex_, std::defer_lock);
    if (owner && max_per_principal_ != 0 && (found.state == StoreEntry::State::Absent || !good)) {
      // a new record of owner: counted on the directory as it is now, held until written
      quota.lock();
      if (const std::size_t n = owned(*owner, std::chrono::milliseconds{0}); n >= max_per_principal_)
        overQuota(*owner, n);
    }
    bool stored = false;  // this call wrote the id's good record
    if (found.state == StoreEntry::State::Absent) {
      if (!store_.create(id, *record)) continue;  // another server's file came first
      stored = true;
    } else if (!good) {
      if (!store_.replace(id, *record, found.stamp)) continue;
      spdlog::warn("model store: {} was bad ({}); replaced by the record of a registration",
                   escaped(store_.path(id), 512), escaped(problem, 512));
      stored = true;
    }
    // the entry is the record in place (the owner stays in the record: the first registration's)
    fresh->stamp = stored ? store_.stamp(id) : found.stamp;
    // created: the model was registered neither in memory (built-in, preloaded, cached) nor in the store
    const auto [entry, new_to_cache] = publish(std::move(fresh), stored);
    return {entry, stored && new_to_cache};
  }
  keepsChanging(id);
}

void Registry::remove(const std::string& id, const std::string* caller) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // the record's owner, read without building its model
    const StoreEntry found = readStore(id);
    std::optional<StoreRecord> record;
    if (found.state == StoreEntry::State::Regular) {
      record = readRecord(found.bytes);
      if (!record) store_.reportBad(id, found.stamp, "does not parse as a RegisterModelRequest");
    } else if (found.state == StoreEntry::State::Bad) {
      store_.reportBad(id, found.stamp, found.reason);
    }
    const IdLocks::Guard guard(locks_, id);
    if (store_.stamp(id) != found.stamp) continue;
    std::shared_ptr<const Entry> cached;
    {
      std::shared_lock lock(mutex_);
      if (auto it = entries_.find(id); it != entries_.end()) cached = it->second;
    }
    if (cached && cached->pinned) {
      fail(ErrorCode::FailedPrecondition,
           "model " + id + " is a built-in (pinned) model and cannot be deleted");
    }
    if (!record) {
      // the store is the truth: a cached copy without a record was deleted or replaced elsewhere
      if (cached) drop(cached);
      fail(ErrorCode::NotFound, notFoundMessage(id));
    }
    requireOwner(id, record->owner, caller);  // the owner on disk, never a cached one
    store_.bury(id);    // first: a crash between the two leaves the model registered (a record wins)
    store_.remove(id);  // then: a store that cannot remove it leaves the model registered
    if (cached) drop(cached);
    return;
  }
  keepsChanging(id);
}

void Registry::rememberInfo(const std::string& id, const FileStamp& stamp,
                            std::shared_ptr<const v1::ModelInfo> info) {
  const std::size_t bytes = info->SpaceUsedLong();
  std::lock_guard lock(infos_mutex_);
  if (auto it = infos_.find(id); it != infos_.end()) {
    info_bytes_ -= it->second.info->SpaceUsedLong();
    infos_.erase(it);
  }
  if (infos_.size() >= kMaxInfos || info_bytes_ + bytes > kMaxInfoBytes) {
    infos_.clear();
    info_bytes_ = 0;
  }
  infos_.emplace(id, KnownInfo{stamp, std::move(info)});
  info_bytes_ += bytes;
}

std::shared_ptr<const v1::ModelInfo> Registry::describeStored(const std::string& id,
                                                              const StopCondition* stop) {
  const FileStamp now = store_.stamp(id);
  if (!now.exists) return nullptr;
  {
    std::lock_guard lock(infos_mutex_);
    if (auto it = infos_.find(id); it != infos_.end() && sameFile(it->second.stamp, now))
      return it->second.info;
  }
  {
    std::shared_lock lock(mutex_);
    if (auto it = entries_.find(id); it != entries_.end() && sameFile(it->second->stamp, now)) {
      auto info = std::make_shared<v1::ModelInfo>(it->second->info);
      info->set_pinned(false);
      return info;
    }
  }
  const StoreEntry found = readStore(id);
  if (found.state == StoreEntry::State::Absent) return nullptr;
  if (found.state == StoreEntry::State::Bad) {
    store_.reportBad(id, found.stamp, found.reason);
    return nullptr;
  }
  const std::optional<StoreRecord> record = readRecord(found.bytes);
  if (!record) {
    store_.reportBad(id, found.stamp, "does not parse as a RegisterModelRequest");
    return nullptr;
  }
  std::string problem;
  std::optional<v1::ModelInfo> kept = recordInfo(*record, id, &problem);
  if (!problem.empty())
    spdlog::warn("model store: {}: {}; its model is built to describe it", escaped(store_.path(id), 512),
                 escaped(problem, 512));
  std::shared_ptr<const v1::ModelInfo> info;
  if (kept) {
    info = std::make_shared<const v1::ModelInfo>(std::move(*kept));
  } else {
    // a record without a description (an older server's): built once, under the caller's stop
    Judged judged = judge(id, found.bytes, stop);
    if (!judged.problem.empty()) {
      store_.reportBad(id, found.stamp, judged.problem);
      return nullptr;
    }
    info = std::make_shared<const v1::ModelInfo>(describe(*judged.built, false));
  }
  rememberInfo(id, found.stamp, info);
  return info;
}

void Registry::list(const std::string& after, const std::function<bool(const v1::ModelInfo&)>& take,
                    const StopCondition* stop) {
  std::vector<std::shared_ptr<const Entry>> pinned;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, e] : entries_) {
      if (e->pinned && id > after) pinned.push_back(e);
    }
  }
  std::sort(pinned.begin(), pinned.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  const std::shared_ptr<const std::vector<std::string>> stored = store_.recentIds();  // sorted
  auto s = std::upper_bound(stored->begin(), stored->end(), after);
  auto p = pinned.begin();
  std::uint64_t done = 0;
  // merge the two sorted lists, each id once
  while (p != pinned.end() || s != stored->end()) {
    if (stop && stop->stopRequested())
      stop->raise("ListModels", done, pinned.size() + static_cast<std::uint64_t>(stored->size()), "models");
    ++done;
    if (s == stored->end() || (p != pinned.end() && (*p)->id <= *s)) {
      if (s != stored->end() && (*p)->id == *s) ++s;
      if (!take((*p)->info)) return;
      ++p;
    } else {
      const std::shared_ptr<const v1::ModelInfo> info = describeStored(*s, stop);
      ++s;
      if (info && !take(*info)) return;
    }
  }
}

std::size_t Registry::owned(const std::string& owner, std::chrono::milliseconds max_age,
                            const std::string& digest, bool* holds) {
  std::vector<std::string> pinned;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, e] : entries_)
      if (e->pinned) pinned.push_back(id);
  }
  std::sort(pinned.begin(), pinned.end());
  std::size_t count = 0;
  for (const std::string& id : *store_.recentIds(max_age)) {
    const FileStamp now = store_.stamp(id);
    if (!now.exists) continue;
    std::shared_ptr<const KnownOwner> known;
    {
      std::lock_guard lock(owners_mutex_);
      if (auto it = owners_.find(id); it != owners_.end() && sameFile(it->second->stamp, now))
        known = it->second;
    }
    if (!known) {
      // the record's owner, read without building its model (a bad entry is no one's)
      const StoreEntry found = readStore(id);
      auto fresh = std::make_shared<KnownOwner>();
      fresh->stamp = found.stamp;
      std::optional<StoreRecord> record;
      if (found.state == StoreEntry::State::Regular) record = readRecord(found.bytes);
      if (record) {
        fresh->record = true;
        fresh->owner = record->owner;
        fresh->digest = sha256Hex(storeRecord(record->request, ""));
      }
      known = fresh;
      std::lock_guard lock(owners_mutex_);
      if (owners_.size() >= kMaxInfos) owners_.clear();
      owners_[id] = std::move(fresh);
    }
    if (!known->record) continue;
    if (holds && known->digest == digest) *holds = true;
    if (known->owner == owner && !std::binary_search(pinned.begin(), pinned.end(), id)) ++count;
  }
  return count;
}

void Registry::overQuota(const std::string& owner, std::size_t count) const {
  fail(ErrorCode::ResourceExhausted,
       (owner.empty() ? std::string("callers without a token own ") : "principal " + owner + " owns ") +
           std::to_string(count) +
           " models in the store, max_models_per_principal = " + std::to_string(max_per_principal_) +
           " (--max-models-per-principal, DENOC_MAX_MODELS_PER_PRINCIPAL); delete one (DeleteModel) to "
           "register another");
}

void Registry::checkQuota(const std::string& owner, const v1::RegisterModelRequest& request) {
  if (max_per_principal_ == 0) return;
  const std::size_t count = owned(owner, ModelStore::kListingAge);
  if (count < max_per_principal_) return;
  // at the quota: a request stored already (its model registered again) adds no record
  bool holds = false;
  owned(owner, ModelStore::kListingAge, sha256Hex(storeRecord(request, "")), &holds);
  if (!holds) overQuota(owner, count);
}

std::size_t Registry::loadStore() {
  store_.removeStaleTemporaries(ModelStore::kStaleTemporaryAge);
  store_.removeOldTombstones(ModelStore::kTombstoneAge);
  const StoreListing listing = store_.list();
  for (const std::string& name : listing.others) {
    spdlog::info("model store: {} is not a store file (<id>.pb); ignored",
                 escaped(store_.dir() + "/" + name, 512));
  }
  std::size_t loaded = 0;
  for (const std::string& id : listing.ids) {
    if (size() >= max_models_) break;
    {
      std::shared_lock lock(mutex_);
      if (entries_.count(id)) continue;
    }
    if (fromStore(id, true, nullptr)) ++loaded;
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
