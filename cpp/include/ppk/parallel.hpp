// ppk/parallel.hpp -- the one place ppk starts threads.
//
// Three ways in, all on detail::ThreadGroup:
//  * parallel_for_blocks: a static parallel-for, one contiguous block per thread;
//  * run_cancellable: indices handed out one at a time to a group of workers, with a cancel flag
//    (ppk/cancel.hpp) that the calling thread raises when its poll asks for it (the Python binding
//    polls for Ctrl-C there, cpp/src/bindings.hpp);
//  * run_both: two halves of one kernel's walk at once, where the caller leaves a core idle.
// Callers keep per-index results independent of the split and of the order, so output never
// depends on the number of threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "ppk/cancel.hpp"

namespace ppk {

inline unsigned worker_count(std::int64_t work_items, std::int64_t min_items_per_thread) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t by_work = std::max<std::int64_t>(1, work_items / std::max<std::int64_t>(1, min_items_per_thread));
  return static_cast<unsigned>(std::min<std::int64_t>({static_cast<std::int64_t>(hw), by_work, 16}));
}

// Whether a kernel may start a thread of its own (run_both): not on the workers of a pool that
// already keeps every core busy (run_cancellable clears it there).
inline bool& inner_threads_allowed() {
  thread_local bool allowed = true;
  return allowed;
}

namespace detail {

// Threads started together and joined together (at the latest on destruction, so that an exception
// on the starting thread never leaves a joinable std::thread behind).
class ThreadGroup {
 public:
  ThreadGroup() = default;
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;
  ~ThreadGroup() { join(); }

  void reserve(std::size_t n) { threads_.reserve(n); }
  // fn() on a new thread; throws std::system_error when none can be had
  template <class Fn>
  std::thread& start(Fn&& fn) {
    threads_.emplace_back(std::forward<Fn>(fn));
    return threads_.back();
  }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

// Keeps a helper thread off the caller's current core.  Linux places a new thread on its parent's
// core and, on small virtual machines, often leaves it queued there until the parent's half of the
// work is done, so that run_both would run its halves one after the other.  Best effort: no effect
// where the affinity cannot be read or set.
inline void keep_off_current_core(std::thread& helper) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  const int here = sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &allowed)) return;
  CPU_CLR(here, &allowed);
  pthread_setaffinity_np(helper.native_handle(), sizeof allowed, &allowed);
#else
  (void)helper;
#endif
}

}  // namespace detail

// fn(begin, end) on disjoint blocks covering [0, n).
template <class Fn>
void parallel_for_blocks(std::int64_t n, unsigned threads, const Fn& fn) {
  if (threads <= 1 || n <= 1) { fn(std::int64_t(0), n); return; }
  detail::ThreadGroup group;
  const std::int64_t block = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) {
    const std::int64_t b = std::min<std::int64_t>(n, t * block), e = std::min<std::int64_t>(n, b + block);
    if (b < e) group.start([&fn, b, e] { fn(b, e); });
  }
  fn(std::int64_t(0), std::min<std::int64_t>(n, block));
  group.join();
}

// fn(i) for every i in [0, n) on worker_count(n, 1) new threads, each index handed out once, while
// the calling thread waits and calls poll() every 50 ms: when poll() returns true the workers'
// cancel flag is raised (poll_cancel throws Cancelled in the kernels), no further index starts, and
// run_cancellable returns true once every worker has ended.  An exception from fn cancels the rest
// and is rethrown here (unless poll asked first).  With a worker per core, the kernels' own second
// thread (run_both) is switched off on the workers.
template <class Fn, class Poll>
bool run_cancellable(std::int64_t n, const Fn& fn, Poll&& poll) {
  if (n <= 0) return false;
  std::atomic<bool> cancel{false};
  std::atomic<std::int64_t> next{0};
  const unsigned threads = worker_count(n, 1);
  std::mutex mu;
  std::condition_variable cv;
  unsigned running = threads;
  std::exception_ptr error;
  auto worker = [&] {
    CancelScope scope(&cancel);
    inner_threads_allowed() = threads < 2;
    try {
      for (std::int64_t i = next.fetch_add(1); i < n && !cancel.load(); i = next.fetch_add(1)) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> guard(mu);
      if (!error) error = std::current_exception();
      cancel = true;
    }
    std::lock_guard<std::mutex> guard(mu);
    --running;
    cv.notify_all();
  };
  bool interrupted = false;
  {
    detail::ThreadGroup group;
    group.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) group.start(worker);
    std::unique_lock<std::mutex> lock(mu);
    while (running > 0) {
      if (cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return running == 0; })) break;
      lock.unlock();
      if (!interrupted && poll()) {
        interrupted = true;
        cancel = true;
      }
      lock.lock();
    }
    lock.unlock();
    group.join();
  }
  if (interrupted) return true;
  if (error) std::rethrow_exception(error);
  return false;
}

// f0() and f1() at once when `parallel` (f1 on a new thread that inherits the caller's cancel flag and watch,
// kept off the caller's core), else one after the other.  Callers give each its own state, so
// results never depend on which way it ran.  An exception from either is rethrown after both have
// ended.
template <class FirstFn, class SecondFn>
void run_both(bool parallel, FirstFn&& f0, SecondFn&& f1) {
  if (!parallel || !inner_threads_allowed() || std::thread::hardware_concurrency() < 2) {
    f0();
    f1();
    return;
  }
  const std::atomic<bool>* flag = cancel_flag();
  const InterruptWatch watch = interrupt_watch();
  std::exception_ptr error1;
  detail::ThreadGroup group;
  try {
    std::thread& helper = group.start([&] {
      CancelScope scope(flag);
      WatchScope watching(watch);
      inner_threads_allowed() = false;
      try { f1(); } catch (...) { error1 = std::current_exception(); }
    });
    detail::keep_off_current_core(helper);
  } catch (const std::system_error&) {   // no thread to be had: run serially
    f0();
    f1();
    return;
  }
  try {
    f0();
  } catch (...) {
    group.join();
    throw;
  }
  group.join();
  if (error1) std::rethrow_exception(error1);
}

}  // namespace ppk
