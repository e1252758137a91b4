// UdsListener out of file descriptors: with RLIMIT_NOFILE lowered and every descriptor taken,
// the accept thread must not spin on the connection it cannot take, must close it so the
// client is not left waiting, must warn once per episode, and must serve again once
// descriptors are free.
#include "lib/rpc/uds_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"
#include "tests/support/thread_cpu.h"

namespace topologyd::rpc {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// User + system CPU time, in clock ticks, from an open stat file: read without opening
// anything, so it works while the process has no descriptor to spare.
long CpuTicks(int stat_fd) {
  char buf[1024];
  ssize_t n = ::pread(stat_fd, buf, sizeof(buf), 0);
  return n <= 0 ? -1 : testing::CpuTicksOfStat(std::string_view(buf, static_cast<size_t>(n)));
}

void ConnectTo(int fd, const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
}

// True when the server closed `fd`'s connection within `timeout`.
bool ClosedByServer(int fd, milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  char c = 0;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

// What the listener reported, from its thread.
struct Seen {
  std::vector<int> accepted;
  std::vector<std::string> warnings;
  std::vector<std::string> infos;
};

TEST(UdsListenerTest, OutOfDescriptorsItRefusesWithoutSpinningAndRecovers) {
  const topologyd::testing::TempDir dir("tpd-listen");
  const std::string path = dir.File("s.sock");
  auto listener = UdsListener::Create({.path = path, .mode = 0600});
  ASSERT_TRUE(listener.ok()) << listener.status();
  std::mutex mu;
  Seen seen;
  auto record = [&](auto member) {
    return [&, member](auto value) {
      std::lock_guard<std::mutex> lock(mu);
      (seen.*member).push_back(value);
    };
  };
  (*listener)->Start({.on_connection = record(&Seen::accepted),
                      .open_connections = [] { return size_t{7}; },
                      .warn = record(&Seen::warnings),
                      .info = record(&Seen::infos)});
  auto snapshot = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return seen;
  };
  std::optional<std::filesystem::path> stat_path;
  for (int i = 0; i < 100 && !stat_path; ++i) {  // the thread names itself once it runs
    stat_path = testing::ThreadStatPath("self", "tpd-accept");
    if (!stat_path) std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(stat_path.has_value());
  const int stat_fd = ::open(stat_path->c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(stat_fd, 0);

  // The listener's warning is formatted, and this thread's CPU time parsed, while no
  // descriptor is free. UndefinedBehaviorSanitizer checks the object type of a virtual call
  // once per type and caches the answer, but its first check opens a pipe to probe the memory,
  // which then fails and reads as a bad object: do both once now, so that a sanitizer build
  // has checked those types already.
  (void)fmt::format("{}: {}; {} open{}", path, std::strerror(EMFILE), size_t{7}, "");
  ASSERT_GE(CpuTicks(stat_fd), 0);

  // Client sockets first, then every remaining descriptor under a lowered limit.
  int clients[2] = {::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
                    ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit lowered = saved;
  lowered.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  std::vector<int> filler;
  for (int fd; (fd = ::dup(0)) >= 0;) filler.push_back(fd);
  ASSERT_EQ(errno, EMFILE);

  // Clients while out of descriptors are refused (closed), not left waiting in the backlog.
  for (int fd : clients) {
    ConnectTo(fd, path);
    EXPECT_TRUE(ClosedByServer(fd, milliseconds(2000)));
  }
  // A connection the accept thread could not take keeps the socket readable; retrying at
  // once would keep a CPU busy. Its CPU time over a second must stay far below that second.
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  const long before = CpuTicks(stat_fd);
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(milliseconds(1000));
  const long used = CpuTicks(stat_fd) - before;
  const auto wall =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_LT(used * 1000 / ticks_per_second, wall.count() / 10)
      << "the accept thread used " << used << " clock ticks of CPU in " << wall.count() << " ms";

  // Descriptors free again: a new client is served, and the episode ends with one line.
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  int served = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ConnectTo(served, path);
  for (int i = 0; i < 200 && snapshot().accepted.empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  (*listener)->Stop();
  Seen after = snapshot();
  EXPECT_EQ(after.accepted.size(), 1u) << "the client after the episode was not served";
  ASSERT_EQ(after.warnings.size(), 1u) << ::testing::PrintToString(after.warnings);
  EXPECT_THAT(after.warnings[0], HasSubstr("Too many open files"));
  EXPECT_THAT(after.warnings[0], HasSubstr("7 connections open"));
  EXPECT_THAT(after.infos,
              ElementsAre(HasSubstr("accepting connections on " + path + " again; 2 refused")));

  for (int fd : after.accepted) ::close(fd);
  for (int fd : {clients[0], clients[1], served, stat_fd}) ::close(fd);
}

}  // namespace
}  // namespace topologyd::rpc
