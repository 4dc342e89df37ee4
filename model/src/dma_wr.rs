//! `dma_wr`: the PCIe write engine. Model of `hw/rtl/dma_wr.sv`.

use crate::ports;
use crate::ports::Beat;

ports! {
    /// Inputs of `dma_wr` (all but `clk`/`rst`).
    pub struct DmaWrIn {
        /// Max Payload Size, PCIe Device Control encoding: 128 << cfg_mps.
        pub cfg_mps: u8 = 3,
        pub cfg_req_id: u16 = 16,
        pub wr_req_valid: bool = 1,
        pub wr_req_addr: u64 = 64 if wr_req_valid,
        /// Bytes, 1 ..= 65536.
        pub wr_req_len: u32 = 17 if wr_req_valid,
        pub wr_req_client: u8 = 2 if wr_req_valid,
        /// Write data, packed from byte 0, ceil(len / 64) beats per request.
        pub wr_data_valid: bool = 1,
        pub wr_data: Beat = 512 if wr_data_valid,
        pub rq_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `dma_wr`, all registered.
    pub struct DmaWrOut {
        pub wr_req_ready: bool = 1,
        pub wr_data_ready: bool = 1,
        /// One-cycle pulse when the last MWr of a request has left.
        pub wr_done_valid: bool = 1,
        pub wr_done_client: u8 = 2 if wr_done_valid,
        pub rq_valid: bool = 1,
        pub rq_data: Beat = 512 if rq_valid,
        pub rq_keep: u64 = 64 if rq_valid,
        pub rq_sop: bool = 1 if rq_valid,
        pub rq_eop: bool = 1 if rq_valid,
    }
}

use crate::dut::Dut;
use crate::pcie::{self, keep_mask};
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// Depth of the request and data FIFOs.
pub const FIFO_DEPTH: usize = 2;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Req {
    addr: u64,
    len: u32,
    client: u8,
}

/// The write engine. Client bytes collect in a 128-byte accumulator from
/// which each MWr beat takes the bytes it needs at its own offset (after a
/// 12- or 16-byte header and the start address's DW offset), so any
/// alignment streams at one beat per cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct DmaWr {
    req_fifo: SyncFifo<Req>,
    data_fifo: SyncFifo<Beat>,
    w_busy_q: bool,
    w_addr_q: u64,
    /// Bytes of the request not yet placed in an MWr.
    w_rem_q: u32,
    /// Bytes of the request not yet taken from the data FIFO.
    w_in_rem_q: u32,
    w_client_q: u8,
    acc_q: [u8; 128],
    acc_cnt_q: u8,
    /// Inside a multi-beat MWr.
    t_act_q: bool,
    /// Payload bytes of the MWr still to emit.
    t_left_q: u16,
    /// TLP bytes (payload and DW pad) still to emit.
    t_bytes_q: u16,
    /// This MWr is the request's last.
    t_last_q: bool,
    rq_valid_q: bool,
    rq_data_q: Beat,
    rq_keep_q: u64,
    rq_sop_q: bool,
    rq_eop_q: bool,
    rq_last_q: bool,
    rq_client_q: u8,
    done_valid_q: bool,
    done_client_q: u8,
}

impl Default for DmaWr {
    fn default() -> Self {
        DmaWr {
            req_fifo: SyncFifo::new(FIFO_DEPTH),
            data_fifo: SyncFifo::new(FIFO_DEPTH),
            w_busy_q: false,
            w_addr_q: 0,
            w_rem_q: 0,
            w_in_rem_q: 0,
            w_client_q: 0,
            acc_q: [0; 128],
            acc_cnt_q: 0,
            t_act_q: false,
            t_left_q: 0,
            t_bytes_q: 0,
            t_last_q: false,
            rq_valid_q: false,
            rq_data_q: Beat::default(),
            rq_keep_q: 0,
            rq_sop_q: false,
            rq_eop_q: false,
            rq_last_q: false,
            rq_client_q: 0,
            done_valid_q: false,
            done_client_q: 0,
        }
    }
}

impl DmaWr {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> DmaWrOut {
        DmaWrOut {
            wr_req_ready: self.req_fifo.in_ready(),
            wr_data_ready: self.data_fifo.in_ready(),
            wr_done_valid: self.done_valid_q,
            wr_done_client: self.done_client_q,
            rq_valid: self.rq_valid_q,
            rq_data: self.rq_data_q,
            rq_keep: self.rq_keep_q,
            rq_sop: self.rq_sop_q,
            rq_eop: self.rq_eop_q,
        }
    }
}

impl Dut for DmaWr {
    type In = DmaWrIn;
    type Out = DmaWrOut;
    const NAME: &'static str = "dma_wr";

    fn reset(&mut self) -> DmaWrOut {
        *self = DmaWr::default();
        self.outputs()
    }

    fn tick(&mut self, i: &DmaWrIn) -> DmaWrOut {
        let mps = pcie::size_from_enc(i.cfg_mps) as u64;
        let slot = !self.rq_valid_q || i.rq_ready;
        let busy_q = self.w_busy_q;
        let rq_client_q = self.rq_client_q;

        let done_valid_d = self.rq_valid_q && i.rq_ready && self.rq_eop_q && self.rq_last_q;

        // ---- Emit one MWr beat when the bytes it needs are here. ----
        let mut consume = 0u32;
        let mut emit: Option<(Beat, u64, bool, bool, bool)> = None; // data, keep, sop, eop, last
        if slot && self.w_busy_q {
            if !self.t_act_q {
                let chunk = (self.w_rem_q as u64).min(mps - (self.w_addr_q & (mps - 1))) as u32;
                let (hdr, hlen) = pcie::mem_req_header(true, self.w_addr_q, chunk, i.cfg_req_id, 0);
                let total = hlen + 4 * pcie::dw_count(self.w_addr_q, chunk);
                let p0 = hlen + (self.w_addr_q & 3) as u32;
                let m = (64 - p0).min(chunk);
                if self.acc_cnt_q as u32 >= m {
                    let mut beat = Beat(hdr);
                    beat[p0 as usize..(p0 + m) as usize].copy_from_slice(&self.acc_q[..m as usize]);
                    let eop = total <= 64;
                    let last = self.w_rem_q == chunk;
                    emit = Some((beat, keep_mask(total.min(64)), true, eop, last && eop));
                    consume = m;
                    self.w_addr_q += chunk as u64;
                    self.w_rem_q -= chunk;
                    if eop {
                        if last {
                            self.w_busy_q = false;
                        }
                    } else {
                        self.t_act_q = true;
                        self.t_left_q = (chunk - m) as u16;
                        self.t_bytes_q = (total - 64) as u16;
                        self.t_last_q = last;
                    }
                }
            } else {
                let m = (self.t_left_q as u32).min(64);
                if self.acc_cnt_q as u32 >= m {
                    let mut beat = Beat::default();
                    beat[..m as usize].copy_from_slice(&self.acc_q[..m as usize]);
                    let eop = self.t_bytes_q <= 64;
                    emit = Some((
                        beat,
                        keep_mask((self.t_bytes_q as u32).min(64)),
                        false,
                        eop,
                        self.t_last_q && eop,
                    ));
                    consume = m;
                    self.t_left_q -= m as u16;
                    if eop {
                        self.t_act_q = false;
                        if self.t_last_q {
                            self.w_busy_q = false;
                        }
                    } else {
                        self.t_bytes_q -= 64;
                    }
                }
            }
        }

        // ---- Accumulator: drop what was sent, then append one client beat. ----
        let acc_after = self.acc_cnt_q as u32 - consume;
        let pull = busy_q && self.w_in_rem_q > 0 && self.data_fifo.out_valid() && acc_after <= 64;
        let mut acc_d = [0u8; 128];
        acc_d[..128 - consume as usize].copy_from_slice(&self.acc_q[consume as usize..]);
        let mut acc_cnt_d = acc_after;
        if pull {
            let beat = self.data_fifo.out_data();
            let a = acc_after as usize;
            acc_d[a..a + 64].copy_from_slice(&beat[..]);
            let n = self.w_in_rem_q.min(64);
            acc_cnt_d += n;
            self.w_in_rem_q -= n;
        }
        self.acc_q = acc_d;
        self.acc_cnt_q = acc_cnt_d as u8;

        // ---- Output register. ----
        if let Some((data, keep, sop, eop, last)) = emit {
            self.rq_valid_q = true;
            self.rq_data_q = data;
            self.rq_keep_q = keep;
            self.rq_sop_q = sop;
            self.rq_eop_q = eop;
            self.rq_last_q = last;
            self.rq_client_q = self.w_client_q;
        } else if self.rq_valid_q && i.rq_ready {
            self.rq_valid_q = false;
        }
        self.done_client_q = rq_client_q;
        self.done_valid_q = done_valid_d;

        // ---- FIFOs and request start. ----
        let start = !busy_q && self.req_fifo.out_valid();
        let head = self.req_fifo.out_data();
        self.req_fifo.tick(
            i.wr_req_valid.then_some(Req {
                addr: i.wr_req_addr,
                len: i.wr_req_len & 0x1_FFFF,
                client: i.wr_req_client & 3,
            }),
            start,
        );
        self.data_fifo
            .tick(i.wr_data_valid.then_some(i.wr_data), pull);
        if start {
            self.w_busy_q = true;
            self.w_addr_q = head.addr;
            self.w_rem_q = head.len;
            self.w_in_rem_q = head.len;
            self.w_client_q = head.client;
        }
        self.outputs()
    }
}

/// A request as `u_req_fifo` holds it: `{addr, len, client}`.
impl TraceValue for Req {
    fn put(&self, _: u32, b: &mut Bits) {
        b.push(self.client as u64, 2);
        b.push(self.len as u64, 17);
        b.push(self.addr, 64);
    }
}

impl Trace for DmaWr {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("w_busy_q", 1, &self.w_busy_q);
        t.reg("w_addr_q", 64, &self.w_addr_q);
        t.reg("w_rem_q", 17, &self.w_rem_q);
        t.reg("w_in_rem_q", 17, &self.w_in_rem_q);
        t.reg("w_client_q", 2, &self.w_client_q);
        t.reg("acc_q", 1024, &self.acc_q);
        t.reg("acc_cnt_q", 8, &self.acc_cnt_q);
        t.reg("t_act_q", 1, &self.t_act_q);
        t.reg("t_left_q", 13, &self.t_left_q);
        t.reg("t_bytes_q", 13, &self.t_bytes_q);
        t.reg("t_last_q", 1, &self.t_last_q);
        t.reg("rq_valid_q", 1, &self.rq_valid_q);
        t.reg("rq_data_q", 512, &self.rq_data_q);
        t.reg("rq_keep_q", 64, &self.rq_keep_q);
        t.reg("rq_sop_q", 1, &self.rq_sop_q);
        t.reg("rq_eop_q", 1, &self.rq_eop_q);
        t.reg("rq_last_q", 1, &self.rq_last_q);
        t.reg("rq_client_q", 2, &self.rq_client_q);
        t.reg("done_valid_q", 1, &self.done_valid_q);
        t.reg("done_client_q", 2, &self.done_client_q);
        t.push("u_req_fifo");
        self.req_fifo.trace_all(t, 83);
        t.pop();
        t.push("u_data_fifo");
        self.data_fifo.trace_all(t, 512);
        t.pop();
    }
}
