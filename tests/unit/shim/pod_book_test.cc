#include "lib/shim/pod_book.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

pod::Container Estimate(std::string name, std::string cpu) {
  pod::Container c;
  c.name = std::move(name);
  c.requests["cpu"] = *pod::Quantity::Parse(cpu);
  return c;
}

ContainerRecord Record(std::string id, std::string sandbox, std::string name, uint32_t attempt,
                       std::string cpu) {
  return ContainerRecord{
      std::move(id), std::move(sandbox), "u1", name, attempt, Estimate(name, std::move(cpu))};
}

TEST(PodBookTest, EstimatesKeepCreationOrderAndTheNewestInstanceOfEachContainer) {
  PodBook book;
  book.PutSandbox({"s1", "u1", "ns", "p", {}, "/kubepods/podu1", 0});
  book.PutContainer(Record("c1", "s1", "a", 0, "1"));
  book.PutContainer(Record("c2", "s1", "b", 0, "2"));
  book.PutContainer(Record("c3", "s1", "a", 1, "3"));  // a restarted
  std::vector<pod::Container> estimates = book.Estimates("u1");
  ASSERT_EQ(estimates.size(), 2u);
  EXPECT_EQ(estimates[0].name, "a");
  EXPECT_EQ(estimates[0].requests.at("cpu"), *pod::Quantity::Parse("3"));
  EXPECT_EQ(estimates[1].name, "b");
  EXPECT_TRUE(book.Estimates("other").empty());
}

TEST(PodBookTest, ForgettingASandboxForgetsItsContainersAndTheNewestSandboxWins) {
  PodBook book;
  book.PutSandbox({"s1", "u1", "ns", "p", {}, "/kubepods/podu1", 0});
  book.PutSandbox({"s2", "u1", "ns", "p", {}, "/kubepods/podu1", 1});
  book.PutContainer(Record("c1", "s1", "a", 0, "1"));
  book.PutContainer(Record("c2", "s2", "a", 0, "1"));
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
  book.PutContainer(Record("c1", "s1", "a", 0, "1"));
  book.PutContainer(Record("c2", "s1", "b", 0, "1"));
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
