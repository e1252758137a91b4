// Starts the real topologyd binary and drives it as an operator would: check-config,
// status over the socket, SIGHUP reloads (live, refused and broken), SIGTERM, sd_notify
// messages, and refusal of callers outside allowedPeers.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"
#include "tests/support/require_component.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

nlohmann::json StatusJson(const std::string& socket) {
  CommandResult r = RunCommand({TopoctlBinary(), "--socket", socket, "status", "--output", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// Polls `status` until `pred` holds (reloads are asynchronous to the signal).
template <typename Pred>
nlohmann::json WaitForStatus(const std::string& socket, Pred pred) {
  nlohmann::json doc;
  for (int i = 0; i < 200; ++i) {
    doc = StatusJson(socket);
    if (pred(doc)) return doc;
    usleep(25000);
  }
  return doc;
}

TEST(DaemonHelpTest, HelpPointsToTheDocs) {
  CommandResult r = RunCommand({TopologydBinary(), "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--check-config"));
  EXPECT_THAT(r.out, HasSubstr("docs/configuration.md"));
  EXPECT_THAT(r.out, HasSubstr("docs/operations.md"));
}

TEST(DaemonCheckConfigTest, ShippedProductionConfigIsValid) {
  CommandResult r = RunCommand({TopologydBinary(), "--check-config",
                                std::string(TOPOLOGYD_SOURCE_DIR) + "/config/topologyd.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("is valid"));
}

TEST(DaemonCheckConfigTest, UnknownKeyFailsNamingKeyFileAndLine) {
  TempDir dir;
  WriteFile(dir.File("bad.yaml"), "log: {level: info}\ncpuManagerPolcy: static\n");
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", dir.File("bad.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(dir.File("bad.yaml") + ":2: cpuManagerPolcy: unknown key"));
}

// What only the machine or the policies refuse is reported as syntax is: every problem in one
// run, in line order, each with its line.
TEST(DaemonCheckConfigTest, ValueErrorsComeAllAtOnceWithTheirLines) {
  TempDir dir;
  std::string config = MinimalConfig(
      dir.path(), "topologyManagerPolicyOptions: {bogus: \"1\"}\ncpuManagerPolcy: static\n");
  const std::string reserved = "reservedSystemCPUs: \"0\"\n";
  config.replace(config.find(reserved), reserved.size(), "reservedSystemCPUs: \"0-x\"\n");
  WriteFile(dir.File("c.yaml"), config);
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", dir.File("c.yaml")});
  EXPECT_EQ(r.exit_code, 1);
  const size_t cpus = r.err.find(dir.File("c.yaml") + ":6: reservedSystemCPUs: ");
  const size_t options = r.err.find(dir.File("c.yaml") + ":9: topologyManagerPolicyOptions: ");
  EXPECT_NE(cpus, std::string::npos) << r.err;
  EXPECT_NE(options, std::string::npos) << r.err;
  EXPECT_LT(cpus, options) << r.err;
  // The loader's own problems come in the same run, in line order.
  const size_t typo = r.err.find(dir.File("c.yaml") +
                                 ":10: cpuManagerPolcy: unknown key; did you "
                                 "mean cpuManagerPolicy?");
  EXPECT_NE(typo, std::string::npos) << r.err;
  EXPECT_LT(options, typo) << r.err;
}

TEST(DaemonCheckConfigTest, PciPoolMatchingNothingIsValidWithAWarning) {
  TempDir dir;
  // The simulated machine has no PCI devices.
  WriteFile(dir.File("c.yaml"), MinimalConfig(dir.path(),
                                              "devices:\n  - resourceName: example.com/nic\n"
                                              "    pci: {vendor: \"8086\", class: \"0200\"}\n"));
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", dir.File("c.yaml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("is valid"));
  EXPECT_THAT(r.err, HasSubstr("warning: " + dir.File("c.yaml") +
                               ": devices: pool example.com/nic matches no PCI device"));
}

TEST(DaemonCheckConfigTest, UnloadableTopologyFails) {
  TempDir dir;
  WriteFile(dir.File("c.yaml"), "topology: {source: xml, path: /nonexistent/machine.xml}\n");
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", dir.File("c.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/machine.xml"));
}

TEST(DaemonCheckConfigTest, VersionFlag) {
  CommandResult r = RunCommand({TopologydBinary(), "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("topologyd "));
}

// MinimalConfig(dir) with its line starting `key:` replaced by `line`.
std::string MinimalConfigWith(const std::string& dir, const std::string& key,
                              const std::string& line) {
  std::string config = "\n" + MinimalConfig(dir);
  const size_t at = config.find("\n" + key + ":") + 1;
  config.replace(at, config.find('\n', at) - at, line);
  return config.substr(1);
}

// `--check-config` must refuse what start-up refuses: both exit 1; the check names the file
// and `check_says`, start-up logs `start_says`.
void ExpectCheckAndStartUpFail(const TempDir& dir, const std::string& config,
                               const std::string& check_says, const std::string& start_says) {
  const std::string path = dir.File("c.yaml");
  WriteFile(path, config);
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", path});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr(path + check_says));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("is valid")));
  DaemonProcess daemon;
  daemon.Start(path, dir.File("start.log"));
  EXPECT_EQ(daemon.WaitForExit(seconds(30)), std::optional<int>(1));
  EXPECT_THAT(ReadFile(dir.File("start.log")), HasSubstr(start_says));
}

TEST(DaemonCheckConfigTest, SocketPathTooLongForSunPathFails) {
  TempDir dir;
  const std::string socket = dir.File(std::string(120, 's') + ".sock");
  const std::string message = ":1: listen: socket path \"" + socket + "\" is " +
                              std::to_string(socket.size()) +
                              " bytes; a Unix socket path must be shorter than 108 bytes";
  // The loader's check: start-up prints the same line.
  ExpectCheckAndStartUpFail(dir,
                            MinimalConfigWith(dir.path(), "listen", "listen: unix://" + socket),
                            message, dir.File("c.yaml") + message);
}

TEST(DaemonCheckConfigTest, UnknownSocketGroupFails) {
  TempDir dir;
  ExpectCheckAndStartUpFail(dir,
                            MinimalConfig(dir.path(), "socket: {group: topologyd-no-such-group}\n"),
                            ": socket.group: unknown group \"topologyd-no-such-group\"",
                            "unknown group \"topologyd-no-such-group\"");
}

TEST(DaemonCheckConfigTest, MissingOrNonDirectoryCgroupRootFails) {
  TempDir dir;
  // Start-up opens the root even for a dry run (apply: false, as in MinimalConfig).
  const std::string missing = dir.File("no-cgroup");
  ExpectCheckAndStartUpFail(dir,
                            MinimalConfigWith(dir.path(), "cgroup",
                                              "cgroup: {root: " + missing +
                                                  ", driver: cgroupfs, version: v2, apply: "
                                                  "false}"),
                            ": cgroup.root: open cgroup root " + missing, "cgroup root " + missing);
  const std::string file = dir.File("cgroup-file");
  WriteFile(file, "");
  ExpectCheckAndStartUpFail(
      dir,
      MinimalConfigWith(dir.path(), "cgroup",
                        "cgroup: {root: " + file + ", driver: cgroupfs, version: v2, apply: true}"),
      ": cgroup.root: open cgroup root " + file + ": ENOTDIR", "cgroup root " + file);
}

TEST(DaemonCheckConfigTest, StateDirThatIsNotADirectoryFails) {
  TempDir dir;
  WriteFile(dir.File("state"), "not a directory\n");
  ExpectCheckAndStartUpFail(dir, MinimalConfig(dir.path()),
                            ": stateDir: " + dir.File("state") + " is not a directory",
                            "cannot create the state directory");
  // Nor may a file stand where start-up would create a parent.
  ExpectCheckAndStartUpFail(
      dir, MinimalConfigWith(dir.path(), "stateDir", "stateDir: " + dir.File("state/sub")),
      ": stateDir: cannot create " + dir.File("state/sub") + ": " + dir.File("state") +
          " is not a directory",
      "cannot create the state directory");
}

TEST(DaemonCheckConfigTest, MissingStateDirIsValidAndLeftUncreated) {
  TempDir dir;
  // Start-up creates a missing state directory (here relative to the file's directory).
  WriteFile(dir.File("c.yaml"), MinimalConfigWith(dir.path(), "stateDir", "stateDir: new/state"));
  CommandResult r = RunCommand({TopologydBinary(), "--check-config", dir.File("c.yaml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("is valid"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("new"))) << "--check-config created it";
}

TEST(DaemonProcessTest, ServesStatusReloadsOnHupAndStopsOnTerm) {
  TempDir dir;
  std::string config = dir.File("config.yaml");
  std::string socket = dir.File("topologyd.sock");
  WriteFile(config, MinimalConfig(dir.path()));
  DaemonProcess daemon;
  daemon.Start(config, dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log"));

  nlohmann::json status = StatusJson(socket);
  EXPECT_EQ(status["config_path"], config);
  EXPECT_EQ(status["socket"], socket);
  EXPECT_EQ(status["cpu_manager_policy"], "static");
  EXPECT_TRUE(status["last_reload"].is_null());
  EXPECT_FALSE(status["version"].get<std::string>().empty());
  EXPECT_TRUE(status["healthy"].get<bool>());
  EXPECT_EQ(status["checkpoint"]["path"], dir.File("state/state.json"));
  EXPECT_EQ(status["checkpoint"]["failed_writes"], 0);
  EXPECT_EQ(status["checkpoint"]["last_error"], "");
  EXPECT_EQ(status["problem"], "");
  EXPECT_TRUE(status["checkpoint"]["write_running_seconds"].is_null());
  CommandResult table = RunCommand({TopoctlBinary(), "--socket", socket, "status"});
  EXPECT_THAT(table.out, HasSubstr("health"));
  EXPECT_THAT(table.out, HasSubstr(dir.File("state/state.json") + ": generation 0 on disk"));

  // A live key applies at once.
  WriteFile(config, MinimalConfig(dir.path(), "log: {level: debug}\n"));
  daemon.Signal(SIGHUP);
  status =
      WaitForStatus(socket, [](const nlohmann::json& s) { return !s["last_reload"].is_null(); });
  ASSERT_FALSE(status["last_reload"].is_null());
  EXPECT_TRUE(status["last_reload"]["ok"].get<bool>());
  EXPECT_EQ(status["last_reload"]["applied_keys"], nlohmann::json::array({"log.level"}));

  // A restart-only key is refused and the old value kept.
  std::string next = MinimalConfig(dir.path(), "log: {level: debug}\n");
  next.replace(next.find("cpuManagerPolicy: static"), 24, "cpuManagerPolicy: none  ");
  WriteFile(config, next);
  daemon.Signal(SIGHUP);
  status = WaitForStatus(
      socket, [](const nlohmann::json& s) { return !s["last_reload"]["refused_keys"].empty(); });
  EXPECT_EQ(status["last_reload"]["refused_keys"], nlohmann::json::array({"cpuManagerPolicy"}));
  EXPECT_EQ(status["cpu_manager_policy"], "static");

  // A broken file is rejected whole; the daemon keeps serving the old configuration.
  WriteFile(config, "log: {level: [\n");
  daemon.Signal(SIGHUP);
  status = WaitForStatus(socket, [](const nlohmann::json& s) {
    return !s["last_reload"]["error"].get<std::string>().empty();
  });
  EXPECT_THAT(status["last_reload"]["error"].get<std::string>(), HasSubstr("invalid YAML"));
  EXPECT_EQ(status["cpu_manager_policy"], "static");

  daemon.Signal(SIGTERM);
  std::optional<int> code = daemon.WaitForExit(seconds(30));
  ASSERT_TRUE(code.has_value()) << "daemon did not stop on SIGTERM";
  EXPECT_EQ(*code, 0) << ReadFile(dir.File("log"));
  EXPECT_FALSE(std::filesystem::exists(socket)) << "socket left behind";
  EXPECT_THAT(ReadFile(dir.File("log")), HasSubstr("reload refused restart-only keys"));
}

// SIGINT stops the daemon like SIGTERM. SIGIO must not: the kernel sends it to the holder of
// a write lease when someone opens the leased file, and the checkpoint store takes such leases.
TEST(DaemonProcessTest, SigintStopsCleanlyAndSigioDoesNotStopIt) {
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path()));
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(dir.File("topologyd.sock"), seconds(30)));
  daemon.Signal(SIGIO);
  EXPECT_FALSE(daemon.WaitForExit(seconds(1)).has_value()) << "SIGIO ended the daemon";
  EXPECT_EQ(StatusJson(dir.File("topologyd.sock"))["cpu_manager_policy"], "static");
  daemon.Signal(SIGINT);
  EXPECT_EQ(daemon.WaitForExit(seconds(30)), std::optional<int>(0));
}

TEST(DaemonProcessTest, InvalidConfigStopsStartUp) {
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path(), "bogus: 1\n"));
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"));
  std::optional<int> code = daemon.WaitForExit(seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(ReadFile(dir.File("log")), HasSubstr("bogus: unknown key"));
}

// A second daemon must not take over a running one's state or socket: both would pin
// containers and hand out the same CPUs.
TEST(DaemonProcessTest, SecondDaemonOnTheSameStateOrSocketRefusesToStart) {
  TempDir dir;
  const std::string socket = dir.File("topologyd.sock");
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path()));
  DaemonProcess first;
  first.Start(dir.File("config.yaml"), dir.File("log"));
  ASSERT_TRUE(first.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log"));

  DaemonProcess same_state;
  same_state.Start(dir.File("config.yaml"), dir.File("log2"));
  EXPECT_EQ(same_state.WaitForExit(seconds(30)), std::optional<int>(1));
  EXPECT_THAT(ReadFile(dir.File("log2")), HasSubstr("is in use by another topologyd process"));

  std::string other_state = MinimalConfig(dir.path());
  other_state.replace(other_state.find("/state\n"), 7, "/state2\n");
  WriteFile(dir.File("config2.yaml"), other_state);
  DaemonProcess same_socket;
  same_socket.Start(dir.File("config2.yaml"), dir.File("log3"));
  EXPECT_EQ(same_socket.WaitForExit(seconds(30)), std::optional<int>(1));
  EXPECT_THAT(ReadFile(dir.File("log3")), HasSubstr("another process is serving on it"));

  // The first one still serves, on its own socket.
  EXPECT_EQ(StatusJson(socket)["config_path"], dir.File("config.yaml"));
  // A daemon killed outright leaves its socket behind, and the kernel drops its lock: the
  // next one starts over both.
  first.Signal(SIGKILL);
  EXPECT_EQ(first.WaitForExit(seconds(30)), std::optional<int>(-1));
  ASSERT_TRUE(std::filesystem::exists(socket));
  DaemonProcess next;
  next.Start(dir.File("config.yaml"), dir.File("log4"));
  ASSERT_TRUE(next.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log4"));
  next.Signal(SIGTERM);
  EXPECT_EQ(next.WaitForExit(seconds(30)), std::optional<int>(0));
}

// systemd's side of sd_notify: a datagram socket named by NOTIFY_SOCKET.
class NotifyReceiver {
 public:
  explicit NotifyReceiver(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{.tv_sec = 30, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~NotifyReceiver() { ::close(fd_); }
  // Next datagram, "" on timeout.
  std::string Next() {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  // Skips datagrams until one contains `what`; false on timeout.
  bool WaitFor(const std::string& what) {
    for (std::string m = Next(); !m.empty(); m = Next()) {
      if (m.find(what) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::string path_;
  int fd_;
};

TEST(DaemonProcessTest, NotifiesSystemdOfReadyReloadingAndStopping) {
  TempDir dir;
  NotifyReceiver notify(dir.File("notify.sock"));
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path()));
  DaemonProcess daemon;
  // systemd's WatchdogSec=200ms: pings are expected while the engine is healthy.
  daemon.Start(dir.File("config.yaml"), dir.File("log"),
               {{"NOTIFY_SOCKET", dir.File("notify.sock")}, {"WATCHDOG_USEC", "200000"}});
  EXPECT_TRUE(notify.WaitFor("READY=1")) << ReadFile(dir.File("log"));
  EXPECT_TRUE(notify.WaitFor("STATUS=serving"));
  EXPECT_TRUE(notify.WaitFor("WATCHDOG=1"));
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(notify.WaitFor("RELOADING=1"));
  EXPECT_TRUE(notify.WaitFor("STATUS=serving; reload"));
  EXPECT_TRUE(notify.WaitFor("READY=1"));
  daemon.Signal(SIGTERM);
  EXPECT_TRUE(notify.WaitFor("STOPPING=1"));
  EXPECT_EQ(daemon.WaitForExit(seconds(30)), std::optional<int>(0));
}

TEST(DaemonProcessTest, CallerOutsideAllowedPeersIsDenied) {
  TempDir dir;
  // Only uid 4242 may call; this test runs as someone else.
  std::string config = MinimalConfig(dir.path());
  config.replace(config.find("allowedPeers: {uids: [0], sameUser: true}"), 41,
                 "allowedPeers: {uids: [4242]}             ");
  WriteFile(dir.File("config.yaml"), config);
  ASSERT_NE(::getuid(), 4242u);
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"));
  std::string socket = dir.File("topologyd.sock");
  CommandResult r;
  for (int i = 0; i < 400 && !std::filesystem::exists(socket); ++i) usleep(25000);
  r = RunCommand({TopoctlBinary(), "--socket", socket, "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not in allowedPeers"));
}

TEST(DaemonProcessTest, OtherUidIsDeniedWhenOnlyRootIsAllowed) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a client under another uid";
  if (RunCommand({"/usr/bin/setpriv", "--version"}).exit_code != 0) {
    SKIP_OR_FAIL() << "setpriv (util-linux) not installed";
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);  // let the unprivileged client reach the socket file
  std::string config = MinimalConfig(dir.path(), "socket: {mode: \"0666\"}\n");
  config.replace(config.find("allowedPeers: {uids: [0], sameUser: true}"), 41,
                 "allowedPeers: {uids: [0]}                ");
  WriteFile(dir.File("config.yaml"), config);
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"));
  std::string socket = dir.File("topologyd.sock");
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30)));  // root is allowed
  CommandResult r = RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                "--clear-groups", TopoctlBinary(), "--socket", socket, "status"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("uid 65534 gid 65534 is not in allowedPeers"));
}

}  // namespace
}  // namespace topologyd::testing
