// What the relay does with its listening path: a stale socket is replaced, anything else in
// the way is an error that names the path, and the socket gets the configured mode.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/cri_relay/call_support.h"
#include "lib/cri_relay/relay.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/cri_relay/fake_runtime.h"
#include "tests/unit/cri_relay/test_client.h"

namespace topologyd::cri_relay::testing {
namespace {

using topologyd::testing::TempDir;

using ::testing::HasSubstr;

class ListenPathTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<Relay>> StartOn(const std::string& path, uint32_t mode = 0660) {
    return Relay::Start({.listen_path = path,
                         .upstream_target = "unix:" + dir_.File("runtime.sock"),
                         .socket_mode = mode},
                        nullptr);
  }

  TempDir dir_;
};

// A socket file with nobody accepting on it, as a crashed relay leaves behind.
void MakeStaleSocket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
}

TEST_F(ListenPathTest, StaleSocketIsReplacedAndServes) {
  FakeRuntime runtime(dir_.File("runtime.sock"));
  const std::string path = dir_.File("relay.sock");
  MakeStaleSocket(path);
  auto relay = StartOn(path);
  ASSERT_TRUE(relay.ok()) << relay.status();
  EXPECT_TRUE(Call(ChannelTo(path), kEcho, {"x"}).status.ok());
}

TEST_F(ListenPathTest, FileThatIsNotASocketIsLeftAloneAndRefused) {
  const std::string path = dir_.File("relay.sock");
  std::ofstream(path) << "precious";
  auto relay = StartOn(path);
  ASSERT_FALSE(relay.ok());
  EXPECT_EQ(relay.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(relay.status().message(), HasSubstr(path));
  EXPECT_THAT(relay.status().message(), HasSubstr("not a socket"));
  std::string kept;
  std::ifstream(path) >> kept;
  EXPECT_EQ(kept, "precious");
}

TEST_F(ListenPathTest, SocketAnotherRelayServesIsRefused) {
  const std::string path = dir_.File("relay.sock");
  auto first = StartOn(path);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = StartOn(path);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(path));
  EXPECT_THAT(second.status().message(), HasSubstr("another process is serving"));
}

TEST_F(ListenPathTest, MissingDirectoryIsNamed) {
  const std::string path = dir_.File("no-such-dir/relay.sock");
  auto relay = StartOn(path);
  ASSERT_FALSE(relay.ok());
  EXPECT_THAT(relay.status().message(), HasSubstr(path));
  EXPECT_THAT(relay.status().message(), HasSubstr("does not exist"));
}

TEST_F(ListenPathTest, PathTooLongForASocketAddressIsInvalid) {
  auto relay = StartOn(dir_.File(std::string(120, 'x')));
  ASSERT_FALSE(relay.ok());
  EXPECT_EQ(relay.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ListenPathTest, UnwritableDirectoryGivesTheBindError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root binds in any directory";
  const std::string dir = dir_.File("locked");
  ASSERT_EQ(::mkdir(dir.c_str(), 0500), 0);
  auto relay = StartOn(dir + "/relay.sock");
  ASSERT_FALSE(relay.ok());
  EXPECT_THAT(relay.status().message(), HasSubstr(dir + "/relay.sock"));
  EXPECT_THAT(relay.status().message(), HasSubstr("Permission denied"));
}

TEST_F(ListenPathTest, SocketGetsTheConfiguredMode) {
  const std::string path = dir_.File("relay.sock");
  auto relay = StartOn(path, 0600);
  ASSERT_TRUE(relay.ok()) << relay.status();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(ReservedMetadataKeyTest, GrpcsOwnKeysAreReservedAndUserKeysAreNot) {
  for (const char* key : {":authority", ":path", "grpc-timeout", "grpc-status-details-bin",
                          "content-type", "user-agent", "te"}) {
    EXPECT_TRUE(IsReservedMetadataKey(key)) << key;
  }
  for (const char* key : {"x-request-id", "authorization", "x-trace-bin", "grpcx"}) {
    EXPECT_FALSE(IsReservedMetadataKey(key)) << key;
  }
}

}  // namespace
}  // namespace topologyd::cri_relay::testing
