// A temporary directory short enough for Unix socket paths (108 bytes), removed with its
// contents at the end of the test.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace topologyd::cri_relay::testing {

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/cri-relay-XXXXXX";
    if (::mkdtemp(name) == nullptr) ADD_FAILURE() << "cannot create a temporary directory";
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace topologyd::cri_relay::testing
