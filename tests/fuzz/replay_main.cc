// Runs a fuzz harness over saved inputs without libFuzzer, so that the corpus replays with any
// compiler as an ordinary test:
//
//   fuzz_replay_<target> PATH...
//
// Each PATH is a file or a directory whose regular files are all run (sorted by name; not
// recursive). A harness failure aborts the process, so the input that failed is the last one
// named on stderr. Exits 0 after running every input, 1 when a path cannot be read or no input
// was found (an empty corpus would otherwise pass silently).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional in a harness, as with libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool Run(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  // Exactly `size` bytes on the heap, so that ASan catches a read past the end as it does under
  // libFuzzer (never null, also for an empty file).
  auto data = std::make_unique<uint8_t[]>(static_cast<size_t>(std::max<std::streamoff>(size, 0)));
  if (size < 0 || !in.seekg(0) || !in.read(reinterpret_cast<char*>(data.get()), size)) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return false;
  }
  std::fprintf(stderr, "Running: %s\n", file.c_str());
  LLVMFuzzerTestOneInput(data.get(), static_cast<size_t>(size));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path = argv[i];
    std::error_code error;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path, error)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    if (error) {
      std::fprintf(stderr, "cannot list %s: %s\n", path.c_str(), error.message().c_str());
      return 1;
    }
    for (const auto& file : files) {
      if (!Run(file)) return 1;
      ++count;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "no inputs found\n");
    return 1;
  }
  std::fprintf(stderr, "Replayed %zu inputs\n", count);
  return 0;
}
