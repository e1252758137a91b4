#include "lib/rpc/parsing_handler.h"

#include <stdexcept>
#include <string>

#include "fmt/format.h"

namespace topologyd::rpc {

int MethodIndex(std::string_view service, std::string_view method,
                const google::protobuf::Descriptor* request,
                const google::protobuf::Descriptor* response) {
  const google::protobuf::ServiceDescriptor* s =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(std::string(service));
  const google::protobuf::MethodDescriptor* m =
      s == nullptr ? nullptr : s->FindMethodByName(std::string(method));
  if (m == nullptr || m->input_type() != request || m->output_type() != response) {
    throw std::logic_error(
        fmt::format("{}/{} is not a method of these request and reply types", service, method));
  }
  return m->index();
}

}  // namespace topologyd::rpc
