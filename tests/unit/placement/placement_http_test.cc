// The libcurl transport's cancel flag: a call to a server that never answers ends, aborted,
// once the flag turns true, instead of waiting out its timeout; a call after that is refused.
#include "lib/placement/placement_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace topologyd::placement {
namespace {

using ::testing::HasSubstr;

// A loopback socket that listens and never accepts: the kernel completes the connection, the
// request is sent, and no answer ever comes.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::listen(fd_, 4) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~SilentServer() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(CurlPlacementTransport, RefusesAUrlThatIsNotHttp) {
  EXPECT_FALSE(CurlPlacementTransport::Create({.url = "ftp://placement"}).ok());
  EXPECT_FALSE(CurlPlacementTransport::Create({.url = "127.0.0.1:8778"}).ok());
}

TEST(CurlPlacementTransport, ACancelledCallEndsAbortedNotTimedOut) {
  SilentServer server;
  ASSERT_GT(server.port(), 0);
  std::atomic<bool> cancel{false};
  absl::StatusOr<CurlPlacementTransport> transport =
      CurlPlacementTransport::Create({.url = "http://127.0.0.1:" + std::to_string(server.port()),
                                      .timeout = std::chrono::minutes(5),
                                      .cancel = &cancel});
  ASSERT_TRUE(transport.ok()) << transport.status();
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.store(true);
  });
  absl::StatusOr<HttpResponse> r = transport->Send({"GET", "/", std::nullopt}, "");
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("aborted by an application callback"));

  // Once cancelled, no call starts.
  r = transport->Send({"GET", "/", std::nullopt}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cancelled"));
}

}  // namespace
}  // namespace topologyd::placement
