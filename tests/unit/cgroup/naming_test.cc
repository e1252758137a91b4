#include "lib/cgroup/naming.h"

#include <string>

#include "gtest/gtest.h"

#include "lib/common/quote.h"

namespace topologyd::cgroup {
namespace {

constexpr char kUid[] = "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b";
constexpr char kId[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(ContainerCgroupPathTest, FollowsKubeletNamingForBothDriversQosClassesAndRuntimes) {
  const std::string u = "1b2c3d4e_5f60_4718_9a2b_3c4d5e6f7a8b";
  const std::string id = kId;
  struct Case {
    CgroupDriver driver;
    QosClass qos;
    Runtime runtime;
    std::string want;
  } cases[] = {
      {CgroupDriver::kCgroupfs, QosClass::kGuaranteed, Runtime::kContainerd,
       std::string("kubepods/pod") + kUid + "/" + id},
      {CgroupDriver::kCgroupfs, QosClass::kBurstable, Runtime::kContainerd,
       std::string("kubepods/burstable/pod") + kUid + "/" + id},
      {CgroupDriver::kCgroupfs, QosClass::kBestEffort, Runtime::kCrio,
       std::string("kubepods/besteffort/pod") + kUid + "/crio-" + id},
      {CgroupDriver::kSystemd, QosClass::kGuaranteed, Runtime::kContainerd,
       "kubepods.slice/kubepods-pod" + u + ".slice/cri-containerd-" + id + ".scope"},
      {CgroupDriver::kSystemd, QosClass::kBurstable, Runtime::kContainerd,
       "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u +
           ".slice/cri-containerd-" + id + ".scope"},
      {CgroupDriver::kSystemd, QosClass::kBestEffort, Runtime::kCrio,
       "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + u + ".slice/crio-" +
           id + ".scope"},
      {CgroupDriver::kSystemd, QosClass::kGuaranteed, Runtime::kCrio,
       "kubepods.slice/kubepods-pod" + u + ".slice/crio-" + id + ".scope"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> path = ContainerCgroupPath(c.driver, c.qos, kUid, id, c.runtime);
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(*path, c.want);
    EXPECT_TRUE(ValidateRelativeCgroupPath(*path).ok());
  }
}

TEST(ContainerCgroupPathTest, AcceptsStaticPodHashUids) {
  absl::StatusOr<std::string> path = PodCgroupPath(CgroupDriver::kSystemd, QosClass::kBurstable,
                                                   "0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path,
            "kubepods.slice/kubepods-burstable.slice/"
            "kubepods-burstable-pod0123456789abcdef0123456789abcdef.slice");
}

TEST(ContainerCgroupPathTest, RefusesOddContainerIds) {
  const std::string bad[] = {"",
                             ".",
                             "..",
                             "a/b",
                             "../../etc",
                             "abc\ndef",
                             std::string("abc\0def", 7),
                             "a b",
                             "a_b",
                             "a\\b",
                             "caf\xc3\xa9",
                             std::string(201, 'a')};
  for (const std::string& id : bad) {
    absl::StatusOr<std::string> path = ContainerCgroupPath(
        CgroupDriver::kCgroupfs, QosClass::kBurstable, kUid, id, Runtime::kContainerd);
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument) << id;
  }
  // The message shows control bytes escaped, so logs stay one line.
  absl::Status s = ValidateContainerId("x\ny");
  EXPECT_NE(std::string(s.message()).find("x\\x0ay"), std::string::npos) << s;
}

TEST(ContainerCgroupPathTest, RefusesBadPodUids) {
  const std::string bad[] = {"",
                             "pod",
                             "1b2c3d4e_5f60_4718_9a2b_3c4d5e6f7a8b",
                             "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8",
                             "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8g",
                             "../2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b",
                             "1b2c3d4e-5f60-4718-9a2b/3c4d5e6f7a8b",
                             std::string("1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8\0", 36),
                             "0123456789abcdef0123456789abcdeg"};
  for (const std::string& uid : bad) {
    EXPECT_EQ(ValidatePodUid(uid).code(), absl::StatusCode::kInvalidArgument) << uid;
    EXPECT_FALSE(PodCgroupPath(CgroupDriver::kCgroupfs, QosClass::kGuaranteed, uid).ok());
  }
}

TEST(ValidateRelativeCgroupPathTest, AcceptsOrdinaryPaths) {
  for (const char* ok : {"kubepods", "kubepods/burstable/pod1/abc",
                         "kubepods.slice/kubepods-pod1_2.slice/cri-containerd-1.scope",
                         "user.slice/user@1000.service", "a/.../b", "x:y"}) {
    EXPECT_TRUE(ValidateRelativeCgroupPath(ok).ok()) << ok;
  }
}

TEST(ValidateRelativeCgroupPathTest, RefusesTraversalAbsoluteAndOddBytes) {
  const std::string bad[] = {"",
                             "/kubepods",
                             "..",
                             "../x",
                             "a/../../x",
                             "a/./b",
                             ".",
                             "a//b",
                             "a/",
                             "/",
                             "a/b\n",
                             std::string("a\0b", 3),
                             "a b",
                             "a\tb",
                             "a\\b",
                             "a/b*",
                             std::string(256, 'a'),
                             std::string(4097, 'a')};
  for (const std::string& path : bad) {
    EXPECT_EQ(ValidateRelativeCgroupPath(path).code(), absl::StatusCode::kInvalidArgument)
        << EscapeForMessage(path);
  }
  EXPECT_EQ(ValidateCgroupFileName("a/b").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateCgroupFileName("..").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateCgroupFileName("cpuset.cpus").ok());
}

TEST(CgroupPathHelpersTest, AncestorsDepthAndPrefixes) {
  EXPECT_EQ(CgroupAncestors("a/b/c"), (std::vector<std::string>{"a", "a/b"}));
  EXPECT_TRUE(CgroupAncestors("a").empty());
  EXPECT_TRUE(IsCgroupAncestor("a", "a/b"));
  EXPECT_TRUE(IsCgroupAncestor("a/b", "a/b/c"));
  EXPECT_FALSE(IsCgroupAncestor("a", "ab/c"));
  EXPECT_FALSE(IsCgroupAncestor("a/b", "a/b"));
  EXPECT_EQ(CgroupDepth("a"), 1);
  EXPECT_EQ(CgroupDepth("a/b/c"), 3);
}

TEST(ParseTest, ConfigSpellings) {
  EXPECT_EQ(*ParseCgroupVersionSetting("auto"), CgroupVersionSetting::kAuto);
  EXPECT_EQ(*ParseCgroupVersionSetting("v2"), CgroupVersionSetting::kV2);
  EXPECT_FALSE(ParseCgroupVersionSetting("2").ok());
  EXPECT_EQ(*ParseCgroupDriver("systemd"), CgroupDriver::kSystemd);
  EXPECT_FALSE(ParseCgroupDriver("Systemd").ok());
  EXPECT_EQ(*ParseQosClass("BestEffort"), QosClass::kBestEffort);
  EXPECT_EQ(*ParseRuntime("cri-o"), Runtime::kCrio);
  EXPECT_EQ(*ParseRuntime("containerd"), Runtime::kContainerd);
}

}  // namespace
}  // namespace topologyd::cgroup
