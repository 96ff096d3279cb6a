// simd_peak: this CPU's peak throughput of independent double multiplies and adds (no fused multiply-add,
// like the batch kernels, which are built with -ffp-contract=off) with 128-, 256- and 512-bit vectors.
// It settles how much the AVX-512 kernels (8 lanes) can gain over the AVX2 ones (4 lanes) on a machine:
// on a CPU that runs a 512-bit operation as two 256-bit halves (AMD Zen 4) the flops per cycle of the
// two widths are the same.
//
//   bench/simd_peak [seconds per case, default 0.3]
//
// Each case runs K independent chains (enough to cover latency x issue width) of one operation, or of
// multiplies and adds alternating, in a function compiled for its instruction set by a target attribute
// (none for SSE2, "avx2", "avx512f"), with the constants read from a volatile so nothing folds. A dependent
// chain of adds gives the latency in ns, which with the latency in cycles (3 on Zen 3/4, 4 on Intel since
// Skylake; DENOC_ADD_LATENCY overrides) gives the clock, hence flops per cycle. Prints one line per case;
// widths the CPU does not run are skipped. Not a test: it measures, it checks nothing.
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

typedef double V2 __attribute__((vector_size(16)));
typedef double V4 __attribute__((vector_size(32)));
typedef double V8 __attribute__((vector_size(64)));

volatile double g_mul = 1.0, g_add = 0.0, g_seed = 1.0;

// Keeps v in a register and stops the compiler from reasoning about its value across iterations.
#define KEEP(v) __asm__ volatile("" : "+x"(v))

enum class Kind { Mul, Add, Mixed, Latency };

// K = 12 chains in 12 named variables (an array would live on the stack), of `iters` steps each; returns
// the sum of the lanes so nothing is dead.
#define ALL12(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)
#define EVEN6(OP) OP(0, 1) OP(2, 3) OP(4, 5) OP(6, 7) OP(8, 9) OP(10, 11)
#define DECL(k) VT x##k = VT{} + (g_seed + k);
#define MUL(k) x##k = x##k * m;
#define ADD(k) x##k = x##k + a;
#define MIX(k, j)  \
  x##k = x##k * m; \
  x##j = x##j + a;
#define KEEP1(k) KEEP(x##k);
#define SUM(k) s += x##k;
#define PEAK_KERNEL(NAME, T, ATTR)                                           \
  ATTR double NAME(Kind kind, long iters) {                                  \
    typedef T VT;                                                            \
    const VT m = VT{} + g_mul, a = VT{} + g_add;                             \
    ALL12(DECL)                                                              \
    switch (kind) {                                                          \
      case Kind::Mul:                                                        \
        for (long i = 0; i < iters; ++i) {                                   \
          ALL12(MUL)                                                         \
          ALL12(KEEP1)                                                       \
        }                                                                    \
        break;                                                               \
      case Kind::Add:                                                        \
        for (long i = 0; i < iters; ++i) {                                   \
          ALL12(ADD)                                                         \
          ALL12(KEEP1)                                                       \
        }                                                                    \
        break;                                                               \
      case Kind::Mixed: /* half the chains multiply, half add */             \
        for (long i = 0; i < iters; ++i) {                                   \
          EVEN6(MIX)                                                         \
          ALL12(KEEP1)                                                       \
        }                                                                    \
        break;                                                               \
      case Kind::Latency: /* one dependent chain of 12 adds per iteration */ \
        for (long i = 0; i < iters; ++i) {                                   \
          for (int k = 0; k < 12; ++k) {                                     \
            x0 = x0 + a;                                                     \
            KEEP(x0);                                                        \
          }                                                                  \
        }                                                                    \
        break;                                                               \
    }                                                                        \
    VT s = VT{};                                                             \
    ALL12(SUM)                                                               \
    double r = 0;                                                            \
    for (unsigned l = 0; l < sizeof(VT) / sizeof(double); ++l) r += s[l];    \
    return r;                                                                \
  }

PEAK_KERNEL(peak128, V2, )
PEAK_KERNEL(peak256, V4, __attribute__((target("avx2"))))
PEAK_KERNEL(peak512, V8, __attribute__((target("avx512f"))))

constexpr int kChains = 12;  // K above

double seconds(double (*f)(Kind, long), Kind kind, long iters) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile double sink = f(kind, iters);
  (void)sink;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ns per iteration (of kChains operations), best of 5 runs of about `budget` / 5 seconds each
double nsPerIteration(double (*f)(Kind, long), Kind kind, double budget) {
  long iters = 1000;
  while (seconds(f, kind, iters) < 0.01) iters *= 2;
  const long n = static_cast<long>(static_cast<double>(iters) * (budget / 5) / seconds(f, kind, iters)) + 1;
  double best = 1e300;
  for (int r = 0; r < 5; ++r) {
    const double t = seconds(f, kind, n);
    if (t < best) best = t;
  }
  return best * 1e9 / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const char* lat_env = std::getenv("DENOC_ADD_LATENCY");
  const double add_latency = lat_env ? std::atof(lat_env) : 3.0;
  __builtin_cpu_init();
  struct Case {
    const char* isa;
    int bits;
    double (*f)(Kind, long);
    bool supported;
  } cases[] = {{"sse2", 128, peak128, true},
               {"avx2", 256, peak256, __builtin_cpu_supports("avx2") != 0},
               {"avx512f", 512, peak512, __builtin_cpu_supports("avx512f") != 0}};
  // the clock from the latency of dependent 128-bit adds
  const double lat_ns = nsPerIteration(peak128, Kind::Latency, budget) / kChains;
  const double ghz = add_latency / lat_ns;
  std::printf("dependent add: %.3f ns = %.0f cycles at %.2f GHz (DENOC_ADD_LATENCY=%.0f)\n", lat_ns,
              add_latency, ghz, add_latency);
  std::printf("%-8s %4s %-6s %12s %12s %12s %14s\n", "isa", "bits", "op", "ns/op", "ops/cycle", "flops/ns",
              "flops/cycle");
  for (const Case& c : cases) {
    if (!c.supported) {
      std::printf("%-8s %4d not run by this CPU\n", c.isa, c.bits);
      continue;
    }
    const int lanes = c.bits / 64;
    const struct {
      const char* name;
      Kind kind;
    } ops[] = {{"mul", Kind::Mul}, {"add", Kind::Add}, {"mul+add", Kind::Mixed}};
    for (const auto& op : ops) {
      const double ns_op = nsPerIteration(c.f, op.kind, budget) / kChains;
      const double ops_cycle = 1.0 / (ns_op * ghz);
      std::printf("%-8s %4d %-7s %11.4f %12.2f %12.2f %14.2f\n", c.isa, c.bits, op.name, ns_op, ops_cycle,
                  lanes / ns_op, lanes * ops_cycle);
    }
  }
  return 0;
}
