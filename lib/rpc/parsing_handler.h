// A unary callback method handler that parses its request itself.
//
// gRPC's generated callback handler parses the request before the service sees it and, when
// the bytes do not parse (a string that is not valid UTF-8, truncated or garbage bytes),
// drops the parser's status and answers UNIMPLEMENTED with no message, as if the method did
// not exist. This handler takes the request as bytes instead, so a request that does not
// parse is answered with the status `unparsable(context)` returns, and one that parses goes
// to `handler` exactly as with the generated handler.
#pragma once

#include <functional>
#include <string_view>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/server_callback_handlers.h>
#include <grpcpp/support/message_allocator.h>

namespace topologyd::rpc {

// The index gRPC's generated code gives `method` of `service` (its fully qualified name):
// the method's position in the service's descriptor. Throws std::logic_error when the
// service or method is unknown or its request and reply types are not the ones given.
int MethodIndex(std::string_view service, std::string_view method,
                const google::protobuf::Descriptor* request,
                const google::protobuf::Descriptor* response);

template <class Request, class Response>
using UnaryMethod = std::function<grpc::ServerUnaryReactor*(grpc::CallbackServerContext*,
                                                            const Request*, Response*)>;

namespace parsing_handler_internal {

// Per call: the request's bytes, the parsed request and the reply, released with the call.
template <class Request, class Response>
class Messages final : public grpc::MessageHolder<grpc::ByteBuffer, Response> {
 public:
  Messages() {
    this->set_request(&bytes_);
    this->set_response(&response_);
  }
  void Release() override { delete this; }
  Request* parsed() { return &parsed_; }

 private:
  grpc::ByteBuffer bytes_;
  Request parsed_;
  Response response_;
};

template <class Request, class Response>
class Allocator final : public grpc::MessageAllocator<grpc::ByteBuffer, Response> {
 public:
  grpc::MessageHolder<grpc::ByteBuffer, Response>* AllocateMessages() override {
    return new Messages<Request, Response>();
  }
};

}  // namespace parsing_handler_internal

// The handler for grpc::Service::MarkMethodCallback, which takes ownership of it.
template <class Request, class Response>
grpc::internal::MethodHandler* ParsingUnaryHandler(
    std::function<grpc::Status(grpc::CallbackServerContext*)> unparsable,
    UnaryMethod<Request, Response> handler) {
  using Messages = parsing_handler_internal::Messages<Request, Response>;
  // Stateless, and shared by every server of this process.
  static parsing_handler_internal::Allocator<Request, Response> allocator;
  auto* method = new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, Response>(
      [unparsable = std::move(unparsable), handler = std::move(handler)](
          grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes,
          Response* response) -> grpc::ServerUnaryReactor* {
        auto* messages = static_cast<Messages*>(context->GetRpcAllocatorState());
        grpc::ByteBuffer copy(*bytes);  // Deserialize consumes its buffer; this shares the slices
        if (!grpc::SerializationTraits<Request>::Deserialize(&copy, messages->parsed()).ok()) {
          grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
          reactor->Finish(unparsable(context));
          return reactor;
        }
        return handler(context, messages->parsed(), response);
      });
  method->SetMessageAllocator(&allocator);
  return method;
}

}  // namespace topologyd::rpc
