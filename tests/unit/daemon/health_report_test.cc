// What systemd and the gRPC health service are told as the engine's health changes.
#include "daemon/health_report.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::daemon {
namespace {

using ::testing::ElementsAre;

class RecordingNotifier : public os::Notifier {
 public:
  void Notify(std::string_view state) override { sent.emplace_back(state); }
  std::vector<std::string> sent;
};

class HealthReportTest : public ::testing::Test {
 protected:
  RecordingNotifier notifier_;
  std::vector<bool> serving_;
  HealthReport report_{&notifier_, [this](bool serving) { serving_.push_back(serving); }};
};

TEST_F(HealthReportTest, FirstUpdatePublishesServing) {
  report_.Update(true, "");
  EXPECT_THAT(serving_, ElementsAre(true));
  EXPECT_THAT(notifier_.sent, ElementsAre("STATUS=serving"));
}

TEST_F(HealthReportTest, RepeatingTheSameHealthPublishesNothing) {
  report_.Update(true, "");
  report_.Update(true, "");
  report_.Update(false, "disk full");
  report_.Update(false, "disk full");
  EXPECT_THAT(serving_, ElementsAre(true, false));
  EXPECT_EQ(notifier_.sent.size(), 2u);
}

TEST_F(HealthReportTest, FailingWritesTurnNotServingWithTheErrorAndRecover) {
  report_.Update(true, "");
  report_.Update(false,
                 "the state checkpoint cannot be written: cannot save state generation 7: No "
                 "space left on device");
  EXPECT_THAT(serving_, ElementsAre(true, false));
  EXPECT_EQ(notifier_.sent.back(),
            "STATUS=not acknowledging changes: the state checkpoint cannot be written: cannot "
            "save state generation 7: No space left on device");
  // A different error while still failing: STATUS= follows, the health service is not
  // told again.
  report_.Update(false,
                 "the state checkpoint cannot be written: cannot save state generation 8: "
                 "Read-only file system");
  EXPECT_THAT(serving_, ElementsAre(true, false));
  EXPECT_THAT(notifier_.sent.back(), ::testing::HasSubstr("Read-only file system"));
  report_.Update(true, "");
  EXPECT_THAT(serving_, ElementsAre(true, false, true));
  EXPECT_EQ(notifier_.sent.back(), "STATUS=serving");
}

TEST_F(HealthReportTest, ReloadNoteFollowsTheHealth) {
  report_.Update(true, "");
  report_.SetReloadNote("reload applied");
  EXPECT_EQ(report_.status_line(), "serving; reload applied");
  EXPECT_EQ(notifier_.sent.back(), "STATUS=serving; reload applied");
  report_.Update(false, "the state checkpoint cannot be written: disk full");
  EXPECT_EQ(report_.status_line(),
            "not acknowledging changes: the state checkpoint cannot be written: disk full; "
            "reload applied");
  EXPECT_THAT(serving_, ElementsAre(true, false)) << "a reload note must not toggle serving";
}

TEST_F(HealthReportTest, StatusStaysOneLine) {
  report_.Update(false, "the state checkpoint cannot be written: first line\nREADY=1");
  EXPECT_EQ(notifier_.sent.back(),
            "STATUS=not acknowledging changes: the state checkpoint cannot be written: first "
            "line READY=1");
}

TEST_F(HealthReportTest, AHungWriteIsReportedLikeAFailingOne) {
  report_.Update(true, "");
  report_.Update(false, "a state checkpoint write to /s/state.json has not finished after 10.2 s");
  EXPECT_THAT(serving_, ElementsAre(true, false));
  EXPECT_EQ(report_.status_line(),
            "not acknowledging changes: a state checkpoint write to /s/state.json has not "
            "finished after 10.2 s");
}

TEST_F(HealthReportTest, AnErrorTextWhileHealthyIsIgnored) {
  report_.Update(true, "stale");
  EXPECT_EQ(report_.status_line(), "serving");
}

}  // namespace
}  // namespace topologyd::daemon
