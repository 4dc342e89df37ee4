//! The one place that turns a vector's QP context into frame headers, for
//! both directions of the QP's connection: the frames the NIC sends for it
//! (the expected TX frames and CNPs) and the frames its peer sends it (the
//! symbolic RX frames of a vector). Both sides take the same context fields;
//! the peer's side swaps source and destination and addresses the QP itself.

use super::{IpPair, QpSpec};
use crate::wire::roce::{bth, ethernet, ipv4, ipv6, udp, IpRepr, RoceFrame, RoceRepr};

/// Which end of QP `q`'s connection sends the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// The NIC, on behalf of the QP: source = the QP's own MAC and IP,
    /// DestQP = the remote QP number.
    Nic,
    /// The QP's peer: addresses swapped, DestQP = the QP itself.
    Peer,
}

/// The ECN field of the QP's ordinary frames: ECT(0) when the QP is
/// ECN-capable, Not-ECT otherwise (docs/protocol.md section 3).
pub fn ecn_of(q: &QpSpec) -> u8 {
    if q.ecn {
        0b10
    } else {
        0
    }
}

/// A BTH from `from` on QP `q`'s connection: P_Key from the context, the
/// opcode and PSN (taken modulo 2^24) given, every flag clear.
pub fn bth(q: &QpSpec, from: From, opcode: u8, psn: u32) -> bth::Repr {
    bth::Repr {
        opcode,
        se: false,
        migreq: false,
        pkey: q.pkey,
        fecn: false,
        becn: false,
        dest_qp: match from {
            From::Nic => q.remote_qpn,
            From::Peer => q.qp,
        },
        ack_req: false,
        psn: psn & 0xFF_FFFF,
    }
}

/// The frame (no extension headers, no payload) `from` sends on QP `q`'s
/// connection, with `bth` and the IP header's DSCP and ECN as given. The
/// VLAN tag, UDP source port and TTL/hop limit are the QP's (64); IPv4
/// carries DF and identification 0, as the packet builder does.
pub fn repr(q: &QpSpec, from: From, bth: bth::Repr, dscp: u8, ecn: u8) -> RoceRepr {
    let (own_mac, far_mac) = (q.src_mac.to_u64(), q.dst_mac.to_u64());
    let (eth_src, eth_dst) = match from {
        From::Nic => (own_mac, far_mac),
        From::Peer => (far_mac, own_mac),
    };
    let ip = match q.ip {
        IpPair::Ipv4 { src, dst } => {
            let (src, dst) = if from == From::Nic {
                (src, dst)
            } else {
                (dst, src)
            };
            IpRepr::V4(ipv4::Repr {
                src,
                dst,
                dscp,
                ecn,
                ident: 0,
                dont_frag: true,
                ttl: 64,
            })
        }
        IpPair::Ipv6 { src, dst } => {
            let (src, dst) = if from == From::Nic {
                (src, dst)
            } else {
                (dst, src)
            };
            IpRepr::V6(ipv6::Repr {
                src,
                dst,
                dscp,
                ecn,
                flow_label: 0,
                hop_limit: 64,
            })
        }
    };
    RoceRepr {
        eth: ethernet::Repr {
            dst: eth_dst,
            src: eth_src,
            vlan: q.vlan.map(|v| ethernet::VlanTag {
                pcp: v.pcp,
                dei: false,
                vid: v.vid,
            }),
        },
        ip,
        udp: udp::Repr {
            src_port: q.udp_sport,
            checksum: 0,
        },
        bth,
        reth: None,
        aeth: None,
        imm: None,
        payload: Vec::new(),
    }
}

/// The bytes of `r` (ICRC included, no FCS).
pub fn emit(r: &RoceRepr) -> Vec<u8> {
    let mut buf = vec![0u8; r.buffer_len()];
    r.emit(&mut RoceFrame::new_unchecked(&mut buf[..]));
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::Vector;

    fn qp() -> QpSpec {
        let v = Vector::parse(
            std::path::Path::new("qp_frame.json"),
            r#"{"format": 1, "name": "t", "top": "rnic_top", "description": "d",
                "checked_against": "c",
                "cqs": [{"cq": 0, "ring": {"base": "0x20000000", "log_size": 4}}],
                "qps": [{"qp": 3, "type": "rc", "state": "rts", "remote_qpn": 77, "psn": 0,
                         "mtu": 1024, "pd": 1, "cq": 0, "dst_mac": "02:00:00:00:01:00",
                         "src_mac": "02:00:00:00:00:00", "udp_sport": 49152, "dscp": 26,
                         "ecn": true, "pkey": 65535,
                         "ip": {"ipv4": {"src": "10.0.0.1", "dst": "10.0.1.1"}},
                         "sq": {"base": "0x10000000", "log_size": 6}}],
                "max_cycles": 1000}"#,
        )
        .expect("test vector");
        v.qps[0].clone()
    }

    /// The two directions are mirror images: addresses swapped, DestQP the
    /// remote QP one way and the QP itself the other.
    #[test]
    fn peer_frame_mirrors_nic_frame() {
        let q = qp();
        let nic = repr(&q, From::Nic, bth(&q, From::Nic, 0x04, 5), 0, 0);
        let peer = repr(&q, From::Peer, bth(&q, From::Peer, 0x11, 5), 0, 0);
        assert_eq!((nic.eth.src, nic.eth.dst), (peer.eth.dst, peer.eth.src));
        assert_eq!((nic.bth.dest_qp, peer.bth.dest_qp), (77, 3));
        match (nic.ip, peer.ip) {
            (IpRepr::V4(a), IpRepr::V4(b)) => {
                assert_eq!((a.src, a.dst), (b.dst, b.src));
                assert_eq!(a.src, std::net::Ipv4Addr::new(10, 0, 0, 1));
            }
            other => panic!("IPv4 both ways expected, got {other:?}"),
        }
    }

    #[test]
    fn psn_wraps_to_24_bits() {
        let q = qp();
        assert_eq!(bth(&q, From::Nic, 0x04, 0x0100_0002).psn, 2);
    }
}
