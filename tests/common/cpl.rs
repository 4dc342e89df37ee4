//! A completion on the `cpl_*` interface that tx_engine (through
//! ack_tracker) hands to cq_writer, as the block tests drive and expect it.

/// One completion: the fields of the CQE it becomes (docs/tx_datapath.md,
/// CQE layout) and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpl {
    /// Completes when its frame has left (a UC success), not at once.
    pub wait_frame: bool,
    pub wr_id: u64,
    pub status: u8,
    pub opcode: u8,
    pub len: u32,
    pub imm: u32,
    pub qp: u8,
    pub cq: u8,
}
