// Test helpers: a temporary directory laid out like cgroupfs (v1 cpuset hierarchy or v2
// unified), built file by file, removed on destruction. Regular files stand in for interface
// files, so the fake accepts any value; kernel rules are exercised by the integration test.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace topologyd::cgroup::testing {

using TempDir = topologyd::testing::TempDir;

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  ASSERT_TRUE(out.good()) << path;
  out << text;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  ASSERT_FALSE(ec) << path << ": " << ec.message();
}

// A v1 cpuset cgroup directory `dir` (absolute) with the files topologyd touches.
inline void MakeV1Cgroup(const std::string& dir, const std::string& cpus, const std::string& mems) {
  MakeDirs(dir);
  WriteText(dir + "/cpuset.cpus", cpus + "\n");
  WriteText(dir + "/cpuset.mems", mems + "\n");
  WriteText(dir + "/cpuset.effective_cpus", cpus + "\n");
  WriteText(dir + "/tasks", "");
  WriteText(dir + "/cgroup.procs", "");
}

// A v2 cgroup directory with the cpuset files (present only when the parent enables cpuset).
inline void MakeV2Cgroup(const std::string& dir, const std::string& cpus, const std::string& mems,
                         const std::string& subtree_control, bool with_cpuset_files = true) {
  MakeDirs(dir);
  WriteText(dir + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  WriteText(dir + "/cgroup.subtree_control", subtree_control + "\n");
  WriteText(dir + "/cgroup.procs", "");
  if (with_cpuset_files) {
    WriteText(dir + "/cpuset.cpus", cpus.empty() ? "\n" : cpus + "\n");
    WriteText(dir + "/cpuset.mems", mems.empty() ? "\n" : mems + "\n");
    WriteText(dir + "/cpuset.cpus.effective", "0-7\n");
  }
}

// Number of open descriptors of this process, to check that nothing leaks.
inline int OpenFdCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return n;
}

}  // namespace topologyd::cgroup::testing
