//! A classic pcap writer, so that the frames of a run can be opened in
//! Wireshark or checked by `tests/scapy_roce_check.py`; and a pcapng
//! writer ([`PcapngWriter`]) for runs whose frames carry a comment each
//! (a pair whose link drops or alters frames: Wireshark shows the comment,
//! `tshark -T fields -e frame.comment` prints it).
//!
//! Classic (not pcapng) format, little-endian, nanosecond timestamps (magic
//! 0xa1b23c4d), link type 1 (Ethernet). Frames are written as handed to the
//! MAC: no FCS, no padding to 60 bytes.
//!
//! ```text
//! file header (24 B): magic u32, version 2.4 (u16, u16), thiszone i32 = 0,
//!                     sigfigs u32 = 0, snaplen u32, linktype u32 = 1
//! per frame   (16 B): ts_sec u32, ts_nsec u32, incl_len u32, orig_len u32,
//!                     then incl_len bytes
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub const MAGIC_NS: u32 = 0xA1B2_3C4D;
pub const VERSION: (u16, u16) = (2, 4);
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Larger than any frame here (4 KiB payload plus headers); frames are never cut.
pub const SNAPLEN: u32 = 65535;

pub struct PcapWriter<W: Write> {
    out: W,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (truncates) `path` and writes the file header.
    pub fn new(path: impl AsRef<Path>) -> io::Result<Self> {
        PcapWriter::from_writer(BufWriter::new(File::create(path)?))
    }
}

/// Writes the frames of a run to `path`, each stamped with the cycle of its
/// first beat times the clock period: `(cycle, bytes)` as the environments
/// collect them.
pub fn write_run(path: impl AsRef<Path>, frames: &[(u64, Vec<u8>)]) -> io::Result<()> {
    let mut w = PcapWriter::new(path)?;
    for (cycle, bytes) in frames {
        w.write_frame(cycle * crate::rtl::CLOCK_PERIOD_PS, bytes)?;
    }
    w.finish().map(drop)
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header to `out`.
    pub fn from_writer(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&VERSION.0.to_le_bytes());
        h.extend_from_slice(&VERSION.1.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone: UTC
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    /// Writes one frame seen at `ts_ps` picoseconds (simulation time; cut to
    /// nanoseconds).
    pub fn write_frame(&mut self, ts_ps: u64, bytes: &[u8]) -> io::Result<()> {
        let len = u32::try_from(bytes.len())
            .ok()
            .filter(|&n| n <= SNAPLEN)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "frame longer than snaplen")
            })?;
        let ns = ts_ps / 1000;
        let sec = u32::try_from(ns / 1_000_000_000)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timestamp past 2^32 s"))?;
        let nsec = (ns % 1_000_000_000) as u32;
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&nsec.to_le_bytes());
        h[8..12].copy_from_slice(&len.to_le_bytes());
        h[12..16].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(bytes)
    }

    /// Flushes and returns the writer (a dropped `BufWriter` flushes too, but
    /// silently ignores errors).
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes `frames` as pcapng (below) with `comments[k]` on frame k (an
/// empty comment is left out).
pub fn write_run_ng(
    path: impl AsRef<Path>,
    frames: &[(u64, Vec<u8>)],
    comments: &[String],
) -> io::Result<()> {
    let mut w = PcapngWriter::from_writer(BufWriter::new(File::create(path)?))?;
    for (k, (cycle, bytes)) in frames.iter().enumerate() {
        let c = comments.get(k).map(String::as_str).unwrap_or("");
        w.write_frame(cycle * crate::rtl::CLOCK_PERIOD_PS, bytes, c)?;
    }
    w.finish().map(drop)
}

/// pcapng, little-endian: a Section Header Block, one Interface
/// Description Block (Ethernet, snaplen 65535, `if_tsresol` 9:
/// nanoseconds), then an Enhanced Packet Block per frame with an
/// `opt_comment` when it has one.
///
/// ```text
/// SHB: type 0x0A0D0D0A, length, byte-order magic 0x1A2B3C4D, version 1.0,
///      section length -1, length
/// IDB: type 1, length, linktype u16 = 1, reserved u16, snaplen u32,
///      option if_tsresol (9, length 1, value 9, 3 bytes pad), opt_endofopt,
///      length
/// EPB: type 6, length, interface 0, timestamp high u32, low u32,
///      captured len, original len, bytes padded to 4, option opt_comment
///      (1, length, UTF-8 padded to 4), opt_endofopt, length
/// ```
pub struct PcapngWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapngWriter<W> {
    pub fn from_writer(mut out: W) -> io::Result<Self> {
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut out, 0x0A0D_0D0A, &shb)?;
        let mut idb = Vec::new();
        idb.extend_from_slice(&(LINKTYPE_ETHERNET as u16).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&SNAPLEN.to_le_bytes());
        option(&mut idb, 9, &[9]); // if_tsresol: 10^-9 s
        idb.extend_from_slice(&[0; 4]); // opt_endofopt
        block(&mut out, 1, &idb)?;
        Ok(PcapngWriter { out })
    }

    /// One frame at `ts_ps` picoseconds (cut to nanoseconds), with
    /// `comment` unless it is empty.
    pub fn write_frame(&mut self, ts_ps: u64, bytes: &[u8], comment: &str) -> io::Result<()> {
        let len = u32::try_from(bytes.len())
            .ok()
            .filter(|&n| n <= SNAPLEN)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "frame longer than snaplen")
            })?;
        let ns = ts_ps / 1000;
        let mut epb = Vec::with_capacity(bytes.len() + comment.len() + 40);
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((ns >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ns as u32).to_le_bytes());
        epb.extend_from_slice(&len.to_le_bytes());
        epb.extend_from_slice(&len.to_le_bytes());
        epb.extend_from_slice(bytes);
        pad4(&mut epb);
        if !comment.is_empty() {
            let c = comment.as_bytes();
            let c = &c[..c.len().min(60000)];
            option(&mut epb, 1, c);
            epb.extend_from_slice(&[0; 4]);
        }
        block(&mut self.out, 6, &epb)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn pad4(b: &mut Vec<u8>) {
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
}

/// An option: code, length, value padded to 4 bytes.
fn option(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    b.extend_from_slice(&code.to_le_bytes());
    b.extend_from_slice(&(value.len() as u16).to_le_bytes());
    b.extend_from_slice(value);
    pad4(b);
}

/// A block: type, total length, body (a multiple of 4 bytes), total length.
fn block(out: &mut impl Write, kind: u32, body: &[u8]) -> io::Result<()> {
    let total = (body.len() + 12) as u32;
    out.write_all(&kind.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&total.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn header_and_records() {
        let mut w = PcapWriter::from_writer(Vec::new()).unwrap();
        w.write_frame(1_500_000_000_123_456, &[1, 2, 3]).unwrap(); // 1500.000000123456 s
        w.write_frame(999, &[0xAA; 60]).unwrap();
        let b = w.finish().unwrap();

        // File header, byte for byte: magic 0xa1b23c4d little-endian.
        assert_eq!(&b[0..4], &[0x4D, 0x3C, 0xB2, 0xA1]);
        assert_eq!(&b[4..8], &[2, 0, 4, 0]);
        assert_eq!(u32_at(&b, 8), 0);
        assert_eq!(u32_at(&b, 12), 0);
        assert_eq!(u32_at(&b, 16), 65535);
        assert_eq!(u32_at(&b, 20), 1);

        // First record: 1500 s and 123 ns (the 456 ps are cut), 3 bytes.
        assert_eq!(
            [
                u32_at(&b, 24),
                u32_at(&b, 28),
                u32_at(&b, 32),
                u32_at(&b, 36)
            ],
            [1500, 123, 3, 3]
        );
        assert_eq!(&b[40..43], &[1, 2, 3]);
        // Second: 0 s 0 ns, 60 bytes.
        assert_eq!(
            [
                u32_at(&b, 43),
                u32_at(&b, 47),
                u32_at(&b, 51),
                u32_at(&b, 55)
            ],
            [0, 0, 60, 60]
        );
        assert_eq!(b.len(), 24 + 16 + 3 + 16 + 60);
    }

    #[test]
    fn to_a_file() {
        let path = std::env::temp_dir().join(format!("rnic_pcap_{}.pcap", std::process::id()));
        let mut w = PcapWriter::new(&path).unwrap();
        w.write_frame(2_000, &[9; 14]).unwrap();
        w.finish().unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(u32_at(&b, 0), MAGIC_NS);
        assert_eq!([u32_at(&b, 24), u32_at(&b, 28), u32_at(&b, 32)], [0, 2, 14]);
        assert_eq!(b.len(), 24 + 16 + 14);
    }

    #[test]
    fn rejects_oversized_frames() {
        let mut w = PcapWriter::from_writer(Vec::new()).unwrap();
        assert!(w.write_frame(0, &vec![0; 65536]).is_err());
    }

    #[test]
    fn pcapng_blocks_and_comments() {
        let mut w = PcapngWriter::from_writer(Vec::new()).unwrap();
        w.write_frame(1_500_000_000_123_456, &[1, 2, 3], "lost (faults[0])")
            .unwrap();
        w.write_frame(8_000, &[0xAA; 60], "").unwrap();
        let b = w.finish().unwrap();
        // SHB: 28 bytes, byte-order magic.
        assert_eq!(u32_at(&b, 0), 0x0A0D_0D0A);
        assert_eq!(u32_at(&b, 4), 28);
        assert_eq!(u32_at(&b, 8), 0x1A2B_3C4D);
        assert_eq!(u32_at(&b, 24), 28);
        // IDB: 20 + 8 (if_tsresol) + 4 (end) = 32 bytes.
        assert_eq!([u32_at(&b, 28), u32_at(&b, 32)], [1, 32]);
        assert_eq!(&b[44..48], &[9, 0, 1, 0]);
        assert_eq!(b[48], 9);
        // EPB 1: 32 + 4 (3 bytes padded) + 4 + 16 (comment) + 4 = 60.
        let e = 60;
        assert_eq!([u32_at(&b, e), u32_at(&b, e + 4)], [6, 60]);
        let ns: u64 = 1_500_000_000_123;
        assert_eq!(u32_at(&b, e + 12), (ns >> 32) as u32);
        assert_eq!(u32_at(&b, e + 16), ns as u32);
        assert_eq!([u32_at(&b, e + 20), u32_at(&b, e + 24)], [3, 3]);
        assert_eq!(&b[e + 32..e + 36], &[1, 0, 16, 0][..]);
        assert_eq!(&b[e + 36..e + 52], b"lost (faults[0])");
        // EPB 2: no comment: 32 + 60 = 92.
        let e2 = e + 60;
        assert_eq!([u32_at(&b, e2), u32_at(&b, e2 + 4)], [6, 92]);
        assert_eq!(b.len(), e2 + 92);
    }
}
