//! The PFC frames the NIC sends (PFC generation, docs/pfc_gen.md), checked
//! from the vector alone with the testbench's own codec (`wire::pfc`): a
//! frame to 01:80:C2:00:00:01 with EtherType 0x8808 is a MAC control frame,
//! never one of the QPs' packets. Each must be exactly 60 bytes, opcode
//! 0x0101, source MAC `config.pfc_gen.src_mac`, an enable vector naming
//! only priorities the vector enables, and either every named priority at
//! the configured pause time (XOFF) or every one at 0 (XON), the others 0.
//! Per priority the frames tell a story the contract allows: the first is
//! an XOFF, an XON follows an XOFF (never another XON). The counts of each
//! kind are what PFCG.XOFF_SENT and PFCG.XON_SENT read.

use super::RnicTopEnv;
use crate::wire::pfc;

/// A frame addressed as a PFC frame (destination and EtherType), whatever
/// its body: such a frame is checked here, never as a RoCE frame.
pub fn is_pfc(f: &[u8]) -> bool {
    f.len() >= 14
        && f[..6] == [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]
        && f[12..14] == pfc::ETHERTYPE_MAC_CONTROL.to_be_bytes()
}

/// What the PFC frames sent amount to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PfcSent {
    pub xoff: u64,
    pub xon: u64,
    /// (first beat cycle, enable vector, XOFF?) of each frame, in order.
    pub frames: Vec<(u64, u8, bool)>,
}

impl RnicTopEnv {
    /// Decodes and checks every PFC frame on `tx_*`; the problems found.
    pub(super) fn pfc_sent(&self) -> (PfcSent, Vec<String>) {
        let mut out = PfcSent::default();
        let mut bad = Vec::new();
        let cfg = self.vector.config.pfc_gen.clone();
        // Per priority: the kind of the last frame naming it (None: none yet).
        let mut last: [Option<bool>; 8] = [None; 8];
        for (k, (start, f)) in self.frames.iter().enumerate() {
            if !is_pfc(f) {
                continue;
            }
            let at = format!("PFC frame (frame {k}, cycle {start})");
            let Some(g) = &cfg else {
                bad.push(format!("{at}: the vector does not enable PFC generation"));
                continue;
            };
            if f.len() != pfc::FRAME_LEN {
                bad.push(format!(
                    "{at}: {} bytes, a PFC frame is {}",
                    f.len(),
                    pfc::FRAME_LEN
                ));
                continue;
            }
            let r = match pfc::Header::new_checked(&f[..]).and_then(|h| pfc::Repr::parse(&h)) {
                Ok(r) => r,
                Err(e) => {
                    bad.push(format!("{at}: {e}"));
                    continue;
                }
            };
            if f[pfc::field::PAD].iter().any(|&b| b != 0) {
                bad.push(format!("{at}: padding not zero"));
            }
            if r.src != g.src_mac.to_u64() {
                bad.push(format!(
                    "{at}: source MAC {:#014x}, PFCG.SRC_MAC is {:#014x}",
                    r.src,
                    g.src_mac.to_u64()
                ));
            }
            if r.enable == 0 || r.enable & !g.enable != 0 {
                bad.push(format!(
                    "{at}: enable vector {:#04x}, generation enabled for {:#04x}",
                    r.enable, g.enable
                ));
            }
            let named: Vec<u16> = (0..8)
                .filter(|p| r.enable >> p & 1 != 0)
                .map(|p| r.times[p])
                .collect();
            let others_zero = (0..8).all(|p| r.enable >> p & 1 != 0 || r.times[p] == 0);
            let xoff = g.pause_quanta != 0 && named.iter().all(|&t| t == g.pause_quanta);
            let xon = named.iter().all(|&t| t == 0);
            if !(xoff || xon) || !others_zero {
                bad.push(format!(
                    "{at}: times {:?} for enable {:#04x}: neither all {} (XOFF) nor all 0 (XON)",
                    r.times, r.enable, g.pause_quanta
                ));
                continue;
            }
            for (p, l) in last.iter_mut().enumerate() {
                if r.enable >> p & 1 == 0 {
                    continue;
                }
                if xon && *l != Some(true) {
                    bad.push(format!(
                        "{at}: XON for priority {p}, which has no XOFF in force"
                    ));
                }
                *l = Some(xoff);
            }
            if xoff {
                out.xoff += 1;
            } else {
                out.xon += 1;
            }
            out.frames.push((*start, r.enable, xoff));
        }
        if cfg.is_some() {
            for (name, want) in [("pfcg_xoff_sent", out.xoff), ("pfcg_xon_sent", out.xon)] {
                let got = self
                    .counters
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|x| x.1 as u64);
                if got.is_some_and(|g| g != want) {
                    bad.push(format!(
                        "{name} = {got:?}, the PFC frames sent call for {want}"
                    ));
                }
            }
        }
        (out, bad)
    }

    pub(super) fn check_pfc_frames(&mut self, cycle: u64) {
        let (_, bad) = self.pfc_sent();
        for b in bad {
            self.common.fail(cycle, b);
        }
    }
}
