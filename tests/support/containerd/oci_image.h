// A one-layer OCI image built from the host's static busybox, written as an OCI image layout
// archive that `ctr images import` loads: no registry and no network.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace topologyd::testing::containerd {

// The busybox applets the image links to /bin/busybox.
inline const std::vector<std::string>& BusyboxImageApplets() {
  static const std::vector<std::string> applets = {"sh",   "sleep", "cat", "grep",    "echo", "ls",
                                                   "true", "env",   "ps",  "taskset", "nproc"};
  return applets;
}

// Writes the image under `work_dir` (which must exist) and tars it to `archive`. The image's
// default command is a long sleep, so it serves as the sandbox ("pause") image too. Every
// name in `names` (full references, e.g. "topologyd.test/busybox:1") points at it.
// `busybox` must be a statically linked binary: the image has no libraries.
absl::Status WriteBusyboxImageArchive(const std::string& busybox, const std::string& work_dir,
                                      const std::vector<std::string>& names,
                                      const std::string& archive);

// True if the ELF file at `path` has no program interpreter (is statically linked).
bool IsStaticElf(const std::string& path);

}  // namespace topologyd::testing::containerd
