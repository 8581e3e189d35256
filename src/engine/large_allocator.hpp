#pragma once
// An allocator for the engine's big flat arrays (per-flow records, path pools). Buffers of 2 MiB or
// more are 2 MiB-aligned and, on Linux, marked for transparent huge pages: the solver reads them
// in an order it cannot make sequential, and with 4 KiB pages almost every such read of a
// million-flow run also misses the TLB. Purely a hint; elsewhere it is plain aligned allocation.
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace moesim::engine {

template <class T>
class LargeAllocator {
 public:
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) noexcept {}  // NOLINT: converting, as allocators must be

  [[nodiscard]] T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing but speed
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePage) {
      ::operator delete(p, std::align_val_t{alignof(T)});
    } else {
      std::free(p);
    }
  }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const noexcept { return true; }
};

template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace moesim::engine
