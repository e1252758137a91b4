#include "bench/load_phases.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <latch>
#include <mutex>
#include <thread>

namespace topologyd::bench {
namespace {

// Nearest-rank percentile of sorted samples.
double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]) / 1e6;
}

Clock::time_point DeadlineFrom(Clock::time_point start, const PhaseBounds& bounds) {
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(bounds.duration_s));
}

PhaseResult Finish(Clock::time_point start, const std::vector<Recorder>& recorders,
                   std::string error) {
  PhaseResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::map<std::string, std::vector<int64_t>> merged;
  for (const auto& r : recorders) {
    for (const auto& [kind, v] : r.samples) {
      merged[kind].insert(merged[kind].end(), v.begin(), v.end());
    }
  }
  for (auto& [kind, v] : merged) result.kinds[kind] = Summarize(std::move(v), result.seconds);
  result.error = std::move(error);
  return result;
}

}  // namespace

Summary Summarize(std::vector<int64_t> ns, double seconds) {
  Summary s;
  s.count = static_cast<int64_t>(ns.size());
  s.seconds = seconds;
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  s.p50_ms = Percentile(ns, 0.50);
  s.p99_ms = Percentile(ns, 0.99);
  s.p999_ms = Percentile(ns, 0.999);
  s.max_ms = static_cast<double>(ns.back()) / 1e6;
  double total = 0;
  for (int64_t v : ns) total += static_cast<double>(v);
  s.mean_ms = total / static_cast<double>(ns.size()) / 1e6;
  return s;
}

PhaseResult RunThreadedPhase(int threads, PhaseBounds bounds, const Iteration& iteration) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::string first_error;
  std::vector<Recorder> recorders(static_cast<size_t>(threads));
  std::latch start_line(threads + 1);
  Clock::time_point deadline;
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      start_line.arrive_and_wait();
      while (!stop.load(std::memory_order_relaxed)) {
        if (bounds.ops <= 0 && Clock::now() >= deadline) break;
        int64_t seq = next.fetch_add(1);
        if (bounds.ops > 0 && seq >= bounds.ops) break;
        std::string error = iteration(w, seq, recorders[static_cast<size_t>(w)]);
        if (!error.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) first_error = std::move(error);
          stop = true;
        }
      }
    });
  }
  Clock::time_point start = Clock::now();
  deadline = DeadlineFrom(start, bounds);
  start_line.arrive_and_wait();  // publishes `deadline` to the workers
  for (auto& t : workers) t.join();
  return Finish(start, recorders, first_error);
}

bool AsyncCalls::RunOne() {
  void* tag = nullptr;
  bool ok = false;
  if (!cq_->Next(&tag, &ok)) return false;
  std::unique_ptr<PendingCall> call(static_cast<PendingCall*>(tag));
  // A unary call's Finish tag always completes with ok; the status carries any failure.
  call->done();
  return true;
}

PhaseResult RunEventLoopPhase(int clients, PhaseBounds bounds, const AsyncIteration& iteration) {
  grpc::CompletionQueue cq;
  AsyncCalls calls(&cq);
  std::vector<Recorder> recorders(1);
  Recorder& rec = recorders.front();
  int64_t next = 0;
  int running = 0;
  std::string first_error;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = DeadlineFrom(start, bounds);
  // Starts the client's next iteration, or retires the client when the phase is over.
  std::function<void(int)> launch = [&](int client) {
    bool over =
        !first_error.empty() || (bounds.ops > 0 ? next >= bounds.ops : Clock::now() >= deadline);
    if (over) {
      --running;
      return;
    }
    iteration(client, next++, calls, rec, [&, client](std::string error) {
      if (!error.empty() && first_error.empty()) first_error = std::move(error);
      launch(client);
    });
  };
  running = clients;
  for (int c = 0; c < clients; ++c) launch(c);
  while (running > 0 && calls.RunOne()) {
  }
  cq.Shutdown();
  while (calls.RunOne()) {
  }
  return Finish(start, recorders, first_error);
}

}  // namespace topologyd::bench
