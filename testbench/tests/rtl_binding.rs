//! The generated Verilator binding: construction, reset, ticking, port word
//! packing (1 to 512 bits), and VCD tracing.
//!
//! Expected values are derived from hw/rtl: `dma_rd`/`dma_wr` take requests
//! through a 2-deep `sync_fifo` (ready = not full), `dma_rd`'s `rc_ready` is
//! low in reset and high from the first cycle after it, and the MRd/MWr header
//! is `pcie_req_hdr` (byte 0 Fmt/Type, bytes 2-3 length in DW, 4-5 requester
//! ID, 7 byte enables, then the address big-endian).

use std::path::PathBuf;

use std::collections::BTreeSet;

use rnic_testbench::rnic_model::dma_rd::{DmaRdIn, DmaRdOut};
use rnic_testbench::rnic_model::dma_wr::DmaWrIn;
use rnic_testbench::rnic_model::{Beat, Dut, Ports};
use rnic_testbench::rtl::{
    DmaRdT128Top, DmaRdT256Top, DmaRdT64Top, DmaRdTop, DmaWrTop, Rtl, RtlDmaRd, RtlDmaRdT128,
    RtlDmaRdT256, RtlDmaWr, RtlTop, RESET_CYCLES,
};

fn pattern(seed: u8) -> Beat {
    let mut b = Beat::default();
    for (i, x) in b.iter_mut().enumerate() {
        *x = seed.wrapping_add((i as u8).wrapping_mul(37)) | 1;
    }
    b
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

#[test]
fn port_lists_come_from_the_rtl() {
    let find = |ports: &[rnic_testbench::rtl::RtlPort], n: &str| {
        ports.iter().find(|p| p.name == n).map(|p| p.width)
    };
    assert_eq!(find(DmaRdTop::INPUTS, "rd_req_len"), Some(17));
    assert_eq!(find(DmaRdTop::INPUTS, "cfg_mrrs"), Some(3));
    assert_eq!(find(DmaRdTop::INPUTS, "rc_data"), Some(512));
    assert_eq!(find(DmaRdTop::OUTPUTS, "rd_data"), Some(512));
    assert_eq!(find(DmaRdTop::INPUTS, "clk"), None);
    assert_eq!(find(DmaRdTop::INPUTS, "rst"), None);
    assert_eq!(DmaRdTop::INPUTS.len(), DmaRdIn::PORTS.len());
    assert_eq!(find(DmaWrTop::INPUTS, "wr_data"), Some(512));
    for p in DmaWrTop::INPUTS {
        assert_eq!(DmaWrIn::PORTS[p.field].name, p.name);
        assert_eq!(DmaWrIn::PORTS[p.field].width, p.width);
    }
}

#[test]
fn reset_and_tick_dma_rd() {
    let mut rtl = RtlDmaRd::new();
    let o = rtl.reset();
    assert_eq!(rtl.cycle(), RESET_CYCLES);
    assert!(o.rd_req_ready, "request FIFO empty after reset");
    assert!(!o.rc_ready, "rc_ready_q is cleared by reset");
    assert!(!o.rq_valid && !o.rd_data_valid);
    assert_eq!(o.stat_tags_busy, 0);
    assert_eq!(o.stat_free_lines, 256, "BUF_LINES");
    let idle = DmaRdIn::default();
    let o = rtl.tick(&idle);
    assert!(
        o.rc_ready,
        "rc_ready_q is set in the first cycle after reset"
    );
    rtl.tick(&idle);
    assert_eq!(rtl.cycle(), RESET_CYCLES + 2);
}

#[test]
fn dma_rd_mrd_header_carries_the_request() {
    let mut rtl = RtlDmaRd::new();
    rtl.reset();
    let req = DmaRdIn {
        cfg_mrrs: 0,
        cfg_req_id: 0xA1B2,
        cfg_cpl_timeout: 1000,
        rd_req_valid: true,
        rd_req_addr: 0x0000_0012_3456_7000,
        rd_req_len: 100,
        rq_ready: true,
        rd_data_ready: true,
        ..DmaRdIn::default()
    };
    assert!(rtl.tick(&req).rd_req_ready);
    let idle = DmaRdIn {
        rd_req_valid: false,
        ..req
    };
    let o = (0..16)
        .map(|_| rtl.tick(&idle))
        .find(|o| o.rq_valid)
        .expect("an MRd within 16 cycles");
    assert!(o.rq_sop && o.rq_eop);
    let h = &o.rq_data;
    assert_eq!(h[0], 0x20, "MRd, 4-DW header (address above 4 GB)");
    assert_eq!((h[2] & 3, h[3]), (0, 25), "100 bytes = 25 DW");
    assert_eq!(h[4..6], [0xA1, 0xB2]);
    assert_eq!(h[7], 0xFF, "first and last byte enables");
    assert_eq!(h[8..16], [0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x70, 0x00]);
    assert!(h[16..].iter().all(|&b| b == 0));
    assert_eq!(o.rq_keep, 0xFFFF);
    assert_eq!(o.stat_tags_busy, 1);
}

#[test]
fn reset_and_tick_dma_wr() {
    let mut rtl = RtlDmaWr::new();
    let o = rtl.reset();
    assert!(o.wr_req_ready && o.wr_data_ready && !o.rq_valid && !o.wr_done_valid);
    // Requests without data: the engine takes one and waits for its data,
    // the 2-deep FIFO fills behind it, and ready drops.
    let req = DmaWrIn {
        wr_req_valid: true,
        wr_req_addr: 0x1000,
        wr_req_len: 64,
        ..DmaWrIn::default()
    };
    let mut readies = Vec::new();
    for _ in 0..6 {
        readies.push(rtl.tick(&req).wr_req_ready);
    }
    assert_eq!(readies, [true, true, false, false, false, false]);
}

/// A 512-bit client beat comes back out in the MWr's payload lanes.
#[test]
fn dma_wr_beat_round_trips_into_the_mwr() {
    let mut rtl = RtlDmaWr::new();
    rtl.reset();
    let data = pattern(0x5A);
    let base = DmaWrIn {
        cfg_mps: 0,
        cfg_req_id: 0xABCD,
        rq_ready: true,
        ..DmaWrIn::default()
    };
    // 52 bytes at 0x1000: 12-byte header + 52 bytes = exactly one beat.
    rtl.tick(&DmaWrIn {
        wr_req_valid: true,
        wr_req_addr: 0x1000,
        wr_req_len: 52,
        wr_req_client: 2,
        wr_data_valid: true,
        wr_data: data,
        ..base
    });
    let mut mwr = None;
    let mut done = None;
    for _ in 0..16 {
        let o = rtl.tick(&base);
        if o.rq_valid {
            assert!(mwr.is_none(), "one MWr beat only");
            mwr = Some(o);
        }
        if o.wr_done_valid {
            done = Some(o.wr_done_client);
        }
    }
    let o = mwr.expect("an MWr within 16 cycles");
    assert!(o.rq_sop && o.rq_eop);
    assert_eq!(o.rq_keep, u64::MAX);
    assert_eq!(o.rq_data[0], 0x40, "MWr, 3-DW header");
    assert_eq!(o.rq_data[3], 13, "52 bytes = 13 DW");
    assert_eq!(o.rq_data[4..6], [0xAB, 0xCD]);
    assert_eq!(o.rq_data[8..12], [0x00, 0x00, 0x10, 0x00]);
    assert_eq!(o.rq_data[12..64], data[..52]);
    assert_eq!(done, Some(2));
}

/// A 65536-byte request needs all 17 bits of `wr_req_len`: the engine must
/// emit exactly 65536 payload bytes and one done.
#[test]
fn dma_wr_17_bit_length_reaches_the_rtl() {
    let mut rtl = RtlDmaWr::new();
    rtl.reset();
    let base = DmaWrIn {
        cfg_mps: 5,
        rq_ready: true,
        ..DmaWrIn::default()
    };
    let mut o = rtl.tick(&DmaWrIn {
        wr_req_valid: true,
        wr_req_addr: 0x10_0000,
        wr_req_len: 0x1_0000,
        ..base
    });
    let (mut beats_in, mut payload_dw, mut tlps, mut dones) = (0u32, 0u32, 0u32, 0u32);
    for _ in 0..1300 {
        let i = DmaWrIn {
            wr_data_valid: beats_in < 1024,
            wr_data: pattern(beats_in as u8),
            ..base
        };
        let ready = o.wr_data_ready;
        o = rtl.tick(&i);
        if i.wr_data_valid && ready {
            beats_in += 1;
        }
        if o.rq_valid && o.rq_sop {
            let ndw = ((o.rq_data[2] as u32 & 3) << 8) | o.rq_data[3] as u32;
            payload_dw += if ndw == 0 { 1024 } else { ndw };
            tlps += 1;
        }
        dones += o.wr_done_valid as u32;
    }
    assert_eq!(beats_in, 1024);
    assert_eq!(tlps, 16, "4096-byte MPS");
    assert_eq!(payload_dw * 4, 0x1_0000);
    assert_eq!(dones, 1);
}

/// Every input is read back from the Verilated model as set, masked to its
/// RTL width: exercises CData/SData/IData/QData/VlWide<16> both ways.
#[test]
fn inputs_round_trip_through_the_verilated_model() {
    let mut rtl = RtlDmaRd::new();
    rtl.reset();
    let i = DmaRdIn {
        cfg_mrrs: 0xFF,
        cfg_req_id: 0xBEEF,
        cfg_cpl_timeout: 0xFFFF_FFFF,
        rd_req_valid: false,
        rd_req_addr: 0xFEDC_BA98_7654_3210,
        rd_req_len: 0xFFFF_2345,
        rd_req_client: 0xFF,
        rd_data_ready: true,
        rq_ready: true,
        rc_valid: false,
        rc_data: pattern(3),
        rc_keep: 0x8000_0000_0000_0001,
        rc_sop: true,
        rc_eop: true,
    };
    rtl.tick(&i);
    let expect = DmaRdIn {
        cfg_mrrs: 7,
        cfg_cpl_timeout: 0xFF_FFFF,
        rd_req_len: 0x1_2345,
        rd_req_client: 3,
        ..i
    };
    assert_eq!(rtl.inputs(), expect);

    let mut wr = RtlDmaWr::new();
    wr.reset();
    for seed in [0u8, 0x77, 0xFF] {
        let i = DmaWrIn {
            wr_req_len: 0x1_0000 | seed as u32,
            wr_data: pattern(seed),
            ..DmaWrIn::default()
        };
        wr.tick(&i);
        assert_eq!(wr.inputs(), i);
    }
}

#[test]
fn trace_is_written() {
    let path = tmp("rtl_binding_dma_rd.vcd");
    let _ = std::fs::remove_file(&path);
    let mut rtl = RtlDmaRd::new();
    rtl.trace_open(&path);
    assert!(rtl.is_tracing());
    rtl.reset();
    for _ in 0..3 {
        rtl.tick(&DmaRdIn {
            rd_req_valid: true,
            rd_req_len: 64,
            ..DmaRdIn::default()
        });
    }
    rtl.trace_close();
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("$enddefinitions"));
    assert!(vcd.contains(" rd_req_ready "));
    assert!(vcd.contains(" rc_data [511:0] "));
    // 2 reset cycles and 3 ticks: clk low at 4000 n ps, high at 4000 n + 2000.
    assert!(vcd.contains("$timescale 1ps $end"));
    assert!(vcd.contains("\n#0\n") && vcd.contains("\n#18000\n"));
    assert!(!vcd.contains("\n#20000\n"));

    // A second trace of the same model, on another thread.
    let path2 = tmp("rtl_binding_dma_rd_2.vcd");
    std::thread::spawn(move || {
        rtl.trace_open(&path2);
        rtl.tick(&DmaRdIn::default());
        rtl.trace_flush();
        let vcd = std::fs::read_to_string(&path2).unwrap();
        assert!(vcd.contains("$enddefinitions") && vcd.contains("\n#22000\n"));
        drop(rtl); // closes the trace
    })
    .join()
    .unwrap();

    assert!(RtlDmaWr::new()
        .try_trace_open(&tmp("no/such/dir/x.vcd"))
        .is_err());
}

// ---- Parameter variants (build.rs `VARIANTS`) -------------------------------

/// A resolved integer parameter of `T`.
fn param<T: RtlTop>(name: &str) -> u32 {
    T::param(name)
        .unwrap_or_else(|| panic!("{}: no parameter {name}", T::VARIANT))
        .parse()
        .unwrap_or_else(|e| panic!("{}: parameter {name}: {e}", T::VARIANT))
}

/// `stat_free_lines` right after reset: `free_lines_q` resets to BUF_LINES.
fn free_lines_after_reset<T: RtlTop<In = DmaRdIn, Out = DmaRdOut>>() -> u16 {
    let mut rtl = Rtl::<T>::new();
    let o = rtl.reset();
    assert_eq!(o.stat_tags_busy, 0, "{}", T::VARIANT);
    o.stat_free_lines
}

#[test]
fn variants_carry_their_parameters() {
    // What the binding says it is.
    assert_eq!(DmaRdTop::VARIANT, "dma_rd");
    assert!(DmaRdTop::PARAMS.is_empty());
    assert_eq!(
        DmaRdTop::PARAM_VALUES,
        [("TAGS", "32"), ("BUF_LINES", "256"), ("CLIENT_W", "2")]
    );
    assert_eq!(DmaRdT128Top::NAME, "dma_rd", "VCD scopes of the module");
    assert_eq!(<RtlDmaRdT128 as Dut>::NAME, "dma_rd");
    assert_eq!(DmaRdT128Top::VARIANT, "dma_rd_t128");
    assert_eq!(
        DmaRdT128Top::PARAMS,
        [("TAGS", "128"), ("BUF_LINES", "1024")]
    );
    assert_eq!(
        DmaRdT128Top::PARAM_VALUES,
        [("TAGS", "128"), ("BUF_LINES", "1024"), ("CLIENT_W", "2")]
    );
    assert_eq!(
        DmaRdT256Top::PARAMS,
        [("TAGS", "256"), ("BUF_LINES", "4096")]
    );
    assert_eq!(DmaRdT64Top::param("TAGS"), Some("64"));
    assert_eq!(
        DmaRdT64Top::param("TAGW"),
        None,
        "localparams are not listed"
    );
    // Same ports (widths do not depend on TAGS/BUF_LINES).
    assert_eq!(DmaRdT256Top::INPUTS, DmaRdTop::INPUTS);
    assert_eq!(DmaRdT256Top::OUTPUTS, DmaRdTop::OUTPUTS);

    // What the Verilated models do: free_lines_q resets to BUF_LINES.
    assert_eq!(free_lines_after_reset::<DmaRdTop>(), 256);
    assert_eq!(free_lines_after_reset::<DmaRdT64Top>(), 512);
    assert_eq!(free_lines_after_reset::<DmaRdT128Top>(), 1024);
    assert_eq!(free_lines_after_reset::<DmaRdT256Top>(), 4096);
    assert_eq!(
        u32::from(free_lines_after_reset::<DmaRdT128Top>()),
        param::<DmaRdT128Top>("BUF_LINES")
    );

    // A variant's VCD has the module's scope, and its debug output says which
    // configuration it is.
    let path = tmp("rtl_binding_dma_rd_t256.vcd");
    let _ = std::fs::remove_file(&path);
    let mut rtl = RtlDmaRdT256::new();
    rtl.trace_open(&path);
    rtl.reset();
    rtl.trace_close();
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("$scope module dma_rd $end"), "{vcd:.400}");
    assert!(!vcd.contains("dma_rd_t256"));
    let dbg = format!("{rtl:?}");
    assert!(
        dbg.contains("dma_rd_t256") && dbg.contains("\"TAGS\", \"256\""),
        "{dbg}"
    );
}

/// MRds issued in 400 cycles when no completion ever comes: 128 x 128-byte
/// requests (`cfg_mrrs` 0, 128-aligned, so 128 MRds of 2 buffer lines each)
/// offered back to back, `rq_ready` high, the completion timeout far beyond
/// the run and `rd_data_ready` low, so no tag is ever freed. Returns the tags
/// of the MRds, in issue order, and the last outputs.
fn mrds_without_completions<T: RtlTop<In = DmaRdIn, Out = DmaRdOut>>() -> (Vec<u8>, DmaRdOut) {
    const LEN: u32 = 128 * 128;
    let mut rtl = Rtl::<T>::new();
    let mut o = rtl.reset();
    let mut tags = Vec::new();
    let mut next_addr: u64 = 0x10_0000;
    for _ in 0..400 {
        let i = DmaRdIn {
            cfg_mrrs: 0,
            cfg_cpl_timeout: 0xFF_FFFF,
            rd_req_valid: true,
            rd_req_addr: next_addr,
            rd_req_len: LEN,
            rq_ready: true,
            rd_data_ready: false,
            ..DmaRdIn::default()
        };
        let ready = o.rd_req_ready;
        o = rtl.tick(&i);
        if ready {
            next_addr += u64::from(LEN);
        }
        if o.rq_valid {
            assert!(o.rq_sop && o.rq_eop);
            assert_eq!(o.rq_data[0], 0x00, "MRd, 3-DW header");
            assert_eq!(o.rq_data[3], 32, "128 bytes = 32 DW");
            tags.push(o.rq_data[6]);
        }
    }
    (tags, o)
}

fn check_outstanding<T: RtlTop<In = DmaRdIn, Out = DmaRdOut>>(expect: usize) {
    let (tags, o) = mrds_without_completions::<T>();
    let v = T::VARIANT;
    assert_eq!(tags.len(), expect, "{v}: MRds outstanding");
    assert_eq!(expect as u32, param::<T>("TAGS"), "{v}: the tags run out");
    let distinct: BTreeSet<u8> = tags.iter().copied().collect();
    assert_eq!(distinct.len(), expect, "{v}: every MRd has its own tag");
    assert_eq!(
        distinct.last().copied(),
        Some((expect - 1) as u8),
        "{v}: tags 0..TAGS"
    );
    assert_eq!(usize::from(o.stat_tags_busy), expect, "{v}");
    assert_eq!(
        u32::from(o.stat_free_lines),
        param::<T>("BUF_LINES") - 2 * expect as u32,
        "{v}: 2 lines per 128-byte MRd"
    );
    assert_eq!(o.cnt_cpl_timeout, 0, "{v}");
}

/// With more tags, more MRds are outstanding: 32 for the default TAGS, and
/// TAGS for each variant (their BUF_LINES leave the tags the limit).
#[test]
fn variants_have_more_mrds_outstanding() {
    check_outstanding::<DmaRdTop>(32);
    check_outstanding::<DmaRdT64Top>(64);
    check_outstanding::<DmaRdT128Top>(128);
    check_outstanding::<DmaRdT256Top>(256);
}
