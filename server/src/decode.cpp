#include "decode.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <map>
#include <optional>

#include "errors.hpp"

namespace denoc::server {

namespace {

namespace pb = google::protobuf;

/// The offset of the first byte that breaks UTF-8 (overlong forms, surrogates and code points above
/// U+10FFFF included), or none.
std::optional<std::size_t> firstBadUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::nullopt;
}

/// The first string that is not UTF-8 in a message's fields (at any depth), as "path (byte k of the
/// string)", or empty.
std::string findBadString(const pb::Descriptor& type, const pb::UnknownFieldSet& fields,
                          const std::string& prefix, int depth) {
  if (depth > 32) return {};
  std::map<int, int> seen;  // occurrences of each field number so far (the index of a repeated element)
  for (int i = 0; i < fields.field_count(); ++i) {
    const pb::UnknownField& f = fields.field(i);
    const int occurrence = seen[f.number()]++;
    if (f.type() != pb::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    const pb::FieldDescriptor* field = type.FindFieldByNumber(f.number());
    if (!field) continue;
    std::string path = prefix + field->name();
    if (field->is_repeated()) path.append("[").append(std::to_string(occurrence)).append("]");
    if (field->type() == pb::FieldDescriptor::TYPE_STRING) {
      if (const auto bad = firstBadUtf8(f.length_delimited()))
        return path + " (byte " + std::to_string(*bad) + " of the string)";
    } else if (field->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      pb::UnknownFieldSet inner;
      if (inner.ParseFromString(f.length_delimited())) {
        std::string found = findBadString(*field->message_type(), inner, path + ".", depth + 1);
        if (!found.empty()) return found;
      }
    }
  }
  return {};
}

}  // namespace

std::string explainParseFailure(const pb::Descriptor& type, const std::string& wire) {
  pb::UnknownFieldSet fields;
  if (fields.ParseFromString(wire)) {
    const std::string bad = findBadString(type, fields, "", 0);
    if (!bad.empty()) return bad + " is not valid UTF-8: string fields must hold UTF-8 text";
  }
  return "the request is not a valid " + type.full_name() + " message (" + std::to_string(wire.size()) +
         " bytes that do not parse as protocol buffers)";
}

void parseRequest(const grpc::ByteBuffer& bytes, pb::Message& message) {
  // the reader only reads; gRPC's own deserialization takes the buffer the same way
  auto& buffer = const_cast<grpc::ByteBuffer&>(bytes);
  bool parsed = false;
  {
    grpc::ProtoBufferReader reader(&buffer);
    parsed = reader.status().ok() && message.ParseFromZeroCopyStream(&reader);
  }
  if (parsed) return;
  grpc::Slice flat;
  std::string wire;
  if (buffer.TrySingleSlice(&flat).ok() || buffer.DumpToSingleSlice(&flat).ok())
    wire.assign(reinterpret_cast<const char*>(flat.begin()), flat.size());
  fail(ErrorCode::InvalidArgument, explainParseFailure(*message.GetDescriptor(), wire));
}

void serializeAnswer(const pb::Message& message, grpc::ByteBuffer& out) {
  bool own = false;
  out.Clear();  // the writer wants an empty buffer (a stream reuses its own)
  const grpc::Status s = grpc::GenericSerialize<grpc::ProtoBufferWriter, pb::Message>(message, &out, &own);
  if (!s.ok()) fail(ErrorCode::Internal, "cannot serialize the answer: " + s.error_message());
}

}  // namespace denoc::server
