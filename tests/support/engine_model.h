// A model-based check of the engine: long sequences of admit, re-admit, release (a pod or one
// container), restart and reload, each followed by a check of the invariants every state must
// keep. The operations are chosen by a Choices source, so the same driver runs seeded random
// sequences (tests/unit/engine/model_test.cc) and fuzzer-chosen ones (tests/fuzz).
//
// Invariants after every step:
//   - no exclusive CPU, and no device, is held by two containers that can run at the same time
//     (containers of two pods; within a pod, see pod::RunsAlongsideLater);
//   - no exclusive CPU is reserved; the shared pool is every CPU the node shares out less the
//     exclusive ones;
//   - admitting a pod again never changes what a container it keeps holds;
//   - a refused admission changes nothing;
//   - after a restart the state is the one before it (the checkpoint is read back whole);
//   - a reload, accepted or refused, changes no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/engine/engine.h"
#include "lib/pod/pod.h"
#include "lib/state/file_system.h"

namespace topologyd::testing {

// Where the operations come from.
class Choices {
 public:
  virtual ~Choices() = default;
  // A number in [0, bound); bound > 0.
  virtual uint32_t Below(uint32_t bound) = 0;
  // False once the source has nothing more to say.
  virtual bool More() const = 0;
};

class SeededChoices final : public Choices {
 public:
  SeededChoices(uint32_t seed, int steps) : rng_(seed), left_(steps) {}
  uint32_t Below(uint32_t bound) override { return rng_() % bound; }
  bool More() const override { return left_ > 0; }
  void Took() { --left_; }

 private:
  std::mt19937 rng_;
  int left_;
};

// Reads choices from a fuzzer's bytes, one byte each (0 when they run out).
class ByteChoices final : public Choices {
 public:
  ByteChoices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint32_t Below(uint32_t bound) override { return at_ < size_ ? data_[at_++] % bound : 0; }
  bool More() const override { return at_ < size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// A node: a machine (hwloc synthetic description) and a configuration (YAML, without
// stateDir, which the model sets).
struct ModelNode {
  std::string name;
  std::string synthetic;
  std::string config;
};

// How GoogleTest names a node in parameterised tests.
inline void PrintTo(const ModelNode& node, std::ostream* out) { *out << node.name; }

// Machines and policies the model runs on: the reported case, devices and memory under
// single-numa-node, pod scope with full-pcpus-only, policy none, strict reservation.
const std::vector<ModelNode>& ModelNodes();

class EngineModel {
 public:
  // Starts an engine for `node` with its state in `state_dir` (created if missing).
  static absl::StatusOr<std::unique_ptr<EngineModel>> Start(const ModelNode& node,
                                                            const std::string& state_dir);
  ~EngineModel();

  // One operation chosen by `choices`, then the invariants. A violation is INTERNAL with what
  // happened; the history says how the model got there.
  absl::Status Step(Choices& choices);
  // The operations so far, one line each.
  std::string History() const;
  int admitted() const { return admitted_; }
  int refused() const { return refused_; }

 private:
  EngineModel(ModelNode node, std::string state_dir);

  absl::Status StartEngine();
  pod::Pod RandomPod(Choices& choices);
  absl::Status AdmitNew(Choices& choices);
  absl::Status AdmitAgain(Choices& choices);
  absl::Status ReleasePod(Choices& choices);
  absl::Status ReleaseContainer(Choices& choices);
  absl::Status Restart();
  absl::Status Reload(Choices& choices);
  absl::Status CheckState() const;
  absl::Status Violation(const std::string& what) const;

  const ModelNode node_;
  const std::string state_dir_;
  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const topology::Topology> topology_;
  state::PosixFileSystem fs_;
  std::unique_ptr<engine::Engine> engine_;
  std::vector<std::string> resources_;    // device pools' resource names
  std::map<std::string, pod::Pod> pods_;  // admitted, by uid
  int next_uid_ = 0;
  int admitted_ = 0;
  int refused_ = 0;
  std::vector<std::string> history_;
};

}  // namespace topologyd::testing
