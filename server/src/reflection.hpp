// Server reflection (grpc.reflection.v1alpha.ServerReflection) on gRPC's callback API, so that tools such as
// grpcurl can list and describe the services without the .proto files. It needs no token (it shows only the
// schema), so it is bounded on its own: its streams hold no thread while they wait, are counted apart from
// the Dynamics streams (kReflectionStreams in all, kReflectionStreamsPerPeer per caller: a token's principal,
// else the peer's address), and end after --idle-stream-timeout-ms without a message, like a Stream.
#pragma once

#include <string>
#include <vector>

#include "admission.hpp"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "reactors.hpp"

namespace denoc::server {

/// Reflection streams open at once, in all and per caller.
inline constexpr std::uint64_t kReflectionStreams = 32;
inline constexpr std::uint64_t kReflectionStreamsPerPeer = 4;

/// One reflection stream's answers: files by name or by symbol (with the dependencies the stream has not been
/// sent yet), the services, a message's extension numbers; names over 1024 characters are refused in the
/// answer.
class ReflectionSession final : public BidiSession {
 public:
  explicit ReflectionSession(std::vector<std::string> services) : services_(std::move(services)) {}
  void answer(const grpc::ByteBuffer& in, grpc::ByteBuffer& out, const StopCondition& stop) override;
  std::uint64_t messages() const override { return messages_; }
  std::uint64_t computed() const override { return 0; }

 private:
  /// The answer to one parsed request.
  void answer(const grpc::reflection::v1alpha::ServerReflectionRequest& req,
              grpc::reflection::v1alpha::ServerReflectionResponse& resp);
  std::vector<std::string> services_;
  std::vector<std::string> sent_;  // files sent on this stream
  std::uint64_t messages_ = 0;
  grpc::reflection::v1alpha::ServerReflectionRequest request_;
  grpc::reflection::v1alpha::ServerReflectionResponse response_;
};

using RawReflection = grpc::reflection::v1alpha::ServerReflection::WithRawCallbackMethod_ServerReflectionInfo<
    grpc::reflection::v1alpha::ServerReflection::Service>;

class ReflectionService final : public RawReflection {
 public:
  /// services: the full names listed (the server's services).
  ReflectionService(ServiceContext& s, std::vector<std::string> services);
  using RawReflection::ServerReflectionInfo;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ServerReflectionInfo(
      grpc::CallbackServerContext* ctx) override;

 private:
  ServiceContext& s_;
  std::vector<std::string> services_;
  Admission admission_;
};

}  // namespace denoc::server
