//! A classic pcap writer, so that the frames of a run can be opened in
//! Wireshark or checked by `tests/scapy_roce_check.py`.
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
}
