// The model store's record of a registration (docs/service.md, "Store"): the RegisterModelRequest as
// received, its unknown fields dropped, with the registering principal in field 1000, which
// RegisterModelRequest does not define (readers of the plain request skip it). The owner reads back from the
// record alone: a deletion checks it without building the model.
#pragma once

#include <optional>
#include <string>

#include "denoc/v1/dynamics.pb.h"

namespace denoc::server {

/// The bytes of a registration's record; an empty owner (no access control) adds nothing. A client cannot
/// smuggle an owner in: the request's unknown fields are dropped first. Throws RequestError(Internal) when
/// the request does not serialize.
std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner);

/// A record read back: the request and its owner ("" when none).
struct StoreRecord {
  v1::RegisterModelRequest request;
  std::string owner;
};

/// The record in `bytes`, or nothing when they do not parse as one. No model is built.
std::optional<StoreRecord> readRecord(const std::string& bytes);

}  // namespace denoc::server
