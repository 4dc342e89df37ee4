//! `rx_wr`: the receive write engine. Model of `hw/rtl/rx_wr.sv` (same
//! register names; contract: docs/responder.md, "rx_wr and wr_arb").
//!
//! WRITE commands name a segment `[wc_off, wc_off + wc_len)` of the frame at
//! the head of the `in_*` stream (rx_buf's out stream); each becomes one
//! `dma_wr` request and `ceil(len/64)` data beats realigned from the frame's
//! lanes, so that data byte `j` is frame byte `wc_off + j`. The frame's last
//! command (`wc_last`) drops the rest of the frame. A token is offered on
//! `tok_*` once every earlier request has completed (`wr_done` counted).

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// Bits of a token (`TOK_W`): opaque to `rx_wr` (a completion or a READ job
/// for the responder). Carried in the low bits of a [`Beat`].
pub const TOK_W: u32 = 192;
/// Requests given to `dma_wr` and not yet completed, at most (`OUTS`).
pub const OUTS: usize = 8;

ports! {
    /// Inputs of `rx_wr` (all but `clk`/`rst`).
    pub struct RxWrIn {
        /// A command: a WRITE segment (`wc_tok` 0) or a token (1).
        pub wc_valid: bool = 1,
        pub wc_tok: bool = 1 if wc_valid,
        pub wc_off: u16 = 13 if wc_valid,
        pub wc_len: u16 = 13 if wc_valid,
        pub wc_addr: u64 = 64 if wc_valid,
        pub wc_last: bool = 1 if wc_valid,
        /// The token, in the low `TOK_W` bits (the rest must be zero).
        pub wc_tok_data: Beat = 192 if wc_valid,
        /// rx_buf's `out_*` stream.
        pub in_valid: bool = 1,
        pub in_data: Beat = 512 if in_valid,
        pub in_keep: u64 = 64 if in_valid,
        pub in_last: bool = 1 if in_valid,
        pub wr_req_ready: bool = 1,
        pub wr_data_ready: bool = 1,
        /// Pulse: one of this client's requests completed at `dma_wr`.
        pub wr_done_valid: bool = 1,
        pub tok_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `rx_wr`, all decodes of registers.
    pub struct RxWrOut {
        pub wc_ready: bool = 1,
        pub in_ready: bool = 1,
        pub wr_req_valid: bool = 1,
        pub wr_req_addr: u64 = 64 if wr_req_valid,
        pub wr_req_len: u32 = 17 if wr_req_valid,
        pub wr_data_valid: bool = 1,
        pub wr_data: Beat = 512 if wr_data_valid,
        pub tok_valid: bool = 1,
        pub tok_data: Beat = 192 if tok_valid,
        /// Pulse: a request was loaded (the cycle it is first offered).
        pub ev_write: bool = 1,
        /// Its bytes (0 without a pulse).
        pub ev_bytes: u16 = 13,
    }
}

/// One command FIFO entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cmd {
    tok: bool,
    off: u16,
    len: u16,
    addr: u64,
    last: bool,
    tok_data: Beat,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    Seg,
    Drain,
}

/// The engine. Field names are the RTL's registers.
#[derive(Debug, Clone, PartialEq)]
pub struct RxWr {
    u_cq: SyncFifo<Cmd>,
    u_oq: SyncFifo<Beat>,
    state_q: State,
    c_off_q: u16,
    c_rem_q: u16,
    c_last_q: bool,
    pos_q: u8,
    hb_q: Beat,
    eof_q: bool,
    mid_q: bool,
    end_q: u16,
    outst_q: usize,
    req_valid_q: bool,
    req_addr_q: u64,
    req_len_q: u32,
    tok_valid_q: bool,
    tok_data_q: Beat,
    ev_write_q: bool,
    ev_bytes_q: u16,
}

impl Default for RxWr {
    fn default() -> Self {
        RxWr {
            u_cq: SyncFifo::new(2),
            u_oq: SyncFifo::new(2),
            state_q: State::Idle,
            c_off_q: 0,
            c_rem_q: 0,
            c_last_q: false,
            pos_q: 0,
            hb_q: Beat::default(),
            eof_q: false,
            mid_q: false,
            end_q: 0,
            outst_q: 0,
            req_valid_q: false,
            req_addr_q: 0,
            req_len_q: 0,
            tok_valid_q: false,
            tok_data_q: Beat::default(),
            ev_write_q: false,
            ev_bytes_q: 0,
        }
    }
}

/// Output beat: bytes `[s, s + 64)` of the 128-byte window `{hi, lo}`.
fn window(lo: &Beat, hi: &Beat, s: usize) -> Beat {
    let mut b = Beat::default();
    for (j, o) in b.iter_mut().enumerate() {
        let k = s + j;
        *o = if k < 64 { lo[k] } else { hi[k - 64] };
    }
    b
}

/// Keeps the low `TOK_W` bits of a token.
fn tok_mask(mut b: Beat) -> Beat {
    for x in b.iter_mut().skip(TOK_W as usize / 8) {
        *x = 0;
    }
    b
}

impl RxWr {
    pub fn new() -> Self {
        Self::default()
    }

    /// `in_ready`: a decode of the registers (and the output FIFO's count).
    fn in_ready(&self) -> bool {
        match self.state_q {
            State::Seg => {
                let (_, hi) = self.span();
                let pos = self.pos_q as u16;
                if hi <= pos {
                    self.u_oq.in_ready() && hi == pos
                } else {
                    true
                }
            }
            State::Drain => true,
            State::Idle => false,
        }
    }

    /// Beats of the first and the last byte of the current output beat.
    fn span(&self) -> (u16, u16) {
        let n = self.c_rem_q.min(64);
        let lst = (self.c_off_q + n).wrapping_sub(1) & 0x3FFF;
        ((self.c_off_q >> 6) & 0xFF, (lst >> 6) & 0xFF)
    }

    pub fn outputs(&self) -> RxWrOut {
        RxWrOut {
            wc_ready: self.u_cq.in_ready(),
            in_ready: self.in_ready(),
            wr_req_valid: self.req_valid_q,
            wr_req_addr: self.req_addr_q,
            wr_req_len: self.req_len_q,
            wr_data_valid: self.u_oq.out_valid(),
            wr_data: self.u_oq.out_data(),
            tok_valid: self.tok_valid_q,
            tok_data: self.tok_data_q,
            ev_write: self.ev_write_q,
            ev_bytes: self.ev_bytes_q,
        }
    }
}

impl Dut for RxWr {
    type In = RxWrIn;
    type Out = RxWrOut;
    const NAME: &'static str = "rx_wr";

    fn reset(&mut self) -> RxWrOut {
        *self = RxWr::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RxWrIn) -> RxWrOut {
        // The current output beat.
        let n = self.c_rem_q.min(64);
        let (lo, hi) = self.span();
        let pos = self.pos_q as u16;
        let hi_le = hi <= pos;
        let hi_held = hi < pos;
        let from_hold = lo != pos;
        let emit_data = window(
            if from_hold { &self.hb_q } else { &i.in_data },
            &i.in_data,
            (self.c_off_q & 63) as usize,
        );
        let oq_in_ready = self.u_oq.in_ready();
        let (mut emit, mut take) = (false, false);
        if self.state_q == State::Seg {
            if hi_le {
                let go = oq_in_ready && (hi_held || i.in_valid);
                emit = go;
                take = go && !hi_held;
            } else {
                take = i.in_valid;
            }
        }
        let fin = emit && self.c_rem_q <= 64;

        // Commands.
        let cq_valid = self.u_cq.out_valid();
        let h = self.u_cq.out_data();
        let free = self.state_q == State::Idle || (fin && !self.c_last_q);
        let req_free = !self.req_valid_q || i.wr_req_ready;
        let room = self.outst_q + (self.req_valid_q as usize) < OUTS;
        let load_w = cq_valid && !h.tok && free && (h.len == 0 || (req_free && room));
        let load_t = cq_valid
            && h.tok
            && self.state_q == State::Idle
            && !self.req_valid_q
            && self.outst_q == i.wr_done_valid as usize
            && (!self.tok_valid_q || i.tok_ready);

        let mut state_d = self.state_q;
        let mut c_off_d = self.c_off_q;
        let mut c_rem_d = self.c_rem_q;
        let mut c_last_d = self.c_last_q;
        let mut pos_d = self.pos_q;
        let mut hb_d = self.hb_q;
        let mut eof_d = self.eof_q;
        let mut mid_d = self.mid_q;
        let mut end_d = self.end_q;
        let outst_d =
            self.outst_q + (self.req_valid_q && i.wr_req_ready) as usize - i.wr_done_valid as usize;
        let mut req_valid_d = self.req_valid_q && !i.wr_req_ready;
        let mut req_addr_d = self.req_addr_q;
        let mut req_len_d = self.req_len_q;
        let mut tok_valid_d = self.tok_valid_q && !i.tok_ready;
        let mut tok_data_d = self.tok_data_q;
        let mut ev_write_d = false;
        let mut ev_bytes_d = 0;
        let mut frame_end = false;

        if take || (self.state_q == State::Drain && i.in_valid) {
            pos_d = self.pos_q.wrapping_add(1);
            hb_d = i.in_data;
            eof_d = i.in_last;
        }
        if emit {
            c_off_d = (self.c_off_q + 64) & 0x3FFF;
            c_rem_d = self.c_rem_q - n;
        }
        if fin {
            if !self.c_last_q {
                state_d = State::Idle;
            } else if eof_d {
                state_d = State::Idle;
                frame_end = true;
            } else {
                state_d = State::Drain;
            }
        }
        if self.state_q == State::Drain && i.in_valid && i.in_last {
            state_d = State::Idle;
            frame_end = true;
        }
        if load_w {
            c_off_d = h.off;
            c_rem_d = h.len;
            c_last_d = h.last;
            mid_d = !h.last;
            end_d = h.off + h.len;
            if h.len != 0 {
                state_d = State::Seg;
                req_valid_d = true;
                req_addr_d = h.addr;
                req_len_d = h.len as u32;
                ev_write_d = true;
                ev_bytes_d = h.len;
            } else if !h.last {
                state_d = State::Idle;
            } else if eof_d {
                state_d = State::Idle;
                frame_end = true;
            } else {
                state_d = State::Drain;
            }
        }
        if load_t {
            tok_valid_d = true;
            tok_data_d = h.tok_data;
        }
        if frame_end {
            pos_d = 0;
            eof_d = false;
            end_d = 0;
        }

        let push = Cmd {
            tok: i.wc_tok,
            off: i.wc_off & 0x1FFF,
            len: i.wc_len & 0x1FFF,
            addr: i.wc_addr,
            last: i.wc_last,
            tok_data: tok_mask(i.wc_tok_data),
        };
        self.u_cq.tick(i.wc_valid.then_some(push), load_w || load_t);
        self.u_oq.tick(emit.then_some(emit_data), i.wr_data_ready);

        self.state_q = state_d;
        self.c_off_q = c_off_d;
        self.c_rem_q = c_rem_d;
        self.c_last_q = c_last_d;
        self.pos_q = pos_d;
        self.hb_q = hb_d;
        self.eof_q = eof_d;
        self.mid_q = mid_d;
        self.end_q = end_d;
        self.outst_q = outst_d;
        self.req_valid_q = req_valid_d;
        self.req_addr_q = req_addr_d;
        self.req_len_q = req_len_d;
        self.tok_valid_q = tok_valid_d;
        self.tok_data_q = tok_data_d;
        self.ev_write_q = ev_write_d;
        self.ev_bytes_q = ev_bytes_d;
        self.outputs()
    }
}

impl TraceValue for Cmd {
    /// `{tok, off, len, addr, last, tok_data}`: tok_data in the low bits.
    fn put(&self, _w: u32, b: &mut Bits) {
        self.tok_data.put(TOK_W, b);
        b.push(self.last as u64, 1);
        b.push(self.addr, 64);
        b.push(self.len as u64, 13);
        b.push(self.off as u64, 13);
        b.push(self.tok as u64, 1);
    }
}

impl Trace for RxWr {
    /// The RTL's registers in its declaration order (`state_q` is the
    /// `state_e` encoding: S_IDLE 0, S_SEG 1, S_DRAIN 2).
    fn trace(&self, t: &mut dyn Tracer) {
        t.push("u_cq");
        self.u_cq.trace_all(t, 1 + 13 + 13 + 64 + 1 + TOK_W);
        t.pop();
        t.push("u_oq");
        self.u_oq.trace_all(t, 512);
        t.pop();
        t.reg("state_q", 2, &(self.state_q as u8));
        t.reg("c_off_q", 14, &self.c_off_q);
        t.reg("c_rem_q", 13, &self.c_rem_q);
        t.reg("c_last_q", 1, &self.c_last_q);
        t.reg("pos_q", 8, &self.pos_q);
        t.reg("hb_q", 512, &self.hb_q);
        t.reg("eof_q", 1, &self.eof_q);
        t.reg("mid_q", 1, &self.mid_q);
        t.reg("end_q", 14, &self.end_q);
        t.reg(
            "outst_q",
            (OUTS + 1).next_power_of_two().trailing_zeros(),
            &self.outst_q,
        );
        t.reg("req_valid_q", 1, &self.req_valid_q);
        t.reg("req_addr_q", 64, &self.req_addr_q);
        t.reg("req_len_q", 17, &self.req_len_q);
        t.reg("tok_valid_q", 1, &self.tok_valid_q);
        t.reg("tok_data_q", TOK_W, &self.tok_data_q);
        t.reg("ev_write_q", 1, &self.ev_write_q);
        t.reg("ev_bytes_q", 13, &self.ev_bytes_q);
    }
}

#[cfg(test)]
mod tests;
