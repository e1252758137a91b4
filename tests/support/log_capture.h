// LogCapture: the lines a component under test logs through a std::function sink, kept for the
// test to read; the component may log from its own threads.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace topologyd::testing {

class LogCapture {
 public:
  // A sink for the component's options; the capture must outlive the component.
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
  }
  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace topologyd::testing
