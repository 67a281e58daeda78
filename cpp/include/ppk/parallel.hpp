// ppk/parallel.hpp -- a minimal static parallel-for over an index range.
// Work is cut into one contiguous block per thread; callers keep per-index
// results independent of the split, so output never depends on thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <system_error>
#include <thread>
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

// fn(begin, end) on disjoint blocks covering [0, n).
template <class Fn>
void parallel_for_blocks(std::int64_t n, unsigned threads, const Fn& fn) {
  if (threads <= 1 || n <= 1) { fn(std::int64_t(0), n); return; }
  std::vector<std::thread> pool;
  const std::int64_t block = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) {
    const std::int64_t b = std::min<std::int64_t>(n, t * block), e = std::min<std::int64_t>(n, b + block);
    if (b < e) pool.emplace_back([&fn, b, e] { fn(b, e); });
  }
  fn(std::int64_t(0), std::min<std::int64_t>(n, block));
  for (auto& th : pool) th.join();
}

// Whether a kernel may start a thread of its own (run_both): not on the workers of a pool that
// already keeps every core busy (bindings.hpp clears it there).
inline bool& inner_threads_allowed() {
  thread_local bool allowed = true;
  return allowed;
}

// Keeps a helper thread off the caller's current core.  Linux places a new thread on its parent's
// core and, on this project's 2-core virtual machines, often leaves it queued there until the
// parent's half of the work is done: measured on one delta at N = 1e7 (sigma = 2000) run as the
// Python binding runs it, inside a worker thread, the helper started after ~0.9 ms of a ~0.9 ms
// walk in most calls, and the delta took 5.8 ms against 3.8-4.9 ms with the helper kept off the
// caller's core.  Best effort: no effect where the affinity cannot be read or set.
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

// f0() and f1() at once when `parallel` (f1 on a new thread that inherits the caller's cancel flag,
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
  std::exception_ptr error1;
  std::thread helper;
  try {
    helper = std::thread([&] {
      CancelScope scope(flag);
      inner_threads_allowed() = false;
      try { f1(); } catch (...) { error1 = std::current_exception(); }
    });
    keep_off_current_core(helper);
  } catch (const std::system_error&) {   // no thread to be had: run serially
    f0();
    f1();
    return;
  }
  try {
    f0();
  } catch (...) {
    helper.join();
    throw;
  }
  helper.join();
  if (error1) std::rethrow_exception(error1);
}

}  // namespace ppk
