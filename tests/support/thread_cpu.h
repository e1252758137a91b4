// A thread's CPU time from /proc, for tests that assert a thread is not kept busy (its CPU
// time over an interval stays far below the interval).
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace topologyd::testing {

// /proc/<pid>/task/<tid>/stat of the thread named `name` ("self" for this process).
inline std::optional<std::filesystem::path> ThreadStatPath(const std::string& pid,
                                                           const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + pid + "/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return task.path() / "stat";
  }
  return std::nullopt;
}

// User + system CPU time, in clock ticks, from the text of a stat file; -1 if malformed.
inline long CpuTicksOfStat(std::string_view stat) {
  size_t name_end = stat.rfind(')');
  if (name_end == std::string_view::npos) return -1;
  // After the parenthesised name: state is field 3, utime 14, stime 15.
  std::istringstream rest{std::string(stat.substr(name_end + 1))};
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 13) return -1;
  return std::stol(fields[11]) + std::stol(fields[12]);
}

}  // namespace topologyd::testing
