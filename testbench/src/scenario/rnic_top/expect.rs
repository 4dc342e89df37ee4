//! The frames the testbench expects `rnic_top` to send, built from the
//! vector's QP context ([`crate::vector::qp_frame`]), the reference's packet
//! fields and host memory, with the testbench's own RoCEv2 encoder
//! (`wire::roce`, ICRC by crc32fast).

use super::RnicTopEnv;
use crate::scenario::tx_reference::ExpPacket;
use crate::vector::qp_frame::{self, ecn_of, From};
use crate::vector::QpSpec;
use crate::wire::roce::{reth, OPCODE_CNP};

impl RnicTopEnv {
    /// QP `qp`'s entry in the vector (validated: every QP named is there).
    pub(super) fn qp(&self, qp: u32) -> &QpSpec {
        self.vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("validated: a QP of the vector")
    }

    /// The frame of reference packet `p`.
    pub fn expected_frame(&self, p: &ExpPacket) -> Vec<u8> {
        let q = self.qp(p.qp);
        let mut bth = qp_frame::bth(q, From::Nic, p.opcode, p.psn);
        (bth.se, bth.ack_req) = (p.se, p.ack_req);
        let mut repr = qp_frame::repr(q, From::Nic, bth, q.dscp, ecn_of(q));
        repr.reth = p
            .reth
            .map(|(va, rkey, dma_len)| reth::Repr { va, rkey, dma_len });
        repr.imm = p.imm;
        repr.payload = self.common.mem.read(p.pay_addr, p.pay_len as usize);
        qp_frame::emit(&repr)
    }

    /// The CNP QP `qp`'s notification point sends (docs/protocol.md section
    /// 1: DestQP = the remote QP, PSN 0, BECN as configured, 16 zero bytes;
    /// the CNP's own DSCP and priority, not ECN-capable).
    pub fn expected_cnp(&self, qp: u32) -> Vec<u8> {
        let cc = &self.vector.cc;
        let q = self.qp(qp);
        let mut bth = qp_frame::bth(q, From::Nic, OPCODE_CNP, 0);
        bth.becn = cc.cnp_becn;
        let mut repr = qp_frame::repr(q, From::Nic, bth, cc.cnp_dscp, 0);
        if let Some(t) = &mut repr.eth.vlan {
            t.pcp = cc.cnp_pcp;
        }
        qp_frame::emit(&repr)
    }
}
