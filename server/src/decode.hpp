// Requests off the wire: a call's bytes parsed into its message by denocd itself (the RPCs are registered
// raw), so that a message gRPC could not parse is answered INVALID_ARGUMENT naming the field (a string
// that is not UTF-8, as proto3 requires) instead of gRPC's INTERNAL without a message; answers serialized
// for the transport.
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace denoc::server {

/// Parses `bytes` into `message`, or throws RequestError(InvalidArgument) saying why it does not parse:
/// "urdf.text is not valid UTF-8 (byte 17 of the string): string fields must be UTF-8", or that the bytes
/// are not a `denoc.v1.X` message at all.
void parseRequest(const grpc::ByteBuffer& bytes, google::protobuf::Message& message);

/// Why `wire` (which does not parse as `type`) is refused: the first string field, at any depth, that is not
/// UTF-8 (its path and byte offset), else that the wire format itself is broken.
std::string explainParseFailure(const google::protobuf::Descriptor& type, const std::string& wire);

/// The message serialized into `out` (replacing what it held).
void serializeAnswer(const google::protobuf::Message& message, grpc::ByteBuffer& out);

}  // namespace denoc::server
