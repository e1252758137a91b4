// The NRT file publisher on a real engine (no cgroup enforcement): written at start, rewritten
// after acknowledged changes with changes close together sharing one write, the pending change
// written at Stop(), a failing write logged once and retried, and the atomic write itself.
#include "lib/nrt/nrt_file_publisher.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/nrt/pod_fingerprint.h"
#include "lib/state/file_system.h"
#include "tests/support/log_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/admission/admission_test_util.h"
#include "tests/unit/nrt/publisher_test_engine.h"

namespace topologyd::nrt {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class NrtFilePublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started =
        topologyd::testing::StartPublisherTestEngine(dir_.path() + "/state", &fs_, "best-effort");
    ASSERT_TRUE(started.ok()) << started.status();
    engine_ = *std::move(started);
  }

  std::unique_ptr<NrtFilePublisher> Publish(std::chrono::milliseconds min_interval,
                                            std::chrono::milliseconds retry_after) {
    auto started = NrtFilePublisher::Start({.path = path_,
                                            .engine = engine_.get(),
                                            .min_interval = min_interval,
                                            .retry_after = retry_after,
                                            .log_info = info_.Sink(),
                                            .log_error = errors_.Sink()});
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? *std::move(started) : nullptr;
  }

  void Admit(const std::string& uid) {
    auto reply = engine_->Admit(admission::testing::Pod(
        uid, {admission::testing::Ctr("app", {{"cpu", "1"}, {"memory", "64Mi"}})}));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_TRUE(reply->admitted) << reply->message;
  }

  static std::string FingerprintOf(const std::vector<std::string>& uids) {
    PodFingerprint fingerprint;
    for (const std::string& uid : uids) fingerprint.Add("default", "pod-" + uid);
    return fingerprint.Sign();
  }

  // Polls the file until it holds `text`; whether it did within 10 s.
  bool FileShows(const std::string& text) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ReadText(path_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  topologyd::testing::TempDir dir_{"topologyd-nrt"};
  const std::string path_ = dir_.path() + "/run/nrt.yaml";
  state::PosixFileSystem fs_;
  std::unique_ptr<engine::Engine> engine_;
  topologyd::testing::LogCapture info_;
  topologyd::testing::LogCapture errors_;
};

TEST_F(NrtFilePublisherTest, WrittenAtStartThenAfterChangesThatShareWrites) {
  auto publisher = Publish(std::chrono::seconds(1), std::chrono::seconds(1));
  ASSERT_NE(publisher, nullptr);
  // The missing directory was made; the first write happened before Start returned.
  EXPECT_EQ(publisher->writes(), 1U);
  EXPECT_THAT(ReadText(path_), HasSubstr("name: \"worker-7\""));
  EXPECT_THAT(ReadText(path_), HasSubstr(FingerprintOf({})));
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);

  // Changes within one interval of the last write share the next one.
  for (const char* uid : {"a", "b", "c", "d"}) Admit(uid);
  ASSERT_TRUE(FileShows(FingerprintOf({"a", "b", "c", "d"})));
  EXPECT_LE(publisher->writes(), 3U);  // the first, and one or (on a slow machine) two more
  EXPECT_THAT(errors_.Lines(), SizeIs(0));
}

TEST_F(NrtFilePublisherTest, StopWritesThePendingChange) {
  auto publisher = Publish(std::chrono::seconds(30), std::chrono::seconds(1));
  ASSERT_NE(publisher, nullptr);
  Admit("a");
  // Admit returns once the change is durable; the engine hands it to watchers just after, and
  // Flush waits for that, as the daemon does before it stops the publisher.
  ASSERT_TRUE(engine_->Flush().ok());
  EXPECT_EQ(publisher->writes(), 1U) << "written before the interval was over";
  publisher->Stop();  // long before the interval is over
  EXPECT_THAT(ReadText(path_), HasSubstr(FingerprintOf({"a"})));
  EXPECT_EQ(publisher->writes(), 2U);
}

TEST_F(NrtFilePublisherTest, AFailingWriteIsLoggedOnceAndRetried) {
  auto publisher = Publish(std::chrono::milliseconds(10), std::chrono::milliseconds(50));
  ASSERT_NE(publisher, nullptr);
  // A directory where the file was: the rename cannot replace it.
  std::filesystem::remove(path_);
  std::filesystem::create_directory(path_);
  Admit("a");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (errors_.Lines().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several retries
  ASSERT_THAT(errors_.Lines(), SizeIs(1));
  EXPECT_THAT(errors_.Lines()[0], HasSubstr(path_));
  // Admission went on meanwhile.
  Admit("b");
  std::filesystem::remove(path_);
  ASSERT_TRUE(FileShows(FingerprintOf({"a", "b"})));
  // The recovery is logged just after the rename.
  const auto logged_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (info_.Lines().empty() && std::chrono::steady_clock::now() < logged_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(info_.Lines(), ::testing::ElementsAre(HasSubstr("writing " + path_ + " again")));
  EXPECT_THAT(errors_.Lines(), SizeIs(1));
}

TEST_F(NrtFilePublisherTest, RefreshRewritesWithoutAChange) {
  auto publisher = Publish(std::chrono::milliseconds(10), std::chrono::seconds(1));
  ASSERT_NE(publisher, nullptr);
  std::filesystem::remove(path_);
  publisher->Refresh();
  ASSERT_TRUE(FileShows("NodeResourceTopology"));
  // The count goes up just after the file is in place.
  for (int i = 0; i < 1000 && publisher->writes() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(publisher->writes(), 2U);
}

TEST(WriteFileAtomicallyTest, ReplacesTheFileAndLeavesNoTemporaryFile) {
  topologyd::testing::TempDir dir("topologyd-nrt");
  const std::string path = dir.path() + "/nrt.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadText(path), "new");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("nrt.json"));
  absl::Status s = WriteFileAtomically(dir.path() + "/missing/nrt.json", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("missing"));
}

}  // namespace
}  // namespace topologyd::nrt
