//! PCIe TLP header fields as the DMA engines build and parse them: the
//! model's copy of the functions in `hw/rtl/pcie_pkg.sv`. The testbench has
//! its own, independent TLP codec; these are the hardware's view.

/// Fmt/Type byte 0 of the TLPs the engines send or take.
pub const FMT_TYPE_MRD32: u8 = 0x00;
pub const FMT_TYPE_MRD64: u8 = 0x20;
pub const FMT_TYPE_MWR32: u8 = 0x40;
pub const FMT_TYPE_MWR64: u8 = 0x60;
/// Type field of Cpl/CplD (Fmt 000 / 010).
pub const TYPE_CPL: u8 = 0x0A;

/// Completion status field values.
pub const CPL_SC: u8 = 0;
pub const CPL_UR: u8 = 1;
pub const CPL_CA: u8 = 4;

/// 128 << enc, with encodings above 5 (4096 bytes) clamped, as the
/// Device Control register's reserved values are treated.
pub fn size_from_enc(enc: u8) -> u32 {
    128 << enc.min(5)
}

/// Header of a memory request: 3 DW below 4 GB, 4 DW above. `len` is
/// 1..=4096 and the range does not cross a 4 KB boundary. Returns the
/// header bytes in a beat-sized buffer and the header length in bytes.
pub fn mem_req_header(write: bool, addr: u64, len: u32, req_id: u16, tag: u8) -> ([u8; 64], u32) {
    let last = addr + len as u64 - 1;
    let ndw = ((last >> 2) - (addr >> 2) + 1) as u32;
    let mut fbe = (0xFu8 << (addr & 3)) & 0xF;
    let mut lbe = 0xFu8 >> (3 - (last & 3));
    if ndw == 1 {
        fbe &= lbe;
        lbe = 0;
    }
    let is4dw = addr >> 32 != 0;
    let mut h = [0u8; 64];
    h[0] = match (write, is4dw) {
        (false, false) => FMT_TYPE_MRD32,
        (false, true) => FMT_TYPE_MRD64,
        (true, false) => FMT_TYPE_MWR32,
        (true, true) => FMT_TYPE_MWR64,
    };
    // Length 1024 DW is encoded as 0: the 10-bit field simply wraps.
    h[2] = ((ndw >> 8) & 3) as u8;
    h[3] = ndw as u8;
    h[4..6].copy_from_slice(&req_id.to_be_bytes());
    h[6] = tag;
    h[7] = (lbe << 4) | fbe;
    if is4dw {
        h[8..12].copy_from_slice(&((addr >> 32) as u32).to_be_bytes());
        h[12..16].copy_from_slice(&((addr as u32) & !3).to_be_bytes());
        (h, 16)
    } else {
        h[8..12].copy_from_slice(&((addr as u32) & !3).to_be_bytes());
        (h, 12)
    }
}

/// Payload DWs of a request of `len` bytes at `addr`.
pub fn dw_count(addr: u64, len: u32) -> u32 {
    (((addr + len as u64 - 1) >> 2) - (addr >> 2) + 1) as u32
}

/// Mask with the low `n` bits set (`n` <= 64).
pub fn keep_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Derived by hand from the PCIe base spec header layout: DW0 = Fmt/Type,
    // TC/attr, TD/EP/attr/Length[9:8], Length[7:0]; DW1 = requester ID, tag,
    // Last BE | First BE; DW2 = address[31:2] << 2.
    #[test]
    fn mrd32_unaligned_three_dw() {
        // 6 bytes at 0x1003 ..= 0x1008: DWs 0x1000, 0x1004, 0x1008; first BE
        // selects byte 3 only (0x8), last BE byte 0 only (0x1).
        let (h, n) = mem_req_header(false, 0x1003, 6, 0x0100, 7);
        assert_eq!(n, 12);
        assert_eq!(
            h[..12],
            [0x00, 0x00, 0x00, 0x03, 0x01, 0x00, 0x07, 0x18, 0x00, 0x00, 0x10, 0x00]
        );
    }

    #[test]
    fn mrd_single_dw_has_zero_last_be() {
        let (h, _) = mem_req_header(false, 0x2001, 2, 0, 0);
        assert_eq!(h[3], 1);
        assert_eq!(h[7], 0x06);
    }

    #[test]
    fn mwr64_uses_4dw_header_and_1024_dw_encodes_as_zero() {
        let (h, n) = mem_req_header(true, 0x1_0000_0000, 4096, 0xABCD, 0);
        assert_eq!(n, 16);
        assert_eq!(h[0], 0x60);
        assert_eq!((h[2], h[3]), (0, 0));
        assert_eq!(h[7], 0xFF);
        assert_eq!(h[8..16], [0, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn sizes() {
        assert_eq!(size_from_enc(0), 128);
        assert_eq!(size_from_enc(5), 4096);
        assert_eq!(size_from_enc(7), 4096);
        assert_eq!(dw_count(0x1003, 6), 3);
        assert_eq!(dw_count(0x1003, 5), 2);
        assert_eq!(keep_mask(12), 0xFFF);
    }
}
