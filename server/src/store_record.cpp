#include "store_record.hpp"

#include <google/protobuf/unknown_field_set.h>

#include "errors.hpp"

namespace denoc::server {

namespace {
constexpr int kOwnerField = 1000;        // not defined by RegisterModelRequest
constexpr int kInfoField = 1001;         // the description (ModelInfo)
constexpr int kInfoVersionField = 1002;  // its version
}  // namespace

std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner,
                        const v1::ModelInfo* info) {
  v1::RegisterModelRequest record = request;
  record.DiscardUnknownFields();  // a client cannot smuggle an owner or a description in
  auto* unknown = record.GetReflection()->MutableUnknownFields(&record);
  if (!owner.empty()) unknown->AddLengthDelimited(kOwnerField, owner);
  if (info) {
    std::string bytes;
    if (!info->SerializeToString(&bytes))
      fail(ErrorCode::Internal, "cannot serialize the model's description");
    unknown->AddLengthDelimited(kInfoField, bytes);
    unknown->AddVarint(kInfoVersionField, kDescriptionVersion);
  }
  std::string bytes;
  if (!record.SerializeToString(&bytes))
    fail(ErrorCode::Internal, "cannot serialize the model for the store");
  return bytes;
}

std::optional<StoreRecord> readRecord(const std::string& bytes) {
  StoreRecord record;
  if (!record.request.ParseFromString(bytes)) return std::nullopt;
  const auto& unknown = record.request.GetReflection()->GetUnknownFields(record.request);
  bool owner = false, info = false, version = false;
  std::string info_bytes;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() == kOwnerField && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        !owner) {
      record.owner = f.length_delimited();
      owner = true;
    } else if (f.number() == kInfoField &&
               f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED && !info) {
      info_bytes = f.length_delimited();
      info = true;
    } else if (f.number() == kInfoVersionField && f.type() == google::protobuf::UnknownField::TYPE_VARINT) {
      version = f.varint() == kDescriptionVersion;
    }
  }
  if (info && version) record.info = std::move(info_bytes);
  return record;
}

std::optional<v1::ModelInfo> recordInfo(const StoreRecord& record, const std::string& id,
                                        std::string* problem) {
  if (record.info.empty()) return std::nullopt;
  v1::ModelInfo info;
  if (!info.ParseFromString(record.info)) {
    if (problem) *problem = "its description does not parse as a ModelInfo";
    return std::nullopt;
  }
  if (info.model_id() != id) {
    if (problem) *problem = "its description names model " + info.model_id().substr(0, 80) + ", not " + id;
    return std::nullopt;
  }
  info.set_pinned(false);
  return info;
}

}  // namespace denoc::server
