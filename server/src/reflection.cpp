#include "reflection.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <algorithm>

#include "decode.hpp"
#include "errors.hpp"
#include "log.hpp"

namespace denoc::server {

namespace rv = grpc::reflection::v1alpha;
namespace pb = google::protobuf;

namespace {

/// Names asked for are looked up in the descriptor pool, never echoed unbounded.
constexpr std::size_t kMaxAskedName = 1024;

void error(rv::ServerReflectionResponse& resp, grpc::StatusCode code, const std::string& message) {
  auto* e = resp.mutable_error_response();
  e->set_error_code(static_cast<int>(code));
  e->set_error_message(message);
}

}  // namespace

void ReflectionSession::answer(const rv::ServerReflectionRequest& req, rv::ServerReflectionResponse& resp) {
  resp.Clear();
  resp.set_valid_host(req.host().size() <= kMaxAskedName ? req.host() : std::string());
  *resp.mutable_original_request() = req;
  const pb::DescriptorPool& pool = *pb::DescriptorPool::generated_pool();
  // the file and its dependencies (depth first) that this stream has not been sent yet
  const auto sendFile = [&](const pb::FileDescriptor* file) {
    auto* files = resp.mutable_file_descriptor_response();
    std::vector<const pb::FileDescriptor*> todo{file};
    while (!todo.empty()) {
      const pb::FileDescriptor* f = todo.back();
      todo.pop_back();
      if (std::find(sent_.begin(), sent_.end(), f->name()) != sent_.end()) continue;
      sent_.push_back(f->name());
      pb::FileDescriptorProto proto;
      f->CopyTo(&proto);
      files->add_file_descriptor_proto(proto.SerializeAsString());
      for (int i = 0; i < f->dependency_count(); ++i) todo.push_back(f->dependency(i));
    }
  };
  const auto asked = [&](const std::string& name, const char* field) {
    if (name.size() > kMaxAskedName) {
      error(resp, grpc::StatusCode::INVALID_ARGUMENT,
            std::string(field) + " has " + std::to_string(name.size()) + " characters, expected at most " +
                std::to_string(kMaxAskedName));
      return false;
    }
    return true;
  };
  switch (req.message_request_case()) {
    case rv::ServerReflectionRequest::kListServices:
      for (const std::string& s : services_)
        resp.mutable_list_services_response()->add_service()->set_name(s);
      break;
    case rv::ServerReflectionRequest::kFileByFilename:
      if (!asked(req.file_by_filename(), "file_by_filename")) break;
      if (const pb::FileDescriptor* f = pool.FindFileByName(req.file_by_filename())) {
        sendFile(f);
      } else {
        error(resp, grpc::StatusCode::NOT_FOUND, "no file " + quoted(req.file_by_filename()));
      }
      break;
    case rv::ServerReflectionRequest::kFileContainingSymbol:
      if (!asked(req.file_containing_symbol(), "file_containing_symbol")) break;
      if (const pb::FileDescriptor* f = pool.FindFileContainingSymbol(req.file_containing_symbol())) {
        sendFile(f);
      } else {
        error(resp, grpc::StatusCode::NOT_FOUND, "no symbol " + quoted(req.file_containing_symbol()));
      }
      break;
    case rv::ServerReflectionRequest::kFileContainingExtension: {
      const auto& x = req.file_containing_extension();
      if (!asked(x.containing_type(), "file_containing_extension.containing_type")) break;
      const pb::Descriptor* type = pool.FindMessageTypeByName(x.containing_type());
      const pb::FieldDescriptor* ext =
          type ? pool.FindExtensionByNumber(type, x.extension_number()) : nullptr;
      if (ext) {
        sendFile(ext->file());
      } else {
        error(resp, grpc::StatusCode::NOT_FOUND,
              "no extension " + std::to_string(x.extension_number()) + " of " + quoted(x.containing_type()));
      }
      break;
    }
    case rv::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      if (!asked(req.all_extension_numbers_of_type(), "all_extension_numbers_of_type")) break;
      const pb::Descriptor* type = pool.FindMessageTypeByName(req.all_extension_numbers_of_type());
      if (!type) {
        error(resp, grpc::StatusCode::NOT_FOUND,
              "no message type " + quoted(req.all_extension_numbers_of_type()));
        break;
      }
      std::vector<const pb::FieldDescriptor*> extensions;
      pool.FindAllExtensions(type, &extensions);
      auto* numbers = resp.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const pb::FieldDescriptor* e : extensions) numbers->add_extension_number(e->number());
      break;
    }
    default:
      error(resp, grpc::StatusCode::UNIMPLEMENTED, "the request asks for nothing this server answers");
  }
}

void ReflectionSession::answer(const grpc::ByteBuffer& in, grpc::ByteBuffer& out, const StopCondition&) {
  parseRequest(in, request_);
  answer(request_, response_);
  serializeAnswer(response_, out);
  ++messages_;
}

ReflectionService::ReflectionService(ServiceContext& s, std::vector<std::string> services)
    : s_(s),
      services_(std::move(services)),
      admission_(AdmissionBounds{0, 0, kReflectionStreams, kReflectionStreamsPerPeer,
                                 "reflection streams open", "server reflection's bound",
                                 "server reflection's bound per caller"}) {}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ReflectionService::ServerReflectionInfo(
    grpc::CallbackServerContext* ctx) {
  return new StreamReactor(s_, ctx, Rpc::ServerReflectionInfo, std::make_unique<ReflectionSession>(services_),
                           &admission_, /*token_optional=*/true);
}

}  // namespace denoc::server
