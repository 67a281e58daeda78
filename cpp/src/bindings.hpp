// Shared declarations for the pybind11 registration units.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#endif

#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"
#include "ppk/parallel.hpp"

namespace py = pybind11;

void register_counting(py::module_& m);
void register_distributions(py::module_& m);
void register_histogram(py::module_& m);
void register_risk(py::module_& m);

// A 1-d contiguous double array (copy made by pybind11 if needed).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A std::vector moved into a numpy array that owns it (no copy).
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}

// -- Ctrl-C in any thread (docs/limits.md, "Interrupting") --------------------------------------------------
// Python runs its SIGINT handler on the main thread only, and PyErr_CheckSignals does nothing elsewhere, so a
// kernel called from another thread (a thread pool, a GUI's worker) never learnt of Ctrl-C and ran to its end.
// Design: a C-level SIGINT handler, chained in front of the one Python installed, counts SIGINTs
// (ppk::interrupt_counter, a lock-free atomic: async-signal-safe) and then calls Python's handler, so
// Python sees every signal as before.  It is installed, or re-installed after signal.signal() replaced it,
// when a kernel starts, and only while Python's handler is the default one (signal.default_int_handler,
// i.e. Ctrl-C means KeyboardInterrupt): SIG_IGN, SIG_DFL and a host's own handler are left alone, and
// signal.getsignal(SIGINT) never changes (only the C level is touched).  A kernel notes the count when its
// call began (or when the thread entered _kernels.interruptible(), for Python loops over many short kernels)
// and stops once it has moved: on the main thread Python's handler has raised KeyboardInterrupt, which is
// reported; on another thread the kernel raises KeyboardInterrupt in that thread.
namespace ppk_interrupt {

inline PyObject* getsignal = nullptr;        // signal.getsignal, kept from module init
inline PyObject* default_handler = nullptr;  // signal.default_int_handler
inline unsigned long main_thread = 0;        // threading.main_thread().ident

#if defined(__unix__) || defined(__APPLE__)
inline struct sigaction python_action;       // the handler ours calls after counting (Python's)
inline std::mutex install_mutex;

inline void on_sigint(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  ppk::interrupt_counter.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
  if (python_action.sa_flags & SA_SIGINFO) {
    if (python_action.sa_sigaction != nullptr) python_action.sa_sigaction(sig, info, context);
  } else if (python_action.sa_handler != SIG_DFL && python_action.sa_handler != SIG_IGN &&
             python_action.sa_handler != nullptr) {
    python_action.sa_handler(sig);
  }
}

// Ours in front of the current C handler, unless that is SIG_IGN or SIG_DFL; whether ours is in place.
inline bool chain() {
  std::lock_guard<std::mutex> guard(install_mutex);
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return false;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigint) return true;
  if (!(current.sa_flags & SA_SIGINFO) && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) return false;
  python_action = current;   // ours is not installed: the handler cannot be reading it
  struct sigaction ours = current;
  ours.sa_flags = current.sa_flags | SA_SIGINFO;
  ours.sa_sigaction = on_sigint;
  return sigaction(SIGINT, &ours, nullptr) == 0;
}
#else
inline bool chain() { return false; }   // no sigaction: kernels off the main thread are not interrupted
#endif

// Module init (GIL held, one thread): the Python objects the checks compare with.
inline void init() {
  py::module_ signal = py::module_::import("signal");
  getsignal = py::object(signal.attr("getsignal")).release().ptr();
  default_handler = py::object(signal.attr("default_int_handler")).release().ptr();
  main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

// Whether Ctrl-C reaches kernels through the count: Python's handler is the default one and ours is chained
// in front of it (GIL held).
inline bool armed() {
  if (getsignal == nullptr) return false;
  PyObject* handler = PyObject_CallFunction(getsignal, "i", SIGINT);
  if (handler == nullptr) { PyErr_Clear(); return false; }
  const bool is_default = handler == default_handler;
  Py_DECREF(handler);
  return is_default && chain();
}

// The thread's scope (_kernels.interruptible()): depth, and the count when the outermost began.
struct Scope {
  int depth = 0;
  std::uint64_t since = 0;
};
inline Scope& scope() {
  thread_local Scope s;
  return s;
}

// One kernel call's view of Ctrl-C, made with the GIL held when the call begins.
class Watch {
 public:
  Watch() : main_(PyThread_get_thread_ident() == main_thread) {
    watch_.on = armed();
    watch_.since = scope().depth > 0 ? scope().since : ppk::interrupt_count();
  }
  // Whether to stop (GIL released): on the main thread Python's own check (its handler raises), else the count.
  bool poll() const {
    if (main_) {
      py::gil_scoped_acquire gil;
      return PyErr_CheckSignals() != 0;
    }
    return watch_.fired();
  }
  // For kernels that run on the calling thread: poll_cancel fires when the count moves.
  ppk::InterruptWatch watch() const { return watch_; }
  // After a stop (GIL held): the KeyboardInterrupt (on the main thread, from Python's handler if it ran).
  [[noreturn]] void raise() const {
    if (main_ && !PyErr_Occurred()) PyErr_CheckSignals();
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }

 private:
  bool main_;
  ppk::InterruptWatch watch_;
};

}  // namespace ppk_interrupt

// fn(i) for every i in [0, n) on worker threads (both cores), the GIL released: the thread pool of
// ppk/parallel.hpp (run_cancellable), with this thread polling for Ctrl-C every 50 ms (Watch::poll, any
// thread).  On Ctrl-C the kernels' cancel flag (ppk/cancel.hpp) is raised, the workers end and
// KeyboardInterrupt is raised in Python.  Results never depend on the number of threads (each index is
// independent).
template <class Fn>
void run_interruptible(std::int64_t n, const Fn& fn) {
  const ppk_interrupt::Watch watch;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    interrupted = ppk::run_cancellable(n, fn, [&] { return watch.poll(); });
  }
  if (interrupted) watch.raise();
}

// fn(watch) on this thread with the GIL released, stopped by Ctrl-C from any thread through the kernels'
// poll_cancel (the SIGINT count; not where Python's handler is not the default one).  fn may run pools of
// its own with ppk::run_cancellable polling watch.poll(), and throw ppk::Cancelled when they were stopped.
template <class Fn>
auto run_watched(const Fn& fn) -> decltype(fn(std::declval<const ppk_interrupt::Watch&>())) {
  const ppk_interrupt::Watch watch;
  try {
    py::gil_scoped_release release;
    ppk::WatchScope watching(watch.watch());
    return fn(watch);
  } catch (const ppk::Cancelled&) {
    watch.raise();
  }
}

// A long-double log-probability as a double: finite (a log below the double range becomes
// -DBL_MAX, which is larger, i.e. pessimistic) and, for upper bounds, rounded up.
inline double log_to_double(ppk::real x, bool round_up) {
  constexpr double lowest = std::numeric_limits<double>::lowest();
  if (x == -ppk::kInf) return -std::numeric_limits<double>::infinity();
  if (x < static_cast<ppk::real>(lowest)) return lowest;
  double d = static_cast<double>(x);
  if (round_up && static_cast<ppk::real>(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

// out[k] for k in [0, n) by fn(k0, k1) on blocks of `block` outputs, interruptibly (run_interruptible).
template <class Fn>
void run_blocks_interruptible(std::int64_t n, std::int64_t block, const Fn& fn) {
  const std::int64_t blocks = (n + block - 1) / block;
  run_interruptible(blocks, [&](std::int64_t i) { fn(i * block, std::min(n, (i + 1) * block)); });
}
