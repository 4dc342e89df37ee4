//! `dma_rd`: the PCIe read engine. Model of `hw/rtl/dma_rd.sv`.

use crate::ports;
use crate::ports::Beat;

/// Per-request read status, reported with the last data beat.
pub mod status {
    pub const OK: u8 = 0;
    pub const UR: u8 = 1;
    pub const CA: u8 = 2;
    pub const POISONED: u8 = 3;
    pub const TIMEOUT: u8 = 4;
}

ports! {
    /// Inputs of `dma_rd` (all but `clk`/`rst`).
    pub struct DmaRdIn {
        /// Max Read Request Size, PCIe Device Control encoding: 128 << cfg_mrrs.
        pub cfg_mrrs: u8 = 3,
        /// Requester ID put in every MRd.
        pub cfg_req_id: u16 = 16,
        /// Completion timeout in cycles from the MRd being issued.
        pub cfg_cpl_timeout: u32 = 24,
        pub rd_req_valid: bool = 1,
        pub rd_req_addr: u64 = 64 if rd_req_valid,
        /// Bytes, 1 ..= 65536.
        pub rd_req_len: u32 = 17 if rd_req_valid,
        pub rd_req_client: u8 = 2 if rd_req_valid,
        pub rd_data_ready: bool = 1,
        pub rq_ready: bool = 1,
        pub rc_valid: bool = 1,
        pub rc_data: Beat = 512 if rc_valid,
        pub rc_keep: u64 = 64 if rc_valid,
        pub rc_sop: bool = 1 if rc_valid,
        pub rc_eop: bool = 1 if rc_valid,
    }
}

ports! {
    /// Outputs of `dma_rd`, all registered.
    pub struct DmaRdOut {
        pub rd_req_ready: bool = 1,
        pub rd_data_valid: bool = 1,
        pub rd_data: Beat = 512 if rd_data_valid,
        pub rd_data_keep: u64 = 64 if rd_data_valid,
        pub rd_data_last: bool = 1 if rd_data_valid,
        pub rd_data_client: u8 = 2 if rd_data_valid,
        /// One of [`status`]; meaningful with `rd_data_last`.
        pub rd_data_status: u8 = 3 if rd_data_valid,
        pub rq_valid: bool = 1,
        pub rq_data: Beat = 512 if rq_valid,
        pub rq_keep: u64 = 64 if rq_valid,
        pub rq_sop: bool = 1 if rq_valid,
        pub rq_eop: bool = 1 if rq_valid,
        pub rc_ready: bool = 1,
        /// Tags allocated (issued and not yet claimed by the reader).
        pub stat_tags_busy: u16 = 9,
        /// Completion-buffer lines not reserved.
        pub stat_free_lines: u16 = 16,
        /// Completions for a tag that is not waiting for one.
        pub cnt_cpl_unexpected: u32 = 32,
        /// Completions whose header contradicts their request.
        pub cnt_cpl_malformed: u32 = 32,
        /// Tags that timed out.
        pub cnt_cpl_timeout: u32 = 32,
    }
}

use crate::dut::Dut;
use crate::pcie::{self, keep_mask};
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// Elaboration parameters, the RTL's `TAGS` and `BUF_LINES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaRdParams {
    /// Outstanding MRd tags, 1..=256.
    pub tags: usize,
    /// Completion buffer in 64-byte lines (the completion credits), a power
    /// of two >= 64 so that one 4 KiB request always fits.
    pub buf_lines: usize,
}

impl Default for DmaRdParams {
    fn default() -> Self {
        DmaRdParams {
            tags: 32,
            buf_lines: 256,
        }
    }
}

/// Depth of the client request FIFO (`REQ_DEPTH`).
pub const REQ_DEPTH: usize = 2;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Req {
    addr: u64,
    len: u32,
    client: u8,
}

/// One MRd in issue order, as the reader consumes them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Chunk {
    tag: u16,
    nlines: u8,
    /// Request fields, used by the reader when this is a request's first chunk.
    s: u8,
    len: u32,
    client: u8,
}

/// Tag table entry. Offsets are relative to the 4 KiB page of the chunk
/// (13 bits: an end may be 4096).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TagEntry {
    busy: bool,
    done: bool,
    err: u8,
    rem: u16,
    end: u16,
    /// Page offset of the chunk's first buffer line.
    fla: u16,
    /// Ring line of the chunk's first line.
    base: u16,
    timer: u32,
}

/// Completion being received (context kept between its beats).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CplCtx {
    /// Payload bytes may be written to the buffer.
    write: bool,
    /// The tag update is applied at a well-formed eop.
    apply: bool,
    tag: u16,
    rot: u8,
    /// Ring line of this beat's first half.
    line: u16,
    beat: u8,
    /// TLP bytes (header + payload).
    total: u16,
    new_rem: u16,
    new_err: u8,
    new_done: bool,
}

/// Pipeline register between the reader's fetch step and the output.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct ReadStage {
    valid: bool,
    fetch: bool,
    zero: bool,
    emit: bool,
    last: bool,
    keep: u64,
    client: u8,
    status: u8,
    s: u8,
}

/// The read engine. See `hw/rtl/dma_rd.sv` for the block description; each
/// `_q` field below is the RTL register of the same name. The tag table is
/// an array of entries here and one vector per field in the RTL
/// (`tg_busy_q`, `tg_rem_q`, ...); `p1_q` and `ct_q` group the RTL's
/// `p1_*_q` and `ct_*_q` registers; the FIFOs are `sync_fifo` instances.
#[derive(Debug, Clone, PartialEq)]
pub struct DmaRd {
    p: DmaRdParams,
    req_fifo: SyncFifo<Req>,
    // Splitter.
    sp_busy_q: bool,
    sp_addr_q: u64,
    sp_rem_q: u32,
    sp_s_q: u8,
    sp_len_q: u32,
    sp_client_q: u8,
    // Tags and buffer credits.
    tags: Vec<TagEntry>,
    tags_busy_q: u16,
    alloc_ptr_q: u16,
    free_lines_q: u16,
    chunk_fifo: SyncFifo<Chunk>,
    // MRd output register.
    rq_valid_q: bool,
    rq_data_q: Beat,
    rq_keep_q: u64,
    // Completion input register and context.
    rc_ready_q: bool,
    c_valid_q: bool,
    c_data_q: Beat,
    c_keep_q: u64,
    c_sop_q: bool,
    c_eop_q: bool,
    ct_active_q: bool,
    ct_q: CplCtx,
    // Completion buffer, two banks of lines (even, odd) so that one beat can
    // write the two lines it straddles in one cycle.
    bank: [Vec<Beat>; 2],
    // Reader.
    rd_act_q: bool,
    rd_s_q: u8,
    rd_len_q: u32,
    rd_client_q: u8,
    rd_status_q: u8,
    rd_step_q: u32,
    rd_nlines_q: u32,
    rd_nbeats_q: u32,
    rd_chunk_left_q: u8,
    rd_chunk_zero_q: bool,
    rd_ptr_q: u16,
    p1_q: ReadStage,
    ram_q: Beat,
    prev_q: Beat,
    // Read data output register.
    out_valid_q: bool,
    out_data_q: Beat,
    out_keep_q: u64,
    out_last_q: bool,
    out_client_q: u8,
    out_status_q: u8,
    // Counters.
    cnt_unexpected_q: u32,
    cnt_malformed_q: u32,
    cnt_timeout_q: u32,
}

/// Outcome of a completion header.
enum CplKind {
    Unexpected,
    Malformed,
    Good(CplCtx),
}

impl DmaRd {
    pub fn new(p: DmaRdParams) -> Self {
        assert!((1..=256).contains(&p.tags), "TAGS must be 1..=256");
        assert!(
            p.buf_lines.is_power_of_two() && (64..=32768).contains(&p.buf_lines),
            "BUF_LINES must be a power of two in 64..=32768"
        );
        DmaRd {
            p,
            req_fifo: SyncFifo::new(REQ_DEPTH),
            sp_busy_q: false,
            sp_addr_q: 0,
            sp_rem_q: 0,
            sp_s_q: 0,
            sp_len_q: 0,
            sp_client_q: 0,
            tags: vec![TagEntry::default(); p.tags],
            tags_busy_q: 0,
            alloc_ptr_q: 0,
            free_lines_q: p.buf_lines as u16,
            chunk_fifo: SyncFifo::new(p.tags.next_power_of_two().max(2)),
            rq_valid_q: false,
            rq_data_q: Beat::default(),
            rq_keep_q: 0,
            rc_ready_q: false,
            c_valid_q: false,
            c_data_q: Beat::default(),
            c_keep_q: 0,
            c_sop_q: false,
            c_eop_q: false,
            ct_active_q: false,
            ct_q: CplCtx::default(),
            bank: [
                vec![Beat::default(); p.buf_lines / 2],
                vec![Beat::default(); p.buf_lines / 2],
            ],
            rd_act_q: false,
            rd_s_q: 0,
            rd_len_q: 0,
            rd_client_q: 0,
            rd_status_q: 0,
            rd_step_q: 0,
            rd_nlines_q: 0,
            rd_nbeats_q: 0,
            rd_chunk_left_q: 0,
            rd_chunk_zero_q: false,
            rd_ptr_q: 0,
            p1_q: ReadStage::default(),
            ram_q: Beat::default(),
            prev_q: Beat::default(),
            out_valid_q: false,
            out_data_q: Beat::default(),
            out_keep_q: 0,
            out_last_q: false,
            out_client_q: 0,
            out_status_q: 0,
            cnt_unexpected_q: 0,
            cnt_malformed_q: 0,
            cnt_timeout_q: 0,
        }
    }

    fn ring_mask(&self) -> u16 {
        (self.p.buf_lines - 1) as u16
    }

    pub fn outputs(&self) -> DmaRdOut {
        DmaRdOut {
            rd_req_ready: self.req_fifo.in_ready(),
            rd_data_valid: self.out_valid_q,
            rd_data: self.out_data_q,
            rd_data_keep: self.out_keep_q,
            rd_data_last: self.out_last_q,
            rd_data_client: self.out_client_q,
            rd_data_status: self.out_status_q,
            rq_valid: self.rq_valid_q,
            rq_data: self.rq_data_q,
            rq_keep: self.rq_keep_q,
            rq_sop: self.rq_valid_q,
            rq_eop: self.rq_valid_q,
            rc_ready: self.rc_ready_q,
            stat_tags_busy: self.tags_busy_q,
            stat_free_lines: self.free_lines_q,
            cnt_cpl_unexpected: self.cnt_unexpected_q,
            cnt_cpl_malformed: self.cnt_malformed_q,
            cnt_cpl_timeout: self.cnt_timeout_q,
        }
    }

    /// Decodes the header of the completion in the registered beat.
    fn classify(&self, d: &Beat, req_id: u16) -> CplKind {
        let fmt = d[0] >> 5;
        let typ = d[0] & 0x1F;
        let len_dw = match ((d[2] as u16 & 3) << 8) | d[3] as u16 {
            0 => 1024,
            n => n,
        };
        let ep = d[2] & 0x40 != 0;
        let st = d[6] >> 5;
        let bc = match ((d[6] as u16 & 0xF) << 8) | d[7] as u16 {
            0 => 4096,
            n => n,
        };
        let rid = u16::from_be_bytes([d[8], d[9]]);
        let tag = d[10] as u16;
        let la = (d[11] & 0x7F) as u16;
        let has_data = fmt == 2;
        if typ != pcie::TYPE_CPL || !(fmt == 0 || has_data) {
            return CplKind::Malformed;
        }
        if rid != req_id || tag as usize >= self.p.tags {
            return CplKind::Unexpected;
        }
        let t = self.tags[tag as usize];
        if !t.busy || t.done {
            return CplKind::Unexpected;
        }
        let total = 12 + if has_data { len_dw * 4 } else { 0 };
        let mut ctx = CplCtx {
            tag,
            total,
            new_rem: t.rem,
            new_done: true,
            ..CplCtx::default()
        };
        if st != pcie::CPL_SC {
            // UR, CA or a status this engine does not know: the request fails.
            let err = if st == pcie::CPL_UR {
                status::UR
            } else {
                status::CA
            };
            ctx.apply = true;
            ctx.new_err = if t.err != status::OK { t.err } else { err };
            return CplKind::Good(ctx);
        }
        if !has_data {
            return CplKind::Malformed;
        }
        let f = t.end - t.rem;
        let f_dw = f & !3;
        let end_dw = (t.end + 3) & !3;
        if bc != t.rem || la != (f & 0x7F) || f_dw + len_dw * 4 > end_dw {
            return CplKind::Malformed;
        }
        let n = t.rem.min(len_dw * 4 - (f & 3));
        // Buffer position of TLP byte 0: payload byte 0 sits at page offset
        // f_dw, 12 header bytes before it.
        let d_off = f_dw as i32 - 12 - t.fla as i32;
        ctx.write = true;
        ctx.apply = true;
        ctx.rot = (d_off & 63) as u8;
        ctx.line = (t.base as i32 + (d_off >> 6)) as u16 & self.ring_mask();
        ctx.new_rem = t.rem - n;
        ctx.new_done = ctx.new_rem == 0;
        ctx.new_err = if t.err != status::OK {
            t.err
        } else if ep {
            status::POISONED
        } else {
            status::OK
        };
        CplKind::Good(ctx)
    }

    /// Writes one completion beat into the two lines it straddles.
    fn write_beat(&mut self, ctx: &CplCtx, data: &Beat, keep: u64) {
        let mask = self.ring_mask();
        let l0 = ctx.line;
        let l1 = (ctx.line + 1) & mask;
        // Bytes `lo..hi` of the beat are payload (the 12 header bytes and
        // whatever lies past the TLP are not); `keep` may still mask some.
        let start = ctx.beat as u32 * 64;
        let lo = 12u32.saturating_sub(start).min(64);
        let hi = (ctx.total as u32).saturating_sub(start).min(64);
        if lo >= hi {
            return;
        }
        let span = (u64::MAX >> (64 - (hi - lo))) << lo;
        if keep & span == span {
            // All kept (every well-formed completion): two slice copies,
            // split where the rotation crosses into the next line.
            let (lo, hi, rot) = (lo as usize, hi as usize, ctx.rot as usize);
            let split = (64 - rot).clamp(lo, hi);
            if lo < split {
                let b0 = &mut self.bank[(l0 & 1) as usize][(l0 >> 1) as usize];
                b0[lo + rot..split + rot].copy_from_slice(&data[lo..split]);
            }
            if split < hi {
                let b1 = &mut self.bank[(l1 & 1) as usize][(l1 >> 1) as usize];
                b1[split + rot - 64..hi + rot - 64].copy_from_slice(&data[split..hi]);
            }
            return;
        }
        for i in lo..hi {
            if keep >> i & 1 == 0 {
                continue;
            }
            let j = i + ctx.rot as u32;
            let line = if j < 64 { l0 } else { l1 };
            self.bank[(line & 1) as usize][(line >> 1) as usize][(j & 63) as usize] =
                data[i as usize];
        }
    }
}

/// Output beat `k - 1` of a request: bytes `s..64` of line `k - 1` followed
/// by bytes `0..s` of line `k`, masked to `keep`.
fn realign(prev: &Beat, cur: &Beat, s: u8, keep: u64) -> Beat {
    let s = s as usize;
    let mut out = Beat::default();
    out[..64 - s].copy_from_slice(&prev[s..]);
    out[64 - s..].copy_from_slice(&cur[..s]);
    if keep != u64::MAX {
        for (j, b) in out.iter_mut().enumerate() {
            if keep >> j & 1 == 0 {
                *b = 0;
            }
        }
    }
    out
}

impl Dut for DmaRd {
    type In = DmaRdIn;
    type Out = DmaRdOut;
    const NAME: &'static str = "dma_rd";

    fn reset(&mut self) -> DmaRdOut {
        // The completion buffer is a RAM without reset; everything else
        // returns to its reset value.
        let bank = std::mem::take(&mut self.bank);
        *self = DmaRd::new(self.p);
        self.bank = bank;
        self.outputs()
    }

    fn tick(&mut self, i: &DmaRdIn) -> DmaRdOut {
        let mask = self.ring_mask();
        let mrrs = pcie::size_from_enc(i.cfg_mrrs) as u64;

        // ---- Reader: fetch step (stage 0) and output stage (stage 1). ----
        let advance = !self.out_valid_q || i.rd_data_ready;
        let head_valid = self.chunk_fifo.out_valid();
        let head = self.chunk_fifo.out_data();
        let mut claim = false;
        let mut fetch = false;
        let mut p1_d = self.p1_q;
        let mut rd_act_d = self.rd_act_q;
        let mut rd_step_d = self.rd_step_q;
        let mut rd_status_d = self.rd_status_q;
        let mut rd_chunk_left_d = self.rd_chunk_left_q;
        let mut rd_chunk_zero_d = self.rd_chunk_zero_q;
        if advance {
            p1_d = ReadStage::default();
            if !self.rd_act_q {
                if head_valid {
                    // Start of a request (the head chunk is its first).
                    rd_act_d = true;
                    self.rd_s_q = head.s;
                    self.rd_len_q = head.len;
                    self.rd_client_q = head.client;
                    self.rd_nlines_q = (head.s as u32 + head.len + 63) >> 6;
                    self.rd_nbeats_q = (head.len + 63) >> 6;
                    rd_status_d = status::OK;
                    rd_step_d = 0;
                    rd_chunk_left_d = 0;
                    rd_chunk_zero_d = false;
                }
            } else {
                let k = self.rd_step_q;
                let need_fetch = k < self.rd_nlines_q;
                let need_claim = need_fetch && self.rd_chunk_left_q == 0;
                let head_done = head_valid && self.tags[head.tag as usize].done;
                if !need_claim || head_done {
                    if need_claim {
                        claim = true;
                        let err = self.tags[head.tag as usize].err;
                        rd_chunk_zero_d = err != status::OK;
                        if self.rd_status_q == status::OK {
                            rd_status_d = err;
                        }
                        rd_chunk_left_d = head.nlines - 1;
                    } else if need_fetch {
                        rd_chunk_left_d = self.rd_chunk_left_q - 1;
                    }
                    fetch = need_fetch;
                    let keep = if k >= 1 {
                        keep_mask((self.rd_len_q - 64 * (k - 1)).min(64))
                    } else {
                        0
                    };
                    p1_d = ReadStage {
                        valid: true,
                        fetch: need_fetch,
                        zero: rd_chunk_zero_d,
                        emit: k >= 1,
                        last: k == self.rd_nbeats_q,
                        keep,
                        client: self.rd_client_q,
                        status: rd_status_d,
                        s: self.rd_s_q,
                    };
                    rd_step_d = k + 1;
                    if k == self.rd_nbeats_q {
                        rd_act_d = false;
                    }
                }
            }
            // Stage 1.
            let p1 = self.p1_q;
            self.out_valid_q = false;
            if p1.valid {
                let cur = if p1.fetch && !p1.zero {
                    self.ram_q
                } else {
                    Beat::default()
                };
                if p1.emit {
                    self.out_valid_q = true;
                    self.out_data_q = realign(&self.prev_q, &cur, p1.s, p1.keep);
                    self.out_keep_q = p1.keep;
                    self.out_last_q = p1.last;
                    self.out_client_q = p1.client;
                    self.out_status_q = p1.status;
                }
                self.prev_q = cur;
            }
        }
        // Read port: the line leaves the RAM before this cycle's writes land.
        if fetch {
            let l = self.rd_ptr_q;
            self.ram_q = self.bank[(l & 1) as usize][(l >> 1) as usize];
            self.rd_ptr_q = (l + 1) & mask;
        }

        // ---- Splitter: one MRd per cycle when a tag and credits are free. ----
        let pop_req = !self.sp_busy_q && self.req_fifo.out_valid();
        // A request that finds the FIFO empty and the splitter idle skips the
        // FIFO and loads the splitter directly.
        let bypass_req = i.rd_req_valid
            && self.req_fifo.in_ready()
            && !self.sp_busy_q
            && !self.req_fifo.out_valid();
        let free_tag = self.tags.iter().position(|t| !t.busy);
        let mut issue: Option<(usize, u32, u8)> = None;
        if self.sp_busy_q {
            let off = self.sp_addr_q & (mrrs - 1);
            let chunk = (self.sp_rem_q as u64).min(mrrs - off) as u32;
            let nlines = (((self.sp_addr_q & 63) as u32 + chunk + 63) >> 6) as u8;
            let rq_slot = !self.rq_valid_q || i.rq_ready;
            if let Some(t) = free_tag {
                if self.free_lines_q >= nlines as u16 && rq_slot {
                    issue = Some((t, chunk, nlines));
                }
            }
        }

        // ---- Completion side. ----
        let mut cnt_unexpected = 0u32;
        let mut cnt_malformed = 0u32;
        let mut cpl_update: Option<CplCtx> = None;
        if self.c_valid_q {
            let ctx = if self.c_sop_q {
                if self.ct_active_q {
                    cnt_malformed += 1; // the previous TLP never ended
                }
                match self.classify(&self.c_data_q, i.cfg_req_id) {
                    CplKind::Good(c) => Some(c),
                    CplKind::Unexpected => {
                        cnt_unexpected += 1;
                        Some(CplCtx::default())
                    }
                    CplKind::Malformed => {
                        cnt_malformed += 1;
                        Some(CplCtx::default())
                    }
                }
            } else if self.ct_active_q {
                Some(self.ct_q)
            } else {
                cnt_malformed += 1; // data outside a TLP
                None
            };
            if let Some(ctx) = ctx {
                let t = self.tags[ctx.tag as usize];
                let live = t.busy && !t.done;
                if ctx.write && live {
                    let (data, keep) = (self.c_data_q, self.c_keep_q);
                    self.write_beat(&ctx, &data, keep);
                }
                if self.c_eop_q {
                    self.ct_active_q = false;
                    if ctx.apply {
                        let last_beat = (ctx.total - 1) / 64;
                        if ctx.beat as u16 != last_beat {
                            cnt_malformed += 1;
                        } else if live {
                            cpl_update = Some(ctx);
                        }
                    }
                } else {
                    self.ct_active_q = true;
                    self.ct_q = CplCtx {
                        beat: ctx.beat.saturating_add(1),
                        line: (ctx.line + 1) & mask,
                        ..ctx
                    };
                }
            }
        }
        // Completions are never back-pressured: their buffer space was
        // reserved before the MRd left. Ready is just "out of reset".
        self.c_valid_q = i.rc_valid && self.rc_ready_q;
        self.rc_ready_q = true;
        if self.c_valid_q {
            self.c_data_q = i.rc_data;
            self.c_keep_q = i.rc_keep;
            self.c_sop_q = i.rc_sop;
            self.c_eop_q = i.rc_eop;
        }

        // ---- Tag table: timers, then completion, allocation, claim. ----
        let mut timeouts = 0u32;
        // The timeout runs from the MRd leaving, not from its issue: an MRd
        // held in the output register by rq back-pressure is not sent yet.
        let unsent = self.rq_valid_q.then_some(self.rq_data_q[6] as usize);
        for (k, t) in self.tags.iter_mut().enumerate() {
            if t.busy && !t.done && unsent != Some(k) {
                if t.timer == 0 {
                    t.done = true;
                    if t.err == status::OK {
                        t.err = status::TIMEOUT;
                    }
                    timeouts += 1;
                } else {
                    t.timer -= 1;
                }
            }
        }
        if let Some(c) = cpl_update {
            let t = &mut self.tags[c.tag as usize];
            t.rem = c.new_rem;
            t.err = c.new_err;
            t.done = c.new_done;
        }
        if let Some((tag, chunk, nlines)) = issue {
            let page_off = (self.sp_addr_q & 0xFFF) as u16;
            self.tags[tag] = TagEntry {
                busy: true,
                done: false,
                err: status::OK,
                rem: chunk as u16,
                end: page_off + chunk as u16,
                fla: page_off & !63,
                base: self.alloc_ptr_q,
                timer: i.cfg_cpl_timeout & 0xFF_FFFF,
            };
            let (hdr, hlen) =
                pcie::mem_req_header(false, self.sp_addr_q, chunk, i.cfg_req_id, tag as u8);
            self.rq_valid_q = true;
            self.rq_data_q = Beat(hdr);
            self.rq_keep_q = keep_mask(hlen);
            self.chunk_fifo.tick(
                Some(Chunk {
                    tag: tag as u16,
                    nlines,
                    s: self.sp_s_q,
                    len: self.sp_len_q,
                    client: self.sp_client_q,
                }),
                claim,
            );
            self.alloc_ptr_q = (self.alloc_ptr_q + nlines as u16) & mask;
            self.sp_addr_q += chunk as u64;
            self.sp_rem_q -= chunk;
            if self.sp_rem_q == 0 {
                self.sp_busy_q = false;
            }
        } else {
            if self.rq_valid_q && i.rq_ready {
                self.rq_valid_q = false;
            }
            self.chunk_fifo.tick(None, claim);
        }
        if claim {
            let t = &mut self.tags[head.tag as usize];
            t.busy = false;
            t.done = false;
        }
        self.tags_busy_q = self.tags_busy_q + issue.is_some() as u16 - claim as u16;
        self.free_lines_q = self.free_lines_q - issue.map_or(0, |x| x.2 as u16) + fetch as u16;

        // ---- Request intake and splitter load. ----
        let head_req = self.req_fifo.out_data();
        let req = Req {
            addr: i.rd_req_addr,
            len: i.rd_req_len & 0x1_FFFF,
            client: i.rd_req_client & 3,
        };
        let push = (i.rd_req_valid && !bypass_req).then_some(req);
        self.req_fifo.tick(push, pop_req);
        let load = if pop_req {
            Some(head_req)
        } else if bypass_req {
            Some(req)
        } else {
            None
        };
        if let Some(r) = load {
            self.sp_busy_q = true;
            self.sp_addr_q = r.addr;
            self.sp_rem_q = r.len;
            self.sp_s_q = (r.addr & 63) as u8;
            self.sp_len_q = r.len;
            self.sp_client_q = r.client;
        }

        // ---- Reader registers. ----
        self.rd_act_q = rd_act_d;
        self.rd_step_q = rd_step_d;
        self.rd_status_q = rd_status_d;
        self.rd_chunk_left_q = rd_chunk_left_d;
        self.rd_chunk_zero_q = rd_chunk_zero_d;
        self.p1_q = p1_d;

        self.cnt_unexpected_q = self.cnt_unexpected_q.wrapping_add(cnt_unexpected);
        self.cnt_malformed_q = self.cnt_malformed_q.wrapping_add(cnt_malformed);
        self.cnt_timeout_q = self.cnt_timeout_q.wrapping_add(timeouts);
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

/// A chunk as `u_chunk_fifo` holds it: `{tag, nlines, s, len, client}`,
/// the tag taking what the width leaves (`$clog2(TAGS)` bits).
impl TraceValue for Chunk {
    fn put(&self, w: u32, b: &mut Bits) {
        b.push(self.client as u64, 2);
        b.push(self.len as u64, 17);
        b.push(self.s as u64, 6);
        b.push(self.nlines as u64, 7);
        b.push(self.tag as u64, w - 32);
    }
}

impl Trace for DmaRd {
    fn trace(&self, t: &mut dyn Tracer) {
        let lw = self.p.buf_lines.trailing_zeros();
        t.reg("sp_busy_q", 1, &self.sp_busy_q);
        t.reg("sp_addr_q", 64, &self.sp_addr_q);
        t.reg("sp_rem_q", 17, &self.sp_rem_q);
        t.reg("sp_s_q", 6, &self.sp_s_q);
        t.reg("sp_len_q", 17, &self.sp_len_q);
        t.reg("sp_client_q", 2, &self.sp_client_q);
        t.reg("tags_busy_q", 9, &self.tags_busy_q);
        // The tag table: one vector per field, tag k in element k.
        let field = |t: &mut dyn Tracer, name: &str, w: u32, f: &dyn Fn(&TagEntry) -> u64| {
            let mut b = Bits::default();
            for e in &self.tags {
                b.push(f(e), w);
            }
            t.var(name, w * self.tags.len() as u32, b.words());
        };
        field(t, "tg_busy_q", 1, &|e| e.busy as u64);
        field(t, "tg_done_q", 1, &|e| e.done as u64);
        field(t, "tg_err_q", 3, &|e| e.err as u64);
        field(t, "tg_rem_q", 13, &|e| e.rem as u64);
        field(t, "tg_end_q", 13, &|e| e.end as u64);
        field(t, "tg_fla_q", 13, &|e| e.fla as u64);
        field(t, "tg_base_q", lw, &|e| e.base as u64);
        field(t, "tg_timer_q", 24, &|e| e.timer as u64);
        t.reg("alloc_ptr_q", lw, &self.alloc_ptr_q);
        t.reg("free_lines_q", 16, &self.free_lines_q);
        t.reg("rq_valid_q", 1, &self.rq_valid_q);
        t.reg("rq_data_q", 512, &self.rq_data_q);
        t.reg("rq_keep_q", 64, &self.rq_keep_q);
        t.reg("rc_ready_q", 1, &self.rc_ready_q);
        t.reg("c_valid_q", 1, &self.c_valid_q);
        t.reg("c_data_q", 512, &self.c_data_q);
        t.reg("c_keep_q", 64, &self.c_keep_q);
        t.reg("c_sop_q", 1, &self.c_sop_q);
        t.reg("c_eop_q", 1, &self.c_eop_q);
        t.reg("ct_active_q", 1, &self.ct_active_q);
        let ct = &self.ct_q;
        t.reg("ct_write_q", 1, &ct.write);
        t.reg("ct_apply_q", 1, &ct.apply);
        t.reg("ct_new_done_q", 1, &ct.new_done);
        t.reg("ct_tag_q", 8, &ct.tag);
        t.reg("ct_beat_q", 8, &ct.beat);
        t.reg("ct_rot_q", 6, &ct.rot);
        t.reg("ct_line_q", lw, &ct.line);
        t.reg("ct_total_q", 13, &ct.total);
        t.reg("ct_new_rem_q", 13, &ct.new_rem);
        t.reg("ct_new_err_q", 3, &ct.new_err);
        t.reg("rd_act_q", 1, &self.rd_act_q);
        t.reg("rd_s_q", 6, &self.rd_s_q);
        t.reg("rd_len_q", 17, &self.rd_len_q);
        t.reg("rd_client_q", 2, &self.rd_client_q);
        t.reg("rd_status_q", 3, &self.rd_status_q);
        t.reg("rd_step_q", 11, &self.rd_step_q);
        t.reg("rd_nlines_q", 11, &self.rd_nlines_q);
        t.reg("rd_nbeats_q", 11, &self.rd_nbeats_q);
        t.reg("rd_chunk_left_q", 7, &self.rd_chunk_left_q);
        t.reg("rd_chunk_zero_q", 1, &self.rd_chunk_zero_q);
        t.reg("rd_ptr_q", lw, &self.rd_ptr_q);
        let p1 = &self.p1_q;
        t.reg("p1_valid_q", 1, &p1.valid);
        t.reg("p1_fetch_q", 1, &p1.fetch);
        t.reg("p1_zero_q", 1, &p1.zero);
        t.reg("p1_emit_q", 1, &p1.emit);
        t.reg("p1_last_q", 1, &p1.last);
        t.reg("p1_keep_q", 64, &p1.keep);
        t.reg("p1_client_q", 2, &p1.client);
        t.reg("p1_status_q", 3, &p1.status);
        t.reg("p1_s_q", 6, &p1.s);
        t.reg("ram_q", 512, &self.ram_q);
        t.reg("prev_q", 512, &self.prev_q);
        t.reg("out_valid_q", 1, &self.out_valid_q);
        t.reg("out_data_q", 512, &self.out_data_q);
        t.reg("out_keep_q", 64, &self.out_keep_q);
        t.reg("out_last_q", 1, &self.out_last_q);
        t.reg("out_client_q", 2, &self.out_client_q);
        t.reg("out_status_q", 3, &self.out_status_q);
        t.reg("cnt_unexpected_q", 32, &self.cnt_unexpected_q);
        t.reg("cnt_malformed_q", 32, &self.cnt_malformed_q);
        t.reg("cnt_timeout_q", 32, &self.cnt_timeout_q);
        t.push("u_req_fifo");
        self.req_fifo.trace_all(t, 83);
        t.pop();
        t.push("u_chunk_fifo");
        // Verilator leaves out memories longer than 32 entries.
        if self.p.tags <= 32 {
            let tagw = self.p.tags.next_power_of_two().trailing_zeros().max(1);
            self.chunk_fifo.trace_all(t, 32 + tagw);
        } else {
            self.chunk_fifo.trace_ptrs(t);
        }
        t.pop();
    }
}
