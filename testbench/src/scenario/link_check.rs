//! What one direction of a pair's link must deliver, worked out from the
//! vector's link spec and the frames as their sender sent them
//! (docs/pair.md, "Link faults"): the check's own application of the
//! faults, written apart from the link (`pair.rs`'s `Link`, which applies
//! them frame by frame as the run goes). This one takes the whole list at
//! once, one rule after the other: which frames each selector picks
//! (`link_fault::Picker`, the format's definition), which are lost, the CE
//! marks, the corrupted bytes, the duplicates, the delivery order.

use crate::vector::link_fault::Picker;
use crate::vector::{LinkDir, LinkFault};

/// One frame as its sender sent it.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// Cycles of its first and last beat on the sender's `tx_*`.
    pub first: u64,
    pub last: u64,
    /// As handed to the MAC (not padded).
    pub bytes: &'a [u8],
}

/// One frame the receiver must get, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// Index of the frame sent.
    pub k: usize,
    /// The bytes: padded by the MAC, marked and corrupted as the faults say.
    pub bytes: Vec<u8>,
    /// No earlier than this cycle (its own due cycle, or that of the frame
    /// it was held for).
    pub due: u64,
    /// The byte offsets inverted.
    pub corrupted: Vec<usize>,
}

/// The fate of one frame sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fate {
    /// Lost by this fault (the first in list order that loses it).
    pub lost: Option<usize>,
    pub corrupted: Vec<usize>,
    pub duplicated: bool,
    pub reordered: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Prediction {
    pub arrivals: Vec<Arrival>,
    pub fates: Vec<Fate>,
    /// Faults that cannot do what they say: a corrupt byte past its frame,
    /// a deterministic selector or a `down` that met no frame.
    pub problems: Vec<String>,
}

/// The frames the receiver gets from `sent` over a direction `spec`.
pub fn predict(spec: &LinkDir, sent: &[Sent]) -> Prediction {
    let n = sent.len();
    let faults = &spec.faults;
    // Which frames each selector picks: every selector sees every frame.
    let picked: Vec<Vec<bool>> = faults
        .iter()
        .map(|f| match f.select() {
            Some(s) => {
                let mut p = Picker::new(s);
                sent.iter()
                    .enumerate()
                    .map(|(k, f)| p.pick(k as u64, f.bytes))
                    .collect()
            }
            None => vec![false; n],
        })
        .collect();
    // Which frames each fault loses.
    let loses: Vec<Vec<bool>> = faults
        .iter()
        .enumerate()
        .map(|(i, f)| match f {
            LinkFault::Drop(_) => picked[i].clone(),
            LinkFault::Burst(s) => {
                let count = s.count.unwrap_or(1);
                let mut out = vec![false; n];
                let mut k = 0;
                while k < n {
                    if picked[i][k] {
                        // This one and the count - 1 after it; a pick inside
                        // the burst starts nothing.
                        let end = (k as u64).saturating_add(count).min(n as u64) as usize;
                        out[k..end].fill(true);
                        k = end;
                    } else {
                        k += 1;
                    }
                }
                out
            }
            LinkFault::Down(d) => sent
                .iter()
                .map(|s| {
                    // On the wire from its first beat to its due cycle - 1.
                    let on = s.first;
                    let off = s.last.saturating_add(spec.delay);
                    on < d.from.saturating_add(d.cycles) && off >= d.from
                })
                .collect(),
            _ => vec![false; n],
        })
        .collect();
    let mut out = Prediction::default();
    for (i, f) in faults.iter().enumerate() {
        let hit = match f {
            LinkFault::Down(_) => loses[i].iter().any(|&x| x),
            _ => picked[i].iter().any(|&x| x),
        };
        let must = f.select().is_none_or(|s| s.must_hit());
        if must && !hit {
            let what = match f {
                LinkFault::Down(d) => format!("down from {} for {}", d.from, d.cycles),
                _ => format!(
                    "{} {}",
                    f.kind(),
                    f.select().map(|s| s.describe()).unwrap_or_default()
                ),
            };
            out.problems.push(format!(
                "faults[{i}] ({what}) met none of the {n} frames sent: it tests nothing"
            ));
        }
    }
    let mut ect = 0u64;
    let mut held: Vec<Arrival> = Vec::new();
    let mut copies_held: Vec<usize> = Vec::new();
    for (k, s) in sent.iter().enumerate() {
        let mut b = super::pair::mac_pad(s.bytes);
        if spec.ce_every > 0 {
            let mut probe = b.clone();
            if super::pair::mark_ce(&mut probe) {
                ect += 1;
                if ect.is_multiple_of(spec.ce_every) {
                    b = probe;
                }
            }
        }
        let due = s.last + 1 + spec.delay;
        let mut fate = Fate {
            lost: (0..faults.len()).find(|&i| loses[i][k]),
            ..Fate::default()
        };
        if fate.lost.is_none() {
            for (i, f) in faults.iter().enumerate() {
                if !picked[i][k] {
                    continue;
                }
                match f {
                    LinkFault::Corrupt(c) => {
                        let at = c.byte.unwrap_or(0) as usize;
                        match b.get_mut(at) {
                            Some(x) => {
                                *x ^= 0xFF;
                                fate.corrupted.push(at);
                            }
                            None => out.problems.push(format!(
                                "faults[{i}] corrupts byte {at} of frame {k}, which has {} bytes",
                                b.len()
                            )),
                        }
                    }
                    LinkFault::Duplicate(_) => fate.duplicated = true,
                    LinkFault::Reorder(_) => fate.reordered = true,
                    _ => {}
                }
            }
        }
        let copies = if fate.duplicated { 2 } else { 1 };
        let me = Arrival {
            k,
            bytes: b,
            due,
            corrupted: fate.corrupted.clone(),
        };
        if fate.lost.is_none() && fate.reordered {
            held.push(me);
            copies_held.push(copies);
        } else {
            if fate.lost.is_none() {
                for _ in 0..copies {
                    out.arrivals.push(me.clone());
                }
            }
            for (mut h, c) in held.drain(..).zip(copies_held.drain(..)) {
                h.due = h.due.max(due);
                for _ in 0..c {
                    out.arrivals.push(h.clone());
                }
            }
        }
        out.fates.push(fate);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frame k: 64 bytes, all of value k (not IP: no marking, no BTH).
    fn frames(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|k| vec![k as u8; 64]).collect()
    }

    fn sent(fs: &[Vec<u8>]) -> Vec<Sent<'_>> {
        fs.iter()
            .enumerate()
            .map(|(k, b)| Sent {
                first: 100 * k as u64,
                last: 100 * k as u64 + 1,
                bytes: b,
            })
            .collect()
    }

    fn spec(faults: &str) -> LinkDir {
        serde_json::from_str(&format!(r#"{{"delay":10,"faults":{faults}}}"#)).unwrap()
    }

    fn order(p: &Prediction) -> Vec<usize> {
        p.arrivals.iter().map(|a| a.k).collect()
    }

    #[test]
    fn faults_on_literal_frames() {
        let fs = frames(8);
        let s = sent(&fs);
        let p = predict(&spec("[]"), &s);
        assert_eq!(order(&p), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(p.arrivals[3].due, 312);
        let p = predict(
            &spec(r#"[{"drop":{"index":1}},{"duplicate":{"index":3}},{"reorder":{"index":5}}]"#),
            &s,
        );
        assert_eq!(order(&p), [0, 2, 3, 3, 4, 6, 5, 7]);
        // The reordered frame goes no earlier than the one it follows.
        assert_eq!(p.arrivals[6].due, 612);
        assert_eq!(p.fates[1].lost, Some(0));
        let p = predict(&spec(r#"[{"burst":{"index":2,"count":3}}]"#), &s);
        assert_eq!(order(&p), [0, 1, 5, 6, 7]);
        // Down from cycle 250 for 100: frame 2 (200..=211 on the wire) is
        // clear, frame 3 (300..) is lost; frame 2 is not, 3 is.
        let p = predict(&spec(r#"[{"down":{"from":250,"cycles":100}}]"#), &s);
        assert_eq!(order(&p), [0, 1, 2, 4, 5, 6, 7]);
        let p = predict(&spec(r#"[{"down":{"from":205,"cycles":1}}]"#), &s);
        assert_eq!(order(&p), [0, 1, 3, 4, 5, 6, 7]);
        let p = predict(&spec(r#"[{"corrupt":{"index":4,"byte":10}}]"#), &s);
        assert_eq!(p.arrivals[4].bytes[10], 4 ^ 0xFF);
        assert_eq!(p.arrivals[4].bytes[11], 4);
        assert_eq!(p.arrivals[4].corrupted, [10]);
        assert!(p.problems.is_empty());
        // A byte past the frame, an index no frame has: problems.
        let p = predict(
            &spec(r#"[{"corrupt":{"index":4,"byte":64}},{"drop":{"index":8}}]"#),
            &s,
        );
        assert_eq!(p.problems.len(), 2, "{:?}", p.problems);
        assert!(p.problems[1].contains("faults[0] corrupts byte 64 of frame 4, which has 64 bytes"));
        assert!(p.problems[0].contains("faults[1] (drop index 8) met none of the 8 frames"));
        // A reorder with nothing after it: never delivered.
        let p = predict(&spec(r#"[{"reorder":{"index":7}}]"#), &s);
        assert_eq!(order(&p), [0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_corrupted_byte_is_a_bad_icrc_drop_for_the_reference() {
        use crate::scenario::rx_reference::{classify, DropReason, RxEvent};
        // The CNP captured from ConnectX-4 Lx hardware (scapy's roce.uts,
        // as in wire/roce/testdata.rs): DestQP 0x118.
        let hex = "e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2 003c 718c 4000 4011 9161 \
                   0a00 1101 0a00 1201 0000 12b7 0028 0000 8100 ffff 4000 0118 \
                   0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 82fd 002a";
        let hex: String = hex.split_whitespace().collect();
        let f: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(f.len(), 74);
        assert_eq!(classify(&f, false, |_| true), RxEvent::Cnp { qp: 0x118 });
        // Through the link's fault: byte 60 (in the CNP's zero bytes).
        let fs = [f.clone()];
        let s = sent(&fs);
        let p = predict(&spec(r#"[{"corrupt":{"index":0,"byte":60}}]"#), &s);
        let g = &p.arrivals[0].bytes;
        assert_eq!(g[60], 0xFF);
        assert_eq!(
            classify(g, false, |_| true),
            RxEvent::Drop(DropReason::Icrc)
        );
    }
}
