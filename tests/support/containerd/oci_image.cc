#include "tests/support/containerd/oci_image.h"

#include <elf.h>
#include <sys/utsname.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include <nlohmann/json.hpp>

#include "tests/support/containerd/subprocess.h"

namespace topologyd::testing::containerd {
namespace {

namespace fs = std::filesystem;

constexpr auto kToolDeadline = std::chrono::seconds(60);

std::string OciArchitecture() {
  utsname u{};
  ::uname(&u);
  std::string machine = u.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  return machine;
}

struct Blob {
  std::string digest;  // "sha256:<hex>"
  uintmax_t size = 0;
};

// Moves `file` into the layout's blob store under its digest.
absl::StatusOr<Blob> StoreBlob(const std::string& file, const std::string& layout) {
  ToolResult sum = RunTool({"sha256sum", file}, kToolDeadline);
  if (sum.exit_code != 0 || sum.output.size() < 64) {
    return absl::InternalError(absl::StrCat("sha256sum ", file, ": ", sum.output));
  }
  Blob blob{"sha256:" + sum.output.substr(0, 64), fs::file_size(file)};
  fs::rename(file, layout + "/blobs/sha256/" + sum.output.substr(0, 64));
  return blob;
}

absl::StatusOr<Blob> StoreJson(const nlohmann::json& doc, const std::string& work_dir,
                               const std::string& layout) {
  std::string file = work_dir + "/blob.json";
  std::ofstream(file, std::ios::trunc) << doc.dump();
  return StoreBlob(file, layout);
}

}  // namespace

bool IsStaticElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof(header))) return false;
  if (std::string_view(reinterpret_cast<const char*>(header.e_ident), 4) != ELFMAG ||
      header.e_ident[EI_CLASS] != ELFCLASS64) {
    return false;
  }
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * header.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof(ph))) return false;
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

absl::Status WriteBusyboxImageArchive(const std::string& busybox, const std::string& work_dir,
                                      const std::vector<std::string>& names,
                                      const std::string& archive) {
  std::error_code ec;
  const std::string rootfs = work_dir + "/rootfs";
  const std::string layout = work_dir + "/layout";
  fs::remove_all(rootfs, ec);
  fs::remove_all(layout, ec);
  // The runtime mounts /proc, /sys, /dev and the files under /etc; runc creates the mount
  // points, but an image that has them is closer to a real one.
  for (const char* dir : {"bin", "proc", "sys", "dev", "etc", "tmp", "root"}) {
    fs::create_directories(rootfs + "/" + dir);
  }
  fs::create_directories(layout + "/blobs/sha256");
  fs::copy_file(busybox, rootfs + "/bin/busybox", fs::copy_options::overwrite_existing, ec);
  if (ec) return absl::InternalError(absl::StrCat("copy ", busybox, ": ", ec.message()));
  for (const auto& applet : BusyboxImageApplets()) {
    fs::create_symlink("busybox", rootfs + "/bin/" + applet, ec);
    if (ec) return absl::InternalError(absl::StrCat("symlink ", applet, ": ", ec.message()));
  }

  // Fixed owner and time: the layer's digest does not depend on who built it when.
  const std::string layer_file = work_dir + "/layer.tar";
  ToolResult tar = RunTool({"tar", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
                            "--sort=name", "-C", rootfs, "-cf", layer_file, "."},
                           kToolDeadline);
  if (tar.exit_code != 0) return absl::InternalError("tar (layer): " + tar.output);
  auto layer = StoreBlob(layer_file, layout);
  if (!layer.ok()) return layer.status();

  nlohmann::json config = {
      {"architecture", OciArchitecture()},
      {"os", "linux"},
      {"config", {{"Cmd", {"sleep", "2147483647"}}, {"Env", {"PATH=/bin"}}}},
      {"rootfs", {{"type", "layers"}, {"diff_ids", {layer->digest}}}},
  };
  auto config_blob = StoreJson(config, work_dir, layout);
  if (!config_blob.ok()) return config_blob.status();

  nlohmann::json manifest = {
      {"schemaVersion", 2},
      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
      {"config",
       {{"mediaType", "application/vnd.oci.image.config.v1+json"},
        {"digest", config_blob->digest},
        {"size", config_blob->size}}},
      {"layers",
       {{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
         {"digest", layer->digest},
         {"size", layer->size}}}},
  };
  auto manifest_blob = StoreJson(manifest, work_dir, layout);
  if (!manifest_blob.ok()) return manifest_blob.status();

  nlohmann::json index = {{"schemaVersion", 2}, {"manifests", nlohmann::json::array()}};
  for (const auto& name : names) {
    index["manifests"].push_back({
        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
        {"digest", manifest_blob->digest},
        {"size", manifest_blob->size},
        {"platform", {{"architecture", OciArchitecture()}, {"os", "linux"}}},
        // What ctr import names the image by.
        {"annotations", {{"io.containerd.image.name", name}}},
    });
  }
  std::ofstream(layout + "/index.json", std::ios::trunc) << index.dump();
  std::ofstream(layout + "/oci-layout", std::ios::trunc) << R"({"imageLayoutVersion":"1.0.0"})";

  tar = RunTool({"tar", "-C", layout, "-cf", archive, "."}, kToolDeadline);
  if (tar.exit_code != 0) return absl::InternalError("tar (archive): " + tar.output);
  fs::remove_all(rootfs, ec);
  fs::remove_all(layout, ec);
  return absl::OkStatus();
}

}  // namespace topologyd::testing::containerd
