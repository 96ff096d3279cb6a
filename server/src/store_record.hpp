// The model store's record of a registration (docs/service.md, "Store"): the RegisterModelRequest as
// received, its unknown fields dropped, with fields that RegisterModelRequest does not define (readers of the
// plain request skip them):
//   1000  the registering principal (bytes; absent without access control)
//   1001  the model's description, a serialized ModelInfo (not pinned), as ListModels answers it
//   1002  the version of that description (varint, kDescriptionVersion)
// The owner and the description read back from the record alone: a deletion checks the owner and a listing
// describes the model without building it. A record written before the description was kept (or by a
// server describing models differently: another version) has none, and its model is built to describe it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "denoc/v1/dynamics.pb.h"

namespace denoc::server {

/// The version of describe()'s output kept in records: bump it when ModelInfo gains what describe() fills,
/// so that a newer server describes older records again instead of listing what they lack.
inline constexpr std::uint64_t kDescriptionVersion = 1;

/// The bytes of a registration's record; an empty owner (no access control) adds nothing, nor does a null
/// description. A client cannot smuggle an owner or a description in: the request's unknown fields are
/// dropped first. Throws RequestError(Internal) when the request does not serialize.
std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner,
                        const v1::ModelInfo* info = nullptr);

/// A record read back: the request, its owner ("" when none) and its description's bytes (empty when the
/// record has none of this server's version; not parsed: see recordInfo).
struct StoreRecord {
  v1::RegisterModelRequest request;
  std::string owner;
  std::string info;
};

/// The record in `bytes`, or nothing when they do not parse as one. No model is built.
std::optional<StoreRecord> readRecord(const std::string& bytes);

/// The description a record holds for id: nothing when it has none, when it does not parse as a ModelInfo
/// (why in *problem, when given) or names another model. No model is built.
std::optional<v1::ModelInfo> recordInfo(const StoreRecord& record, const std::string& id,
                                        std::string* problem = nullptr);

}  // namespace denoc::server
