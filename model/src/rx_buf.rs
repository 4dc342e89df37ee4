//! `rx_buf`: the receive buffer. Model of `hw/rtl/rx_buf.sv` (same register
//! names; the contract is docs/responder.md, "rx_buf").
//!
//! Frames are stored whole in a ring of 64-byte lines as their beats arrive,
//! and handed on in arrival order once their verdict keeps them; discarded
//! frames are freed when they reach the head. Per-priority line counts feed
//! PFC generation. The header queue offers the metadata of every kept
//! frame on `hd_*` from the cycle after its verdict.

use crate::ports::Beat;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};
use crate::Dut;

/// Lines (64 bytes each) as `rnic_top` will build it: 32 KiB.
pub const LINES: usize = 512;
/// Frames held at once.
pub const FRAMES: usize = 64;
/// Frames whose verdict may be outstanding.
pub const PEND: usize = 8;
/// Output FIFO depth: a line a cycle behind a one-cycle RAM read.
const OQ: usize = 4;
/// Header queue depth: FRAMES frames in slots and OQ + 1 beyond them, at
/// most, have a header waiting (the consumer takes a frame's header no
/// later than its last beat).
pub const HQ: usize = (FRAMES + OQ + 1).next_power_of_two();
/// Bits of the metadata (`META_W`): the request metadata record of
/// docs/responder.md, carried in the low 32 bytes of a [`Beat`].
pub const META_W: u32 = 256;
/// Bits of each priority's count in `prio_lines`: log2(LINES) + 1.
pub const PRIO_W: u32 = LINES.trailing_zeros() + 1;

crate::ports! {
    /// Inputs of `rx_buf` (all but `clk`/`rst`).
    pub struct RxBufIn {
        /// The beats of `rx_*`: no back-pressure.
        pub in_valid: bool = 1,
        pub in_data: Beat = 512 if in_valid,
        pub in_keep: u64 = 64 if in_valid,
        pub in_last: bool = 1 if in_valid,
        /// The verdict of the oldest frame waiting for one.
        pub vd_valid: bool = 1,
        pub vd_keep: bool = 1 if vd_valid,
        /// The metadata, in the low `META_W` bits (the rest must be zero).
        pub vd_meta: Beat = 256 if vd_valid,
        pub out_ready: bool = 1,
        pub hd_ready: bool = 1,
    }
}

crate::ports! {
    /// Outputs of `rx_buf`, all registered.
    pub struct RxBufOut {
        pub out_valid: bool = 1,
        pub out_data: Beat = 512 if out_valid,
        pub out_keep: u64 = 64 if out_valid,
        pub out_last: bool = 1 if out_valid,
        pub out_meta: Beat = 256 if out_valid,
        pub out_prio: u8 = 3 if out_valid,
        /// The header queue: one entry per kept stored frame, in order.
        pub hd_valid: bool = 1,
        pub hd_meta: Beat = 256 if hd_valid,
        /// Lines held per priority, priority p at [PRIO_W p +: PRIO_W].
        pub prio_lines: u128 = 80,
        /// Pulse: a frame was lost for lack of room (cycle after its last beat).
        pub ev_drop_full: bool = 1,
    }
}

/// One entry of the output FIFO: a beat and its sideband.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct OqEntry {
    data: Beat,
    keep: u64,
    last: bool,
    meta: Beat,
    prio: u8,
}

/// The buffer. Field names are the RTL's registers.
#[derive(Debug, Clone, PartialEq)]
pub struct RxBuf {
    mem_q: Vec<Beat>,
    wp_q: usize,
    rp_q: usize,
    used_q: usize,
    plines_q: [usize; 8],
    in_frame_q: bool,
    cur_ok_q: bool,
    cur_start_q: usize,
    cur_n_q: usize,
    cur_prio_q: u8,
    cur_idx_q: usize,
    f_n_q: Vec<usize>,
    f_bytes_q: Vec<u8>,
    f_prio_q: Vec<u8>,
    f_keep_q: Vec<bool>,
    f_meta_q: Vec<Beat>,
    fh_q: usize,
    fv_q: usize,
    ft_q: usize,
    fcount_q: usize,
    dec_q: usize,
    hd_off_q: usize,
    /// Bit k: the k-th frame waiting for a verdict was stored.
    pend_q: u32,
    pend_n_q: usize,
    rd_valid_q: bool,
    rd_q: OqEntry,
    ev_drop_full_q: bool,
    u_oq: SyncFifo<OqEntry>,
    u_hq: SyncFifo<Beat>,
}

impl Default for RxBuf {
    fn default() -> Self {
        RxBuf {
            mem_q: vec![Beat::default(); LINES],
            wp_q: 0,
            rp_q: 0,
            used_q: 0,
            plines_q: [0; 8],
            in_frame_q: false,
            cur_ok_q: false,
            cur_start_q: 0,
            cur_n_q: 0,
            cur_prio_q: 0,
            cur_idx_q: 0,
            f_n_q: vec![0; FRAMES],
            f_bytes_q: vec![0; FRAMES],
            f_prio_q: vec![0; FRAMES],
            f_keep_q: vec![false; FRAMES],
            f_meta_q: vec![Beat::default(); FRAMES],
            fh_q: 0,
            fv_q: 0,
            ft_q: 0,
            fcount_q: 0,
            dec_q: 0,
            hd_off_q: 0,
            pend_q: 0,
            pend_n_q: 0,
            rd_valid_q: false,
            rd_q: OqEntry::default(),
            ev_drop_full_q: false,
            u_oq: SyncFifo::new(OQ),
            u_hq: SyncFifo::new(HQ),
        }
    }
}

/// The 802.1p priority of a frame from its first beat: the PCP of a VLAN
/// tag (TPID 0x8100 at bytes 12-13), 0 untagged.
fn pcp(first: &Beat) -> u8 {
    if first.0[12] == 0x81 && first.0[13] == 0x00 {
        first.0[14] >> 5
    } else {
        0
    }
}

/// Bytes of a beat by its keep: one past the highest set lane.
fn keep_bytes(keep: u64) -> u8 {
    64 - keep.leading_zeros() as u8
}

impl RxBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Lines in use, all priorities.
    pub fn used(&self) -> usize {
        self.used_q
    }

    pub fn outputs(&self) -> RxBufOut {
        let h = self.u_oq.out_data();
        let mut prio_lines = 0u128;
        for (p, &n) in self.plines_q.iter().enumerate() {
            prio_lines |= (n as u128) << (PRIO_W as usize * p);
        }
        RxBufOut {
            out_valid: self.u_oq.out_valid(),
            out_data: h.data,
            out_keep: h.keep,
            out_last: h.last,
            out_meta: h.meta,
            out_prio: h.prio,
            hd_valid: self.u_hq.out_valid(),
            hd_meta: self.u_hq.out_data(),
            prio_lines,
            ev_drop_full: self.ev_drop_full_q,
        }
    }
}

impl Dut for RxBuf {
    type In = RxBufIn;
    type Out = RxBufOut;
    const NAME: &'static str = "rx_buf";

    fn reset(&mut self) -> RxBufOut {
        *self = RxBuf::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RxBufIn) -> RxBufOut {
        // Input side.
        let first = i.in_valid && !self.in_frame_q;
        let pin = if first {
            pcp(&i.in_data)
        } else {
            self.cur_prio_q
        };
        let room = self.used_q != LINES;
        let ok = if first {
            self.fcount_q != FRAMES && room
        } else {
            self.cur_ok_q && room
        };
        let store = i.in_valid && ok;
        let ovf = i.in_valid && !first && self.cur_ok_q && !ok;
        let last_beat = i.in_valid && i.in_last;
        let stored_frame = last_beat && ok;

        // Verdicts.
        let vd_stored = self.pend_q & 1 == 1;

        // Reader.
        let head_dec = self.dec_q != 0;
        let fh = self.fh_q;
        let discard = head_dec && !self.f_keep_q[fh];
        let oq_count = self.u_oq.count();
        let issue = head_dec && self.f_keep_q[fh] && oq_count + (self.rd_valid_q as usize) < OQ;
        let head_last = self.hd_off_q + 1 == self.f_n_q[fh];
        let freed = if discard {
            self.f_n_q[fh]
        } else {
            issue as usize
        };

        let mut wp_d = self.wp_q;
        let mut rp_d = self.rp_q;
        let mut used_d = self.used_q - freed;
        let mut plines_d = self.plines_q;
        let mut ft_d = self.ft_q;
        let mut cur_idx_d = self.cur_idx_q;
        let mut cur_n_d = self.cur_n_q;
        if first {
            self.cur_start_q = self.wp_q;
            cur_n_d = 0;
            self.cur_prio_q = pin;
            cur_idx_d = self.ft_q;
            self.cur_ok_q = ok;
            if ok {
                ft_d = (self.ft_q + 1) % FRAMES;
            }
        }
        if store {
            wp_d = (self.wp_q + 1) % LINES;
            cur_n_d += 1;
            used_d += 1;
            plines_d[pin as usize] += 1;
        }
        if ovf {
            // Give back what the frame took; it is the newest, so rewind.
            self.cur_ok_q = false;
            wp_d = self.cur_start_q;
            used_d -= self.cur_n_q;
            plines_d[self.cur_prio_q as usize] -= self.cur_n_q;
            ft_d = (self.ft_q + FRAMES - 1) % FRAMES;
        }
        let leaves = discard || (issue && head_last);
        let fcount_d = self.fcount_q + (first && ok) as usize - ovf as usize - leaves as usize;

        // The bit FIFO: pop at a verdict, push at a last beat.
        let mut pend_d = self.pend_q;
        let mut pend_n_d = self.pend_n_q;
        if i.vd_valid {
            pend_d >>= 1;
            pend_n_d = pend_n_d.wrapping_sub(1) & (2 * PEND - 1);
        }
        if last_beat {
            let at = pend_n_d % PEND;
            pend_d = (pend_d & !(1 << at)) | ((stored_frame as u32) << at);
            pend_n_d = (pend_n_d + 1) & (2 * PEND - 1);
        }
        let mut fv_d = self.fv_q;
        // The header queue takes the verdict's metadata of a kept stored
        // frame (never full: see HQ).
        let hq_push = (i.vd_valid && vd_stored && i.vd_keep).then_some(i.vd_meta);
        self.u_hq.tick(hq_push, i.hd_ready);
        if i.vd_valid && vd_stored {
            self.f_keep_q[self.fv_q] = i.vd_keep;
            self.f_meta_q[self.fv_q] = i.vd_meta;
            fv_d = (self.fv_q + 1) % FRAMES;
        }

        // Frame slot contents written this edge.
        if first && ok {
            self.f_prio_q[self.ft_q] = pin;
        }
        if stored_frame {
            self.f_n_q[cur_idx_d] = cur_n_d;
            self.f_bytes_q[cur_idx_d] = keep_bytes(i.in_keep);
        }

        // Reader.
        let mut fh_d = self.fh_q;
        let mut hd_off_d = self.hd_off_q;
        let mut rd = None;
        if discard {
            rp_d = (self.rp_q + self.f_n_q[fh]) % LINES;
            plines_d[self.f_prio_q[fh] as usize] -= self.f_n_q[fh];
        }
        if issue {
            let bytes = self.f_bytes_q[fh];
            rd = Some(OqEntry {
                data: self.mem_q[self.rp_q],
                keep: if head_last && bytes != 64 {
                    (1u64 << (bytes & 63)) - 1
                } else {
                    u64::MAX
                },
                last: head_last,
                meta: self.f_meta_q[fh],
                prio: self.f_prio_q[fh],
            });
            rp_d = (self.rp_q + 1) % LINES;
            plines_d[self.f_prio_q[fh] as usize] -= 1;
            hd_off_d = if head_last { 0 } else { self.hd_off_q + 1 };
        }
        if leaves {
            fh_d = (self.fh_q + 1) % FRAMES;
        }
        let dec_d = self.dec_q + (i.vd_valid && vd_stored) as usize - leaves as usize;

        // The line RAM is written after the read above (the read sees the
        // old contents, as a synchronous RAM does; they never collide).
        if store {
            self.mem_q[self.wp_q] = i.in_data;
        }

        // The output FIFO takes last cycle's read.
        let push = self.rd_valid_q.then_some(self.rd_q);
        self.u_oq.tick(push, i.out_ready);
        if let Some(r) = rd {
            self.rd_q = r;
        }

        self.in_frame_q = if i.in_valid {
            !i.in_last
        } else {
            self.in_frame_q
        };
        self.cur_n_q = cur_n_d;
        self.cur_idx_q = cur_idx_d;
        self.wp_q = wp_d;
        self.rp_q = rp_d;
        self.used_q = used_d;
        self.plines_q = plines_d;
        self.ft_q = ft_d;
        self.fv_q = fv_d;
        self.fh_q = fh_d;
        self.fcount_q = fcount_d;
        self.dec_q = dec_d;
        self.hd_off_q = hd_off_d;
        self.pend_q = pend_d;
        self.pend_n_q = pend_n_d;
        self.rd_valid_q = issue;
        self.ev_drop_full_q = last_beat && !ok;
        self.outputs()
    }
}

impl TraceValue for OqEntry {
    /// `{data, keep, last, meta, prio}`: prio in the low bits.
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.prio as u64, 3);
        self.meta.put(META_W, b);
        b.push(self.last as u64, 1);
        b.push(self.keep, 64);
        self.data.put(512, b);
    }
}

impl Trace for RxBuf {
    /// The RTL's registers in its declaration order. The line RAM and the
    /// frame slot tables (`mem_q`, `f_*_q`: LINES and FRAMES rows) are
    /// longer than Verilator dumps, so they are not traced.
    fn trace(&self, t: &mut dyn Tracer) {
        let lw = LINES.trailing_zeros();
        let fw = FRAMES.trailing_zeros();
        t.reg("wp_q", lw, &self.wp_q);
        t.reg("rp_q", lw, &self.rp_q);
        t.reg("used_q", lw + 1, &self.used_q);
        t.each("plines_q", lw + 1, &self.plines_q);
        t.reg("in_frame_q", 1, &self.in_frame_q);
        t.reg("cur_ok_q", 1, &self.cur_ok_q);
        t.reg("cur_start_q", lw, &self.cur_start_q);
        t.reg("cur_n_q", lw + 1, &self.cur_n_q);
        t.reg("cur_prio_q", 3, &self.cur_prio_q);
        t.reg("cur_idx_q", fw, &self.cur_idx_q);
        t.reg("fh_q", fw, &self.fh_q);
        t.reg("fv_q", fw, &self.fv_q);
        t.reg("ft_q", fw, &self.ft_q);
        t.reg("fcount_q", fw + 1, &self.fcount_q);
        t.reg("dec_q", fw + 1, &self.dec_q);
        t.reg("hd_off_q", lw + 1, &self.hd_off_q);
        t.reg("pend_q", PEND as u32, &self.pend_q);
        t.reg("pend_n_q", PEND.trailing_zeros() + 1, &self.pend_n_q);
        t.reg("rd_valid_q", 1, &self.rd_valid_q);
        t.reg("rd_data_q", 512, &self.rd_q.data);
        t.reg("rd_keep_q", 64, &self.rd_q.keep);
        t.reg("rd_last_q", 1, &self.rd_q.last);
        t.reg("rd_meta_q", META_W, &self.rd_q.meta);
        t.reg("rd_prio_q", 3, &self.rd_q.prio);
        t.reg("ev_drop_full_q", 1, &self.ev_drop_full_q);
        // The FIFO's count, mirrored in the RTL for the read credit.
        t.reg("oq_count_q", OQ.trailing_zeros() + 1, &self.u_oq.count());
        t.push("u_oq");
        self.u_oq.trace_all(t, 512 + 64 + 1 + META_W + 3);
        t.pop();
        // The header queue's storage (HQ rows) is longer than Verilator
        // dumps: its pointers only.
        t.push("u_hq");
        self.u_hq.trace_ptrs(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests;
