#include "lib/state/file_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "gtest/gtest.h"

#include "lib/state/checkpoint_codec.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/state/test_util.h"

namespace topologyd::state {
namespace {

// As in the daemon: the store reuses files only while SIGIO (the lease-break signal) is
// ignored. Tests that need it otherwise set it back and restore it.
const bool kSigioIgnored = [] { return ::signal(SIGIO, SIG_IGN) != SIG_ERR; }();

// Sets SIGIO to its default action for one scope.
class DefaultSigio {
 public:
  DefaultSigio() { previous_ = ::signal(SIGIO, SIG_DFL); }
  ~DefaultSigio() { ::signal(SIGIO, previous_); }

 private:
  sighandler_t previous_;
};

using topologyd::testing::TempDir;

// A store on a fault-injecting file system in a fresh directory.
struct FaultyStore {
  FaultyStore() {
    absl::StatusOr<CheckpointStore> opened = CheckpointStore::Open(&fs, tmp.path());
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) store.emplace(*std::move(opened));
  }
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem fs{&posix};
  std::optional<CheckpointStore> store;
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

// Save performs: write temp (1), exchange with state.json (2), fsync dir (3). Fail each in
// turn, with each errno a disk can give, and check what survives, before and after a simulated
// crash.
TEST(CheckpointStoreTest, FailureAtEachStepKeepsAConsistentCheckpoint) {
  for (int step = 1; step <= 3; ++step) {
    for (int error_number : {EIO, ENOSPC, EDQUOT}) {
      SCOPED_TRACE(::testing::Message() << "step " << step << " errno " << error_number);
      FaultyStore s;
      const State old_state = MakeState(1, 1);
      const State new_state = MakeState(2, 2);
      ASSERT_TRUE(s.store->Save(old_state).ok());

      s.fs.ResetCountForTest();
      s.fs.FailOperation(step, error_number);
      absl::Status saved = s.store->Save(new_state);
      ASSERT_FALSE(saved.ok());
      EXPECT_EQ(saved.code(), absl::ErrnoToStatusCode(error_number)) << saved;
      EXPECT_NE(saved.message().find("injected failure"), std::string::npos) << saved;
      s.fs.FailOperation(0, 0);

      // No temp file is left behind, whatever failed.
      EXPECT_EQ(Entries(s.tmp.path()), std::vector<std::string>{"state.json"});
      absl::StatusOr<std::optional<State>> now = s.store->Load();
      ASSERT_TRUE(now.ok()) << now.status();
      // Before the rename the old state is untouched; after it, the new one is in place but
      // not yet durable.
      EXPECT_EQ(**now, step < 3 ? old_state : new_state);

      ASSERT_TRUE(s.fs.SimulateCrash().ok());
      absl::StatusOr<std::optional<State>> after_crash = s.store->Load();
      ASSERT_TRUE(after_crash.ok()) << after_crash.status();
      EXPECT_EQ(**after_crash, old_state);
      EXPECT_EQ(Entries(s.tmp.path()), std::vector<std::string>{"state.json"});
    }
  }
}

TEST(CheckpointStoreTest, FailedTempRemovalIsSweptByLoad) {
  FaultyStore s;
  ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
  s.fs.ResetCountForTest();
  s.fs.FailOperation(2, EIO);  // the rename fails ...
  ASSERT_FALSE(s.store->Save(MakeState(2, 2)).ok());
  s.fs.ResetCountForTest();
  s.fs.FailOperation(1, EIO);
  ASSERT_FALSE(s.store->Save(MakeState(3, 3)).ok());  // ... and here the write
  s.fs.FailOperation(0, 0);
  absl::StatusOr<std::optional<State>> loaded = s.store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(1, 1));
  EXPECT_EQ(Entries(s.tmp.path()), std::vector<std::string>{"state.json"});
}

TEST(CheckpointStoreTest, CompletedSaveSurvivesCrash) {
  // The first save creates state.json, the second a temp file it exchanges with it, the third
  // overwrites the file the second retired. A crash after any of them keeps that save.
  for (int saves = 1; saves <= 3; ++saves) {
    SCOPED_TRACE(::testing::Message() << saves << " saves");
    FaultyStore s;
    for (int g = 1; g <= saves; ++g) ASSERT_TRUE(s.store->Save(MakeState(g, g)).ok());
    ASSERT_TRUE(s.fs.SimulateCrash().ok());
    absl::StatusOr<std::optional<State>> loaded = s.store->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(**loaded, MakeState(saves, saves));
  }
}

ino_t Inode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(CheckpointStoreTest, SavesReuseTheRetiredCheckpointFile) {
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  std::vector<ino_t> inodes;
  for (int g = 1; g <= 4; ++g) {
    ASSERT_TRUE(store->Save(MakeState(g, g)).ok());
    inodes.push_back(Inode(store->path()));
  }
  // Two files take turns: the new state goes into the file the previous save retired.
  EXPECT_EQ(inodes[3], inodes[1]);
  EXPECT_EQ(inodes[2], inodes[0]);
  EXPECT_NE(inodes[3], inodes[2]);
  std::vector<std::string> names = Entries(tmp.path());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "state.json");
  ASSERT_TRUE(names[1].starts_with(CheckpointStore::kTempPrefix)) << names[1];
  // The retired file holds the previous checkpoint, whole; Load removes it.
  absl::StatusOr<State> retired = DecodeState(*fs.ReadFile(tmp.path() + "/" + names[1]), "spare");
  ASSERT_TRUE(retired.ok()) << retired.status();
  EXPECT_EQ(*retired, MakeState(3, 3));
  absl::StatusOr<std::optional<State>> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(4, 4));
  EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"});
  // After Load the next save starts from a new file again.
  ASSERT_TRUE(store->Save(MakeState(5, 5)).ok());
  EXPECT_EQ(Entries(tmp.path()).size(), 2u);
  EXPECT_EQ(**store->Load(), MakeState(5, 5));
}

// With a retired file to reuse, Save performs: overwrite it (1), exchange (2), fsync dir (3).
TEST(CheckpointStoreTest, FailureAtEachStepOfAReusingSaveKeepsAConsistentCheckpoint) {
  for (int step = 1; step <= 3; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    FaultyStore s;
    ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
    ASSERT_TRUE(s.store->Save(MakeState(2, 2)).ok());

    s.fs.ResetCountForTest();
    s.fs.FailOperation(step, EIO);
    absl::Status saved = s.store->Save(MakeState(3, 3));
    s.fs.FailOperation(0, 0);
    if (step == 1) {
      // A retired file that cannot be overwritten is dropped for a new one: the save works.
      ASSERT_TRUE(saved.ok()) << saved;
      ASSERT_TRUE(s.fs.SimulateCrash().ok());
      EXPECT_EQ(**s.store->Load(), MakeState(3, 3));
      continue;
    }
    ASSERT_FALSE(saved.ok());
    EXPECT_EQ(saved.code(), absl::ErrnoToStatusCode(EIO)) << saved;
    EXPECT_EQ(Entries(s.tmp.path()), std::vector<std::string>{"state.json"});
    absl::StatusOr<std::optional<State>> now = s.store->Load();
    ASSERT_TRUE(now.ok()) << now.status();
    EXPECT_EQ(**now, step < 3 ? MakeState(2, 2) : MakeState(3, 3));
    ASSERT_TRUE(s.fs.SimulateCrash().ok());
    absl::StatusOr<std::optional<State>> after_crash = s.store->Load();
    ASSERT_TRUE(after_crash.ok()) << after_crash.status();
    EXPECT_EQ(**after_crash, MakeState(2, 2));
    // And the store goes on saving.
    ASSERT_TRUE(s.store->Save(MakeState(4, 4)).ok());
    ASSERT_TRUE(s.fs.SimulateCrash().ok());
    EXPECT_EQ(**s.store->Load(), MakeState(4, 4));
  }
}

// After a failed directory fsync the exchange may not be durable: on disk the retired file may
// still be state.json. Overwriting it then, and crashing mid-write, would leave a torn
// checkpoint; the store must start the next save from a new file instead. Here the disk fails
// for good during that next save, and then the machine crashes.
TEST(CheckpointStoreTest, FileWhoseRetirementIsNotDurableIsNeverOverwritten) {
  FaultyStore s;
  ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(s.store->Save(MakeState(2, 2)).ok());
  s.fs.ResetCountForTest();
  s.fs.FailOperation(3, EIO);  // the directory fsync
  ASSERT_FALSE(s.store->Save(MakeState(3, 3)).ok());
  s.fs.ResetCountForTest();
  s.fs.FailFrom(1, EIO);  // the next save's first write is torn, and nothing works after it
  ASSERT_FALSE(s.store->Save(MakeState(4, 4)).ok());
  s.fs.FailOperation(0, 0);
  ASSERT_TRUE(s.fs.SimulateCrash().ok());
  absl::StatusOr<std::optional<State>> loaded = s.store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(**loaded, MakeState(2, 2));
}

TEST(CheckpointStoreTest, ReaderHoldingTheRetiredFileOpenReadsItWhole) {
  ASSERT_TRUE(kSigioIgnored);
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(store->Save(MakeState(2, 2)).ok());
  // A backup tool opens state.json and is slow to read it.
  const int reader = ::open(store->path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  // The third save retires the reader's file, the fourth would reuse it.
  ASSERT_TRUE(store->Save(MakeState(3, 3)).ok());
  ASSERT_TRUE(store->Save(MakeState(4, 4)).ok());
  std::string bytes(1 << 16, '\0');
  const ssize_t n = ::pread(reader, bytes.data(), bytes.size(), 0);
  ::close(reader);
  ASSERT_GT(n, 0);
  bytes.resize(static_cast<size_t>(n));
  absl::StatusOr<State> read = DecodeState(bytes, "reader");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, MakeState(2, 2));
  EXPECT_EQ(**store->Load(), MakeState(4, 4));
}

TEST(CheckpointStoreTest, WithoutIgnoredSigioSavesStopKeepingTheRetiredFile) {
  DefaultSigio sigio;
  TempDir tmp;
  PosixFileSystem fs;
  absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, tmp.path());
  ASSERT_TRUE(store.ok());
  // The second save keeps the retired file, the third finds it cannot be reused here; from
  // then on each save is the plain create-and-rename and leaves state.json alone.
  for (int g = 1; g <= 5; ++g) {
    ASSERT_TRUE(store->Save(MakeState(g, g)).ok());
    if (g >= 3) {
      EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"state.json"}) << g;
    }
  }
  EXPECT_EQ(**store->Load(), MakeState(5, 5));
}

// ENOSYS: a kernel or file system without RENAME_EXCHANGE; EPERM: a sandbox that forbids it.
TEST(CheckpointStoreTest, FileSystemWithoutExchangeFallsBackToRename) {
  for (int error_number : {ENOSYS, EPERM}) {
    SCOPED_TRACE(::testing::Message() << "errno " << error_number);
    FaultyStore s;
    ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
    s.fs.ResetCountForTest();
    s.fs.FailOperation(2, error_number);  // the exchange
    ASSERT_TRUE(s.store->Save(MakeState(2, 2)).ok());
    EXPECT_EQ(s.fs.operation_count(), 4);  // write, exchange, rename, fsync dir
    EXPECT_EQ(Entries(s.tmp.path()), std::vector<std::string>{"state.json"});
    s.fs.FailOperation(0, 0);
    s.fs.ResetCountForTest();
    ASSERT_TRUE(s.store->Save(MakeState(3, 3)).ok());
    EXPECT_EQ(s.fs.operation_count(), 3);  // no second attempt: write, rename, fsync dir
    ASSERT_TRUE(s.fs.SimulateCrash().ok());
    EXPECT_EQ(**s.store->Load(), MakeState(3, 3));
  }
}

// A directory or file system that refuses every change fails a save at whichever step comes
// first: the exchange (chattr +i: EPERM) or the overwrite of the retired file (a read-only
// remount: EROFS). That save fails; once changes are allowed again, saves still recycle the
// retired file.
TEST(CheckpointStoreTest, ARefusingFileSystemFailsTheSaveWithoutEndingReuse) {
  struct Case {
    int first_failing_operation;  // of a reusing save: overwrite (1), exchange (2), fsync dir (3)
    int error_number;
    absl::StatusCode code;
  };
  for (const Case& c : {Case{2, EPERM, absl::StatusCode::kPermissionDenied},
                        Case{1, EROFS, absl::ErrnoToStatusCode(EROFS)}}) {
    SCOPED_TRACE(::testing::Message() << "errno " << c.error_number);
    FaultyStore s;
    ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
    ASSERT_TRUE(s.store->Save(MakeState(2, 2)).ok());
    s.fs.ResetCountForTest();
    s.fs.FailFrom(c.first_failing_operation, c.error_number);  // and everything after it
    EXPECT_EQ(s.store->Save(MakeState(3, 3)).code(), c.code);
    s.fs.FailOperation(0, 0);
    ASSERT_TRUE(s.store->Save(MakeState(4, 4)).ok());
    ASSERT_TRUE(s.store->Save(MakeState(5, 5)).ok());
    // The file retired by the last save holds generation 4: it was kept for reuse.
    bool kept = false;
    for (const std::string& name : Entries(s.tmp.path())) {
      if (!name.starts_with(CheckpointStore::kTempPrefix)) continue;
      absl::StatusOr<State> retired =
          DecodeState(*s.posix.ReadFile(s.tmp.path() + "/" + name), name);
      kept = kept || (retired.ok() && *retired == MakeState(4, 4));
    }
    EXPECT_TRUE(kept) << "a failed save turned off the reuse of retired files";
    EXPECT_EQ(**s.store->Load(), MakeState(5, 5));
  }
}

TEST(CheckpointStoreTest, CrashBeforeFirstDurableSaveMeansFirstStart) {
  FaultyStore s;
  s.fs.ResetCountForTest();
  s.fs.FailOperation(3, EIO);  // the directory fsync
  ASSERT_FALSE(s.store->Save(MakeState(1, 1)).ok());
  ASSERT_TRUE(s.fs.SimulateCrash().ok());
  absl::StatusOr<std::optional<State>> loaded = s.store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->has_value());
}

TEST(CheckpointStoreTest, FailedLoadOperationsAreReported) {
  FaultyStore s;
  ASSERT_TRUE(s.store->Save(MakeState(1, 1)).ok());
  s.fs.ResetCountForTest();
  s.fs.FailOperation(2, EACCES);  // list (1) then read (2)
  absl::StatusOr<std::optional<State>> loaded = s.store->Load();
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kPermissionDenied) << loaded.status();
}

// ReadFile sizes its buffer from fstat: files of any size read whole, and so do files whose
// size fstat does not tell (a pipe), through the growing path.
TEST(FileSystemTest, ReadFileReadsWholeFilesWhateverFstatSays) {
  TempDir tmp;
  PosixFileSystem fs;
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  big += "tail";
  for (const std::string& contents : {std::string(), std::string("x"), big}) {
    const std::string f = tmp.path() + "/f" + std::to_string(contents.size());
    ASSERT_TRUE(fs.WriteNewFileAndSync(f, contents, 0600).ok());
    absl::StatusOr<std::string> read = fs.ReadFile(f);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, contents) << contents.size() << " bytes";
  }

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    std::string_view rest = big;
    while (!rest.empty()) {
      const ssize_t n = ::write(fds[1], rest.data(), rest.size());
      if (n <= 0) break;
      rest.remove_prefix(static_cast<size_t>(n));
    }
    ::close(fds[1]);
  });
  absl::StatusOr<std::string> piped = fs.ReadFile("/proc/self/fd/" + std::to_string(fds[0]));
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_EQ(piped->size(), big.size());
  EXPECT_TRUE(*piped == big);
}

// A (sparse) file above the limit is refused from its size, before anything is allocated.
TEST(FileSystemTest, ReadFileRefusesFilesAboveTheLimit) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string f = tmp.path() + "/huge";
  ASSERT_TRUE(fs.WriteNewFileAndSync(f, "{", 0600).ok());
  ASSERT_EQ(::truncate(f.c_str(), static_cast<off_t>(FileSystem::kMaxReadBytes) + 1), 0);
  absl::StatusOr<std::string> read = fs.ReadFile(f);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kOutOfRange) << read.status();
  EXPECT_NE(read.status().message().find(f), std::string::npos) << read.status();
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

TEST(FileSystemTest, OverwriteReplacesTheWholeContents) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string f = tmp.path() + "/f";
  EXPECT_TRUE(absl::IsNotFound(fs.OverwriteUnsharedFileAndSync(f, "x")));
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile(f).status())) << "overwrite created the file";
  ASSERT_TRUE(fs.WriteNewFileAndSync(f, "a longer text", 0600).ok());
  const ino_t before = Inode(f);
  ASSERT_TRUE(fs.OverwriteUnsharedFileAndSync(f, "short").ok());
  EXPECT_EQ(*fs.ReadFile(f), "short");
  EXPECT_EQ(Inode(f), before);
  EXPECT_FALSE(fs.OverwriteUnsharedFileAndSync(tmp.path(), "x").ok());  // a directory
  const std::string fifo = tmp.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(fs.OverwriteUnsharedFileAndSync(fifo, "x").ok());  // refused, without hanging
}

TEST(FileSystemTest, OverwriteRefusesAFileOpenElsewhere) {
  ASSERT_TRUE(kSigioIgnored);
  TempDir tmp;
  PosixFileSystem fs;
  const std::string f = tmp.path() + "/f";
  ASSERT_TRUE(fs.WriteNewFileAndSync(f, "old", 0600).ok());
  const int reader = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  EXPECT_TRUE(absl::IsUnavailable(fs.OverwriteUnsharedFileAndSync(f, "new")));
  ::close(reader);
  EXPECT_EQ(*fs.ReadFile(f), "old");
  ASSERT_TRUE(fs.OverwriteUnsharedFileAndSync(f, "new").ok());
  EXPECT_EQ(*fs.ReadFile(f), "new");
  DefaultSigio sigio;
  EXPECT_TRUE(absl::IsFailedPrecondition(fs.OverwriteUnsharedFileAndSync(f, "x")));
  EXPECT_EQ(*fs.ReadFile(f), "new");
}

TEST(FileSystemTest, ExchangeSwapsTwoFiles) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string a = tmp.path() + "/a";
  const std::string b = tmp.path() + "/b";
  ASSERT_TRUE(fs.WriteNewFileAndSync(a, "A", 0600).ok());
  EXPECT_TRUE(absl::IsNotFound(fs.Exchange(a, b)));
  EXPECT_EQ(*fs.ReadFile(a), "A");
  ASSERT_TRUE(fs.WriteNewFileAndSync(b, "B", 0600).ok());
  absl::Status exchanged = fs.Exchange(a, b);
  if (absl::IsUnimplemented(exchanged)) GTEST_SKIP() << exchanged;
  ASSERT_TRUE(exchanged.ok()) << exchanged;
  EXPECT_EQ(*fs.ReadFile(a), "B");
  EXPECT_EQ(*fs.ReadFile(b), "A");
}

TEST(FileSystemTest, WriteRefusesSymlink) {
  TempDir tmp;
  PosixFileSystem fs;
  const std::string link = tmp.path() + "/link";
  ASSERT_EQ(::symlink((tmp.path() + "/target").c_str(), link.c_str()), 0);
  EXPECT_FALSE(fs.WriteNewFileAndSync(link, "x", 0600).ok());
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile(tmp.path() + "/target").status()));
  ASSERT_TRUE(fs.WriteNewFileAndSync(tmp.path() + "/target", "kept", 0600).ok());
  EXPECT_FALSE(fs.OverwriteUnsharedFileAndSync(link, "x").ok());
  EXPECT_EQ(*fs.ReadFile(tmp.path() + "/target"), "kept");
}

}  // namespace
}  // namespace topologyd::state
