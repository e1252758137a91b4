// The relay passes the listed methods on as unary calls, so a streaming method listed there
// would lose its stream: the list is checked against the CRI's own declarations.
#include "shim/cri_unary_methods.h"

#include <string>

#include "gtest/gtest.h"
#include <google/protobuf/descriptor.h>

#include "cri/v1/runtime.pb.h"

namespace topologyd::shim {
namespace {

TEST(CriUnaryMethodsTest, HoldsEveryMethodTheCompiledCriDeclaresUnary) {
  const std::set<std::string, std::less<>> unary = CriUnaryMethods();
  int checked = 0;
  const google::protobuf::FileDescriptor* cri = runtime::v1::VersionRequest::descriptor()->file();
  ASSERT_EQ(cri->service_count(), 2);
  for (int s = 0; s < cri->service_count(); ++s) {
    const google::protobuf::ServiceDescriptor* service = cri->service(s);
    for (int i = 0; i < service->method_count(); ++i) {
      const google::protobuf::MethodDescriptor* method = service->method(i);
      const std::string path = "/" + service->full_name() + "/" + method->name();
      ASSERT_FALSE(method->client_streaming() || method->server_streaming()) << path;
      EXPECT_TRUE(unary.contains(path)) << path;
      ++checked;
    }
  }
  EXPECT_GE(checked, 16);
}

TEST(CriUnaryMethodsTest, LeavesTheStreamingMethodsOut) {
  const std::set<std::string, std::less<>> unary = CriUnaryMethods();
  for (const char* path :
       {"/runtime.v1.RuntimeService/GetContainerEvents",
        "/runtime.v1.RuntimeService/StreamContainers",
        "/runtime.v1.RuntimeService/StreamPodSandboxes", "/runtime.v1.ImageService/StreamImages"}) {
    EXPECT_FALSE(unary.contains(path)) << path;
  }
  for (const std::string& path : unary) {
    EXPECT_TRUE(path.starts_with("/runtime.v1.RuntimeService/") ||
                path.starts_with("/runtime.v1.ImageService/"))
        << path;
    EXPECT_EQ(path.find("Stream"), std::string::npos) << path;
  }
}

}  // namespace
}  // namespace topologyd::shim
