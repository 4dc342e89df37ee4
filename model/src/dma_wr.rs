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
