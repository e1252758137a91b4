// A private Kubernetes control plane for tests: etcd and kube-apiserver (built from source by
// tools/build-kube.sh) on loopback ports, with certificates the openssl CLI makes per run,
// static tokens and RBAC, everything under a temporary directory that the destructor removes.
// No controller manager: namespaces "default" and "kube-system" exist, nothing else is
// reconciled (pods stay Pending, no service account is made, so the ServiceAccount admission
// plugin is off).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace topologyd::testing::kube {

// Why the control plane cannot run here (etcd or kube-apiserver not built, no openssl), or "".
std::string ControlPlaneSkipReason();

// The identities the API server knows, by bearer token.
inline constexpr std::string_view kAdminToken = "admin-token";    // group system:masters
inline constexpr std::string_view kNobodyToken = "nobody-token";  // user "nobody", no rights
// A node's identity as its kubelet credentials carry it: user system:node:worker-1 in group
// system:nodes; no rights until a binding gives the group some (RBAC only, no Node authorizer).
inline constexpr std::string_view kNodeToken = "node-token";

struct ApiResponse {
  long code = 0;
  nlohmann::json body;  // null when the body is not JSON
};

class ControlPlane {
 public:
  ControlPlane() = default;
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;
  // Stops both servers and removes the directory.
  ~ControlPlane();

  // Starts etcd, then kube-apiserver; returns once /readyz answers ok (about 10-20 s on two
  // CPUs).
  absl::Status Start();

  // https://127.0.0.1:PORT
  const std::string& server() const { return server_; }
  // The CA that signed the server certificate (PEM file path).
  std::string ca_file() const { return dir_ + "/pki/ca.crt"; }
  // A kubeconfig file for the identity of `token`, written on first use.
  absl::StatusOr<std::string> Kubeconfig(std::string_view token);

  // One API call as the administrator: `method` ("GET", "POST", "DELETE", ...) on `path`
  // ("/api/v1/namespaces/default/pods"), with a JSON body unless it is null.
  absl::StatusOr<ApiResponse> Request(std::string_view method, const std::string& path,
                                      const nlohmann::json& body = nullptr,
                                      std::string_view token = kAdminToken) const;
  // A PATCH as the administrator with the body in the patch type `content_type` names:
  // "application/merge-patch+json", or "application/apply-patch+yaml" for server-side apply
  // (JSON is YAML; `path` then carries ?fieldManager=...).
  absl::StatusOr<ApiResponse> Patch(const std::string& path, const nlohmann::json& body,
                                    std::string_view content_type) const;

  // Stops kube-apiserver alone (etcd keeps every object), for clients that must ride out an
  // outage; RestartApiserver starts it again at the same address and returns once it is ready.
  void StopApiserver();
  absl::Status RestartApiserver();

  // The servers' output so far, for failure messages.
  std::string log() const;

 private:
  absl::Status StartEtcd();
  absl::Status StartApiserver(int port);
  absl::Status WaitUntilReady() const;
  absl::StatusOr<ApiResponse> Send(std::string_view method, const std::string& path,
                                   const nlohmann::json& body, std::string_view token,
                                   std::string_view content_type) const;
  void Stop();

  std::string dir_;
  std::string etcd_url_;
  std::string server_;
  int apiserver_port_ = 0;
  pid_t etcd_ = -1;
  pid_t apiserver_ = -1;
};

}  // namespace topologyd::testing::kube
