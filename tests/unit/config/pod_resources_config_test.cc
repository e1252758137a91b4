// The `podResources` block: off when absent, its socket and allowlist defaulting to the
// top-level ones, bad values refused naming the key, and what a reload may change.
#include "lib/config/pod_resources_config.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/config/config_diff.h"
#include "lib/config/config_loader.h"
#include "tests/unit/config/parse_util.h"

namespace topologyd::config {
namespace {

using testing::ErrorOf;
using testing::MustParse;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PodResourcesConfigTest, OffWhenAbsent) {
  EXPECT_FALSE(MustParse("").pod_resources.has_value());
  EXPECT_FALSE(MustParse("podResources:\n").pod_resources.has_value());
}

TEST(PodResourcesConfigTest, SocketAndPeersDefaultToTheTopLevelOnes) {
  Config c = MustParse(R"(
socket: {mode: "0640", group: kube}
allowedPeers: {uids: [0, 1000]}
podResources: {listen: unix:///var/lib/topologyd/pod-resources/kubelet.sock}
)");
  ASSERT_TRUE(c.pod_resources.has_value());
  EXPECT_EQ(c.pod_resources->SocketPath(), "/var/lib/topologyd/pod-resources/kubelet.sock");
  EXPECT_FALSE(c.pod_resources->socket.has_value());
  EXPECT_FALSE(c.pod_resources->allowed_peers.has_value());
  EXPECT_EQ(PodResourcesSocket(c), c.socket);
  EXPECT_EQ(PodResourcesPeers(c), c.allowed_peers);
}

TEST(PodResourcesConfigTest, OwnSocketAndPeers) {
  Config c = MustParse(R"(
podResources:
  listen: unix:///run/pr/kubelet.sock
  socket: {mode: "0600", group: "", maxConnectionsPerUid: 4}
  allowedPeers: {uids: [7], gids: [8], sameUser: true}
)");
  ASSERT_TRUE(c.pod_resources.has_value());
  EXPECT_EQ(PodResourcesSocket(c).mode, 0600u);
  EXPECT_EQ(PodResourcesSocket(c).group, "");
  EXPECT_EQ(PodResourcesSocket(c).max_connections_per_uid, 4u);
  EXPECT_EQ(PodResourcesPeers(c).uids, std::vector<uint32_t>{7});
  EXPECT_EQ(PodResourcesPeers(c).gids, std::vector<uint32_t>{8});
  EXPECT_TRUE(PodResourcesPeers(c).same_user);
  // The top-level ones are untouched.
  EXPECT_EQ(c.socket, SocketConfig{});
  EXPECT_EQ(c.allowed_peers, AllowedPeers{});
}

TEST(PodResourcesConfigTest, BadValuesNameTheKey) {
  EXPECT_THAT(ErrorOf("podResources: {}\n"), HasSubstr("podResources.listen: required"));
  EXPECT_THAT(ErrorOf("podResources: {listen: /run/x.sock}\n"),
              HasSubstr("podResources.listen: must be unix://PATH"));
  EXPECT_THAT(ErrorOf("podResources: {listen: \"\"}\n"),
              HasSubstr("podResources.listen: must not be empty"));
  EXPECT_THAT(ErrorOf("podResources: {listen: unix:///" + std::string(120, 'a') + "}\n"),
              HasSubstr("podResources.listen: socket path"));
  EXPECT_THAT(ErrorOf("listen: unix:///run/t.sock\npodResources: {listen: unix:///run/t.sock}\n"),
              HasSubstr("podResources.listen: /run/t.sock is the topologyd API's socket"));
  EXPECT_THAT(ErrorOf("podResources: {listen: unix:///run/p.sock, socket: {mode: \"999\"}}\n"),
              HasSubstr("podResources.socket.mode: expected an octal mode"));
  EXPECT_THAT(
      ErrorOf("podResources: {listen: unix:///run/p.sock, socket: {maxConnectionsPerUid: 0}}\n"),
      HasSubstr("podResources.socket.maxConnectionsPerUid: must be at least 1"));
  EXPECT_THAT(ErrorOf("podResources: {listen: unix:///run/p.sock, allowedPeers: {uids: [root]}}\n"),
              HasSubstr("podResources.allowedPeers.uids[0]: expected an integer"));
  EXPECT_THAT(ErrorOf("podResources: {listen: unix:///run/p.sock, port: 1}\n"),
              HasSubstr("podResources.port: unknown key"));
  EXPECT_THAT(ErrorOf("podResources: unix:///run/p.sock\n"),
              HasSubstr("podResources: expected a mapping"));
}

TEST(PodResourcesConfigTest, ARelativePathIsTakenFromTheConfigFile) {
  const std::string dir = ::testing::TempDir() + "/podresources-config";
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/config.yaml";
  {
    std::ofstream out(file);
    out << "listen: unix://api.sock\npodResources: {listen: unix://pr/kubelet.sock}\n";
  }
  auto c = LoadConfigFile(file);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->pod_resources.has_value());
  EXPECT_EQ(c->pod_resources->SocketPath(),
            std::filesystem::path(dir).lexically_normal().string() + "/pr/kubelet.sock");
}

Config WithPodResources() {
  Config c;
  c.pod_resources = PodResourcesConfig{
      .listen = "unix:///run/pr.sock", .socket = SocketConfig{}, .allowed_peers = std::nullopt};
  return c;
}

TEST(PodResourcesConfigTest, PeersAndTheCapReloadTheRestNeedsARestart) {
  Config old_config = WithPodResources();
  Config next = old_config;
  next.pod_resources->allowed_peers = AllowedPeers{.uids = {5}, .gids = {}, .same_user = false};
  next.pod_resources->socket->max_connections_per_uid = 3;
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied,
              ElementsAre("podResources.allowedPeers", "podResources.socket.maxConnectionsPerUid"));
  EXPECT_THAT(plan.refused, IsEmpty());
  EXPECT_EQ(plan.effective, next);

  next = old_config;
  next.pod_resources->listen = "unix:///run/other.sock";
  next.pod_resources->socket->mode = 0600;
  plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, IsEmpty());
  EXPECT_THAT(plan.refused, ElementsAre("podResources.listen", "podResources.socket"));
  EXPECT_EQ(plan.effective, old_config);
}

TEST(PodResourcesConfigTest, TurningItOnOrOffNeedsARestart) {
  Config off;
  Config on = WithPodResources();
  ReloadPlan plan = PlanReload(off, on);
  EXPECT_THAT(plan.refused, ElementsAre("podResources"));
  EXPECT_FALSE(plan.effective.pod_resources.has_value());
  plan = PlanReload(on, off);
  EXPECT_THAT(plan.refused, ElementsAre("podResources"));
  EXPECT_EQ(plan.effective.pod_resources, on.pod_resources);
}

}  // namespace
}  // namespace topologyd::config
