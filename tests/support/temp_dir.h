// A temporary directory for a test, removed with its contents when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace topologyd::testing {

class TempDir {
 public:
  // /tmp/<prefix>-XXXXXX: always /tmp, whatever TMPDIR says, so that a socket path in it
  // fits a Unix socket address.
  explicit TempDir(const std::string& prefix = "tpd") {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "cannot create a temporary directory " << pattern;
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to File(name) and returns that path.
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = File(name);
    std::ofstream(file) << content;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace topologyd::testing
