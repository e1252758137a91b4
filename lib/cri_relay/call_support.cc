#include "lib/cri_relay/call_support.h"

#include <vector>

namespace topologyd::cri_relay {
namespace {

std::string ToString(grpc::string_ref s) { return std::string(s.data(), s.size()); }

}  // namespace

bool IsReservedMetadataKey(std::string_view key) {
  return key.starts_with(':') || key.starts_with("grpc-") || key == "content-type" ||
         key == "user-agent" || key == "te";
}

void CopyCallerMetadata(const grpc::ServerContextBase& caller, grpc::ClientContext& runtime) {
  for (const auto& [key, value] : caller.client_metadata()) {
    if (IsReservedMetadataKey(std::string_view(key.data(), key.size()))) continue;
    runtime.AddMetadata(ToString(key), ToString(value));
  }
}

void CopyRuntimeInitialMetadata(const grpc::ClientContext& runtime,
                                grpc::ServerContextBase& caller) {
  for (const auto& [key, value] : runtime.GetServerInitialMetadata()) {
    if (IsReservedMetadataKey(std::string_view(key.data(), key.size()))) continue;
    caller.AddInitialMetadata(ToString(key), ToString(value));
  }
}

void CopyRuntimeTrailingMetadata(const grpc::ClientContext& runtime,
                                 grpc::ServerContextBase& caller) {
  for (const auto& [key, value] : runtime.GetServerTrailingMetadata()) {
    if (IsReservedMetadataKey(std::string_view(key.data(), key.size()))) continue;
    caller.AddTrailingMetadata(ToString(key), ToString(value));
  }
}

std::string ToBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  bytes.reserve(buffer.Length());
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

grpc::ByteBuffer ToByteBuffer(std::string_view bytes) {
  grpc::Slice slice(bytes.data(), bytes.size());
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace topologyd::cri_relay
