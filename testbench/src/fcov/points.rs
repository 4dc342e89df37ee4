//! The functional coverage points: the one list (docs/coverage.md,
//! "Functional coverage"). A point is a name, `group.dim.dim...`; the
//! samplers in [`super::sample`] build names from these same tables, so a
//! name they make that is not listed here is a bug ([`super::Coverage::unknown`]).

/// Message operations, as the wire shows them.
pub const OPS: [&str; 5] = ["send", "send_imm", "write", "write_imm", "read"];

/// Message length classes against the QP's path MTU: 0 bytes, 1 byte,
/// under one MTU, exactly one MTU, two packets (MTU < len <= 2 MTU: FIRST
/// and LAST), and more (a MIDDLE packet too). A READ's length is the
/// request's DMA length, the classes those of its responses.
pub const LENS: [&str; 6] = ["zero", "one", "short", "mtu", "two", "multi"];

pub const TRANSPORTS: [&str; 2] = ["rc", "uc"];
pub const IPS: [&str; 2] = ["v4", "v6"];
pub const VLANS: [&str; 2] = ["untagged", "tagged"];

/// Every requester message a NIC sent (`tx.`) crossed with transport, IP
/// version and VLAN; every request message a NIC received whole and with
/// a good ICRC (`rx.`) crossed with transport, and separately the
/// received requests' transport x IP x VLAN (`rx_frame.`). UC has no
/// READ: those crosses are not points.
fn messages(out: &mut Vec<String>) {
    for op in OPS {
        for len in LENS {
            for tr in TRANSPORTS {
                if op == "read" && tr == "uc" {
                    continue;
                }
                for ip in IPS {
                    for vl in VLANS {
                        out.push(format!("tx.{op}.{len}.{tr}.{ip}.{vl}"));
                    }
                }
                out.push(format!("rx.{op}.{len}.{tr}"));
            }
        }
    }
    for tr in TRANSPORTS {
        for ip in IPS {
            for vl in VLANS {
                out.push(format!("rx_frame.{tr}.{ip}.{vl}"));
            }
        }
    }
}

/// CQE statuses (`ibv_wc_status` numbers) a send-queue completion can
/// carry (docs/protocol.md section 6).
pub const SQ_STATUSES: [(u8, &str); 10] = [
    (0, "success"),
    (2, "loc_qp_op_err"),
    (4, "loc_prot_err"),
    (5, "wr_flush_err"),
    (9, "rem_inv_req_err"),
    (10, "rem_access_err"),
    (11, "rem_op_err"),
    (12, "retry_exc_err"),
    (13, "rnr_retry_exc_err"),
    (21, "general_err"),
];

/// ... and a receive completion (docs/responder.md, "Completions").
pub const RQ_STATUSES: [(u8, &str); 5] = [
    (0, "success"),
    (1, "loc_len_err"),
    (2, "loc_qp_op_err"),
    (4, "loc_prot_err"),
    (5, "wr_flush_err"),
];

/// CQE opcodes (`ibv_wc_opcode`, and 0x7F for a WQE naming no operation).
pub const CQE_OPCODES: [(u8, &str); 6] = [
    (0, "send"),
    (1, "write"),
    (2, "read"),
    (0x7F, "invalid"),
    (128, "recv"),
    (129, "recv_rdma_imm"),
];

/// Receive-path drops: the eight reasons of the frame classifier, then
/// the responder's and the receive buffer's own, by the counter that
/// records them.
pub const DROPS: [&str; 11] = [
    "fcs",
    "runt",
    "not_roce",
    "trunc",
    "ip_csum",
    "icrc",
    "opcode",
    "qp",
    "resp_uc",
    "resp_not_ready",
    "rxbuf_full",
];

/// Protocol events, each named by the register-map counter that counts it
/// (docs/csr.md): retransmission, the responder's NAKs and duplicates,
/// ACK handling, READ responses, ECN, DMA errors.
pub const EVENTS: [&str; 28] = [
    "retx_timeout",
    "retx_rewind",
    "retx_rnr_wait",
    "retx_exhaust",
    "resp_dup",
    "resp_nak_seq",
    "resp_nak_rnr",
    "resp_nak_inv",
    "resp_nak_acc",
    "resp_nak_op",
    "ack_dup",
    "ack_invalid",
    "nak",
    "ack_coalesced",
    "read_job_full",
    "rdr_dup",
    "rdr_seq",
    "rdr_unexp",
    "rx_ce",
    "cnp_sent",
    "ce_suppressed",
    "prot_err",
    "fetch_err",
    "dma_err",
    "rq_fetch_err",
    "cpl_unexpected",
    "cpl_malformed",
    "cpl_timeout",
];

/// DCQCN stages reached, each by the counter the reaction point keeps:
/// a CNP taken, a rate cut, fast recovery, additive and hyper increase.
pub const DCQCN: [(&str, &str); 5] = [
    ("cnp", "dcqcn_cnp"),
    ("cut", "dcqcn_cut"),
    ("fast_recovery", "dcqcn_fr"),
    ("additive", "dcqcn_ai"),
    ("hyper", "dcqcn_hai"),
];

/// PFC per priority: a received pause in force (`rx.pause`), its end by
/// XON or by running out (`rx.resume`), and the NIC's own XOFF and XON.
pub const PFC_KINDS: [&str; 4] = ["rx.pause", "rx.resume", "tx.xoff", "tx.xon"];

/// Which DMA read client a faulted host read belonged to, told from its
/// address: the SQ ring (WQE fetch), the RQ ring (RECV fetch), a local
/// WQE's gather list (requester payload), anything else (the responder's
/// READ payload).
pub const PCIE_CLIENTS: [&str; 4] = ["wqe", "rqe", "payload", "resp_read"];
/// What a fault does to the read: fails it (UR, CA, poisoned data),
/// times it out (no completion, malformed, another requester's), or puts
/// a stray completion before good data.
pub const PCIE_OUTCOMES: [&str; 3] = ["error", "timeout", "stray"];
/// The root complex's fault kinds, each against the bare `dma_rd`.
pub const FAULT_KINDS: [&str; 7] = [
    "ur",
    "ca",
    "poison",
    "drop",
    "bad_byte_count",
    "wrong_requester",
    "stray",
];

/// Back-pressure: a ready low while its valid is high, per top and port.
pub const BACKPRESSURE: [&str; 10] = [
    "rnic_top.rq_ready",
    "rnic_top.rc_ready",
    "rnic_top.tx_tready",
    "dma_rd.rq_ready",
    "dma_rd.rc_ready",
    "dma_rd.rd_req_ready",
    "dma_rd.rd_data_ready",
    "dma_wr.rq_ready",
    "dma_wr.wr_req_ready",
    "dma_wr.wr_data_ready",
];

/// A fabric's switches: ECN marks, pauses sent and received, drops (lossy
/// overflow or headroom) and PFC-watchdog drops.
pub const SWITCH: [&str; 6] = [
    "ecn_mark",
    "xoff_sent",
    "xon_sent",
    "pause_rx",
    "drop",
    "watchdog_drop",
];

/// Every point, in a stable order.
pub fn all() -> Vec<String> {
    let mut v = Vec::new();
    messages(&mut v);
    v.extend(SQ_STATUSES.iter().map(|(_, s)| format!("cqe.sq.{s}")));
    v.extend(RQ_STATUSES.iter().map(|(_, s)| format!("cqe.rq.{s}")));
    v.extend(CQE_OPCODES.iter().map(|(_, s)| format!("cqe.op.{s}")));
    v.extend(DROPS.iter().map(|d| format!("drop.{d}")));
    v.extend(EVENTS.iter().map(|e| format!("event.{e}")));
    v.extend(DCQCN.iter().map(|(s, _)| format!("dcqcn.{s}")));
    for k in PFC_KINDS {
        v.extend((0..8).map(|p| format!("pfc.{k}.p{p}")));
    }
    for c in PCIE_CLIENTS {
        v.extend(PCIE_OUTCOMES.iter().map(|o| format!("pcie.{c}.{o}")));
    }
    v.extend(FAULT_KINDS.iter().map(|k| format!("pcie.dma_rd.{k}")));
    v.extend(BACKPRESSURE.iter().map(|b| format!("bp.{b}")));
    v.extend(SWITCH.iter().map(|s| format!("switch.{s}")));
    v
}

/// The group of a point: its name up to the first dot.
pub fn group(point: &str) -> &str {
    point.split('.').next().unwrap_or(point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_unique() {
        let v = all();
        let s: std::collections::BTreeSet<_> = v.iter().collect();
        assert_eq!(s.len(), v.len());
        // 4 ops x 6 lengths x 2 transports + READ x 6 on RC = 54 message
        // classes; tx crosses each with 2 x 2, rx keeps them bare.
        assert_eq!(v.iter().filter(|p| p.starts_with("tx.")).count(), 54 * 4);
        assert_eq!(v.iter().filter(|p| p.starts_with("rx.")).count(), 54);
        assert!(v.contains(&"tx.write_imm.multi.uc.v6.tagged".to_string()));
        assert!(!v.contains(&"tx.read.zero.uc.v4.untagged".to_string()));
    }
}
