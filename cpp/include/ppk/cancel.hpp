// ppk/cancel.hpp -- cooperative cancellation of long kernel loops (Ctrl-C).
//
// The Python binding runs kernels on worker threads and polls for signals on the
// calling thread; on Ctrl-C it raises the flag that `poll_cancel` reads.  Every loop
// whose length depends on the input calls poll_cancel() once per iteration (the counting
// kernel's walks, whose steps are a few multiplications, at every 8th: ppk/counting/walk.hpp);
// it reads a thread-local pointer and, every 1024 calls, the shared atomic flag, so the cost
// is a counter increment.  Outside the binding (no flag installed) it never fires.
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

inline void poll_cancel() {
  thread_local std::uint32_t calls = 0;
  if ((++calls & 1023u) != 0) return;
  const std::atomic<bool>* flag = cancel_flag();
  if (flag != nullptr && flag->load(std::memory_order_relaxed)) throw Cancelled();
}

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
