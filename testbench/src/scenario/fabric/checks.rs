//! The fabric's own checks, from the bytes each NIC sent and each frame
//! the switch sent, never from the switch model's internals: every frame
//! that reached a host was sent by some host, to that host, unaltered but
//! for a CE mark on an ECT frame; it decodes with a good ICRC and IPv4
//! checksum; the frames that never arrived are exactly the switch's drops;
//! the marks are exactly its marks; a lossless priority with PFC on drops
//! nothing; every pause a NIC sent reached the switch.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use rnic_switch::{Departure, Switch};

use super::super::pair::{mac_pad, mark_ce};
use super::super::rnic_top::is_pfc;
use super::super::rnic_top::resp_predict::decodes_delivered;
use crate::scenario::RnicTopEnv;
use crate::vector::IpPair;
use crate::wire::roce::ethernet;

/// The EtherType past any 802.1Q tag, and where the payload starts.
fn ethertype(f: &[u8]) -> Option<(u16, usize)> {
    let h = ethernet::Header::new_checked(f).ok()?;
    let at = h.header_len();
    (f.len() >= at).then(|| (h.ethertype(), at))
}

/// `f` with the fields a CE mark may change zeroed: the IP ECN bits and
/// the IPv4 header checksum. Two frames equal under it are one frame,
/// marked or not.
fn ecn_blind(f: &[u8]) -> Vec<u8> {
    let mut b = f.to_vec();
    match ethertype(f) {
        Some((ethernet::ETHERTYPE_IPV4, ip)) if b.len() >= ip + 20 => {
            b[ip + 1] &= !0x03;
            b[ip + 10] = 0;
            b[ip + 11] = 0;
        }
        Some((ethernet::ETHERTYPE_IPV6, ip)) if b.len() >= ip + 40 => b[ip + 1] &= !0x30,
        _ => {}
    }
    b
}

/// The IP destination of a frame, if it has one.
fn ip_dst(f: &[u8]) -> Option<IpAddr> {
    match ethertype(f)? {
        (ethernet::ETHERTYPE_IPV4, ip) => {
            let d: [u8; 4] = f.get(ip + 16..ip + 20)?.try_into().ok()?;
            Some(IpAddr::from(d))
        }
        (ethernet::ETHERTYPE_IPV6, ip) => {
            let d: [u8; 16] = f.get(ip + 24..ip + 40)?.try_into().ok()?;
            Some(IpAddr::from(d))
        }
        _ => None,
    }
}

/// The addresses a host answers to: its QPs' source addresses.
pub fn host_addrs(v: &crate::vector::Vector) -> Vec<IpAddr> {
    let mut out: Vec<IpAddr> = Vec::new();
    for q in &v.qps {
        let a = match q.ip {
            IpPair::Ipv4 { src, .. } => IpAddr::V4(src),
            IpPair::Ipv6 { src, .. } => IpAddr::V6(src),
        };
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// A frame as it left a host: (host, its index among the host's frames,
/// the bytes padded to 60).
type SentFrame = (usize, usize, Vec<u8>);

/// What the fabric checks counted, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Frames that reached a host (not counting pause frames).
    pub delivered: u64,
    /// Of those, CE-marked on the way.
    pub marked: u64,
    /// Frames sent that never reached a host.
    pub lost: u64,
    /// Pause frames the switch sent to the hosts.
    pub pauses_from_switch: u64,
}

/// Every frame the switch sent toward a host (`out`, in order) against
/// the frames the hosts sent (`sent[h]`, as they left host h's `tx_*`),
/// host h answering to `addrs[h]`. Returns what it counted, the pause
/// frames each host sent, and the problems.
pub fn check_frames(
    sent: &[Vec<&[u8]>],
    addrs: &[Vec<IpAddr>],
    out: &[Departure],
) -> (Delivery, Vec<u64>, Vec<String>) {
    let mut problems = Vec::new();
    // The frames sent, by what they are regardless of a mark, in order.
    let mut pool: HashMap<Vec<u8>, VecDeque<SentFrame>> = HashMap::new();
    let mut pauses_sent = vec![0u64; sent.len()];
    let mut data_sent = 0u64;
    for (h, frames) in sent.iter().enumerate() {
        for (k, f) in frames.iter().enumerate() {
            if is_pfc(f) {
                pauses_sent[h] += 1;
                continue;
            }
            data_sent += 1;
            let b = mac_pad(f);
            pool.entry(ecn_blind(&b)).or_default().push_back((h, k, b));
        }
    }
    let mut d = Delivery::default();
    for o in out {
        if is_pfc(&o.frame) {
            d.pauses_from_switch += 1;
            continue;
        }
        let to = format!("frame to h{} at cycle {}", o.port, o.first);
        let Some((h, k, b)) = pool
            .get_mut(&ecn_blind(&o.frame))
            .and_then(|q| q.pop_front())
        else {
            problems.push(format!("{to}: no host sent it"));
            continue;
        };
        d.delivered += 1;
        if o.frame[..] != b[..] {
            let mut m = b.clone();
            if mark_ce(&mut m) && m[..] == o.frame[..] {
                d.marked += 1;
            } else {
                problems.push(format!(
                    "{to} (h{h}'s frame {k}): altered beyond a CE mark on an ECT frame"
                ));
            }
        }
        match ip_dst(&o.frame) {
            Some(ip) if addrs.get(o.port).is_some_and(|a| a.contains(&ip)) => {}
            ip => problems.push(format!(
                "{to} (h{h}'s frame {k}): its IP destination {ip:?} is not h{}'s",
                o.port
            )),
        }
        if let Err(e) = decodes_delivered(&o.frame) {
            problems.push(format!("{to} (h{h}'s frame {k}): does not decode: {e}"));
        }
    }
    d.lost = data_sent - d.delivered;
    (d, pauses_sent, problems)
}

/// [`check_frames`] on a run's hosts, then the switches' counters against
/// what it found; host h hangs off port `host_at[h].1` of switch
/// `host_at[h].0`. A run that ended `stuck` (a deadlock vector) may still
/// hold frames in the switches and on the wires: frames not delivered are
/// then at least the drops.
pub fn check(
    nic: &[RnicTopEnv],
    out: &[Departure],
    switches: &[Switch],
    host_at: &[(usize, usize)],
    lossless: &[usize],
    stuck: bool,
) -> (Delivery, Vec<String>) {
    let addrs: Vec<Vec<IpAddr>> = nic.iter().map(|e| host_addrs(&e.vector)).collect();
    let sent: Vec<Vec<&[u8]>> = nic
        .iter()
        .map(|e| e.frames.iter().map(|(_, f)| &f[..]).collect())
        .collect();
    let (d, pauses_sent, mut problems) = check_frames(&sent, &addrs, out);
    let queued: u64 = switches.iter().map(Switch::buffer_used).sum();
    if queued != 0 && !stuck {
        problems.push(format!(
            "the switches still hold {queued} bytes at the end of the run"
        ));
    }
    let dropped: u64 = switches.iter().map(|s| s.counters().dropped_frames).sum();
    if d.lost != dropped && !(stuck && d.lost > dropped) {
        problems.push(format!(
            "{} frames sent never reached a host, the switches dropped {dropped}",
            d.lost
        ));
    }
    // A frame marked at one switch is CE, not ECT, at the next: marked at
    // most once. One marked and then dropped is counted but never seen.
    let marks: u64 = switches
        .iter()
        .flat_map(|s| s.counters().ports.iter())
        .flat_map(|p| p.queues.iter())
        .map(|q| q.marked)
        .sum();
    if marks < d.marked || (dropped == 0 && marks != d.marked) {
        problems.push(format!(
            "{} frames arrived CE-marked, the switches count {marks} marks and {dropped} drops",
            d.marked
        ));
    }
    for (k, sw) in switches.iter().enumerate() {
        if !sw.config().pfc.enabled {
            continue;
        }
        for (i, p) in sw.counters().ports.iter().enumerate() {
            for &q in lossless {
                if p.queues[q].dropped != 0 {
                    problems.push(format!(
                        "switch {k} port {i} priority {q}: {} lossless frames dropped with \
                         PFC on (headroom too small)",
                        p.queues[q].dropped
                    ));
                }
            }
        }
    }
    for (h, &(s, p)) in host_at.iter().enumerate() {
        let got = switches[s].counters().ports[p].pause_frames_rx;
        if got != pauses_sent[h] {
            problems.push(format!(
                "h{h} sent {} pause frames, its switch port received {got}",
                pauses_sent[h]
            ));
        }
    }
    (d, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RC READ REQUEST, 192.168.1.1 -> 192.168.1.2, ToS 0x6a (DSCP 26,
    /// ECT(0)), built and ICRC'd by scapy (the codec's own test frame).
    const READ_REQ_V4: &str = "102233445566 02aabbccddee 0800
        45 6a 003c 0000 4000 40 11 b6f3 c0a80101 c0a80102
        c000 12b7 0028 0000
        0c 00 ffff 00 000011 80 000100
        0000000000001000 00000100 00002000
        d9d5c95f";

    fn bytes(h: &str) -> Vec<u8> {
        let h: String = h.split_whitespace().collect();
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    fn dep(port: usize, f: Vec<u8>) -> Departure {
        Departure {
            port,
            first: 10,
            last: 12,
            frame: f.into(),
        }
    }

    fn run(sent: &[u8], out: Vec<Departure>) -> (Delivery, Vec<String>) {
        let addrs = vec![vec![], vec![IpAddr::from([192, 168, 1, 2])]];
        let (d, _, p) = check_frames(&[vec![sent], vec![]], &addrs, &out);
        (d, p)
    }

    #[test]
    fn a_frame_delivered_as_sent_or_ce_marked_passes() {
        let f = bytes(READ_REQ_V4);
        let (d, p) = run(&f, vec![dep(1, f.clone())]);
        assert_eq!((d.delivered, d.marked, d.lost), (1, 0, 0));
        assert!(p.is_empty(), "{p:?}");
        // CE: ToS 0x6b and the checksum 0xb6f3 less one (RFC 1624).
        let mut m = f.clone();
        m[15] = 0x6b;
        m[24..26].copy_from_slice(&0xb6f2u16.to_be_bytes());
        let (d, p) = run(&f, vec![dep(1, m)]);
        assert_eq!((d.delivered, d.marked), (1, 1));
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn a_frame_altered_misrouted_invented_or_lost_fails() {
        let f = bytes(READ_REQ_V4);
        let mut bad = f.clone();
        bad[60] ^= 1;
        let (_, p) = run(&f, vec![dep(1, bad)]);
        assert!(p[0].ends_with("no host sent it"), "{p:?}");
        let mut dscp = f.clone();
        dscp[15] = 0x6e;
        let (_, p) = run(&f, vec![dep(1, dscp)]);
        assert!(p[0].ends_with("no host sent it"), "{p:?}");
        // A CE mark with a stale checksum is more than a mark.
        let mut stale = f.clone();
        stale[15] = 0x6b;
        let (_, p) = run(&f, vec![dep(1, stale)]);
        assert!(p[0].contains("altered beyond a CE mark"), "{p:?}");
        let (_, p) = run(&f, vec![dep(0, f.clone())]);
        assert!(p[0].contains("is not h0's"), "{p:?}");
        let (d, p) = run(&f, vec![]);
        assert_eq!(d.lost, 1);
        assert!(p.is_empty());
        let (_, p) = run(&f, vec![dep(1, f.clone()), dep(1, f.clone())]);
        assert!(p[0].ends_with("no host sent it"), "a duplicate: {p:?}");
    }

    #[test]
    fn ecn_blind_ignores_a_mark_and_its_checksum_only() {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[15] = 26 << 2 | 2;
        f[24] = 0x12;
        f[25] = 0x34;
        let mut g = f.clone();
        g[15] |= 3;
        g[24] = 0xAB;
        assert_eq!(ecn_blind(&f), ecn_blind(&g));
        // The DSCP is not a field a mark changes.
        g[15] ^= 0x04;
        assert_ne!(ecn_blind(&f), ecn_blind(&g));
    }

    #[test]
    fn ip_dst_reads_past_a_vlan_tag() {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        f[16..18].copy_from_slice(&[0x08, 0x00]);
        f[18 + 16..18 + 20].copy_from_slice(&[10, 0, 3, 1]);
        assert_eq!(ip_dst(&f), Some(IpAddr::from([10, 0, 3, 1])));
        assert!(!is_pfc(&f));
    }
}
