// HandlePool against a loopback HTTP/1.1 server that keeps connections open and counts them:
// a client's sequential requests share one connection, concurrent ones get their own, a handle
// given back carries no option of its last request, and a connection the server closed is
// replaced without an error.
#include "lib/curl_easy/handle_pool.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

namespace topologyd::curl_easy {
namespace {

// Answers every request head with "200 ok" on the connection it came on, keeping it open.
class KeepAliveServer {
 public:
  KeepAliveServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
      return;
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~KeepAliveServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (const Connection& c : connections_) close(c.fd);
    close(listen_fd_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  int accepted() const {
    absl::MutexLock lock(&mu_);
    return accepted_;
  }
  std::vector<std::string> heads() const {
    absl::MutexLock lock(&mu_);
    return heads_;
  }
  // Closes every open connection from the server's side; returns once they are closed.
  void CloseConnections() {
    close_requested_ = true;
    while (close_requested_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

 private:
  struct Connection {
    int fd;
    std::string pending;
  };

  void Serve() {
    while (!stop_) {
      if (close_requested_) {
        for (const Connection& c : connections_) close(c.fd);
        connections_.clear();
        close_requested_ = false;
      }
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const Connection& c : connections_) fds.push_back({c.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          connections_.push_back({fd, ""});
          absl::MutexLock lock(&mu_);
          ++accepted_;
        }
      }
      std::vector<Connection> open;
      for (size_t i = 1; i < fds.size(); ++i) {
        Connection c = connections_[i - 1];
        if (fds[i].revents != 0 && !Read(c)) {
          close(c.fd);
          continue;
        }
        open.push_back(c);
      }
      // Connections accepted in this round were not polled yet.
      for (size_t i = fds.size() - 1; i < connections_.size(); ++i) open.push_back(connections_[i]);
      connections_ = std::move(open);
    }
  }

  // Reads what arrived and answers each complete head; false once the peer has closed.
  bool Read(Connection& c) {
    char buffer[4096];
    const ssize_t n = read(c.fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    c.pending.append(buffer, static_cast<size_t>(n));
    for (size_t end; (end = c.pending.find("\r\n\r\n")) != std::string::npos;) {
      {
        absl::MutexLock lock(&mu_);
        heads_.push_back(c.pending.substr(0, end));
      }
      c.pending.erase(0, end + 4);
      constexpr char kAnswer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
      if (write(c.fd, kAnswer, sizeof(kAnswer) - 1) != sizeof(kAnswer) - 1) return false;
    }
    return true;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> close_requested_{false};
  std::vector<Connection> connections_;  // the server thread's only
  mutable absl::Mutex mu_;
  int accepted_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> heads_ ABSL_GUARDED_BY(mu_);
};

// A request on `lease`'s handle with the options every client of ours sets, as `method` when
// one is given (else GET); the body, or the error.
std::string Get(const PooledHandle& lease, const std::string& url, const std::string& method = "") {
  Headers headers(curl_slist_append(nullptr, "Accept: text/plain"));
  char error[CURL_ERROR_SIZE] = {};
  ResponseBody body(1024);
  SetCommonOptions(lease.get(), url, std::chrono::seconds(10), error, headers.get(), &body);
  if (!method.empty()) curl_easy_setopt(lease.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  const CURLcode rc = curl_easy_perform(lease.get());
  if (rc != CURLE_OK) return std::string("error: ") + curl_easy_strerror(rc) + ": " + error;
  return body.text;
}

std::string GetOnce(HandlePool& pool, const std::string& url, const std::string& method = "") {
  absl::StatusOr<PooledHandle> lease = pool.Acquire();
  if (!lease.ok()) return std::string(lease.status().message());
  return Get(*lease, url, method);
}

TEST(HandlePoolTest, SequentialRequestsShareOneConnection) {
  KeepAliveServer server;
  std::shared_ptr<HandlePool> pool = HandlePool::Create();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(GetOnce(*pool, server.url()), "ok");
  EXPECT_EQ(server.heads().size(), 3U);
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(pool->idle(), 1U);
}

TEST(HandlePoolTest, RequestsAtOnceGetHandlesAndConnectionsOfTheirOwn) {
  KeepAliveServer server;
  std::shared_ptr<HandlePool> pool = HandlePool::Create();
  {
    absl::StatusOr<PooledHandle> first = pool->Acquire();
    absl::StatusOr<PooledHandle> second = pool->Acquire();
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_NE(first->get(), second->get());
    EXPECT_EQ(Get(*first, server.url()), "ok");
    EXPECT_EQ(Get(*second, server.url()), "ok");
    EXPECT_EQ(pool->idle(), 0U);
  }
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(pool->idle(), 2U);
  // Both connections stay open for the next requests.
  EXPECT_EQ(GetOnce(*pool, server.url()), "ok");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(HandlePoolTest, AHandleGivenBackCarriesNoOptionOfItsLastRequest) {
  KeepAliveServer server;
  std::shared_ptr<HandlePool> pool = HandlePool::Create();
  // A custom method is an option no request of ours sets when it does not need it.
  EXPECT_EQ(GetOnce(*pool, server.url(), "DELETE"), "ok");
  EXPECT_EQ(GetOnce(*pool, server.url()), "ok");
  const std::vector<std::string> heads = server.heads();
  ASSERT_EQ(heads.size(), 2U);
  EXPECT_TRUE(heads[0].starts_with("DELETE / ")) << heads[0];
  EXPECT_TRUE(heads[1].starts_with("GET / ")) << heads[1];
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HandlePoolTest, AConnectionTheServerClosedIsReplacedWithoutAnError) {
  KeepAliveServer server;
  std::shared_ptr<HandlePool> pool = HandlePool::Create();
  EXPECT_EQ(GetOnce(*pool, server.url()), "ok");
  server.CloseConnections();
  EXPECT_EQ(GetOnce(*pool, server.url()), "ok");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(HandlePoolTest, HandlesBeyondMaxIdleAreClosedWhenGivenBack) {
  std::shared_ptr<HandlePool> pool = HandlePool::Create(/*max_idle=*/1);
  {
    absl::StatusOr<PooledHandle> first = pool->Acquire();
    absl::StatusOr<PooledHandle> second = pool->Acquire();
    ASSERT_TRUE(first.ok() && second.ok());
  }
  EXPECT_EQ(pool->idle(), 1U);
}

TEST(HandlePoolTest, AHandleOutlivesThePoolsLastOtherOwner) {
  KeepAliveServer server;
  std::shared_ptr<HandlePool> pool = HandlePool::Create();
  absl::StatusOr<PooledHandle> lease = pool->Acquire();
  ASSERT_TRUE(lease.ok());
  pool.reset();  // the lease keeps the pool alive
  EXPECT_EQ(Get(*lease, server.url()), "ok");
}

}  // namespace
}  // namespace topologyd::curl_easy
