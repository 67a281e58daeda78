// ppk/cancel.hpp -- cooperative cancellation of long kernel loops (Ctrl-C).
//
// The Python binding runs kernels on worker threads and polls for signals on the
// calling thread; on Ctrl-C it raises the flag that `poll_cancel` reads.  Every loop
// whose length depends on the input calls poll_cancel() once per iteration (the counting
// kernel's walks, whose steps are a few multiplications, at every 8th: ppk/counting/walk.hpp);
// it reads a thread-local pointer and, every 1024 calls, the shared atomic flag, so the cost
// is a counter increment.  Outside the binding (no flag installed) it never fires.
//
// Ctrl-C in any thread (docs/limits.md, "Interrupting"): Python runs its SIGINT handler on the main
// thread only, so a kernel called from another thread never learnt of it.  The binding chains a
// C-level handler in front of Python's (cpp/src/bindings.hpp) that counts SIGINTs in
// interrupt_count(); a kernel may also watch that count (InterruptWatch: the count when its call
// began) and poll_cancel then fires once it has moved.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace ppk {

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

inline const std::atomic<bool>*& cancel_flag() {
  thread_local const std::atomic<bool>* flag = nullptr;
  return flag;
}

// SIGINTs received by the process (raised by the binding's handler: a lock-free atomic, so
// async-signal-safe).
inline std::atomic<std::uint64_t> interrupt_counter{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the SIGINT count must be lock-free");
inline std::uint64_t interrupt_count() { return interrupt_counter.load(std::memory_order_relaxed); }

// A kernel watching for SIGINT: `on`, and the count when its call began.
struct InterruptWatch {
  bool on = false;
  std::uint64_t since = 0;
  bool fired() const { return on && interrupt_count() != since; }
};

inline InterruptWatch& interrupt_watch() {
  thread_local InterruptWatch watch;
  return watch;
}

inline void poll_cancel() {
  thread_local std::uint32_t calls = 0;
  if ((++calls & 1023u) != 0) return;
  const std::atomic<bool>* flag = cancel_flag();
  if (flag != nullptr && flag->load(std::memory_order_relaxed)) throw Cancelled();
  if (interrupt_watch().fired()) throw Cancelled();
}

// Installs `watch` for the current thread for the lifetime of the guard.
class WatchScope {
 public:
  explicit WatchScope(InterruptWatch watch) : saved_(interrupt_watch()) { interrupt_watch() = watch; }
  ~WatchScope() { interrupt_watch() = saved_; }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  InterruptWatch saved_;
};

// Installs `flag` for the current thread for the lifetime of the guard.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag) : saved_(cancel_flag()) { cancel_flag() = flag; }
  ~CancelScope() { cancel_flag() = saved_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* saved_;
};

}  // namespace ppk
