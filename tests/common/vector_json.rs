//! Pieces of `rnic_top` vectors (JSON text) for the tests that stream RDMA
//! WRITEs from one memory region: a UC QP, the region, the WRITEs and
//! their doorbells.

/// The region every WRITE reads from: key 0x10 at VA 0x7f0000000000, which
/// maps to physical 0x1000000 (where the tests' memory is), PD 1.
pub const MR_VA: u64 = 0x7F00_0000_0000;

/// The region of `len` bytes (a JSON string such as `"0x100000"`).
pub fn mr_json(len: &str) -> String {
    format!(
        r#"{{"index":0,"key":"0x10","va":"{MR_VA:#x}","len":"{len}","pbase":"0x1000000","pd":1}}"#
    )
}

/// UC QP `n` (0..=9) to 10.0.1.n, PD 1, CQ 0, its SQ of 64 entries at
/// 0x10000000 + n * 0x10000, then the JSON members in `extra`.
pub fn uc_qp_json(n: u32, mtu: u32, extra: &str) -> String {
    format!(
        r#"{{"qp":{n},"type":"uc","remote_qpn":{rq},"psn":0,"mtu":{mtu},"pd":1,"cq":0,
            "dst_mac":"02:00:00:00:01:0{n}","src_mac":"02:00:00:00:00:0{n}",
            "ip":{{"ipv4":{{"src":"10.0.0.1","dst":"10.0.1.{n}"}}}},
            "sq":{{"base":"{sq:#x}","log_size":6}}{extra}}}"#,
        rq = 0x100 + n,
        sq = 0x1000_0000u64 + 0x1_0000 * n as u64
    )
}

/// An unsignaled RDMA WRITE of `len` bytes from `laddr` in the region (to
/// remote VA 0x1000, rkey 1).
pub fn write_wqe_json(qp: u32, wr_id: u32, len: u32, laddr: u64) -> String {
    format!(
        r#"{{"qp":{qp},"opcode":"write","wr_id":{wr_id},"len":{len},"laddr":"{laddr:#x}","lkey":"0x10",
            "raddr":"0x1000","rkey":"0x1","signaled":false}}"#
    )
}

/// A doorbell posting `wqes` WQEs of `qp` at cycle `at`.
pub fn doorbell_json(at: u64, qp: u32, wqes: u32) -> String {
    format!(r#"{{"at":{at},"qp":{qp},"wqes":{wqes}}}"#)
}
