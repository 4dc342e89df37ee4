// Hand-written half of the Verilator shim (testbench crate).
//
// testbench/build.rs generates one `shim_<top>.cpp` per Verilated top. That file
// holds only what depends on the top's port list (a switch per direction that
// calls `put`/`get` below on the right member) plus `extern "C"` wrappers
// around `Harness<V<top>>`. Everything port-independent lives here.
//
// build.rs copies this header next to the generated sources (the Verilator
// --Mdir), so the shim is compiled by the generated makefile's own pattern
// rule with exactly Verilator's flags (`-I.` finds this file).
//
// Word convention of the Rust side (rnic_model::ports): a port is a slice of
// little-endian 64-bit words, bit 0 of word 0 is port bit 0. Verilator keeps
// 1..8 bits in CData, ..16 in SData, ..32 in IData, ..64 in QData and wider
// ports in VlWide<N>, N 32-bit words with word 0 least significant. Bits above
// the port's width must be zero in Verilator's storage, so `put` masks them.

#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "verilated.h"
#include "verilated_vcd_c.h"

#if VM_COVERAGE
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "verilated_cov.h"
#endif

namespace rtl_shim {

// ---------------------------------------------------------------------------
// Storage check: is T the C type Verilator uses for a `width`-bit port?
// Used in static_asserts of the generated shim, so a port whose XML width and
// C++ declaration disagree cannot compile.

template <typename T>
struct Storage {
    static constexpr bool fits(unsigned width) {
        return std::is_integral<T>::value && std::is_unsigned<T>::value && width >= 1
               && width <= 64
               && sizeof(T) == (width <= 8 ? 1u : width <= 16 ? 2u : width <= 32 ? 4u : 8u);
    }
};

template <std::size_t N>
struct Storage<VlWide<N>> {
    static constexpr bool fits(unsigned width) {
        return width > 64 && N == (width + 31) / 32;
    }
};

template <typename Member>
constexpr bool storage_fits(unsigned width) {
    return Storage<typename std::remove_cv<typename std::remove_reference<Member>::type>::type>::fits(
        width);
}

// ---------------------------------------------------------------------------
// Moving a port between Verilator's storage and 64-bit words.

inline uint64_t low_mask(unsigned bits) {
    return bits >= 64 ? ~static_cast<uint64_t>(0) : ((static_cast<uint64_t>(1) << bits) - 1);
}

// CData / SData / IData / QData.
template <typename T>
inline void put(T& dst, const uint64_t* words, unsigned width) {
    static_assert(std::is_integral<T>::value && std::is_unsigned<T>::value,
                  "port storage is neither an unsigned integer nor VlWide");
    dst = static_cast<T>(words[0] & low_mask(width));
}

template <typename T>
inline void get(const T& src, uint64_t* words, unsigned width) {
    static_assert(std::is_integral<T>::value && std::is_unsigned<T>::value,
                  "port storage is neither an unsigned integer nor VlWide");
    words[0] = static_cast<uint64_t>(src) & low_mask(width);
}

// VlWide<N>: N 32-bit words, word 0 least significant.
template <std::size_t N>
inline void put(VlWide<N>& dst, const uint64_t* words, unsigned width) {
    for (std::size_t i = 0; i < N; ++i) {
        const unsigned lo = static_cast<unsigned>(32 * i);
        uint32_t v = static_cast<uint32_t>(words[i / 2] >> (32 * (i % 2)));
        if (lo >= width) {
            v = 0;
        } else if (width - lo < 32) {
            v &= static_cast<uint32_t>(low_mask(width - lo));
        }
        dst.at(i) = v;
    }
}

template <std::size_t N>
inline void get(const VlWide<N>& src, uint64_t* words, unsigned width) {
    const std::size_t nwords = (width + 63) / 64;
    for (std::size_t j = 0; j < nwords; ++j) words[j] = 0;
    for (std::size_t i = 0; i < N; ++i) {
        const unsigned lo = static_cast<unsigned>(32 * i);
        if (lo >= width) break;
        uint64_t v = src.at(i);
        if (width - lo < 32) v &= low_mask(width - lo);
        words[i / 2] |= v << (32 * (i % 2));
    }
}

// ---------------------------------------------------------------------------
// Assertion failures. The RTL's assertions (hw/rtl/rnic_assert.svh) call the
// DPI-C import rnic_assert_fail instead of $error, whose vl_stop would end
// the process. The failure goes to the log of the harness whose eval is
// running on this thread (t_log, set around every call into the model), with
// the context's time; the Rust side reads it back (assert_count/assert_get)
// and fails the run, naming assertion, scope and cycle.

struct AssertFailure {
    std::string name;   // the assertion's label, e.g. a_rd_req_hold
    std::string scope;  // %m: TOP.<top>.<instances>.<label>
    std::string file;
    int line;
    uint64_t time;      // the context's time at the failing edge (ps)
};

struct AssertLog {
    VerilatedContext* ctx = nullptr;
    std::vector<AssertFailure> failures;  // the first MAX_RECORDED
    uint32_t total = 0;                   // all of them (saturating)
};

// Keep the recorded list bounded: a broken handshake can fail every cycle;
// the first failures say what went wrong, the count says how often.
constexpr std::size_t MAX_RECORDED = 64;

inline thread_local AssertLog* t_log = nullptr;

// Makes `ctx` this thread's context for the duration of a call into the
// model, and `log` the place where its assertion failures go. Verilator's
// runtime reaches the context through the thread-local
// Verilated::threadContextp() (vl_stop, $time formatting, ...), which is set
// when a context is constructed: a harness driven from another thread than
// the one that made it (rnic --jobs pool, Send across threads) must attach
// its own context first, or the runtime would act on whatever context that
// thread last saw.
struct Attach {
    AssertLog* prev;
    explicit Attach(AssertLog& log) : prev{t_log} {
        if (Verilated::threadContextp() != log.ctx) Verilated::threadContextp(log.ctx);
        t_log = &log;
    }
    ~Attach() { t_log = prev; }
    Attach(const Attach&) = delete;
    Attach& operator=(const Attach&) = delete;
};

#if VM_COVERAGE
// ---------------------------------------------------------------------------
// Coverage builds (the testbench's `coverage` feature, scripts/coverage.sh).
// Verilator keeps a model's counters inside the model and its coverage
// context only points at them, so they must be read before the model is
// destroyed, and a process makes thousands of harnesses. Each harness, when
// dropped, writes its counts to a scratch file (the only read-out 5.006 has),
// and they are summed here by point; at exit the sum goes to
// $RNIC_COVERAGE_DIR/<program>-<pid>.dat, one file a process, which
// verilator_coverage merges. The hierarchy is dropped from every key, and
// the suffix of a module specialized by parameters from its page
// (`v_line/ack_gen__Q10` becomes `v_line/ack_gen`), so a block's points are
// the same whether it ran as its own top or inside rnic_top, and the
// annotated sources and `rnic coverage` count them once.
class CoverageSink {
  public:
    static CoverageSink& get() {
        static CoverageSink sink;
        return sink;
    }

    void absorb(VerilatedContext* ctx) {
        const char* dir = std::getenv("RNIC_COVERAGE_DIR");
        std::lock_guard<std::mutex> guard{mutex_};
        if (!dir || !*dir) {
            warn_once("RNIC_COVERAGE_DIR is not set: this coverage build keeps no counts");
            return;
        }
        if (access(dir, W_OK) != 0) {
            warn_once(std::string{"RNIC_COVERAGE_DIR="} + dir + ": " + std::strerror(errno)
                      + ": this coverage build keeps no counts");
            return;
        }
        dir_ = dir;
        const std::string scratch = dir_ + "/.scratch-" + std::to_string(getpid()) + ".dat";
        ctx->coveragep()->write(scratch.c_str());
        std::ifstream in{scratch};
        std::string line;
        while (std::getline(in, line)) {
            // C '<key>' <count>
            if (line.compare(0, 3, "C '") != 0) continue;
            const std::size_t q = line.rfind('\'');
            if (q == std::string::npos || q < 3) continue;
            counts_[canonical(line.substr(3, q - 3))]
                += std::strtoull(line.c_str() + q + 1, nullptr, 10);
        }
        in.close();
        std::remove(scratch.c_str());
    }

    ~CoverageSink() {
        if (dir_.empty()) return;
        const std::string path = dir_ + "/" + program_invocation_short_name + "-"
                                 + std::to_string(getpid()) + ".dat";
        std::ofstream os{path};
        os << "# SystemC::Coverage-3\n";
        for (const auto& kv : counts_) os << "C '" << kv.first << "' " << kv.second << '\n';
        if (!os) std::fprintf(stderr, "rnic coverage: writing %s failed\n", path.c_str());
    }

  private:
    // A key is a run of "\001<name>\002<value>" fields; "h" is the
    // hierarchy, "page" is `<kind>/<module>`.
    static std::string canonical(std::string key) {
        const std::size_t h = key.find("\001h\002");
        if (h != std::string::npos) {
            const std::size_t end = key.find('\001', h + 1);
            key.erase(h, end == std::string::npos ? std::string::npos : end - h);
        }
        const std::string page = "\001page\002";
        const std::size_t p = key.find(page);
        if (p != std::string::npos) {
            const std::size_t end = std::min(key.find('\001', p + 1), key.size());
            const std::size_t slash = key.find('/', p);
            const std::size_t suffix = key.find("__", slash);
            if (slash < end && suffix < end) key.erase(suffix, end - suffix);
        }
        return key;
    }

    void warn_once(const std::string& msg) {
        if (!warned_) std::fprintf(stderr, "rnic coverage: %s\n", msg.c_str());
        warned_ = true;
    }

    std::mutex mutex_;
    std::map<std::string, uint64_t> counts_;
    std::string dir_;
    bool warned_ = false;
};
#endif

// ---------------------------------------------------------------------------
// Initial state of what has no reset, for every harness built from then on:
// 0 all zeros (Verilator's default), 1..2147483647 random from that seed.
// Until rtl_shim_set_rand_reset sets it, `RNIC_RTL_RAND_RESET` (unset: 1).

inline int rand_reset_from_env() {
    const char* s = std::getenv("RNIC_RTL_RAND_RESET");
    if (!s) return 1;
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 2147483647L) {
        std::fprintf(stderr,
                     "error: RNIC_RTL_RAND_RESET=%s: not a seed (0 = all zeros, "
                     "1..2147483647 = random initial state from that seed)\n",
                     s);
        std::exit(2);
    }
    return static_cast<int>(v);
}

// -1: not decided yet.
inline std::atomic<int>& rand_reset_state() {
    static std::atomic<int> state{-1};
    return state;
}

inline int rand_reset_seed() {
    int s = rand_reset_state().load();
    if (s < 0) {
        s = rand_reset_from_env();
        rand_reset_state().store(s);
    }
    return s;
}

inline std::mutex& construct_mutex() {
    static std::mutex m;
    return m;
}

// ---------------------------------------------------------------------------
// One instance of a Verilated top: its own VerilatedContext (so any number of
// models, of any tops, can live in one process and on different threads),
// the model and an optional VCD writer.

template <class Model>
struct Harness {
    std::unique_ptr<VerilatedContext> ctx;
    AssertLog log;
    std::unique_ptr<Model> model;
    std::unique_ptr<VerilatedVcdC> vcd;

    Harness() : ctx{new VerilatedContext} {
        static const char* argv[] = {"rnic-testbench", nullptr};
        log.ctx = ctx.get();
        Attach a{log};
        ctx->commandArgs(1, argv);
        // An assertion reports through rnic_assert_fail and never stops the
        // run; should anything else reach $stop, it must not abort either.
        ctx->fatalOnError(false);
        // Must precede the model's construction: Verilator only computes the
        // signals that tracing needs when tracing was switched on by then.
        // This is the per-context form of Verilated::traceEverOn(true).
        ctx->traceEverOn(true);
        // Every variable without a reset (RAMs, data registers) starts
        // random, as silicon powers up, not zero: lockstep against the model
        // (which starts at zero) then fails on any output that depends on an
        // uninitialised bit. Verilator draws the values in the model's
        // constructor from a per-thread generator that any context's
        // randSeed() reseeds, so constructions are serialised: each model
        // gets the same values for the same seed, whatever runs beside it.
        std::lock_guard<std::mutex> g{construct_mutex()};
        if (int seed = rand_reset_seed()) {
            ctx->randReset(2);
            ctx->randSeed(seed);
        }
        model.reset(new Model{ctx.get(), "TOP"});
    }

    ~Harness() {
        Attach a{log};
        trace_close();
        model->final();
#if VM_COVERAGE
        CoverageSink::get().absorb(ctx.get());
#endif
        model.reset();
        // No thread-local or global pointer may outlive the context.
        if (Verilated::threadContextp() == ctx.get()) Verilated::threadContextp(nullptr);
        if (Verilated::lastContextp() == ctx.get()) Verilated::lastContextp(nullptr);
        ctx.reset();
    }

    // Returns how many assertion failures there were so far (saturating).
    uint32_t eval() {
        Attach a{log};
        model->eval();
        return log.total;
    }

    // 0 on success, -1 when the file cannot be created.
    int trace_open(const char* path) {
        Attach a{log};
        trace_close();
        vcd.reset(new VerilatedVcdC);
        model->trace(vcd.get(), 99);
        vcd->open(path);
        if (!vcd->isOpen()) {
            vcd.reset();
            return -1;
        }
        return 0;
    }

    void trace_dump(uint64_t time) {
        if (vcd) {
            Attach a{log};
            vcd->dump(time);
        }
    }

    void trace_flush() {
        if (vcd) vcd->flush();
    }

    void trace_close() {
        if (vcd) {
            vcd->close();
            vcd.reset();
        }
    }

    // Failure `idx` as "name\tscope\tfile\tline\ttime" into buf (NUL
    // terminated, truncated to len); its full length, or -1 if there is none.
    int assert_get(uint32_t idx, char* buf, uint32_t len) const {
        if (idx >= log.failures.size()) return -1;
        const AssertFailure& f = log.failures[idx];
        const std::string s = f.name + '\t' + f.scope + '\t' + f.file + '\t'
                              + std::to_string(f.line) + '\t' + std::to_string(f.time);
        if (len > 0) {
            const std::size_t n = s.size() < len - 1 ? s.size() : len - 1;
            s.copy(buf, n);
            buf[n] = '\0';
        }
        return static_cast<int>(s.size());
    }
};

template <class Model>
inline void* harness_new() {
    try {
        return new Harness<Model>;
    } catch (...) {
        return nullptr;
    }
}

template <class Model>
inline int harness_trace_open(void* h, const char* path) {
    try {
        return static_cast<Harness<Model>*>(h)->trace_open(path);
    } catch (...) {
        return -1;
    }
}

}  // namespace rtl_shim

// The DPI-C import of hw/rtl/rnic_assert.svh. Every generated shim includes
// this header; the definition is weak so that the copies link as one.
extern "C" __attribute__((weak)) void rnic_assert_fail(const char* name, const char* scope,
                                                        const char* file, int line) {
    rtl_shim::AssertLog* log = rtl_shim::t_log;
    if (!log) return;  // not inside a harness call: nothing to report to
    if (log->total != UINT32_MAX) ++log->total;
    if (log->failures.size() >= rtl_shim::MAX_RECORDED) return;
    log->failures.push_back(rtl_shim::AssertFailure{
        name ? name : "", scope ? scope : "", file ? file : "", line, log->ctx->time()});
}

// The initial state of the harnesses built from now on: 0 all zeros, else
// random from that seed (rtl_shim::rand_reset_seed). Weak, like the above.
extern "C" __attribute__((weak)) void rtl_shim_set_rand_reset(int seed) {
    rtl_shim::rand_reset_state().store(seed < 0 ? 0 : seed);
}
