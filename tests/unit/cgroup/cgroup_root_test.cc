#include "lib/cgroup/cgroup_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

#include "tests/unit/cgroup/fake_cgroupfs.h"

namespace topologyd::cgroup {
namespace {

using testing::MakeDirs;
using testing::MakeV1Cgroup;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

std::string ResolverName(const ::testing::TestParamInfo<PathResolver>& info) {
  return info.param == PathResolver::kOpenat2 ? "Openat2" : "Walk";
}

// Every confinement test runs with both resolvers: the openat2 one the daemon uses on this
// kernel, and the component-by-component walk used where openat2 is unavailable.
class CgroupRootTest : public ::testing::TestWithParam<PathResolver> {
 protected:
  void SetUp() override {
    tree_ = tmp_.path() + "/tree";
    outside_ = tmp_.path() + "/outside";
    MakeV1Cgroup(tree_, "0-7", "0-1");
    MakeV1Cgroup(tree_ + "/kubepods/burstable/pod1/c1", "0-7", "0-1");
    MakeV1Cgroup(outside_, "0-7", "0-1");
    absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(tree_, GetParam());
    if (!root.ok() && GetParam() == PathResolver::kOpenat2) {
      GTEST_SKIP() << "openat2 unavailable on this kernel: " << root.status();
    }
    ASSERT_TRUE(root.ok()) << root.status();
    root_.emplace(std::move(*root));
  }

  void ExpectOutsideUntouched() {
    EXPECT_EQ(ReadText(outside_ + "/cpuset.cpus"), "0-7\n");
    EXPECT_EQ(ReadText(outside_ + "/cpuset.mems"), "0-1\n");
  }

  TempDir tmp_;
  std::string tree_;
  std::string outside_;
  std::optional<CgroupRoot> root_;
};

TEST_P(CgroupRootTest, UsesTheRequestedResolver) { EXPECT_EQ(root_->resolver(), GetParam()); }

TEST_P(CgroupRootTest, ReadsAndWritesInsideTheTree) {
  const std::string c1 = "kubepods/burstable/pod1/c1";
  ASSERT_TRUE(root_->WriteFile(c1, "cpuset.cpus", "2-3").ok());
  EXPECT_EQ(ReadText(tree_ + "/" + c1 + "/cpuset.cpus"), "2-3");
  absl::StatusOr<std::string> read = root_->ReadFile(c1, "cpuset.mems");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "0-1\n");
  absl::StatusOr<std::string> at_root = root_->ReadFile("", "cpuset.cpus");
  ASSERT_TRUE(at_root.ok()) << at_root.status();
  EXPECT_EQ(*at_root, "0-7\n");
}

TEST_P(CgroupRootTest, NeverCreatesFilesAndReportsMissingAsNotFound) {
  EXPECT_EQ(root_->WriteFile("kubepods", "cpuset.new", "1").code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(tree_ + "/kubepods/cpuset.new"));
  EXPECT_EQ(root_->WriteFile("kubepods/gone", "cpuset.cpus", "1").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(root_->ReadFile("kubepods/gone", "cpuset.cpus").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(CgroupRootTest, StatTellsKinds) {
  EXPECT_EQ(*root_->Stat(""), EntryKind::kDirectory);
  EXPECT_EQ(*root_->Stat("kubepods/burstable"), EntryKind::kDirectory);
  EXPECT_EQ(*root_->Stat("kubepods/burstable/pod1/c1", "cpuset.cpus"), EntryKind::kFile);
  EXPECT_EQ(*root_->Stat("", "cpuset.cpus"), EntryKind::kFile);
  EXPECT_EQ(*root_->Stat("kubepods/nope"), EntryKind::kMissing);
  EXPECT_EQ(*root_->Stat("", "nope"), EntryKind::kMissing);
}

TEST_P(CgroupRootTest, RefusesTraversalAndAbsolutePathsBeforeTouchingAnything) {
  const std::string bad_cgroups[] = {"..",
                                     "../outside",
                                     "kubepods/../../outside",
                                     "/" + outside_.substr(1),
                                     outside_,
                                     "kubepods//burstable",
                                     "kubepods/./burstable",
                                     "kubepods/burstable/pod1/c1\n",
                                     std::string("kubepods\0/../../outside", 23),
                                     "kubepods/burstable/pod1/c1/"};
  for (const std::string& cgroup : bad_cgroups) {
    EXPECT_EQ(root_->WriteFile(cgroup, "cpuset.cpus", "0").code(),
              absl::StatusCode::kInvalidArgument)
        << cgroup;
    EXPECT_EQ(root_->ReadFile(cgroup, "cpuset.cpus").status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(root_->Stat(cgroup).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(root_->OpenSubtree(cgroup).status().code(), absl::StatusCode::kInvalidArgument);
  }
  for (const std::string name : {"../cpuset.cpus", "/etc/passwd", "a/b", "..", "x\ny"}) {
    EXPECT_EQ(root_->WriteFile("kubepods", name, "0").code(), absl::StatusCode::kInvalidArgument)
        << name;
  }
  ExpectOutsideUntouched();
}

TEST_P(CgroupRootTest, RefusesASymlinkedCgroupPointingOutside) {
  ASSERT_EQ(::symlink(outside_.c_str(), (tree_ + "/kubepods/escape").c_str()), 0);
  absl::Status s = root_->WriteFile("kubepods/escape", "cpuset.cpus", "0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(root_->ReadFile("kubepods/escape", "cpuset.cpus").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->Stat("kubepods/escape").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->OpenSubtree("kubepods/escape").status().code(),
            absl::StatusCode::kInvalidArgument);
  ExpectOutsideUntouched();
}

TEST_P(CgroupRootTest, RefusesARelativeSymlinkClimbingOut) {
  ASSERT_EQ(::symlink("../../outside", (tree_ + "/kubepods/up").c_str()), 0);
  EXPECT_EQ(root_->WriteFile("kubepods/up", "cpuset.cpus", "0").code(),
            absl::StatusCode::kInvalidArgument);
  ExpectOutsideUntouched();
}

TEST_P(CgroupRootTest, RefusesSymlinksEvenWhenTheyStayInsideTheTree) {
  ASSERT_EQ(::symlink("burstable/pod1/c1", (tree_ + "/kubepods/alias").c_str()), 0);
  EXPECT_EQ(root_->WriteFile("kubepods/alias", "cpuset.cpus", "0").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadText(tree_ + "/kubepods/burstable/pod1/c1/cpuset.cpus"), "0-7\n");
}

TEST_P(CgroupRootTest, RefusesASymlinkedIntermediateDirectory) {
  // kubepods2 -> outside tree with the same layout: the path below it looks ordinary.
  MakeV1Cgroup(outside_ + "/burstable/pod1/c1", "0-7", "0-1");
  ASSERT_EQ(::symlink(outside_.c_str(), (tree_ + "/kubepods2").c_str()), 0);
  absl::Status s = root_->WriteFile("kubepods2/burstable/pod1/c1", "cpuset.cpus", "0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(ReadText(outside_ + "/burstable/pod1/c1/cpuset.cpus"), "0-7\n");
}

TEST_P(CgroupRootTest, RefusesASymlinkedInterfaceFile) {
  const std::string c1 = tree_ + "/kubepods/burstable/pod1/c1";
  ASSERT_EQ(::unlink((c1 + "/cpuset.cpus").c_str()), 0);
  ASSERT_EQ(::symlink((outside_ + "/cpuset.cpus").c_str(), (c1 + "/cpuset.cpus").c_str()), 0);
  EXPECT_EQ(root_->WriteFile("kubepods/burstable/pod1/c1", "cpuset.cpus", "0").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->ReadFile("kubepods/burstable/pod1/c1", "cpuset.cpus").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->Stat("kubepods/burstable/pod1/c1", "cpuset.cpus").status().code(),
            absl::StatusCode::kInvalidArgument);
  ExpectOutsideUntouched();
}

TEST_P(CgroupRootTest, RefusesNonRegularFiles) {
  ASSERT_EQ(::mkfifo((tree_ + "/kubepods/cpuset.fifo").c_str(), 0600), 0);
  EXPECT_FALSE(root_->WriteFile("kubepods", "cpuset.fifo", "0").ok());
  EXPECT_FALSE(root_->ReadFile("kubepods", "cpuset.fifo").ok());
  EXPECT_EQ(root_->WriteFile("kubepods", "burstable", "0").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(CgroupRootTest, AFileWhereADirectoryIsExpectedIsNotACgroup) {
  EXPECT_EQ(root_->WriteFile("cpuset.cpus/x", "cpuset.cpus", "0").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(CgroupRootTest, OpenSubtreeStaysConfined) {
  absl::StatusOr<CgroupRoot> sub = root_->OpenSubtree("kubepods/burstable");
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(sub->resolver(), GetParam());
  EXPECT_EQ(sub->path(), tree_ + "/kubepods/burstable");
  EXPECT_TRUE(sub->WriteFile("pod1/c1", "cpuset.cpus", "5").ok());
  EXPECT_EQ(ReadText(tree_ + "/kubepods/burstable/pod1/c1/cpuset.cpus"), "5");
  EXPECT_EQ(sub->WriteFile("../cpuset.cpus", "cpuset.cpus", "5").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(CgroupRootTest, ClosesEveryDescriptor) {
  const int before = testing::OpenFdCount();
  for (int i = 0; i < 50; ++i) {
    (void)root_->WriteFile("kubepods/burstable/pod1/c1", "cpuset.cpus", "1");
    (void)root_->ReadFile("kubepods/burstable/pod1/c1", "cpuset.cpus");
    (void)root_->Stat("kubepods/burstable/pod1/c1");
    (void)root_->WriteFile("kubepods/missing", "cpuset.cpus", "1");
    (void)root_->OpenSubtree("kubepods");
  }
  EXPECT_EQ(testing::OpenFdCount(), before);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, CgroupRootTest,
                         ::testing::Values(PathResolver::kOpenat2, PathResolver::kWalk),
                         ResolverName);

TEST(CgroupRootOpenTest, AutoPicksAConcreteResolverAndMissingRootIsNotFound) {
  TempDir tmp;
  absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(tmp.path());
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_NE(root->resolver(), PathResolver::kAuto);
  EXPECT_EQ(CgroupRoot::Open(tmp.path() + "/missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(ErrnoToStatusTest, MapsKernelRefusalsAndDisappearance) {
  EXPECT_EQ(ErrnoToStatus(ENOENT, "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoToStatus(ENODEV, "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoToStatus(EINVAL, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToStatus(EBUSY, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToStatus(ENOSPC, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToStatus(ELOOP, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrnoToStatus(EACCES, "x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(ErrnoToStatus(EBUSY, "x").message()).find("EBUSY"), std::string::npos);
}

}  // namespace
}  // namespace topologyd::cgroup
