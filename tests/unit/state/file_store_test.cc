#include "lib/state/file_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "lib/state/checkpoint_codec.h"
#include "tests/unit/state/test_util.h"

#include "gtest/gtest.h"
#include <sys/stat.h>

namespace topologyd::state {
namespace {

// A fresh directory under the test temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/state_store_XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

State MakeState(uint64_t generation, int cpu) {
  State s;
  s.generation = generation;
  s.pods["uid-1"] = PodRecord{
      .uid = "uid-1",
      .containers = {ContainerRecord{.name = "app", .cpus = CpuSet{cpu}, .exclusive = true}}};
  return s;
}

std::vector<std::string> Entries(const std::string& dir) {
  PosixFileSystem fs;
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(dir);
  EXPECT_TRUE(names.ok()) << names.status();
  return names.ok() ? *names : std::vector<std::string>{};
}

TEST(CheckpointStoreTest, FirstStartHasNoState) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path() + "/a/b/state");
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->has_value());
  struct stat st;
  ASSERT_EQ(::stat((tmp.path() + "/a/b/state").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(CheckpointStoreTest, SaveThenLoadInRealDirectory) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path() + "/");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->path(), tmp.path() + "/state.json");
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    State s = testing::RandomState(rng);
    ASSERT_TRUE(store->Save(s).ok());
    absl::StatusOr<std::optional<State>> loaded = store->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_TRUE(loaded->has_value());
    EXPECT_EQ(**loaded, s);
  }
  EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"});
  struct stat st;
  ASSERT_EQ(::stat(store->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(CheckpointStoreTest, CorruptFileStopsLoadWithPathAndAdvice) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(3, 4)).ok());
  std::string bytes = *fs.ReadFile(store->path());
  bytes[bytes.find("\"cpus\": \"4\"") + 9] = '5';
  ASSERT_TRUE(fs.Remove(store->path()).ok());
  ASSERT_TRUE(fs.WriteNewFileAndSync(store->path(), bytes, 0600).ok());
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find(store->path()), std::string::npos) << loaded.status();
  EXPECT_NE(loaded.status().message().find("drain the node"), std::string::npos);
}

TEST(CheckpointStoreTest, UnreadableFileIsAnErrorNotAFirstStart) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  // A directory where the file should be cannot be read.
  ASSERT_TRUE(fs.MakeDir(store->path(), 0700).ok());
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("cannot read the state checkpoint"), std::string::npos)
      << loaded.status();
}

TEST(CheckpointStoreTest, OpenRejectsEmptyDirAndFileInTheWay) {
  TempDir tmp;
  PosixFileSystem fs;
  EXPECT_EQ(CheckpointStore::Open(&fs, "").status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(fs.WriteNewFileAndSync(tmp.path() + "/file", "x", 0600).ok());
  EXPECT_FALSE(CheckpointStore::Open(&fs, tmp.path() + "/file").ok());
}

TEST(CheckpointStoreTest, LoadRemovesLeftoverTempFiles) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(fs.WriteNewFileAndSync(tmp.path() + "/state.json.tmp-dead", "{", 0600).ok());
  ASSERT_TRUE(fs.WriteNewFileAndSync(tmp.path() + "/unrelated", "keep", 0600).ok());
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(1, 1));
  EXPECT_EQ(Entries(tmp.path()), (std::vector<std::string>{"state.json", "unrelated"}));
}

// Save performs: write temp (1), rename (2), fsync dir (3). Fail each in turn, with each errno
// a disk can give, and check what survives, before and after a simulated crash.
TEST(CheckpointStoreTest, FailureAtEachStepKeepsAConsistentCheckpoint) {
  for (int step = 1; step <= 3; ++step) {
    for (int error_number : {EIO, ENOSPC, EDQUOT}) {
      SCOPED_TRACE(::testing::Message() << "step " << step << " errno " << error_number);
      TempDir tmp;
      PosixFileSystem posix;
      FaultInjectingFileSystem fs(&posix);
      absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
      ASSERT_TRUE(store.ok());
      const State old_state = MakeState(1, 1);
      const State new_state = MakeState(2, 2);
      ASSERT_TRUE(store->Save(old_state).ok());

      fs.ResetCountForTest();
      fs.FailOperation(step, error_number);
      absl::Status saved = store->Save(new_state);
      ASSERT_FALSE(saved.ok());
      EXPECT_EQ(saved.code(), absl::ErrnoToStatusCode(error_number)) << saved;
      EXPECT_NE(saved.message().find("injected failure"), std::string::npos) << saved;
      fs.FailOperation(0, 0);

      // No temp file is left behind, whatever failed.
      EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"});
      absl::StatusOr<std::optional<State>> now = store->Load();
      ASSERT_TRUE(now.ok()) << now.status();
      // Before the rename the old state is untouched; after it, the new one is in place but
      // not yet durable.
      EXPECT_EQ(**now, step < 3 ? old_state : new_state);

      ASSERT_TRUE(fs.SimulateCrash().ok());
      absl::StatusOr<std::optional<State>> after_crash = store->Load();
      ASSERT_TRUE(after_crash.ok()) << after_crash.status();
      EXPECT_EQ(**after_crash, old_state);
      EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"});
    }
  }
}

TEST(CheckpointStoreTest, FailedTempRemovalIsSweptByLoad) {
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem fs(&posix);
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(1, 1)).ok());
  fs.ResetCountForTest();
  fs.FailOperation(2, EIO);  // the rename fails ...
  ASSERT_FALSE(store->Save(MakeState(2, 2)).ok());
  fs.ResetCountForTest();
  fs.FailOperation(1, EIO);
  ASSERT_FALSE(store->Save(MakeState(3, 3)).ok());  // ... and here the write
  fs.FailOperation(0, 0);
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(1, 1));
  EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"});
}

TEST(CheckpointStoreTest, CompletedSaveSurvivesCrash) {
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem fs(&posix);
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(store->Save(MakeState(2, 2)).ok());
  ASSERT_TRUE(fs.SimulateCrash().ok());
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(2, 2));
}

TEST(CheckpointStoreTest, CrashBeforeFirstDurableSaveMeansFirstStart) {
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem fs(&posix);
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  fs.ResetCountForTest();
  fs.FailOperation(3, EIO);  // the directory fsync
  ASSERT_FALSE(store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(fs.SimulateCrash().ok());
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->has_value());
}

TEST(CheckpointStoreTest, FailedLoadOperationsAreReported) {
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem fs(&posix);
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(1, 1)).ok());
  fs.ResetCountForTest();
  fs.FailOperation(2, EACCES);  // list (1) then read (2)
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kPermissionDenied) << loaded.status();
}

TEST(FileSystemTest, PosixBasics) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string f = tmp.path() + "/f";
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile(f).status()));
  ASSERT_TRUE(fs.WriteNewFileAndSync(f, "hello", 0600).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(fs.WriteNewFileAndSync(f, "again", 0600)));
  EXPECT_EQ(*fs.ReadFile(f), "hello");
  ASSERT_TRUE(fs.Rename(f, tmp.path() + "/g").ok());
  EXPECT_TRUE(fs.SyncDir(tmp.path()).ok());
  EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"g"});
  EXPECT_TRUE(fs.Remove(tmp.path() + "/g").ok());
  EXPECT_TRUE(absl::IsNotFound(fs.Remove(tmp.path() + "/g")));
  EXPECT_TRUE(fs.MakeDir(tmp.path(), 0700).ok());  // existing directory is fine
  EXPECT_EQ(DirName("/a/b"), "/a");
  EXPECT_EQ(DirName("/a"), "/");
  EXPECT_EQ(DirName("a"), ".");
}

TEST(FileSystemTest, WriteRefusesSymlink) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string link = tmp.path() + "/link";
  ASSERT_EQ(::symlink((tmp.path() + "/target").c_str(), link.c_str()), 0);
  EXPECT_FALSE(fs.WriteNewFileAndSync(link, "x", 0600).ok());
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile(tmp.path() + "/target").status()));
}

}  // namespace
}  // namespace topologyd::state
