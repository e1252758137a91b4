#include "lib/nrt/nrt_file_publisher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/json_yaml/json_yaml.h"
#include "lib/nrt/node_name.h"
#include "lib/nrt/node_resource_topology.h"
#include "lib/nrt/nrt_json.h"

namespace topologyd::nrt {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status Errno(const std::string& what, const std::string& path) {
  const int e = errno;
  return absl::Status(absl::ErrnoToStatusCode(e),
                      fmt::format("{} {}: {}", what, path, std::strerror(e)));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string NrtFileDirectoryProblem(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return "";
      return p == dir ? fmt::format("nrt.file: {} is not a directory", p.string())
                      : fmt::format("nrt.file: cannot create {}: {} is not a directory",
                                    dir.string(), p.string());
    }
    if ((errno != ENOENT && errno != ENOTDIR) || p == p.parent_path()) break;
  }
  return "";
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::filesystem::path target(path);
  const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  // A name of our own beside the target: the rename stays within one file system.
  const std::string temp = fmt::format("{}/.{}.tmp", dir, target.filename().string());
  {
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (fd.get() < 0) return Errno("cannot create", temp);
    // O_CREAT's mode is masked by the umask; readers of the object need 0644.
    if (::fchmod(fd.get(), 0644) != 0) return Errno("cannot chmod", temp);
    for (size_t done = 0; done < contents.size();) {
      ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("cannot write", temp);
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) return Errno("cannot fsync", temp);
    if (::close(fd.release()) != 0) return Errno("cannot close", temp);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status s = Errno("cannot rename " + temp + " to", path);
    ::unlink(temp.c_str());
    return s;
  }
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() < 0 || ::fsync(d.get()) != 0) return Errno("cannot fsync directory", dir);
  return absl::OkStatus();
}

NrtFilePublisher::NrtFilePublisher(NrtFilePublisherOptions options)
    : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<NrtFilePublisher>> NrtFilePublisher::Start(
    NrtFilePublisherOptions options) {
  const std::filesystem::path dir = std::filesystem::path(options.path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        fmt::format("nrt.file: cannot create {}: {}", dir.string(), ec.message()));
  }
  std::unique_ptr<NrtFilePublisher> p(new NrtFilePublisher(std::move(options)));
  std::shared_ptr<Inbox> inbox = p->inbox_;
  engine::AllocationsWatch watch = p->options_.engine->WatchAllocations(
      [inbox](engine::DurableAllocations allocations) { inbox->Hand(std::move(allocations)); });
  p->watch_id_ = watch.id;
  if (absl::Status s = p->WriteNow(watch.current); !s.ok()) {
    p->options_.engine->StopWatchingAllocations(p->watch_id_);
    return absl::FailedPreconditionError(fmt::format("nrt.file: {}", s.message()));
  }
  {
    absl::MutexLock lock(&inbox->mu);
    if (inbox->latest == nullptr) inbox->latest = watch.current;
    inbox->writes = 1;
  }
  NrtFilePublisher* raw = p.get();
  p->thread_ = std::thread([raw] { raw->Run(); });
  return p;
}

NrtFilePublisher::~NrtFilePublisher() { Stop(); }

void NrtFilePublisher::Inbox::Hand(engine::DurableAllocations allocations) {
  absl::MutexLock lock(&mu);
  // Generations come in order; keep the newest.
  if (latest == nullptr || allocations->state.generation >= latest->state.generation) {
    latest = std::move(allocations);
  }
  dirty = true;
  wake.Signal();
}

void NrtFilePublisher::Refresh() {
  absl::MutexLock lock(&inbox_->mu);
  inbox_->dirty = true;
  inbox_->wake.Signal();
}

void NrtFilePublisher::Stop() {
  if (!thread_.joinable()) return;
  options_.engine->StopWatchingAllocations(watch_id_);
  {
    absl::MutexLock lock(&inbox_->mu);
    inbox_->stopping = true;
    inbox_->wake.Signal();
  }
  thread_.join();
}

uint64_t NrtFilePublisher::writes() const {
  absl::MutexLock lock(&inbox_->mu);
  return inbox_->writes;
}

absl::Status NrtFilePublisher::WriteNow(const engine::DurableAllocations& allocations) {
  std::shared_ptr<const admission::NodePolicy> policy = options_.engine->policy();
  const std::string name = NodeName(options_.engine->config()->nrt.node_name);
  const nlohmann::json doc = ToJson(BuildNodeResourceTopology(*policy, allocations->state, name));
  const std::string text =
      EndsWith(options_.path, ".json") ? doc.dump(2) + "\n" : YamlText(doc) + "\n";
  return WriteFileAtomically(options_.path, text);
}

void NrtFilePublisher::Run() {
  Inbox& in = *inbox_;
  Clock::time_point last_write = Clock::now();  // Start() has just written
  bool failing = false;
  while (true) {
    engine::DurableAllocations snapshot;
    bool stop = false;
    {
      absl::MutexLock lock(&in.mu);
      while (!in.dirty && !in.stopping) in.wake.Wait(&in.mu);
      // Coalesce: changes arriving within min_interval of the last write share the next one.
      const Clock::time_point due = last_write + options_.min_interval;
      while (!in.stopping && Clock::now() < due) {
        in.wake.WaitWithTimeout(&in.mu, absl::FromChrono(due - Clock::now()));
      }
      stop = in.stopping;
      if (!in.dirty) return;  // stopping with nothing pending
      in.dirty = false;
      snapshot = in.latest;
    }
    absl::Status s = WriteNow(snapshot);
    last_write = Clock::now();
    if (s.ok()) {
      absl::MutexLock lock(&in.mu);
      ++in.writes;
    }
    if (s.ok() && failing) {
      failing = false;
      if (options_.log_info) {
        options_.log_info(fmt::format("nrt.file: writing {} again", options_.path));
      }
    } else if (!s.ok()) {
      if (!failing && options_.log_error) {
        options_.log_error(fmt::format("nrt.file: {} (retrying every {} ms)", s.message(),
                                       options_.retry_after.count()));
      }
      failing = true;
      if (!stop) {
        // Retry later: the change is pending again; wait out retry_after.
        absl::MutexLock lock(&in.mu);
        in.dirty = true;
        const Clock::time_point retry = Clock::now() + options_.retry_after;
        while (!in.stopping && Clock::now() < retry) {
          in.wake.WaitWithTimeout(&in.mu, absl::FromChrono(retry - Clock::now()));
        }
      }
    }
    if (stop) return;
  }
}

}  // namespace topologyd::nrt
