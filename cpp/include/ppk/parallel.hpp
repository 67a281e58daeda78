// ppk/parallel.hpp -- a minimal static parallel-for over an index range.
// Work is cut into one contiguous block per thread; callers keep per-index
// results independent of the split, so output never depends on thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

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

}  // namespace ppk
