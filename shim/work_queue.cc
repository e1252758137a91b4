#include "shim/work_queue.h"

namespace topologyd::shim {

WorkQueue::WorkQueue(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

WorkQueue::~WorkQueue() { Stop(); }

void WorkQueue::Post(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      tasks_.push_back(std::move(task));
      return;
    }
  }
  task();
}

void WorkQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WorkQueue::Work() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](WorkQueue* q)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) { return q->stopping_ || !q->tasks_.empty(); },
          this));
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace topologyd::shim
