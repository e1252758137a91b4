#include "lib/shim/pod_book.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

podspec::CriResources Shares(int64_t shares) {
  podspec::CriResources r;
  r.cpu_shares = shares;
  return r;
}

ContainerRecord Record(std::string id, std::string sandbox, std::string name, uint32_t attempt,
                       int64_t shares) {
  return ContainerRecord{std::move(id), std::move(sandbox), "u1", name, attempt, Shares(shares)};
}

TEST(PodBookTest, ResourcesKeepCreationOrderAndTheNewestInstanceOfEachContainer) {
  PodBook book;
  book.PutSandbox({"s1", "u1", "ns", "p", {}, "/kubepods/podu1", 0});
  book.PutContainer(Record("c1", "s1", "a", 0, 1024));
  book.PutContainer(Record("c2", "s1", "b", 0, 2048));
  book.PutContainer(Record("c3", "s1", "a", 1, 3072));  // a restarted
  book.PutContainer({"c4", "s1", "u1", "unknown", 0, std::nullopt});
  auto known = book.Resources("u1");
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known[0].first, "a");
  EXPECT_EQ(known[0].second.cpu_shares, 3072);
  EXPECT_EQ(known[1].first, "b");
  EXPECT_TRUE(book.Resources("other").empty());
}

TEST(PodBookTest, ForgettingASandboxForgetsItsContainersAndTheNewestSandboxWins) {
  PodBook book;
  book.PutSandbox({"s1", "u1", "ns", "p", {}, "/kubepods/podu1", 0});
  book.PutSandbox({"s2", "u1", "ns", "p", {}, "/kubepods/podu1", 1});
  book.PutContainer(Record("c1", "s1", "a", 0, 1024));
  book.PutContainer(Record("c2", "s2", "a", 0, 1024));
  EXPECT_EQ(book.SandboxOfPod("u1")->id, "s2");
  book.ForgetSandbox("s1");
  EXPECT_EQ(book.Container("c1"), nullptr);
  ASSERT_NE(book.Container("c2"), nullptr);
  EXPECT_EQ(book.sandbox_count(), 1u);
  book.ForgetContainer("c2");
  EXPECT_TRUE(book.ContainersOfPod("u1").empty());
}

TEST(PodBookTest, ListsTheIdsOfTheContainersItKnows) {
  PodBook book;
  book.PutContainer(Record("c1", "s1", "a", 0, 1024));
  book.PutContainer(Record("c2", "s1", "b", 0, 1024));
  EXPECT_EQ(book.ContainerIds(), (std::set<std::string>{"c1", "c2"}));
  book.ForgetContainer("c1");
  EXPECT_EQ(book.ContainerIds(), (std::set<std::string>{"c2"}));
}

TEST(PodBookTest, APodsQuotaIsLiftedOnceUntilItsLastSandboxGoes) {
  PodBook book;
  book.PutSandbox({"s1", "u1", "ns", "p", {}, "/kubepods/podu1", 0});
  book.PutSandbox({"s2", "u1", "ns", "p", {}, "/kubepods/podu1", 1});
  EXPECT_TRUE(book.MarkPodQuotaLifted("u1"));
  EXPECT_FALSE(book.MarkPodQuotaLifted("u1"));
  EXPECT_TRUE(book.MarkPodQuotaLifted("u2"));
  book.ForgetSandbox("s1");  // the pod still has a sandbox, and its pod cgroup
  EXPECT_FALSE(book.MarkPodQuotaLifted("u1"));
  book.ForgetSandbox("s2");
  EXPECT_TRUE(book.MarkPodQuotaLifted("u1"));
}

}  // namespace
}  // namespace topologyd::shim
