#include "tests/support/kube/nrt_crd.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

namespace topologyd::testing::kube {

nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = YamlToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const YAML::Node& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      if (text == "true" || text == "false") return text == "true";
      if (text == "null" || text == "~") return nullptr;
      if (!text.empty() && text.find_first_not_of("-0123456789") == std::string::npos &&
          text != "-") {
        return std::stoll(text);
      }
      return text;
    }
    default:
      return nullptr;
  }
}

absl::StatusOr<std::string> NrtCrdPath() {
  const std::string command = std::string(TOPOLOGYD_SOURCE_DIR) + "/tools/nrt-crd.sh 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return absl::UnavailableError("cannot run tools/nrt-crd.sh");
  std::string out;
  std::array<char, 512> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  const int status = ::pclose(pipe.release());
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (status != 0) return absl::UnavailableError("tools/nrt-crd.sh failed: " + out);
  return out;
}

absl::Status ApplyNrtCrd(const ControlPlane& control_plane, const std::string& crd_path) {
  nlohmann::json crd;
  try {
    crd = YamlToJson(YAML::LoadFile(crd_path));
  } catch (const YAML::Exception& e) {
    return absl::InternalError(crd_path + ": " + e.what());
  }
  absl::StatusOr<ApiResponse> created =
      control_plane.Request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  if (!created.ok()) return created.status();
  if (created->code != 201) {
    return absl::InternalError("creating the CRD: HTTP " + std::to_string(created->code) + ": " +
                               created->body.dump());
  }
  const std::string path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" +
                           crd["metadata"]["name"].get<std::string>();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    absl::StatusOr<ApiResponse> got = control_plane.Request("GET", path);
    if (got.ok() && got->code == 200) {
      for (const nlohmann::json& c :
           got->body["status"].value("conditions", nlohmann::json::array())) {
        if (c.value("type", "") == "Established" && c.value("status", "") == "True") {
          return absl::OkStatus();
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError("the NodeResourceTopology CRD was not established in 60 s");
}

}  // namespace topologyd::testing::kube
