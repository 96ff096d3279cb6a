// The model registry: a thread-safe in-memory cache of built models, keyed by content-addressed id, in front
// of the model store, which is the truth (docs/service.md, "Replicas"). Lookups of cached models take a
// shared lock only (readers never block each other); an unpinned cached model is served only while its
// store record is the file it was loaded from or written as (an lstat per lookup: same inode, size and
// modification time), so a deletion or a replacement by another replica sharing the store is seen by the
// next lookup. Every operation that changes what is stored or cached for an id (registration, deletion,
// loading from the store) holds that id's lock while it changes the store and the cache, so they are
// ordered. Models and store records are built and judged outside every lock; what was judged is checked to
// be still in place (its file stamp) once the lock is held. The cache is bounded: when full, the least
// recently used model that is not pinned is evicted (it stays in the store and is loaded again on the next
// miss). Building a model from a store record (a cache miss, a registration that finds another record in
// place, the listing of a record without a description) polls the caller's stop condition; a deletion reads
// the record's owner, and a listing the record's description, without building the model.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "denoc/stop.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "registration.hpp"
#include "store.hpp"

namespace denoc::server {

/// One cached model: immutable apart from its LRU stamp.
struct Entry {
  std::string id;
  std::shared_ptr<const Model> model;
  v1::ModelInfo info;
  bool pinned = false;
  FileStamp stamp;  // of the store record it was loaded from or written as (none: a built-in model)
  mutable std::atomic<std::uint64_t> last_used{0};
};

class Registry {
 public:
  /// max_per_principal: the models one principal may own in the store (--max-models-per-principal; 0: no
  /// bound).
  Registry(const ModelStore& store, std::size_t max_models, Limits limits, std::size_t max_per_principal = 0);

  /// The model for id: from the cache while its store record is still the one it came from (pinned models
  /// always), else loaded from the store (and cached). Null when the store has no good record of it (a
  /// cached model whose record is gone is dropped). Building a stored model polls `stop` (may be null); a
  /// stop throws Stopped and judges nothing.
  std::shared_ptr<const Entry> find(const std::string& id, const StopCondition* stop = nullptr);

  /// Caches a built model (pinned: never evicted, cannot be deleted). With a store record (storeRecord()),
  /// first makes sure that a good record of the id is on disk: the entry already there is kept when it holds
  /// this model (its owner stays the owner), written when there is none, and replaced when it is bad (not a
  /// regular file, empty, too large, garbage, another model's record; the replacement is logged). Returns the
  /// entry and `created`: whether the model was registered neither in this server's memory (built-in,
  /// preloaded or cached) nor with a good record in the store, and this call stored it (true for exactly one
  /// of several registrations racing, also on replicas sharing the store); without a record, whether the
  /// model was new to the cache. Throws RequestError: Unavailable when the store cannot be written,
  /// ResourceExhausted when the cache is full of pinned models, or when this call would write a record of
  /// `owner` (a caller's registration; null: no quota, as for preloaded models) while the owner's records
  /// number max_per_principal already: counted on a listing of the store taken now, under a lock of this
  /// server's, so that its own registrations never pass the quota together.
  /// Judging another record in place builds its model, polling `stop` (may be null).
  std::pair<std::shared_ptr<const Entry>, bool> add(BuiltModel built, const std::string* record, bool pinned,
                                                    const StopCondition* stop = nullptr,
                                                    const std::string* owner = nullptr);

  /// Before a registration builds its model: RESOURCE_EXHAUSTED (naming --max-models-per-principal and the
  /// count) when the store's records of owner ("" for callers without a token) number max_per_principal
  /// already, unless a record in the store holds this very request (registering it again adds no record).
  /// Counted on the store's recent listing (ModelStore::recentIds), each record's owner read once per state
  /// of the record (its stamp); pinned models are not counted. Nothing with max_per_principal 0.
  void checkQuota(const std::string& owner, const v1::RegisterModelRequest& request);

  /// Removes id from the store (leaving a tombstone, ModelStore::bury) and the cache. The owner is read
  /// from the store record (readRecord), without building the model, never from the cache.
  /// FAILED_PRECONDITION if pinned; else NOT_FOUND unless the store has a record of it (a store entry that is
  /// not a regular file or does not parse as a record is not a model, and is left for a registration to
  /// replace; a cached copy of a model whose record is gone is dropped). With a caller (access control on),
  /// PERMISSION_DENIED unless the caller owns the model (a model stored without an owner, registered while
  /// access control was off, may be deleted by any caller).
  void remove(const std::string& id, const std::string* caller = nullptr);

  /// The message of NOT_FOUND for id: "... was deleted ..." while its tombstone lasts (clients do not
  /// register such a model again behind their caller's back), else "... is not registered".
  std::string notFoundMessage(const std::string& id) const;

  /// The models with ids after `after` (every model when empty) in id order, handed to `take` one at a time
  /// until it returns false: the pinned models and every good record of the store (ModelStore::recentIds,
  /// at most kListingAge old, each id checked with lstat). A record's description is read from it (cached
  /// with its stamp: a listing reads each record once); a record without one (written before descriptions
  /// were kept) is built once for it, polling `stop` (may be null), and its description cached. `stop` is
  /// also polled between models: a listing stops at the caller's deadline.
  void list(const std::string& after, const std::function<bool(const v1::ModelInfo&)>& take,
            const StopCondition* stop = nullptr);

  /// At start: removes temporary files left by crashes (ModelStore::removeStaleTemporaries), logs entries
  /// that are not store files, and loads every stored model into the cache (up to the bound); an entry that
  /// is not a regular file, does not parse, does not build or whose content does not match its id is skipped
  /// with a logged error. Returns the count loaded.
  std::size_t loadStore();

  std::size_t size() const;
  std::size_t pinnedCount() const;

 private:
  /// One mutex per id in use (made on first use, dropped with its last user): operations on one id are
  /// ordered, operations on other ids do not wait.
  class IdLocks {
    struct Slot {
      std::mutex mutex;
      std::size_t users = 0;
    };

   public:
    class Guard {
     public:
      Guard(IdLocks& locks, const std::string& id);
      ~Guard();
      Guard(const Guard&) = delete;
      Guard& operator=(const Guard&) = delete;

     private:
      IdLocks& locks_;
      std::string id_;
      Slot* slot_;
    };

   private:
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<Slot>> slots_;
  };

  /// A store record judged against its id: the model it holds, or what is wrong with it.
  struct Judged {
    std::optional<BuiltModel> built;
    std::string problem;  // empty: a good record
  };
  Judged judge(const std::string& id, const std::string& bytes, const StopCondition* stop) const;
  StoreEntry readStore(const std::string& id) const;
  std::shared_ptr<const Entry> fromStore(const std::string& id, bool cache, const StopCondition* stop);
  std::shared_ptr<Entry> makeEntry(BuiltModel built, bool pinned) const;
  /// Drops the cached entry of an id unless another replaced it meanwhile.
  void drop(const std::shared_ptr<const Entry>& stale);
  /// The description of the store record of id, or null when there is none that is good.
  std::shared_ptr<const v1::ModelInfo> describeStored(const std::string& id, const StopCondition* stop);
  void rememberInfo(const std::string& id, const FileStamp& stamp, std::shared_ptr<const v1::ModelInfo> info);
  /// Caches fresh unless id is cached already (then replaces the cached entry when replace, unless pinned).
  /// Returns the cached entry and whether it was new to the cache. The caller holds id's lock.
  std::pair<std::shared_ptr<const Entry>, bool> publish(std::shared_ptr<Entry> fresh, bool replace);
  void evictLocked();
  void touch(const Entry& e) const;
  /// The store records of owner (pinned models aside) on a listing at most max_age old; with a digest
  /// (sha256Hex of the request's storeRecord without owner), *holds tells whether any record holds it.
  std::size_t owned(const std::string& owner, std::chrono::milliseconds max_age,
                    const std::string& digest = {}, bool* holds = nullptr);
  [[noreturn]] void overQuota(const std::string& owner, std::size_t count) const;

  const ModelStore& store_;
  std::size_t max_models_;
  Limits limits_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries_;
  mutable std::atomic<std::uint64_t> clock_{0};
  IdLocks locks_;
  // descriptions of store records by id, with the stamp of the record read (bounded: cleared when full)
  struct KnownInfo {
    FileStamp stamp;
    std::shared_ptr<const v1::ModelInfo> info;
  };
  mutable std::mutex infos_mutex_;
  std::unordered_map<std::string, KnownInfo> infos_;
  std::size_t info_bytes_ = 0;
  // the quota: owners of store records by id, with the stamp of the record read (bounded: cleared when full)
  std::size_t max_per_principal_;
  struct KnownOwner {
    FileStamp stamp;
    bool record = false;  // a record that parses (else: not counted)
    std::string owner;
    std::string digest;  // sha256Hex of its request's storeRecord without owner
  };
  std::mutex owners_mutex_;
  std::unordered_map<std::string, std::shared_ptr<const KnownOwner>> owners_;
  std::mutex quota_mutex_;  // held from a registration's count to its write of a new record
};

/// Whether two stamps are of the same file, unchanged: device, inode, size and modification time (not the
/// change time, which a link or unlink of the temporary name also moves).
bool sameFile(const FileStamp& a, const FileStamp& b);

/// The description of a model for the wire.
v1::ModelInfo describe(const BuiltModel& built, bool pinned);

}  // namespace denoc::server
