#!/usr/bin/env python3
"""Writes the DMA vectors in vectors/dma/ (without `expect`).

It writes only vectors whose file does not exist yet (bless rewrites the
files with every default spelled out): to change a scenario, delete its file
and run this again. Then `rnic bless` the new files to record their expected
results (bless refuses a vector whose independent checks fail) and review
the diff. Each vector says what it tests and what its results were checked
against.
"""
import json
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dma")
CHECK_RD = ("every returned byte against host memory, every status against the "
            "vector's faults, every TLP against the PCIe rules (tags, MRRS, 4 KB, "
            "byte enables, 3/4-DW headers), no tag or buffer leak at the end; "
            "model and RTL in lockstep")
CHECK_WR = ("host memory after the run against the vector's writes applied in "
            "order (stray writes included), every TLP against the PCIe rules "
            "(MPS, 4 KB, byte enables, 3/4-DW headers), done pulses in order; "
            "model and RTL in lockstep")
BASE = 0x10_0000


def vec(name, desc, top, max_cycles, **kw):
    v = {"format": 1, "name": name, "description": desc,
         "checked_against": CHECK_RD if top == "dma_rd" else CHECK_WR,
         "top": top}
    v.update(kw)
    v["max_cycles"] = max_cycles
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


def mem(addr, n, seed=7):
    return [{"addr": hex(addr), "len": n, "seed": seed}]


def rd(addr, n, client=0, at=0):
    r = {"addr": hex(addr), "len": n}
    if client:
        r["client"] = client
    if at:
        r["at"] = at
    return r


def wr(addr, n, seed, client=0):
    w = {"addr": hex(addr), "len": n, "seed": seed}
    if client:
        w["client"] = client
    return w


def main():
    os.makedirs(HERE, exist_ok=True)
    # Lengths 1..128 at every offset 0..63 (offset = length mod 64).
    vec("rd_len_1_to_128", "Reads of every length 1..128 bytes, the start offset cycling "
        "through 0..63: first/last byte enables, 1-DW requests, line straddles.",
        "dma_rd", 60000, memory=mem(BASE, 0x40000),
        reads=[rd(BASE + n * 256 + (n % 64), n) for n in range(1, 129)])
    lens = [129, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024, 1025, 2047, 2048,
            2049, 3000, 4095, 4096]
    vec("rd_len_to_4096", "Reads from 129 to 4096 bytes around every power-of-two "
        "edge, at offsets 0, 1, 31, 63.", "dma_rd", 200000, memory=mem(BASE, 0x100000),
        reads=[rd(BASE + i * 0x4000 + off, n) for i, (n, off) in
               enumerate((n, off) for n in lens for off in (0, 1, 31, 63))])
    vec("rd_64k", "64 KiB reads at offsets 0, 1 and 63 (each 128+ MRds).", "dma_rd", 20000,
        memory=mem(BASE, 0x40000),
        reads=[rd(BASE, 65536), rd(BASE + 0x10001, 65536), rd(BASE + 0x2003F, 65536)])
    vec("rd_4k_boundary", "Reads that start, end or straddle 4 KB boundaries: no MRd may "
        "cross one.", "dma_rd", 40000, memory=mem(BASE, 0x40000),
        reads=[rd(BASE + k * 0x1000 - d, n) for k, (d, n) in enumerate(
            [(1, 1), (1, 2), (4, 4), (4, 8), (63, 64), (64, 128), (3, 4096), (0, 4096),
             (100, 50), (2048, 4097), (1, 8193)], start=1)])
    vec("rd_above_4g", "Reads above 4 GB (4-DW MRd headers) and right below it.", "dma_rd",
        20000, memory=mem(0xFFFF_F000, 0x3000),
        reads=[rd(0xFFFF_FFF0, 16), rd(0x1_0000_0000, 100), rd(0x1_0000_0FFD, 600)])
    # Every byte of the 64-bit address non-zero and distinct, so each one
    # must land in its own place of the 4-DW header.
    vec("rd_64bit_address", "Reads at 0xFEDC_BA98_7654_3xxx: every byte of the 4-DW MRd "
        "header's address differs and is non-zero.", "dma_rd", 20000,
        memory=mem(0xFEDC_BA98_7654_3000, 0x2000),
        reads=[rd(0xFEDC_BA98_7654_3010, 100), rd(0xFEDC_BA98_7654_3FF0, 600)])
    for mrrs in (128, 256, 512, 1024, 2048, 4096):
        vec(f"rd_mrrs_{mrrs}", f"MRRS {mrrs}: requests split at {mrrs}-byte aligned "
            "addresses, never over MRRS, never across 4 KB.", "dma_rd", 40000,
            config={"mrrs": mrrs}, root_complex={"cpl_size": min(mrrs, 512)},
            memory=mem(BASE, 0x20000),
            reads=[rd(BASE + 5, 9000), rd(BASE + 0x8000 + mrrs - 1, 2 * mrrs + 2),
                   rd(BASE + 0xC000, mrrs), rd(BASE + 0xE001, 1)])
    for rcb in (64, 128):
        for size in sorted({rcb, 128, 256, 512, 4096}):
            vec(f"rd_rcb{rcb}_cpl{size}", f"RCB {rcb}, completions of up to {size} bytes "
                "ending at aligned addresses: reassembly across completion splits.",
                "dma_rd", 40000, config={"mrrs": 4096},
                root_complex={"rcb": rcb, "cpl_size": size}, memory=mem(BASE, 0x20000),
                reads=[rd(BASE + 3, 10000), rd(BASE + 0x4000 + 65, 130)])
    vec("rd_split_random_reorder", "Completions split at random RCB points and tags "
        "interleaved in random order: data still returns in request order.", "dma_rd",
        60000, config={"mrrs": 256},
        root_complex={"cpl_size": 256, "split": "random", "reorder": True, "seed": 11,
                      "latency": 300},
        memory=mem(BASE, 0x20000),
        reads=[rd(BASE + 17 * k, 700 + 333 * k, client=k % 4) for k in range(12)])
    vec("rd_two_clients", "Two clients' reads interleaved; each client's data in its "
        "request order, client id on every beat.", "dma_rd", 40000,
        memory=mem(BASE, 0x20000),
        reads=[rd(BASE + 0x1000 * k + k, 100 + 97 * k, client=k % 2) for k in range(16)])
    vec("rd_backpressure", "Read data and rq back-pressure (30 % / 50 % ready): no "
        "beat lost or repeated, outputs held while not ready.", "dma_rd", 80000,
        root_complex={"rq_ready_percent": 50, "reorder": True, "seed": 4},
        client={"rd_data_ready_percent": 30, "seed": 9}, memory=mem(BASE, 0x20000),
        reads=[rd(BASE + 3 * k, 1 + 613 * k, client=k % 3) for k in range(10)])
    vec("rd_tag_exhaustion", "Many short reads with a long completion latency: all 32 "
        "tags in flight, issue stalls until one frees, no tag reused early.", "dma_rd",
        40000, config={"mrrs": 128}, root_complex={"latency": 2000, "cpl_size": 128},
        memory=mem(BASE, 0x20000), reads=[rd(BASE + 128 * k, 128) for k in range(100)])
    vec("rd_credit_limit", "Reads of 4 KB with MRRS 4096: the 256-line completion "
        "buffer, not the tags, limits what is in flight.", "dma_rd", 40000,
        config={"mrrs": 4096}, root_complex={"latency": 1000, "cpl_size": 512},
        memory=mem(BASE, 0x40000), reads=[rd(BASE + 0x1000 * k, 4096) for k in range(24)])
    for kind, what in (("ur", "Unsupported Request status"), ("ca", "Completer Abort status"),
                       ("poison", "poisoned (EP) completions"),
                       ("drop", "no completion at all (completion timeout)"),
                       ("bad_byte_count", "completions whose Byte Count contradicts the "
                        "request (dropped as malformed, then a completion timeout)"),
                       ("wrong_requester", "completions for another Requester ID (ignored "
                        "as unexpected, then a completion timeout)")):
        vec(f"rd_fault_{kind}", f"A read answered with {what} fails with that status on its "
            "last beat and zeroed data; the reads around it are unaffected; its tag is "
            "freed.", "dma_rd", 60000,
            config={"cpl_timeout": 3000},
            root_complex={"faults": [{"addr": hex(BASE + 0x2000), "len": 4, "kind": kind}]},
            memory=mem(BASE, 0x10000),
            reads=[rd(BASE, 1000), rd(BASE + 0x1F00, 600), rd(BASE + 0x3000, 64),
                   rd(BASE + 0x2001, 1, client=1)])
    vec("rd_fault_stray", "A stray completion for a tag never issued arrives before "
        "each of a read's completions: dropped and counted as unexpected, the read completes "
        "with its data.", "dma_rd", 60000,
        root_complex={"faults": [{"addr": hex(BASE + 0x2000), "len": 0x1000, "kind": "stray"}],
                      "cpl_size": 128},
        memory=mem(BASE, 0x10000),
        reads=[rd(BASE, 1000), rd(BASE + 0x1F00, 600), rd(BASE + 0x2101, 900, client=1)])
    vec("rd_timeout_many", "Eight dropped reads in flight at once, each timing out, "
        "between good reads.", "dma_rd", 40000, config={"cpl_timeout": 5000},
        root_complex={"faults": [{"addr": hex(BASE + 0x8000), "len": 0x8000,
                                  "kind": "drop"}]},
        memory=mem(BASE, 0x10000),
        reads=[rd(BASE + 0x8000 + 0x1000 * (k // 2), 200) if k % 2 else rd(BASE + 64 * k, 200)
               for k in range(16)])

    # Writes.
    vec("wr_len_1_to_128", "Writes of every length 1..128 at offsets cycling 0..63.",
        "dma_wr", 40000, writes=[wr(BASE + n * 256 + (n % 64), n, n) for n in range(1, 129)])
    vec("wr_len_to_64k", "Writes from 129 bytes to 64 KiB around power-of-two edges at "
        "offsets 0, 1, 63.", "dma_wr", 100000,
        writes=[wr(BASE + i * 0x20000 + off, n, i) for i, (n, off) in enumerate(
            (n, off) for n in lens + [65536] for off in (0, 1, 63))])
    for mps in (128, 256, 512, 1024, 2048, 4096):
        vec(f"wr_mps_{mps}", f"MPS {mps}: writes split at {mps}-byte aligned addresses, "
            "none over MPS or across 4 KB.", "dma_wr", 40000, config={"mps": mps},
            writes=[wr(BASE + 5, 9000, 1), wr(BASE + 0x8000 + mps - 1, 2 * mps + 2, 2),
                    wr(BASE + 0xC003, 1, 3)])
    vec("wr_4k_boundary_above_4g", "Writes next to 4 KB boundaries and above 4 GB (4-DW "
        "headers), overlapping writes applied in order.", "dma_wr", 40000,
        writes=[wr(BASE + 0xFFF, 2, 1), wr(BASE + 0x1FFD, 8, 2), wr(0xFFFF_FFFE, 4, 3),
                wr(0x1_0000_0003, 5000, 4), wr(0x1_0000_0100, 10, 5)])
    vec("wr_64bit_address", "Writes at 0xFEDC_BA98_7654_3xxx: every byte of the 4-DW MWr "
        "header's address differs and is non-zero.", "dma_wr", 40000,
        writes=[wr(0xFEDC_BA98_7654_3011, 300, 1), wr(0xFEDC_BA98_7654_3FF0, 40, 2)])
    vec("wr_backpressure_clients", "Four clients, data valid 40 %, rq ready 50 %: no byte "
        "lost, done pulses in request order.", "dma_wr", 60000,
        root_complex={"rq_ready_percent": 50, "seed": 3},
        client={"wr_data_valid_percent": 40, "seed": 5},
        writes=[wr(BASE + 0x3000 * k + 7 * k, 50 + 701 * k, k, client=k % 4)
                for k in range(12)])


if __name__ == "__main__":
    main()
