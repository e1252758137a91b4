// Kubernetes name syntax (apimachinery's validation), for the names topologyd accepts from
// requests and configuration: pod and container names, namespaces, annotation keys, resource
// names.
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

namespace topologyd::pod {

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, 1..63 characters.
bool IsDnsLabel(std::string_view s);
// Dot-separated DNS labels, at most 253 characters in all.
bool IsDnsSubdomain(std::string_view s);
// [DNS subdomain "/"] name, where name is [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most
// 63 characters.
bool IsQualifiedName(std::string_view s);
// topologyd's rule for pod uids (the API's idempotency key): 1 to 64 of [A-Za-z0-9-], which
// admits the API server's UUIDs and kubelet's static-pod hashes and keeps uids out of paths.
bool IsApiPodUid(std::string_view uid);
// What a device plugin's resource must be named (kubelet's IsExtendedResourceName): a
// qualified name <domain>/<name> outside kubernetes.io, not starting with "requests.", that
// stays qualified as the quota name "requests.<domain>/<name>".
bool IsDevicePluginResourceName(std::string_view name);

}  // namespace topologyd::pod
