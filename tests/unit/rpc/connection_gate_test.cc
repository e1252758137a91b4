// ConnectionGate's grace period for refused connections, on a clock the test moves: a refused
// connection stays open until its grace period has passed, and is shut down then.
#include "lib/rpc/connection_gate.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "tests/support/manual_clock.h"

namespace topologyd::rpc {
namespace {

using std::chrono::milliseconds;

// True when the other end of `fd` has been shut down (reading gives end of file at once).
bool SeesEndOfFile(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) return false;
  char c = 0;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

TEST(ConnectionGateTest, RefusedConnectionIsShutDownWhenItsGracePeriodEnds) {
  testing::ManualClock clock;
  PeerRegistry peers;
  std::vector<int> served;
  std::vector<std::string> warnings;
  ConnectionGate gate({
      .peers = &peers,
      .serve = [&](int fd) { served.push_back(fd); },
      .cap = [] { return uint32_t{0}; },  // every connection is over the cap
      .warn = [&](const std::string& w) { warnings.push_back(w); },
      .info = [](const std::string&) {},
      .refused_grace = milliseconds(1000),
      .clock = &clock,
  });
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  gate.Accept(fds[0]);
  ASSERT_EQ(served.size(), 1u);  // handed to gRPC all the same, so the client hears why
  EXPECT_EQ(warnings.size(), 1u);

  gate.ShutDownRefused();
  EXPECT_FALSE(SeesEndOfFile(fds[1]));
  clock.Advance(milliseconds(999));
  gate.ShutDownRefused();
  EXPECT_FALSE(SeesEndOfFile(fds[1]));
  clock.Advance(milliseconds(1));
  gate.ShutDownRefused();
  EXPECT_TRUE(SeesEndOfFile(fds[1]));

  ::close(served[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace topologyd::rpc
