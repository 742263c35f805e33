// An allocator for the route finder's large tables (its pair index, its searches' costs): blocks of
// 4 MiB and more come straight from mmap, aligned to 2 MiB and marked MADV_HUGEPAGE, so the kernel
// backs them with transparent huge pages where it may (Linux's THP "madvise" mode, the common
// default). Why: `topo` at 131,072 GPUs first-touched about 2 GB in 4 KiB pages, 0.8 M page faults,
// a fifth of its time on a virtual machine; a huge page is one fault for 512 of them. Smaller blocks,
// and systems without THP, get ordinary memory: the contents are the same either way.
#pragma once

#include <cstddef>
#include <new>

#include <sys/mman.h>

namespace memwall::topologies {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t(2) << 20;
  static constexpr size_t kThreshold = size_t(4) << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  static size_t mapped_bytes(size_t n) { return (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage; }

  T* allocate(size_t n) {
    if (n * sizeof(T) < kThreshold)
      return static_cast<T*>(::operator new(n * sizeof(T)));
    // One huge page more than asked for, so that an aligned start fits; the slack is unmapped.
    const size_t bytes = mapped_bytes(n);
    void* raw = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
      throw std::bad_alloc();
    const size_t start = reinterpret_cast<size_t>(raw);
    const size_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start)
      munmap(raw, aligned - start);
    if (const size_t tail = start + kHugePage - aligned; tail > 0)
      munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE); // advice only: ignored without THP
    return reinterpret_cast<T*>(aligned);
  }

  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kThreshold)
      ::operator delete(p);
    else
      munmap(p, mapped_bytes(n));
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

} // namespace memwall::topologies
