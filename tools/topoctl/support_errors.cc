#include "tools/topoctl/support_errors.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "fmt/format.h"

namespace topoctl {

int Fail(std::string_view command, int code, std::string_view message) {
  std::cerr << "topoctl: " << command << ": " << message << "\n";
  return code;
}

absl::StatusOr<std::string> ReadInputFile(const std::string& path, std::string_view what) {
  const std::string name = path == "-" ? "<stdin>" : path;
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      return absl::Status(absl::ErrnoToStatusCode(err),
                          fmt::format("{}: cannot read: {}", name, std::strerror(err)));
    }
    // An ifstream opens a directory and reads nothing, which would parse as an empty document.
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: is a directory; give a file holding {}", name, what));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int err = errno;
      return absl::Status(absl::ErrnoToStatusCode(err),
                          fmt::format("{}: cannot read: {}", name, std::strerror(err)));
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(fmt::format("{}: is empty; expected {}", name, what));
  }
  return text;
}

}  // namespace topoctl
