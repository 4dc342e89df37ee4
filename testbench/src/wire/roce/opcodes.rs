//! The opcode table: which headers follow the BTH and what payload each RC,
//! UC and CNP opcode carries.

use super::{aeth, immdt, reth};

/// The CNP's reserved bytes after the BTH.
pub const CNP_PAD_LEN: usize = 16;
pub const OPCODE_CNP: u8 = 0x81;

/// What payload an opcode carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// None (READ REQUEST, ACK, CNP).
    None,
    /// A FIRST or MIDDLE packet: a whole path MTU, so never padded.
    Full,
    /// A LAST or ONLY packet: any length, padded to 4 bytes.
    Any,
}

/// One row of the opcode table: the headers after the BTH, in wire order
/// RETH, AETH, ImmDt (no opcode has both RETH and AETH), or CNP's 16
/// reserved bytes, then the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub opcode: u8,
    /// As in scapy's `scapy.contrib.roce` (and Wireshark, less the spaces).
    pub name: &'static str,
    pub reth: bool,
    pub aeth: bool,
    pub imm: bool,
    pub cnp_pad: bool,
    pub payload: Payload,
}

impl OpcodeInfo {
    /// Bytes of headers between the BTH and the payload.
    pub fn ext_len(&self) -> usize {
        self.reth as usize * reth::HEADER_LEN
            + self.aeth as usize * aeth::HEADER_LEN
            + self.imm as usize * immdt::HEADER_LEN
            + self.cnp_pad as usize * CNP_PAD_LEN
    }
}

const RETH: u8 = 1;
const AETH: u8 = 2;
const IMM: u8 = 4;
const CNP: u8 = 8;

const fn op(opcode: u8, name: &'static str, hdrs: u8, payload: Payload) -> OpcodeInfo {
    OpcodeInfo {
        opcode,
        name,
        reth: hdrs & RETH != 0,
        aeth: hdrs & AETH != 0,
        imm: hdrs & IMM != 0,
        cnp_pad: hdrs & CNP != 0,
        payload,
    }
}

use Payload::{Any, Full};

/// RC and UC opcodes (docs/protocol.md section 1; UC = RC | 0x20 where UC defines it)
/// and CNP.
pub const OPCODES: [OpcodeInfo; 31] = [
    op(0x00, "RC_SEND_FIRST", 0, Full),
    op(0x01, "RC_SEND_MIDDLE", 0, Full),
    op(0x02, "RC_SEND_LAST", 0, Any),
    op(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x04, "RC_SEND_ONLY", 0, Any),
    op(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", IMM, Any),
    op(0x06, "RC_RDMA_WRITE_FIRST", RETH, Full),
    op(0x07, "RC_RDMA_WRITE_MIDDLE", 0, Full),
    op(0x08, "RC_RDMA_WRITE_LAST", 0, Any),
    op(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x0A, "RC_RDMA_WRITE_ONLY", RETH, Any),
    op(0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMM, Any),
    op(0x0C, "RC_RDMA_READ_REQUEST", RETH, Payload::None),
    op(0x0D, "RC_RDMA_READ_RESPONSE_FIRST", AETH, Full),
    op(0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, Full),
    op(0x0F, "RC_RDMA_READ_RESPONSE_LAST", AETH, Any),
    op(0x10, "RC_RDMA_READ_RESPONSE_ONLY", AETH, Any),
    op(0x11, "RC_ACKNOWLEDGE", AETH, Payload::None),
    op(0x20, "UC_SEND_FIRST", 0, Full),
    op(0x21, "UC_SEND_MIDDLE", 0, Full),
    op(0x22, "UC_SEND_LAST", 0, Any),
    op(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x24, "UC_SEND_ONLY", 0, Any),
    op(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", IMM, Any),
    op(0x26, "UC_RDMA_WRITE_FIRST", RETH, Full),
    op(0x27, "UC_RDMA_WRITE_MIDDLE", 0, Full),
    op(0x28, "UC_RDMA_WRITE_LAST", 0, Any),
    op(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x2A, "UC_RDMA_WRITE_ONLY", RETH, Any),
    op(0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMM, Any),
    op(OPCODE_CNP, "CNP", CNP, Payload::None),
];

/// The table row of `opcode`, if it is one we know.
pub fn opcode_info(opcode: u8) -> Option<&'static OpcodeInfo> {
    OPCODES.iter().find(|o| o.opcode == opcode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_table() {
        assert_eq!(OPCODES.len(), 18 + 12 + 1);
        for rc in &OPCODES[..12] {
            let uc = opcode_info(rc.opcode | 0x20).unwrap();
            assert_eq!(uc.name, rc.name.replace("RC_", "UC_"));
            assert_eq!(
                (uc.reth, uc.aeth, uc.imm, uc.cnp_pad, uc.payload),
                (rc.reth, rc.aeth, rc.imm, rc.cnp_pad, rc.payload)
            );
        }
        let ext = |op: u8| opcode_info(op).unwrap().ext_len();
        assert_eq!(
            [
                ext(0x00),
                ext(0x06),
                ext(0x0B),
                ext(0x0C),
                ext(0x0D),
                ext(0x11),
                ext(0x81)
            ],
            [0, 16, 20, 16, 4, 4, 16]
        );
        assert!(opcode_info(0x2C).is_none() && opcode_info(0x12).is_none());
    }
}
