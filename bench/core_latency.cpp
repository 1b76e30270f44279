// Measures how long one cache line takes to go from one core to another and back (ns): two
// threads pinned to CPUs 0 and 1 pass a counter back and forth through one atomic. On the
// 2-core VMs kiln is benchmarked on the figure flips, within minutes, between about 55 ns (the
// cores close) and 300-340 ns (far apart, probably on different dies of the host); every layer
// whose threads read what the other wrote then runs slower, kiln's and ONNX Runtime's alike
// (docs/design/threading.md, "Data placement"). Built and run by bench/bench.py before and after its
// timings, so that 2-thread figures are compared only between runs in the same state.
//
// Second, streamed: CPU 0 writes 256 KB, then CPU 1 reads a byte of each of its cache lines
// (ns a line; the hardware prefetchers overlap the transfers). This is what a layer does with
// the layer before's output, and it tells the states apart where the round trip does not: on
// the 2-core VM, kiln's int8 MobileNetV2 at 2 threads ran 3.9-4.0 ms (against 1.6-2.2) while
// the round trip read 64-95 ns, and the streamed read 3.1-3.4 ns a line (against 0.9-1.0).
//
// Prints both medians (of 7 and of 15 measurements), "ROUND_TRIP_NS STREAMED_NS_PER_LINE", or
// "nan nan" with fewer than 2 CPUs.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr long kRoundTrips = 100'000;

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// The counter goes 0 -> 1 (the partner) -> 2 (this thread) -> ...; one round trip per two steps.
// The partner starts on this thread's CPU: under SCHED_FIFO (bench.py --realtime) it only gets
// to move to CPU 1 if this thread yields until it has, so the start is a handshake.
double round_trip_ns() {
  alignas(64) std::atomic<long> counter{0};
  std::atomic<bool> partner_pinned{false};
  std::thread partner([&] {
    pin_to(1);
    partner_pinned.store(true, std::memory_order_release);
    for (long v = 1; v < 2 * kRoundTrips; v += 2) {
      while (counter.load(std::memory_order_acquire) != v - 1) {
      }
      counter.store(v, std::memory_order_release);
    }
  });
  while (!partner_pinned.load(std::memory_order_acquire)) std::this_thread::yield();
  pin_to(0);
  const auto t0 = std::chrono::steady_clock::now();
  for (long v = 2; v <= 2 * kRoundTrips; v += 2) {
    while (counter.load(std::memory_order_acquire) != v - 1) {
    }
    counter.store(v, std::memory_order_release);
  }
  const auto t1 = std::chrono::steady_clock::now();
  partner.join();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / kRoundTrips;
}

// CPU 0 writes `bytes` (value `fill`), then CPU 1 reads a byte of each 64-byte line: ns a line.
double streamed_read_ns(std::vector<unsigned char>& buf, int fill) {
  std::thread writer([&] {
    pin_to(0);
    std::memset(buf.data(), fill, buf.size());
  });
  writer.join();
  double ns = 0;
  std::thread reader([&] {
    pin_to(1);
    const auto t0 = std::chrono::steady_clock::now();
    unsigned sum = 0;
    for (size_t i = 0; i < buf.size(); i += 64) sum += static_cast<volatile unsigned char&>(buf[i]);
    const auto t1 = std::chrono::steady_clock::now();
    ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(buf.size() / 64);
    if (sum == 1) std::puts("");  // keeps the reads
  });
  reader.join();
  return ns;
}

}  // namespace

int main() {
  if (std::thread::hardware_concurrency() < 2) {
    std::puts("nan nan");
    return 0;
  }
  std::vector<double> ns;
  for (int rep = 0; rep < 7; ++rep) ns.push_back(round_trip_ns());
  std::sort(ns.begin(), ns.end());
  std::vector<unsigned char> buf(256 * 1024);
  std::vector<double> line;
  for (int rep = 0; rep < 15; ++rep) line.push_back(streamed_read_ns(buf, rep));
  std::sort(line.begin(), line.end());
  std::printf("%.0f %.2f\n", ns[ns.size() / 2], line[line.size() / 2]);
  return 0;
}
