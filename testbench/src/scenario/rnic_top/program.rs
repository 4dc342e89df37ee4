//! What the host does: the MMIO writes that program the tables from the
//! vector, the WQEs it writes into the SQ rings before each doorbell, and the
//! registers read back at the end of the run.

use std::collections::VecDeque;

use super::RnicTopEnv;
use crate::vector::{QpSpec, Vector, WqeSpec};
use crate::wire::wqe;
// Register addresses: the generated map, the one table the RTL and model share.
use rnic_model::csr_map::*;

/// The counters read back at the end of every run, by name.
pub const COUNTERS: &[(&str, u16)] = &[
    ("tx_frames", CNT_TX_FRAMES_ADDR),
    ("tx_bytes_lo", CNT_TX_BYTES_LO_ADDR),
    ("tx_bytes_hi", CNT_TX_BYTES_HI_ADDR),
    ("wqe_fetched", CNT_WQE_FETCHED_ADDR),
    ("cqe_written", CNT_CQE_WRITTEN_ADDR),
    ("prot_err", CNT_PROT_ERR_ADDR),
    ("flush", CNT_FLUSH_ADDR),
    ("fetch_err", CNT_FETCH_ERR_ADDR),
    ("dma_err", CNT_DMA_ERR_ADDR),
    ("cpl_unexpected", CNT_CPL_UNEXPECTED_ADDR),
    ("cpl_malformed", CNT_CPL_MALFORMED_ADDR),
    ("cpl_timeout", CNT_CPL_TIMEOUT_ADDR),
];

/// The receive path's and congestion control's counters, read back too when
/// the vector sends frames on `rx_*` or enables congestion control.
pub const RX_COUNTERS: &[(&str, u16)] = &[
    ("rx_frames", CNT_RX_FRAMES_ADDR),
    ("rx_pfc", CNT_RX_PFC_ADDR),
    ("rx_cnp", CNT_RX_CNP_ADDR),
    ("rx_ack", CNT_RX_ACK_ADDR),
    ("rx_data", CNT_RX_DATA_ADDR),
    ("rx_ce", CNT_RX_CE_ADDR),
    ("drop_fcs", CNT_DROP_FCS_ADDR),
    ("drop_runt", CNT_DROP_RUNT_ADDR),
    ("drop_not_roce", CNT_DROP_NOT_ROCE_ADDR),
    ("drop_trunc", CNT_DROP_TRUNC_ADDR),
    ("drop_ip_csum", CNT_DROP_IP_CSUM_ADDR),
    ("drop_icrc", CNT_DROP_ICRC_ADDR),
    ("drop_opcode", CNT_DROP_OPCODE_ADDR),
    ("drop_qp", CNT_DROP_QP_ADDR),
    ("ack_new", CNT_ACK_NEW_ADDR),
    ("ack_dup", CNT_ACK_DUP_ADDR),
    ("nak", CNT_NAK_ADDR),
    ("ack_invalid", CNT_ACK_INVALID_ADDR),
    ("cnp_sent", CNT_CNP_SENT_ADDR),
    ("ce_suppressed", CNT_CE_SUPPRESSED_ADDR),
    ("dcqcn_cnp", CNT_DCQCN_CNP_ADDR),
    ("dcqcn_cut", CNT_DCQCN_CUT_ADDR),
    ("dcqcn_fr", CNT_DCQCN_FR_ADDR),
    ("dcqcn_ai", CNT_DCQCN_AI_ADDR),
    ("dcqcn_hai", CNT_DCQCN_HAI_ADDR),
    ("dcqcn_alpha", CNT_DCQCN_ALPHA_ADDR),
];

/// PFC generation's counters (block PFCG), read back when the vector
/// configures `config.pfc_gen`.
pub const PFCG_COUNTERS: &[(&str, u16)] = &[
    ("pfcg_xoff_sent", PFCG_XOFF_SENT_ADDR),
    ("pfcg_xon_sent", PFCG_XON_SENT_ADDR),
];

/// The retransmission controller's counters (block RETX), read back for
/// a NIC of a pair or a fabric, where the end-of-run checks derive them
/// from the wire (`super::super::retx_counters`).
pub const RETX_COUNTERS: &[(&str, u16)] = &[
    ("retx_timeout", RETX_TIMEOUT_ADDR),
    ("retx_rewind", RETX_REWIND_ADDR),
    ("retx_rnr_wait", RETX_RNR_WAIT_ADDR),
    ("retx_exhaust", RETX_EXHAUST_ADDR),
];

/// One step of the end-of-run readback: a register read under a name, a
/// write (STAT_QP, selecting the QP whose DCQCN state the next reads show),
/// or a read of a register whose value the host knows (name, address,
/// value: [`super::registers`]).
#[derive(Debug, Clone)]
pub(super) enum Readback {
    Read(String, u16),
    Write(u16, u32),
    Check(String, u16, u32),
}

/// Whether the vector uses the receive path or congestion control at all
/// (then its counters and every CC QP's final DCQCN state are results too).
pub(super) fn uses_rx(v: &Vector) -> bool {
    !v.rx.is_empty() || v.qps.iter().any(|q| q.cc) || v.peer.auto_ack || !v.recvs.is_empty()
}

/// `rx`: read the receive path's counters too (always for a NIC of a pair);
/// `retx`: and the retransmission counters (a NIC of a pair or a fabric).
pub(super) fn readback_plan(v: &Vector, rx: bool, retx: bool) -> VecDeque<Readback> {
    let mut plan: VecDeque<Readback> = COUNTERS
        .iter()
        .map(|&(n, a)| Readback::Read(n.to_string(), a))
        .collect();
    // Every QP's CTRL (its state: the responder's QP-to-ERROR shows there).
    for q in &v.qps {
        let a = QP_BASE + (q.qp as u16) * QP_STRIDE + QP_CTRL_OFF;
        plan.push_back(Readback::Read(format!("qp{}_ctrl", q.qp), a));
    }
    // PFC generation's counters, when the vector configures it.
    if v.config.pfc_gen.is_some() {
        plan.extend(
            PFCG_COUNTERS
                .iter()
                .map(|&(n, a)| Readback::Read(n.to_string(), a)),
        );
    }
    if rx {
        plan.extend(
            RX_COUNTERS
                .iter()
                .chain(super::RESP_COUNTERS)
                .map(|&(n, a)| Readback::Read(n.to_string(), a)),
        );
        if retx {
            plan.extend(
                RETX_COUNTERS
                    .iter()
                    .map(|&(n, a)| Readback::Read(n.to_string(), a)),
            );
        }
        for q in v.qps.iter().filter(|q| q.cc) {
            plan.push_back(Readback::Write(CC_STAT_QP_ADDR, q.qp));
            plan.push_back(Readback::Read(format!("qp{}_rc", q.qp), CC_STAT_RC_ADDR));
            plan.push_back(Readback::Read(format!("qp{}_rt", q.qp), CC_STAT_RT_ADDR));
            plan.push_back(Readback::Read(
                format!("qp{}_alpha", q.qp),
                CC_STAT_ALPHA_ADDR,
            ));
        }
    }
    plan
}

/// The 64-byte WQE of docs/tx_datapath.md ([`wqe`]) for a vector's WQE.
pub fn encode_wqe(w: &WqeSpec) -> [u8; wqe::WQE_LEN] {
    wqe::Repr {
        wr_id: w.wr_id.0,
        opcode: w.opcode.code(),
        signaled: w.signaled,
        solicited: w.solicited,
        len: w.len,
        laddr: w.laddr.0,
        lkey: w.lkey.0 as u32,
        imm: w.imm.0 as u32,
        raddr: w.raddr.0,
        rkey: w.rkey.0 as u32,
    }
    .to_bytes()
}

/// `(register, value)` writes that configure `v`'s tables.
pub(super) fn config_writes(v: &Vector) -> Vec<(u16, u32)> {
    let c = &v.config;
    let mut w = vec![
        (
            GLOBAL_PCIE_CFG_ADDR,
            (c.mrrs.trailing_zeros() - 7)
                | (c.mps.trailing_zeros() - 7) << 4
                | (c.requester_id as u32) << 16,
        ),
        (GLOBAL_CPL_TIMEOUT_ADDR, c.cpl_timeout),
    ];
    for cq in &v.cqs {
        let a = CQ_BASE + (cq.cq as u16) * CQ_STRIDE;
        w.push((a + CQ_BASE_LO_OFF, cq.ring.base.0 as u32));
        w.push((a + CQ_BASE_HI_OFF, (cq.ring.base.0 >> 32) as u32));
        w.push((a + CQ_LOG_OFF, cq.ring.log_size as u32));
    }
    for m in &v.mrs {
        let a = MR_BASE + (m.index as u16) * MR_STRIDE;
        let access: u32 = m.access.iter().map(|x| x.bit()).fold(0, |a, b| a | b);
        w.push((a + MR_KEY_OFF, m.key.0 as u32));
        w.push((a + MR_VA_LO_OFF, m.va.0 as u32));
        w.push((a + MR_VA_HI_OFF, (m.va.0 >> 32) as u32));
        w.push((a + MR_LEN_LO_OFF, m.len.0 as u32));
        w.push((a + MR_LEN_HI_OFF, (m.len.0 >> 32) as u32));
        w.push((a + MR_PBASE_LO_OFF, m.pbase.0 as u32));
        w.push((a + MR_PBASE_HI_OFF, (m.pbase.0 >> 32) as u32));
        w.push((a + MR_PD_OFF, m.pd as u32));
        w.push((a + MR_FLAGS_OFF, access | (m.valid as u32) << 8));
    }
    if v.cc != crate::vector::CcSpec::default() {
        w.extend(cc_writes(&v.cc));
    }
    if let Some(g) = &c.pfc_gen {
        // The enable mask last: the thresholds hold before any priority acts.
        let mac = g.src_mac.to_u64();
        w.extend([
            (PFCG_SRC_MAC_LO_ADDR, mac as u32),
            (PFCG_SRC_MAC_HI_ADDR, (mac >> 32) as u32),
            (PFCG_XOFF_ADDR, g.xoff_lines as u32),
            (PFCG_XON_ADDR, g.xon_lines as u32),
            (PFCG_TIME_ADDR, g.pause_quanta as u32),
            (PFCG_REFRESH_ADDR, g.refresh_cycles),
            (PFCG_EN_ADDR, g.enable as u32),
        ]);
    }
    // A QP with a `setup_qp` step is configured by it (host.rs).
    for q in v.qps.iter().filter(|q| !v.deferred_setup(q.qp)) {
        w.extend(qp_writes(q));
    }
    w
}

/// Block CC from the vector's parameters in natural units (docs/rx_cc.md).
fn cc_writes(c: &crate::vector::CcSpec) -> Vec<(u16, u32)> {
    use crate::vector::rx::rate_units;
    vec![
        (CC_DCQCN_G_ADDR, c.g_shift as u32 | (c.f as u32) << 8),
        (CC_DCQCN_K_ADDR, c.k_cycles),
        (CC_DCQCN_T_INC_ADDR, c.t_inc_cycles),
        (CC_DCQCN_B_ADDR, c.b_bytes),
        (CC_DCQCN_R_AI_ADDR, rate_units(c.r_ai_mbps)),
        (CC_DCQCN_R_HAI_ADDR, rate_units(c.r_hai_mbps)),
        (CC_DCQCN_R_MIN_ADDR, rate_units(c.r_min_mbps)),
        (CC_DCQCN_R_MAX_ADDR, rate_units(c.r_max_mbps)),
        (CC_DCQCN_ALPHA_ADDR, c.alpha_init as u32),
        (CC_DCQCN_MODE_ADDR, c.dcqcn_mode as u32),
        (CC_DCQCN_MON_ADDR, c.mon_cycles),
        (CC_DCQCN_ALPHA_T_ADDR, c.alpha_t_cycles),
        (CC_RL_BURST_ADDR, c.burst_bytes),
        (
            CC_CNP_CFG_ADDR,
            c.cnp_dscp as u32 | (c.cnp_pcp as u32) << 8 | (c.cnp_becn as u32) << 16,
        ),
        (CC_CNP_INTERVAL_ADDR, c.cnp_interval_cycles),
    ]
}

pub(super) fn qp_writes(q: &QpSpec) -> Vec<(u16, u32)> {
    let a = QP_BASE + (q.qp as u16) * QP_STRIDE;
    let (src, dst) = q.ip.to_u128();
    let (dm, sm) = (q.dst_mac.to_u64(), q.src_mac.to_u64());
    let vlan = q.vlan.map_or(0, |v| v.vid as u32 | (v.pcp as u32) << 12);
    let mtu_code = q.mtu.trailing_zeros() - 7;
    let ctrl = q.state.code()
        | ((q.kind == crate::vector::QpType::Uc) as u32) << 4
        | (q.ip.is_v6() as u32) << 5
        | (q.vlan.is_some() as u32) << 6
        | (q.ecn as u32) << 7
        | mtu_code << 8
        | q.cq << 12
        | (q.cc as u32) << 16
        | (q.max_rd_atomic as u32) << 17;
    let rq = q.rq.unwrap_or(crate::vector::Ring {
        base: crate::vector::Hex(0),
        log_size: 0,
    });
    let resp = q.min_rnr_timer as u32
        | (q.max_dest_rd_atomic as u32) << 8
        | q.recv_cq() << 12
        | crate::vector::resp::access_bits(&q.remote_access) << 16;
    // RETRY (docs/retransmission.md) first: retx_ctl loads a QP's retry
    // counts when the PSN write restarts it. Written only when it differs
    // from its reset value, so that a vector that does not name the
    // fields keeps its programming sequence, and every cycle it recorded.
    let retry = q.timeout as u32 | (q.retry_cnt as u32) << 8 | (q.rnr_retry as u32) << 12;
    let retry_w = (retry != QP_RETRY_RESET).then_some((a + QP_RETRY_OFF, retry));
    let mut w = vec![
        (a + QP_REMOTE_QPN_OFF, q.remote_qpn),
        (a + QP_PSN_OFF, q.psn),
        (a + QP_PD_OFF, q.pd as u32),
        (a + QP_DST_MAC_LO_OFF, dm as u32),
        (a + QP_DST_MAC_HI_OFF, (dm >> 32) as u32),
        (a + QP_SRC_MAC_LO_OFF, sm as u32),
        (a + QP_SRC_MAC_HI_OFF, (sm >> 32) as u32),
    ];
    for k in 0..4u16 {
        let sh = 96 - 32 * k as u32;
        w.push((a + QP_SRC_IP0_OFF + 4 * k, (src >> sh) as u32));
        w.push((a + QP_DST_IP0_OFF + 4 * k, (dst >> sh) as u32));
    }
    w.extend([
        (a + QP_UDP_OFF, q.udp_sport as u32 | (q.dscp as u32) << 16),
        (a + QP_VLAN_OFF, vlan | (q.pkey as u32) << 16),
        (a + QP_SQ_BASE_LO_OFF, q.sq.base.0 as u32),
        (a + QP_SQ_BASE_HI_OFF, (q.sq.base.0 >> 32) as u32),
        (a + QP_SQ_LOG_OFF, q.sq.log_size as u32),
        // The responder's side (docs/responder.md): the RQ ring, RESP and,
        // before the QP leaves RESET/INIT, EPSN (a write restarts the
        // responder's row of the QP, which is defined only from it).
        (a + QP_RQ_BASE_LO_OFF, rq.base.0 as u32),
        (a + QP_RQ_BASE_HI_OFF, (rq.base.0 >> 32) as u32),
        (a + QP_RQ_LOG_OFF, rq.log_size as u32),
        (a + QP_RESP_OFF, resp),
        (a + QP_EPSN_OFF, q.epsn),
    ]);
    // Last: the QP becomes active only once everything else is set.
    w.push((a + QP_CTRL_OFF, ctrl));
    w.splice(0..0, retry_w);
    w
}

impl RnicTopEnv {
    /// Writes the doorbell's WQEs into the SQ ring and returns the DOORBELL value.
    pub(super) fn post(&mut self, qp: u32, n: u32) -> u32 {
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("validated");
        let size = 1usize << q.sq.log_size;
        for _ in 0..n {
            let idx = self.posted[qp as usize];
            let w = &self.vector.wqes[self.qp_wqes[qp as usize][idx]];
            let addr = q.sq.base.0 + 64 * (idx % size) as u64;
            self.common.mem.write(addr, &encode_wqe(w));
            self.posted[qp as usize] += 1;
        }
        (self.posted[qp as usize] as u32 & 0xFFFF) | qp << 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp(extra: &str) -> QpSpec {
        let v = Vector::parse(
            std::path::Path::new("program.json"),
            &format!(
                r#"{{"format": 1, "name": "t", "top": "rnic_top", "description": "d",
                "checked_against": "c",
                "cqs": [{{"cq": 0, "ring": {{"base": "0x20000000", "log_size": 4}}}}],
                "qps": [{{"qp": 3, "type": "rc", "remote_qpn": 77, "mtu": 1024, "cq": 0,
                         "dst_mac": "02:00:00:00:01:00", "src_mac": "02:00:00:00:00:00",
                         "ip": {{"ipv4": {{"src": "10.0.0.1", "dst": "10.0.1.1"}}}},
                         "sq": {{"base": "0x10000000", "log_size": 6}}{extra}}}],
                "max_cycles": 1000}}"#
            ),
        )
        .unwrap();
        v.qps[0].clone()
    }

    #[test]
    fn retry_is_written_when_it_differs_from_its_reset_value() {
        let at = QP_BASE + 3 * QP_STRIDE + QP_RETRY_OFF;
        let w = qp_writes(&qp(""));
        assert!(w.iter().all(|&(a, _)| a != at), "defaults: no RETRY write");
        let w = qp_writes(&qp(r#", "timeout": 14, "retry_cnt": 3, "rnr_retry": 6"#));
        let retry: Vec<u32> = w.iter().filter(|x| x.0 == at).map(|x| x.1).collect();
        assert_eq!(retry, vec![14 | 3 << 8 | 6 << 12]);
        assert_eq!(w.last().unwrap().0, QP_BASE + 3 * QP_STRIDE + QP_CTRL_OFF);
    }
}
