// Timed phases of the load tool: latency samples, their summary, and the two ways of driving
// N concurrent clients — one thread per client making blocking calls, or one event-loop
// thread keeping one asynchronous call outstanding on each client's connection (the way
// h2load drives its clients), which leaves more of a small machine to the daemon under test.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

namespace topologyd::bench {

using Clock = std::chrono::steady_clock;

struct Summary {
  int64_t count = 0;
  double seconds = 0;  // wall time of the phase the samples come from
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
  double ops_per_s() const { return seconds > 0 ? count / seconds : 0; }
};

// Nanosecond samples, summarized with nearest-rank percentiles.
Summary Summarize(std::vector<int64_t> ns, double seconds);

// Latencies per op kind ("admit", "release", ...).
struct Recorder {
  std::map<std::string, std::vector<int64_t>> samples;

  void Add(const std::string& kind, Clock::duration d) {
    samples[kind].push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  template <typename F>
  auto Time(const std::string& kind, F&& f) {
    Clock::time_point start = Clock::now();
    auto result = f();
    Add(kind, Clock::now() - start);
    return result;
  }
};

struct PhaseResult {
  double seconds = 0;
  std::map<std::string, Summary> kinds;
  std::string error;  // the first failure; empty when every operation succeeded
};

// How long a phase runs: `ops` iterations in total when > 0, else `duration_s` seconds.
struct PhaseBounds {
  double duration_s = 2.0;
  int64_t ops = 0;
};

// One iteration of a threaded phase on worker `worker`; returns an error message, or "".
using Iteration = std::function<std::string(int worker, int64_t seq, Recorder& rec)>;

// Runs `threads` workers, each calling `iteration` in a loop; stops early at the first failure.
PhaseResult RunThreadedPhase(int threads, PhaseBounds bounds, const Iteration& iteration);

// The event loop's side of one asynchronous unary call: StartCall() gives the tag to pass to
// Finish(); the loop runs `done` with the outcome when the call completes.
class AsyncCalls {
 public:
  explicit AsyncCalls(grpc::CompletionQueue* cq) : cq_(cq) {}

  // Starts `prepare(context, cq)` (a stub's PrepareAsyncX bound to its request) and runs
  // `done(status, response)` on the loop when it completes. Times it into `rec` as `kind`.
  template <typename Response, typename Prepare>
  void Call(const std::string& kind, Recorder& rec, std::chrono::seconds deadline,
            Prepare&& prepare, std::function<void(const grpc::Status&, Response&)> done) {
    auto* call = new TypedCall<Response>;
    call->context.set_deadline(std::chrono::system_clock::now() + deadline);
    call->started = Clock::now();
    call->done = [call, &rec, kind, done = std::move(done)] {
      rec.Add(kind, Clock::now() - call->started);
      done(call->status, call->response);
    };
    call->reader = prepare(&call->context, cq_);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status, static_cast<PendingCall*>(call));
  }

  // Waits for the next completion and runs its `done`; false once the queue is shut down.
  bool RunOne();

 private:
  struct PendingCall {
    virtual ~PendingCall() = default;
    grpc::ClientContext context;
    grpc::Status status;
    Clock::time_point started;
    std::function<void()> done;
  };
  template <typename Response>
  struct TypedCall : PendingCall {
    Response response;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
  };

  grpc::CompletionQueue* cq_;
};

// One iteration of an event-loop phase for client `client`: starts its first call through
// `calls` and, from the completion handlers, whatever calls follow; it ends by calling
// `finished` with an error message, or "" on success. It must not block.
using AsyncIteration = std::function<void(int client, int64_t seq, AsyncCalls& calls, Recorder& rec,
                                          std::function<void(std::string)> finished)>;

// Runs `clients` clients on one thread, each starting its next iteration as soon as the last
// one finished; stops early at the first failure.
PhaseResult RunEventLoopPhase(int clients, PhaseBounds bounds, const AsyncIteration& iteration);

}  // namespace topologyd::bench
