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
