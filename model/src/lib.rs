//! Cycle-accurate reference model of the RNIC datapath.
//!
//! One module per RTL module (`hw/rtl/<name>.sv` <-> `model/src/<name>.rs`),
//! with the same port names. Each block is a struct whose fields are the RTL's
//! registers and whose `tick` computes the next state from this state and the
//! inputs, exactly as the RTL's `always_comb`/`always_ff` pair does.

pub mod ack_gen;
pub mod ack_tracker;
pub mod cnp_gen;
pub mod cq_arb;
pub mod cq_writer;
pub mod csr;
pub mod csr_map;
pub mod dcqcn;
pub mod dma_rd;
pub mod dma_wr;
pub mod dut;
pub mod icrc;
pub mod params;
pub mod pcie;
pub mod pfc;
pub mod pfc_gen;
pub mod pkt_builder;
pub mod ports;
pub mod rate_limiter;
pub mod rd_req_arb;
pub mod rd_resp;
pub mod rd_sink;
pub mod resp_tok;
pub mod responder;
pub mod retx_ctl;
pub mod rnic_top;
pub mod rq_arb;
pub mod rq_fetch;
pub mod rr_pick;
pub mod rx_buf;
pub mod rx_meta;
pub mod rx_parser;
pub mod rx_wr;
pub mod skid_arb;
pub mod sq_fetch;
pub mod sync_fifo;
pub mod trace;
pub mod tx_engine;
pub mod tx_sched;
pub mod wr_arb;

pub use dut::Dut;
pub use ports::{Beat, PortInfo, PortValue, Ports};
