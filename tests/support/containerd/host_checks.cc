#include "tests/support/containerd/host_checks.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace topologyd::testing::containerd {
namespace {

namespace fs = std::filesystem;

struct CgroupMount {
  std::string root;                      // the hierarchy's path mounted here ("/" normally)
  std::string mount_point;               // e.g. /sys/fs/cgroup/cpuset
  std::vector<std::string> controllers;  // super options of a v1 mount; empty for cgroup2
  bool v2 = false;
};

std::vector<CgroupMount> ReadCgroupMounts() {
  std::vector<CgroupMount> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
    const std::string& fstype = *(dash + 1);
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m{fields[3], fields[4], {}, fstype == "cgroup2"};
    if (!m.v2) m.controllers = absl::StrSplit(*(dash + 3), ',');
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace

absl::StatusOr<std::string> CpusAllowedList(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no process ", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      return std::string(absl::StripAsciiWhitespace(line.substr(18)));
    }
  }
  return absl::NotFoundError(absl::StrCat("no Cpus_allowed_list for ", pid));
}

absl::StatusOr<std::string> CgroupDir(pid_t pid, const std::string& controller) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/cgroup"));
  if (!in) return absl::NotFoundError(absl::StrCat("no process ", pid));
  std::string path;
  std::string line;
  while (std::getline(in, line)) {
    // hierarchy-id:controller,list:path
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() != 3) continue;
    std::vector<std::string> controllers = absl::StrSplit(fields[1], ',');
    if (std::find(controllers.begin(), controllers.end(), controller) != controllers.end()) {
      path = fields[2];
      break;
    }
  }
  if (path.empty()) {
    return absl::NotFoundError(absl::StrCat("process ", pid, " is in no ", controller, " cgroup"));
  }
  for (const auto& mount : ReadCgroupMounts()) {
    if (std::find(mount.controllers.begin(), mount.controllers.end(), controller) ==
        mount.controllers.end()) {
      continue;
    }
    // A mount of a sub-hierarchy shows paths relative to the hierarchy's root.
    std::string relative = path;
    if (mount.root != "/") {
      if (path.rfind(mount.root, 0) != 0) continue;
      relative = path.substr(mount.root.size());
    }
    return mount.mount_point + (relative == "/" ? "" : relative);
  }
  return absl::NotFoundError(absl::StrCat("no mount of the ", controller, " hierarchy"));
}

absl::StatusOr<std::string> V1MountPoint(const std::string& controller) {
  for (const auto& mount : ReadCgroupMounts()) {
    if (mount.root == "/" && std::find(mount.controllers.begin(), mount.controllers.end(),
                                       controller) != mount.controllers.end()) {
      return mount.mount_point;
    }
  }
  return absl::NotFoundError(absl::StrCat("no cgroup v1 mount of the ", controller, " hierarchy"));
}

absl::StatusOr<std::string> ReadCgroupValue(const std::string& dir, const std::string& file) {
  std::string path = absl::StrCat(dir, "/", file);
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(s.str()));
}

absl::Status WriteCgroupValue(const std::string& dir, const std::string& file,
                              const std::string& value) {
  std::string path = absl::StrCat(dir, "/", file);
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", value, "' to ", path));
  return absl::OkStatus();
}

std::vector<std::string> CgroupMountPoints() {
  std::vector<std::string> points;
  for (const auto& mount : ReadCgroupMounts()) points.push_back(mount.mount_point);
  return points;
}

absl::Status RemoveCgroupTree(const std::string& path, std::chrono::milliseconds patience) {
  if (path.empty() || path == "/" || path.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat("refusing to remove cgroup tree '", path, "'"));
  }
  std::vector<std::string> dirs;
  for (const auto& mount : ReadCgroupMounts()) {
    if (mount.root != "/") continue;  // a sub-hierarchy does not show the test's root path
    std::string top = absl::StrCat(mount.mount_point, path);
    std::error_code ec;
    if (!fs::is_directory(top, ec)) continue;
    dirs.push_back(top);
    for (auto it = fs::recursive_directory_iterator(top, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
    }
  }
  // Deepest first: a cgroup with children cannot be removed.
  std::stable_sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
  });
  auto until = std::chrono::steady_clock::now() + patience;
  std::vector<std::string> stayed;
  for (const auto& dir : dirs) {
    while (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
      if (errno != EBUSY || std::chrono::steady_clock::now() > until) {
        stayed.push_back(absl::StrCat(dir, " (", std::strerror(errno), ")"));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (!stayed.empty()) {
    return absl::InternalError("cgroup directories left: " + absl::StrJoin(stayed, ", "));
  }
  return absl::OkStatus();
}

}  // namespace topologyd::testing::containerd
