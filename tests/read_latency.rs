//! Read latency of `dma_rd`, model and RTL in lockstep: from the cycle a
//! 64-byte read is accepted to the cycle its data beat is offered, with the
//! root complex starting its completion `latency` cycles after it took the
//! MRd. Design contract: `latency + 8` cycles at most, namely 2 to put the
//! MRd on `rq` (splitter, loaded straight from the request when the engine
//! is idle; MRd register), the 76-byte CplD's
//! second beat, and 5 from that last beat to the data (input register,
//! buffer write and tag done, claim and buffer read, realignment, output
//! register).

mod common;
use common::figures::Table;

use std::path::Path;

use rnic_model::dma_rd::{DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlDmaRd;
use rnic_testbench::scenario::DmaRdEnv;
use rnic_testbench::vector::Vector;

/// Records the request handshake and the first data beat.
struct Probe {
    env: DmaRdEnv,
    accepted: Option<u64>,
    first_beat: Option<u64>,
}

impl Env for Probe {
    type In = DmaRdIn;
    type Out = DmaRdOut;
    fn step(&mut self, cycle: u64, o: &DmaRdOut) -> DmaRdIn {
        let i = self.env.step(cycle, o);
        if i.rd_req_valid && o.rd_req_ready && self.accepted.is_none() {
            self.accepted = Some(cycle);
        }
        if o.rd_data_valid && self.first_beat.is_none() {
            self.first_beat = Some(cycle);
        }
        i
    }
    fn finished(&self) -> bool {
        self.env.finished()
    }
}

#[test]
fn read_latency_is_pcie_latency_plus_at_most_8_cycles() {
    let mut t = Table::new(
        "dma_rd_latency",
        &[
            "PCIe latency L",
            "request accepted to first data beat",
            "engine's share",
            "contract",
        ],
    );
    for latency in [1u64, 100, 500] {
        let text = format!(
            r#"{{"format":1,"name":"lat","description":"d","checked_against":"c","top":"dma_rd",
                "root_complex":{{"latency":{latency}}},
                "memory":[{{"addr":"0x1000","len":64,"seed":1}}],
                "reads":[{{"addr":"0x1000","len":64}}],"max_cycles":2000}}"#
        );
        let v = Vector::parse(Path::new("inline"), &text).unwrap();
        let mut p = Probe {
            env: DmaRdEnv::new(&v).unwrap(),
            accepted: None,
            first_beat: None,
        };
        let fin = lockstep::run(
            &mut DmaRd::new(DmaRdParams::default()),
            &mut RtlDmaRd::new(),
            &mut p,
            v.max_cycles,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert!(fin.completed);
        p.env.finish_checks(fin.cycles, 256);
        assert!(
            p.env.common.failures.is_empty(),
            "{:?}",
            p.env.common.failures
        );
        let total = p.first_beat.unwrap() - p.accepted.unwrap();
        let share = total - latency;
        t.row(&[
            latency.to_string(),
            total.to_string(),
            share.to_string(),
            "≤ L + 8".to_string(),
        ]);
        assert!(
            share <= 8,
            "latency {latency}: the engine adds {share} cycles"
        );
    }
    t.finish();
}
