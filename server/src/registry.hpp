// The model registry: a thread-safe in-memory cache of built models, keyed by content-addressed id, in front
// of the model store. Lookups take a shared lock only (readers never block each other); insertions and
// deletions take the exclusive lock briefly (models are built and persisted outside it). The cache is
// bounded: when full, the least recently used model that is not pinned is evicted (it stays in the store and
// is loaded again on the next miss).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "model_source.hpp"
#include "store.hpp"

namespace denoc::server {

/// One cached model: immutable apart from its LRU stamp.
struct Entry {
  std::string id;
  std::shared_ptr<const Model> model;
  v1::ModelInfo info;
  bool pinned = false;
  std::string owner;  // the principal that registered it (access control on); empty: anyone may delete it
  mutable std::atomic<std::uint64_t> last_used{0};
};

class Registry {
 public:
  Registry(const ModelStore& store, std::size_t max_models, Limits limits);

  /// The model for id: from the cache, else loaded from the store (and cached). Null when neither has it.
  std::shared_ptr<const Entry> find(const std::string& id);

  /// Caches a built model (pinned: never evicted, cannot be deleted). With a store record (storeRecord()),
  /// persists it first (unless already stored: the first registration's owner stays the owner). Returns the
  /// entry and whether it is new to this server's cache and store. Throws RequestError(ResourceExhausted)
  /// when the cache is full of pinned models.
  std::pair<std::shared_ptr<const Entry>, bool> add(BuiltModel built, const std::string* record, bool pinned,
                                                    const std::string& owner = {});

  /// Removes id from the cache and the store. NOT_FOUND if neither has it, FAILED_PRECONDITION if pinned.
  /// With a caller (access control on), PERMISSION_DENIED unless the caller owns the model (a model stored
  /// without an owner, registered while access control was off, may be deleted by any caller).
  void remove(const std::string& id, const std::string* caller = nullptr);

  /// Every model in the cache and in the store (store-only ones are built for their description but not
  /// cached), sorted by id.
  std::vector<v1::ModelInfo> list();

  /// The models with ids after `after` (every model when empty), cached or stored, in id order, handed to
  /// `take` one at a time until it returns false; store-only models are built for their description but not
  /// cached, and only as far as the listing goes (a page).
  void list(const std::string& after, const std::function<bool(const v1::ModelInfo&)>& take);

  /// Loads every stored model into the cache (up to the bound); a file that does not parse, does not build
  /// or whose content does not match its id is skipped with a logged error. Returns the count loaded.
  std::size_t loadStore();

  std::size_t size() const;
  std::size_t pinnedCount() const;

 private:
  std::shared_ptr<const Entry> fromStore(const std::string& id, bool cache);
  std::shared_ptr<Entry> makeEntry(BuiltModel built, bool pinned, std::string owner) const;
  void evictLocked();
  void touch(const Entry& e) const;

  const ModelStore& store_;
  std::size_t max_models_;
  Limits limits_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries_;
  mutable std::atomic<std::uint64_t> clock_{0};
};

/// The description of a model for the wire.
v1::ModelInfo describe(const BuiltModel& built, bool pinned);

}  // namespace denoc::server
