// Decoding the state checkpoint a daemon restarts on: 250 pods of four containers on a
// 256-CPU machine, the first container of each pod holding one exclusive CPU (the load tool's
// --startup-containers 1000 layout). DecodeState() takes the fast path for canonical files
// (canonical_checkpoint.h); BM_DecodeStateByDocument is the reader it falls back to, the
// baseline in the same run.
#include <string>
#include <string_view>

#include "benchmark/benchmark.h"
#include "fmt/format.h"

#include "lib/state/checkpoint_codec.h"

namespace topologyd::state {
namespace {

const std::string& Checkpoint() {
  static const std::string bytes = [] {
    State state;
    state.generation = 1;
    CpuSet shared = CpuSet::Range(1, 255);
    for (int cpu = 1; cpu <= 127; ++cpu) shared.Remove(cpu);  // the exclusive ones below
    for (int p = 0; p < 250; ++p) {
      PodRecord pod{.uid = fmt::format("00000000-start-{:04}-000000000000", p),
                    .namespace_name = "load",
                    .name = fmt::format("startup-{}", p)};
      for (int k = 0; k < 4; ++k) {
        ContainerRecord c{.name = fmt::format("c{}", k),
                          .container_id = fmt::format("{:064x}", p * 4 + k + 1)};
        if (k == 0 && p < 127) {
          c.cpus = CpuSet{1 + p};
          c.exclusive = true;
          c.numa_affinity = {(1 + p) / 32};
        } else {
          c.cpus = shared;
        }
        pod.containers.push_back(std::move(c));
      }
      pod.qos = pod.containers.front().exclusive ? "Guaranteed" : "Burstable";
      state.pods.emplace(pod.uid, std::move(pod));
    }
    absl::StatusOr<std::string> encoded = EncodeState(state);
    return encoded.ok() ? *encoded : std::string();
  }();
  return bytes;
}

// Decodes Checkpoint() with `decode` (both readers have this signature).
void RunDecode(benchmark::State& state,
               absl::StatusOr<State> (*decode)(std::string_view, std::string_view)) {
  for (auto _ : state) {
    absl::StatusOr<State> decoded = decode(Checkpoint(), "bench");
    if (!decoded.ok()) {
      state.SkipWithError(std::string(decoded.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(decoded->pods.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Checkpoint().size()));
}

void BM_DecodeState(benchmark::State& state) { RunDecode(state, &DecodeState); }
BENCHMARK(BM_DecodeState)->Unit(benchmark::kMillisecond);

void BM_DecodeStateByDocument(benchmark::State& state) {
  RunDecode(state, &internal::DecodeStateByDocument);
}
BENCHMARK(BM_DecodeStateByDocument)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topologyd::state

BENCHMARK_MAIN();
