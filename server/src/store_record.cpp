#include "store_record.hpp"

#include <google/protobuf/unknown_field_set.h>

#include "errors.hpp"

namespace denoc::server {

namespace {
constexpr int kOwnerField = 1000;  // not defined by RegisterModelRequest
}  // namespace

std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner) {
  v1::RegisterModelRequest record = request;
  record.DiscardUnknownFields();  // a client cannot smuggle an owner in
  if (!owner.empty())
    record.GetReflection()->MutableUnknownFields(&record)->AddLengthDelimited(kOwnerField, owner);
  std::string bytes;
  if (!record.SerializeToString(&bytes))
    fail(ErrorCode::Internal, "cannot serialize the model for the store");
  return bytes;
}

std::optional<StoreRecord> readRecord(const std::string& bytes) {
  StoreRecord record;
  if (!record.request.ParseFromString(bytes)) return std::nullopt;
  const auto& unknown = record.request.GetReflection()->GetUnknownFields(record.request);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() == kOwnerField && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      record.owner = f.length_delimited();
      break;
    }
  }
  return record;
}

}  // namespace denoc::server
