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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include "verilated.h"
#include "verilated_vcd_c.h"

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
// One instance of a Verilated top: its own VerilatedContext (so any number of
// models, of any tops, can live in one process and on different threads),
// the model and an optional VCD writer.

template <class Model>
struct Harness {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Model> model;
    std::unique_ptr<VerilatedVcdC> vcd;

    Harness() : ctx{new VerilatedContext} {
        static const char* argv[] = {"rnic-testbench", nullptr};
        ctx->commandArgs(1, argv);
        // Must precede the model's construction: Verilator only computes the
        // signals that tracing needs when tracing was switched on by then.
        // This is the per-context form of Verilated::traceEverOn(true).
        ctx->traceEverOn(true);
        model.reset(new Model{ctx.get(), "TOP"});
    }

    ~Harness() {
        trace_close();
        model->final();
        model.reset();
        ctx.reset();
    }

    void eval() { model->eval(); }

    // 0 on success, -1 when the file cannot be created.
    int trace_open(const char* path) {
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
        if (vcd) vcd->dump(time);
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
