// A directory no one may write in, not even root (chattr +i), until the object goes: how the
// integration tests make the daemon's checkpoint writes fail for real.
#pragma once

#include <unistd.h>

#include <string>
#include <utility>

#include "tests/integration/process.h"

namespace topologyd::testing {

class ImmutableDirectory {
 public:
  explicit ImmutableDirectory(std::string path) : path_(std::move(path)) {
    if (::getuid() != 0) {
      skip_reason_ = "needs root to make " + path_ + " immutable";
    } else if (RunCommand({"/usr/bin/chattr", "+i", path_}).exit_code != 0) {
      skip_reason_ = "chattr +i is not supported on " + path_;
    }
  }
  ~ImmutableDirectory() { MakeWritable(); }
  ImmutableDirectory(const ImmutableDirectory&) = delete;
  ImmutableDirectory& operator=(const ImmutableDirectory&) = delete;

  // Empty when the directory is immutable now; else why the test cannot run.
  const std::string& skip_reason() const { return skip_reason_; }

  void MakeWritable() {
    if (skip_reason_.empty() && !writable_) RunCommand({"/usr/bin/chattr", "-i", path_});
    writable_ = true;
  }

 private:
  std::string path_;
  std::string skip_reason_;
  bool writable_ = false;
};

}  // namespace topologyd::testing
