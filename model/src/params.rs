//! One home for the numbers every block shares: the table sizes of
//! `rnic_top` as built (the RTL parameters' defaults), the link rate, and
//! the encodings software and hardware agree on (QP states, WQE opcodes,
//! CQE status). The RTL's home for the same numbers is `hw/rtl/rnic_pkg.sv`;
//! the register map's is `hw/csr/csr_map.txt`.
//!
//! Port widths in `ports!` are written for these sizes (QP numbers of
//! `QPW` bits, per-QP bitmaps of `QPS` bits).

/// Queue pairs.
pub const QPS: usize = 16;
/// Memory regions: an lkey or rkey selects entry `key mod MRS`.
pub const MRS: usize = 16;
/// Completion queues.
pub const CQS: usize = 4;
/// Bits of a QP, MR and CQ number.
pub const QPW: u32 = QPS.trailing_zeros();
pub const MRW: u32 = MRS.trailing_zeros();
pub const CQW: u32 = CQS.trailing_zeros();

/// Link bits per core clock cycle: 100 Gb/s at 250 MHz (`pfc`'s
/// `BITS_PER_CYCLE` parameter).
pub const BITS_PER_CYCLE: u32 = 400;

/// `tx_sched`: control grants (CNP / ACK) in a row after which a waiting
/// eligible data QP gets the next grant (its `CTRL_BURST` parameter).
pub const CTRL_BURST: u32 = 8;

/// QP states (csr's QP CTRL.STATE, `qp_state`).
pub mod qp_state {
    pub const RESET: u8 = 0;
    pub const RTS: u8 = 1;
    pub const ERROR: u8 = 2;
    /// Only CTRL.STATE and the responder's ports carry these two; the
    /// transmit and receive paths get 2-bit views (`csr::tx_view`,
    /// `csr::rx_view`).
    pub const RTR: u8 = 3;
    pub const INIT: u8 = 4;
}

/// WQE opcodes (byte 8 of the WQE, docs/tx_datapath.md).
pub mod wqe_op {
    pub const SEND: u8 = 0;
    pub const SEND_IMM: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const WRITE_IMM: u8 = 3;
    pub const READ: u8 = 4;
}

/// CQE opcodes (`ibv_wc_opcode` numbering, docs/protocol.md section 6;
/// `rnic_pkg::WC_*`). A requester's CQE names the operation: SEND and SEND
/// with immediate are both SEND. [`wc_op::INVALID`], no ibv code, is the
/// opcode of the error CQE of a WQE whose opcode names no operation (bit 7
/// clear: every opcode with bit 7 set is a receive completion's).
pub mod wc_op {
    pub const SEND: u8 = 0;
    pub const RDMA_WRITE: u8 = 1;
    pub const RDMA_READ: u8 = 2;
    pub const RECV: u8 = 128;
    pub const RECV_RDMA_WITH_IMM: u8 = 129;
    pub const INVALID: u8 = 0x7F;

    /// The CQE opcode of a requester's WQE opcode (`rnic_pkg::wc_opcode`).
    pub fn of_wqe(wqe_opcode: u8) -> u8 {
        use super::wqe_op;
        match wqe_opcode {
            wqe_op::SEND | wqe_op::SEND_IMM => SEND,
            wqe_op::WRITE | wqe_op::WRITE_IMM => RDMA_WRITE,
            wqe_op::READ => RDMA_READ,
            _ => INVALID,
        }
    }
}

/// CQE status values (`ibv_wc_status` numbering, docs/protocol.md section 6).
pub mod cqe_status {
    pub const SUCCESS: u8 = 0;
    pub const LOC_LEN_ERR: u8 = 1;
    pub const LOC_QP_OP_ERR: u8 = 2;
    pub const LOC_PROT_ERR: u8 = 4;
    pub const WR_FLUSH_ERR: u8 = 5;
    /// A WQE the responder NAKed: invalid request, remote access error,
    /// remote operational error (AETH NAK codes 1, 2, 3).
    pub const REM_INV_REQ_ERR: u8 = 9;
    pub const REM_ACCESS_ERR: u8 = 10;
    pub const REM_OP_ERR: u8 = 11;
    /// Retries exhausted (`retx_ctl`): retry_cnt after timeouts and
    /// sequence NAKs, rnr_retry after RNR NAKs (docs/protocol.md section 8).
    pub const RETRY_EXC_ERR: u8 = 12;
    pub const RNR_RETRY_EXC_ERR: u8 = 13;
    pub const GENERAL_ERR: u8 = 21;
}

/// AETH syndromes the responder sends (docs/protocol.md section 7; the
/// RTL's `AETH_*` in rnic_pkg.sv): ACK with the credit field 0x1F (no
/// credits advertised), RNR NAK (timer code in bits 4:0), and the NAKs.
pub mod aeth_syn {
    pub const ACK: u8 = 0x1F;
    pub const RNR: u8 = 0x20;
    pub const NAK_SEQ: u8 = 0x60;
    pub const NAK_INV: u8 = 0x61;
    pub const NAK_ACC: u8 = 0x62;
    pub const NAK_OP: u8 = 0x63;
}

/// BTH opcodes `rnic_top` tells apart (docs/protocol.md section 1; the
/// RTL's `BTH_RC_*` in rnic_pkg.sv).
pub mod bth_op {
    /// RC READ RESPONSE FIRST; FIRST..=ONLY are the four READ responses.
    pub const RC_RD_RESP_FIRST: u8 = 0x0D;
    pub const RC_RD_RESP_ONLY: u8 = 0x10;
    /// RC ACKNOWLEDGE (ACK and NAK frames).
    pub const RC_ACK: u8 = 0x11;
}

/// An RNR NAK's timer code (AETH bits 4:0) as a wait in units of 10 us
/// (docs/protocol.md section 8: the milliseconds / 0.01); code 0 is the
/// longest, 655.36 ms. The RTL's copy is `rnic_pkg::rnr_timer_units`.
pub fn rnr_timer_units(code: u8) -> u32 {
    const T: [u32; 32] = [
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
        1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    ];
    T[(code & 31) as usize]
}
