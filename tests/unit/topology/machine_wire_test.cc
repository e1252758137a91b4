// The loader child's wire format: every field survives, failures keep their code and message,
// and damage is an error.
#include "lib/topology/machine_wire.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::topology {
namespace {

using ::testing::HasSubstr;

// Every member set, none at its default.
MachineDescription EveryField() {
  MachineDescription machine;
  machine.pus = CpuSet::Range(0, 7);
  machine.packages = {{.os_index = 0, .cpus = CpuSet::Range(0, 3)},
                      {.os_index = 1, .cpus = CpuSet::Range(4, 7)}};
  machine.dies = {{.os_index = ObjectDescription::kUnknownIndex, .cpus = CpuSet::Range(0, 7)}};
  machine.numa_nodes = {
      {.os_index = 0,
       .cpus = CpuSet::Range(0, 3),
       .memory_bytes = uint64_t{1} << 34,
       .page_types = {{.size_bytes = 4096, .count = 100}, {.size_bytes = 2 << 20, .count = 16}},
       .subtype = ""},
      {.os_index = 17, .cpus = CpuSet(), .memory_bytes = 536870912, .subtype = "HBM"}};
  machine.cores = {{.os_index = 5, .cpus = CpuSet({0, 1})},
                   {.os_index = 6, .cpus = CpuSet({2, 3})}};
  machine.l3_caches = {{.os_index = 0, .cpus = CpuSet::Range(0, 3)}};
  machine.distance_node_ids = {0, 17};
  machine.distance_values = {10, 13, 13, 10};
  machine.pci_devices = {{.busid = "0000:3b:00.0",
                          .vendor_id = 0x10de,
                          .device_id = 0x1db4,
                          .class_id = 0x0302,
                          .has_gpu_os_device = true,
                          .locality = CpuSet::Range(0, 3),
                          .attached_to_root = false,
                          .physfn_busid = std::nullopt},
                         {.busid = "0000:3b:00.2",
                          .vendor_id = 0x15b3,
                          .device_id = 0x101e,
                          .class_id = 0x0207,
                          .locality = CpuSet(),
                          .attached_to_root = true,
                          .physfn_busid = "0000:3b:00.1"}};
  machine.kubelet_test_map = true;
  return machine;
}

TEST(MachineWireTest, RoundTripKeepsEveryField) {
  const MachineDescription machine = EveryField();
  absl::StatusOr<MachineDescription> decoded = DecodeMachine(EncodeMachine(machine));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, machine);

  absl::StatusOr<MachineDescription> empty = DecodeMachine(EncodeMachine(MachineDescription{}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, MachineDescription{});
}

TEST(MachineWireTest, EveryTruncationIsAnError) {
  const std::string bytes = EncodeMachine(EveryField());
  for (size_t size = 0; size < bytes.size(); ++size) {
    absl::Status status = DecodeMachine(bytes.substr(0, size)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << size;
  }
}

TEST(MachineWireTest, TrailingBytesAreAnError) {
  absl::Status status = DecodeMachine(EncodeMachine(EveryField()) + "x").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("1 trailing bytes"));
}

TEST(MachineWireTest, DamagedValuesAreErrors) {
  const std::string bytes = EncodeMachine(MachineDescription{});
  // The first member is the PU list: its length, then "" for an empty set.
  std::string huge_count = bytes;
  huge_count[8 + 7] = '\x7f';  // the packages' count, high byte
  EXPECT_THAT(std::string(DecodeMachine(huge_count).status().message()),
              HasSubstr("packages: count"));

  std::string bad_list = EncodeMachine(MachineDescription{.pus = CpuSet({1})});
  bad_list.back() = 'x';  // not the test-map marker's 0 or 1
  EXPECT_THAT(std::string(DecodeMachine(bad_list).status().message()),
              HasSubstr("is not a truth value"));
  bad_list = EncodeMachine(MachineDescription{.pus = CpuSet({1})});
  bad_list[8] = 'x';  // the PU list "1" becomes "x"
  EXPECT_THAT(std::string(DecodeMachine(bad_list).status().message()), HasSubstr("invalid PUs"));
}

TEST(LoadResultTest, DescriptionsAndFailuresSurvive) {
  absl::StatusOr<MachineDescription> described =
      DecodeLoadResult(EncodeLoadResult(EveryField()), "the file");
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(*described, EveryField());

  for (const absl::Status& failure :
       {absl::NotFoundError("hwloc XML file /x does not exist"),
        absl::InvalidArgumentError("hwloc failed to load it: Invalid argument"),
        absl::InternalError(""), absl::Status(absl::StatusCode::kUnavailable, "busy")}) {
    EXPECT_EQ(DecodeLoadResult(EncodeLoadResult(failure), "the file").status(), failure);
  }
}

TEST(LoadResultTest, NothingOrACutMessageIsNoResult) {
  const std::string failed = EncodeLoadResult(absl::NotFoundError("gone"));
  std::string zero_code = failed;
  zero_code.replace(1, 4, std::string(4, '\0'));
  for (const std::string& bytes :
       {std::string(), failed.substr(0, 3), zero_code, std::string("x")}) {
    absl::Status status = DecodeLoadResult(bytes, "the file").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
    EXPECT_EQ(status.message(), "the process loading the file gave no result");
  }
  const std::string described = EncodeLoadResult(EveryField());
  absl::Status cut =
      DecodeLoadResult(described.substr(0, described.size() - 1), "the file").status();
  EXPECT_EQ(cut.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(cut.message()), HasSubstr("reading the file: machine description"));
}

}  // namespace
}  // namespace topologyd::topology
