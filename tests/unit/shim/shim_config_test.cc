#include "shim/shim_config.h"

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

using ::testing::HasSubstr;

TEST(ShimConfigTest, AnEmptyFileGivesTheDocumentedDefaults) {
  absl::StatusOr<ShimConfig> config = ParseShimConfig("", "shim.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ListenPath(), "/run/topologyd/shim.sock");
  EXPECT_EQ(config->RuntimePath(), "/run/containerd/containerd.sock");
  EXPECT_EQ(config->topologyd_socket, "/run/topologyd/topologyd.sock");
  EXPECT_EQ(config->failure_policy, FailurePolicy::kFail);
  EXPECT_EQ(config->max_message_bytes, 16 << 20);
  EXPECT_EQ(config->pod_spec.sources,
            (std::vector<PodSpecSource>{PodSpecSource::kAnnotation, PodSpecSource::kEstimate}));
  EXPECT_EQ(config->cgroup_root, "/sys/fs/cgroup");
  EXPECT_EQ(config->cgroup_version, cgroup::CgroupVersionSetting::kAuto);
}

TEST(ShimConfigTest, ReadsEveryKey) {
  absl::StatusOr<ShimConfig> config = ParseShimConfig(R"(
listen: unix:///tmp/a.sock
socketMode: "0600"
runtimeEndpoint: unix:///tmp/b.sock
topologydSocket: /tmp/c.sock
topologydTimeout: 2s
failurePolicy: Ignore
maxMessageBytes: 8388608
cgroup: {driver: systemd, runtime: cri-o, root: /host/sys/fs/cgroup, version: v2}
podSpec: {sources: [apiServer, estimate], kubeconfig: in-cluster, apiServerTimeout: 1s}
resync: {period: 1m, releaseOrphans: false}
log: {level: debug, format: json}
)",
                                                      "shim.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->socket_mode, 0600u);
  EXPECT_EQ(config->topologyd_timeout, std::chrono::seconds(2));
  EXPECT_EQ(config->failure_policy, FailurePolicy::kIgnore);
  EXPECT_EQ(config->max_message_bytes, 8 << 20);
  EXPECT_EQ(config->cgroup_driver, cgroup::CgroupDriver::kSystemd);
  EXPECT_EQ(config->runtime, cgroup::Runtime::kCrio);
  EXPECT_EQ(config->cgroup_root, "/host/sys/fs/cgroup");
  EXPECT_EQ(config->cgroup_version, cgroup::CgroupVersionSetting::kV2);
  EXPECT_EQ(config->pod_spec.sources,
            (std::vector<PodSpecSource>{PodSpecSource::kApiServer, PodSpecSource::kEstimate}));
  EXPECT_EQ(config->pod_spec.kubeconfig, "in-cluster");
  EXPECT_EQ(config->resync.period, std::chrono::minutes(1));
  EXPECT_FALSE(config->resync.release_orphans);
  EXPECT_EQ(config->log.format, "json");
}

TEST(ShimConfigTest, ReportsEveryProblemWithItsLine) {
  absl::StatusOr<ShimConfig> config = ParseShimConfig(R"(listen: /no/scheme.sock
failurePolicy: Maybe
podSpec: {sources: [estimate, guess, estimate]}
colour: blue
cgroup: {root: sys/fs/cgroup, version: v3}
)",
                                                      "shim.yaml");
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("shim.yaml:1: listen: expected unix://"));
  EXPECT_THAT(message, HasSubstr("shim.yaml:2: failurePolicy: unknown value"));
  EXPECT_THAT(message, HasSubstr("podSpec.sources[1]: expected apiServer, annotation or estimate"));
  EXPECT_THAT(message, HasSubstr("podSpec.sources[2]: estimate is listed twice"));
  EXPECT_THAT(message, HasSubstr("shim.yaml:4: colour: unknown key"));
  EXPECT_THAT(message, HasSubstr("cgroup.root: expected an absolute path"));
  EXPECT_THAT(message, HasSubstr("cgroup.version: unknown value"));
}

TEST(ShimConfigTest, TheApiServerSourceNeedsCredentials) {
  absl::StatusOr<ShimConfig> config =
      ParseShimConfig("podSpec: {sources: [apiServer]}\n", "shim.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("podSpec.kubeconfig"));
}

TEST(ShimConfigTest, RefusesToRelayToItself) {
  absl::StatusOr<ShimConfig> parsed = ParseShimConfig("", "shim.yaml");
  ASSERT_TRUE(parsed.ok());
  parsed->runtime_endpoint = parsed->listen;
  absl::StatusOr<ShimConfig> checked = ValidateShimConfig(*parsed);
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.status().message(), HasSubstr("would call itself"));
}

TEST(ShimConfigTest, TheShippedExampleIsValid) {
  const char* source_dir = std::getenv("TOPOLOGYD_SOURCE_DIR");
  ASSERT_NE(source_dir, nullptr);
  absl::StatusOr<ShimConfig> config =
      LoadShimConfigFile(std::string(source_dir) + "/config/shim.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ListenPath(), "/run/topologyd/shim.sock");
}

}  // namespace
}  // namespace topologyd::shim
