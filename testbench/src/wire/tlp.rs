//! PCIe Transaction Layer Packets as bytes, in the style of smoltcp's `wire`
//! module: [`Tlp`] is a typed view over a byte buffer (field accessors and
//! setters, no allocation), [`TlpRepr`] is the parsed, high-level form that
//! can be emitted back into bytes.
//!
//! This is the testbench's own, independent encoding of the header layout of
//! the PCIe Base Specification (it deliberately shares no code with the
//! model's `pcie` module, so that a mistake in one shows up against the
//! other). Only the TLPs this project exchanges are understood: memory read
//! (MRd), memory write (MWr), completion without data (Cpl) and with data
//! (CplD).
//!
//! Header layout, byte 0 first on the link, every multi-byte field
//! big-endian:
//!
//! ```text
//! byte 0   Fmt[2:0] Type[4:0]
//! byte 1   T9 TC[2:0] T8 Attr[2] LN TH        (T9/T8: 10-bit tags, unused here)
//! byte 2   TD EP Attr[1:0] AT[1:0] Length[9:8]
//! byte 3   Length[7:0]                        (in DW, 0 means 1024)
//! requests (MRd/MWr):
//! byte 4-5 Requester ID   byte 6 Tag   byte 7 LastBE[3:0] FirstBE[3:0]
//! byte 8-11  Address[31:2] PH[1:0]            (3-DW header)
//! byte 8-15  Address[63:2] PH[1:0]            (4-DW header)
//! completions (Cpl/CplD):
//! byte 4-5 Completer ID   byte 6 Status[2:0] BCM ByteCount[11:8]
//! byte 7   ByteCount[7:0]                     (0 means 4096)
//! byte 8-9 Requester ID   byte 10 Tag   byte 11 R LowerAddress[6:0]
//! ```
//!
//! A set TD bit means a 4-byte digest (ECRC) follows the payload; the view
//! accounts for it so that such a TLP still parses (the checker then flags it,
//! as this link carries none).

use thiserror::Error;

/// Why bytes are not a TLP this module understands.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TlpError {
    #[error("TLP truncated: {len} bytes, the header needs {need}")]
    Truncated { len: usize, need: usize },
    #[error("Fmt/Type byte {0:#04x} is not MRd, MWr, Cpl or CplD")]
    BadFmtType(u8),
    #[error("TLP is {actual} bytes but its header (Length, Fmt, TD) says {expected}")]
    LengthMismatch { expected: usize, actual: usize },
    #[error("reserved completion status {0:#x}")]
    BadStatus(u8),
}

pub type Result<T> = core::result::Result<T, TlpError>;

/// Byte offsets and ranges of the header fields (see the module docs).
pub mod field {
    pub type Field = core::ops::Range<usize>;

    pub const FMT_TYPE: usize = 0;
    /// T9 TC[2:0] T8 Attr[2] LN TH.
    pub const TC_ATTR2: usize = 1;
    /// TD EP Attr[1:0] AT[1:0] Length[9:8].
    pub const FLAGS_LEN_HI: usize = 2;
    pub const LENGTH: Field = 2..4;

    pub const REQ_REQUESTER_ID: Field = 4..6;
    pub const REQ_TAG: usize = 6;
    pub const REQ_BE: usize = 7;
    pub const ADDR_32: Field = 8..12;
    pub const ADDR_64: Field = 8..16;

    pub const CPL_COMPLETER_ID: Field = 4..6;
    /// Status[15:13] BCM[12] ByteCount[11:0], as one big-endian u16.
    pub const CPL_STATUS_BC: Field = 6..8;
    pub const CPL_REQUESTER_ID: Field = 8..10;
    pub const CPL_TAG: usize = 10;
    pub const CPL_LOWER_ADDR: usize = 11;

    pub const HEADER_3DW: usize = 12;
    pub const HEADER_4DW: usize = 16;
    pub const DIGEST: usize = 4;
}

/// Values of byte 0 (Fmt and Type together) for the TLPs used here.
pub mod fmt_type {
    pub const MRD_3DW: u8 = 0x00;
    pub const MRD_4DW: u8 = 0x20;
    pub const MWR_3DW: u8 = 0x40;
    pub const MWR_4DW: u8 = 0x60;
    pub const CPL: u8 = 0x0A;
    pub const CPLD: u8 = 0x4A;
}

/// What a TLP is, from its Fmt/Type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlpKind {
    MemRead,
    MemWrite,
    Cpl,
    CplD,
}

impl TlpKind {
    pub fn from_fmt_type(b: u8) -> Result<TlpKind> {
        match b {
            fmt_type::MRD_3DW | fmt_type::MRD_4DW => Ok(TlpKind::MemRead),
            fmt_type::MWR_3DW | fmt_type::MWR_4DW => Ok(TlpKind::MemWrite),
            fmt_type::CPL => Ok(TlpKind::Cpl),
            fmt_type::CPLD => Ok(TlpKind::CplD),
            _ => Err(TlpError::BadFmtType(b)),
        }
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

/// A read/write view of a TLP in a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tlp<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Tlp<T> {
    /// Wraps bytes without checking; accessors may panic on short buffers.
    pub fn new_unchecked(buffer: T) -> Tlp<T> {
        Tlp { buffer }
    }

    /// Wraps bytes after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Tlp<T>> {
        let t = Tlp::new_unchecked(buffer);
        t.check_len()?;
        Ok(t)
    }

    /// Checks that the Fmt/Type is one of ours and that the byte count matches
    /// the header (header size by Fmt, Length*4 payload bytes when Fmt says
    /// "with data", 4 more with TD), so that no accessor can panic.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < 1 {
            return Err(TlpError::Truncated { len, need: 1 });
        }
        TlpKind::from_fmt_type(self.fmt_type())?;
        let need = self.header_len();
        if len < need {
            return Err(TlpError::Truncated { len, need });
        }
        let expected = need + self.payload_len_from_header() + self.digest_len();
        if len != expected {
            return Err(TlpError::LengthMismatch {
                expected,
                actual: len,
            });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Fmt and Type together (byte 0).
    pub fn fmt_type(&self) -> u8 {
        self.b()[field::FMT_TYPE]
    }
    /// Fmt[2:0]: bit 0 = 4-DW header, bit 1 = with data, bit 2 = prefix.
    pub fn fmt(&self) -> u8 {
        self.fmt_type() >> 5
    }
    /// Type[4:0].
    pub fn tlp_type(&self) -> u8 {
        self.fmt_type() & 0x1F
    }
    pub fn kind(&self) -> Result<TlpKind> {
        TlpKind::from_fmt_type(self.fmt_type())
    }
    pub fn is_completion(&self) -> bool {
        self.tlp_type() == 0x0A
    }
    pub fn has_data(&self) -> bool {
        self.fmt() & 0b010 != 0
    }
    pub fn header_len(&self) -> usize {
        if self.fmt() & 0b001 != 0 {
            field::HEADER_4DW
        } else {
            field::HEADER_3DW
        }
    }
    pub fn tc(&self) -> u8 {
        (self.b()[field::TC_ATTR2] >> 4) & 0x7
    }
    pub fn td(&self) -> bool {
        self.b()[field::FLAGS_LEN_HI] & 0x80 != 0
    }
    pub fn ep(&self) -> bool {
        self.b()[field::FLAGS_LEN_HI] & 0x40 != 0
    }
    /// Attr[2:0] (bit 2 = ID-based ordering, 1 = relaxed ordering, 0 = no snoop).
    pub fn attr(&self) -> u8 {
        let hi = (self.b()[field::TC_ATTR2] >> 2) & 1;
        let lo = (self.b()[field::FLAGS_LEN_HI] >> 4) & 0x3;
        hi << 2 | lo
    }
    /// The raw 10-bit Length field.
    pub fn length_field(&self) -> u16 {
        be16(&self.b()[field::LENGTH]) & 0x3FF
    }
    /// Length in DW with 0 read as 1024 (for Cpl the field is reserved).
    pub fn length_dw(&self) -> u16 {
        match self.length_field() {
            0 => 1024,
            n => n,
        }
    }
    fn payload_len_from_header(&self) -> usize {
        if self.has_data() {
            self.length_dw() as usize * 4
        } else {
            0
        }
    }
    fn digest_len(&self) -> usize {
        if self.td() {
            field::DIGEST
        } else {
            0
        }
    }
    pub fn requester_id(&self) -> u16 {
        if self.is_completion() {
            be16(&self.b()[field::CPL_REQUESTER_ID])
        } else {
            be16(&self.b()[field::REQ_REQUESTER_ID])
        }
    }
    pub fn tag(&self) -> u8 {
        if self.is_completion() {
            self.b()[field::CPL_TAG]
        } else {
            self.b()[field::REQ_TAG]
        }
    }
    pub fn first_be(&self) -> u8 {
        self.b()[field::REQ_BE] & 0xF
    }
    pub fn last_be(&self) -> u8 {
        self.b()[field::REQ_BE] >> 4
    }
    /// Request address with the PH bits cleared (DW aligned), from the 3-DW
    /// or 4-DW header as Fmt says.
    pub fn address(&self) -> u64 {
        let b = self.b();
        let raw = if self.header_len() == field::HEADER_4DW {
            u64::from_be_bytes(b[field::ADDR_64].try_into().unwrap())
        } else {
            u32::from_be_bytes(b[field::ADDR_32].try_into().unwrap()) as u64
        };
        raw & !3
    }
    /// Processing hint bits (the low two bits of the address field).
    pub fn ph(&self) -> u8 {
        self.b()[self.header_len() - 1] & 0x3
    }
    pub fn completer_id(&self) -> u16 {
        be16(&self.b()[field::CPL_COMPLETER_ID])
    }
    fn status_bc(&self) -> u16 {
        be16(&self.b()[field::CPL_STATUS_BC])
    }
    /// Raw 3-bit completion status.
    pub fn status(&self) -> u8 {
        (self.status_bc() >> 13) as u8
    }
    pub fn bcm(&self) -> bool {
        self.status_bc() & 0x1000 != 0
    }
    /// Byte Count with 0 read as 4096.
    pub fn byte_count(&self) -> u16 {
        match self.status_bc() & 0xFFF {
            0 => 4096,
            n => n,
        }
    }
    pub fn lower_address(&self) -> u8 {
        self.b()[field::CPL_LOWER_ADDR] & 0x7F
    }
    /// Payload bytes (after the header, before any digest).
    pub fn payload(&self) -> &[u8] {
        let b = self.b();
        &b[self.header_len()..b.len() - self.digest_len()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Tlp<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    fn set_be16(&mut self, f: field::Field, v: u16) {
        self.bm()[f].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_fmt_type(&mut self, v: u8) {
        self.bm()[field::FMT_TYPE] = v;
    }
    pub fn set_tc(&mut self, tc: u8) {
        let b = &mut self.bm()[field::TC_ATTR2];
        *b = (*b & !0x70) | (tc & 7) << 4;
    }
    pub fn set_td(&mut self, on: bool) {
        let b = &mut self.bm()[field::FLAGS_LEN_HI];
        *b = (*b & !0x80) | (on as u8) << 7;
    }
    pub fn set_ep(&mut self, on: bool) {
        let b = &mut self.bm()[field::FLAGS_LEN_HI];
        *b = (*b & !0x40) | (on as u8) << 6;
    }
    pub fn set_attr(&mut self, attr: u8) {
        let b1 = &mut self.bm()[field::TC_ATTR2];
        *b1 = (*b1 & !0x04) | ((attr >> 2) & 1) << 2;
        let b2 = &mut self.bm()[field::FLAGS_LEN_HI];
        *b2 = (*b2 & !0x30) | (attr & 3) << 4;
    }
    /// Sets Length; 1024 is written as 0.
    pub fn set_length_dw(&mut self, dw: u16) {
        let hi = &mut self.bm()[field::FLAGS_LEN_HI];
        *hi = (*hi & !0x03) | ((dw >> 8) & 0x3) as u8;
        self.bm()[field::LENGTH.end - 1] = dw as u8;
    }
    pub fn set_requester_id(&mut self, id: u16) {
        if self.is_completion() {
            self.set_be16(field::CPL_REQUESTER_ID, id)
        } else {
            self.set_be16(field::REQ_REQUESTER_ID, id)
        }
    }
    pub fn set_tag(&mut self, tag: u8) {
        let at = if self.is_completion() {
            field::CPL_TAG
        } else {
            field::REQ_TAG
        };
        self.bm()[at] = tag;
    }
    pub fn set_first_be(&mut self, be: u8) {
        let b = &mut self.bm()[field::REQ_BE];
        *b = (*b & 0xF0) | (be & 0xF);
    }
    pub fn set_last_be(&mut self, be: u8) {
        let b = &mut self.bm()[field::REQ_BE];
        *b = (*b & 0x0F) | (be & 0xF) << 4;
    }
    /// Writes the address (PH bits 0) into the 3-DW or 4-DW field as Fmt says;
    /// a 3-DW header keeps only the low 32 bits.
    pub fn set_address(&mut self, addr: u64) {
        if self.header_len() == field::HEADER_4DW {
            self.bm()[field::ADDR_64].copy_from_slice(&(addr & !3).to_be_bytes());
        } else {
            self.bm()[field::ADDR_32].copy_from_slice(&((addr as u32) & !3).to_be_bytes());
        }
    }
    pub fn set_completer_id(&mut self, id: u16) {
        self.set_be16(field::CPL_COMPLETER_ID, id)
    }
    fn set_status_bc(&mut self, v: u16) {
        self.set_be16(field::CPL_STATUS_BC, v)
    }
    pub fn set_status(&mut self, status: u8) {
        let v = (self.status_bc() & 0x1FFF) | (status as u16 & 7) << 13;
        self.set_status_bc(v)
    }
    pub fn set_bcm(&mut self, on: bool) {
        let v = (self.status_bc() & !0x1000) | (on as u16) << 12;
        self.set_status_bc(v)
    }
    /// Sets Byte Count; 4096 is written as 0.
    pub fn set_byte_count(&mut self, bc: u16) {
        let v = (self.status_bc() & !0xFFF) | (bc & 0xFFF);
        self.set_status_bc(v)
    }
    pub fn set_lower_address(&mut self, la: u8) {
        self.bm()[field::CPL_LOWER_ADDR] = la & 0x7F;
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), self.b().len() - self.digest_len());
        &mut self.bm()[start..end]
    }
}

/// Completion status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CplStatus {
    /// Successful completion.
    Sc,
    /// Unsupported request.
    Ur,
    /// Configuration request retry status.
    Crs,
    /// Completer abort.
    Ca,
}

impl CplStatus {
    pub fn bits(self) -> u8 {
        match self {
            CplStatus::Sc => 0,
            CplStatus::Ur => 1,
            CplStatus::Crs => 2,
            CplStatus::Ca => 4,
        }
    }
    pub fn from_bits(b: u8) -> Result<CplStatus> {
        match b {
            0 => Ok(CplStatus::Sc),
            1 => Ok(CplStatus::Ur),
            2 => Ok(CplStatus::Crs),
            4 => Ok(CplStatus::Ca),
            _ => Err(TlpError::BadStatus(b)),
        }
    }
}

/// A parsed TLP. Requests carry the DW address and byte enables as on the
/// wire (use [`TlpRepr::mem_read`] / [`TlpRepr::mem_write`] to build them from
/// a byte address); TC, Attr and TD are emitted as 0 and not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlpRepr {
    MemRead {
        requester_id: u16,
        tag: u8,
        /// DW aligned.
        address: u64,
        /// 1..=1024.
        length_dw: u16,
        first_be: u8,
        last_be: u8,
    },
    MemWrite {
        requester_id: u16,
        tag: u8,
        /// DW aligned.
        address: u64,
        first_be: u8,
        last_be: u8,
        poisoned: bool,
        /// Whole DWs, 4..=4096 bytes; payload DW 0 is the DW at `address`.
        data: Vec<u8>,
    },
    Completion {
        status: CplStatus,
        /// 1..=4096.
        byte_count: u16,
        lower_address: u8,
        requester_id: u16,
        completer_id: u16,
        tag: u8,
        poisoned: bool,
        /// CplD payload (whole DWs, the first byte at `lower_address & 3`);
        /// `None` for a Cpl.
        data: Option<Vec<u8>>,
    },
}

/// Length and byte enables of the first and last DW for `len` bytes at
/// `addr` (a 1-DW access has last BE 0; `len` 0 gives PCIe's zero-length
/// request: Length 1, both BEs 0).
fn byte_enables(addr: u64, len: u64) -> (u16, u8, u8) {
    if len == 0 {
        return (1, 0, 0);
    }
    // In u128 so that a range ending at 2^64 needs no special case.
    let start_dw = addr as u128 & !3;
    let end = addr as u128 + len as u128; // exclusive
    let dws = ((end + 3) & !3) - start_dw;
    let first = (0xFu8 << (addr & 3)) & 0xF;
    let last = 0xFu8 >> ((4 - (end & 3)) & 3);
    if dws == 4 {
        (1, first & last, 0)
    } else {
        ((dws / 4) as u16, first, last)
    }
}

impl TlpRepr {
    /// An MRd for `len` (0..=4096) bytes at byte address `addr`.
    pub fn mem_read(requester_id: u16, tag: u8, addr: u64, len: u32) -> TlpRepr {
        let (length_dw, first_be, last_be) = byte_enables(addr, len as u64);
        TlpRepr::MemRead {
            requester_id,
            tag,
            address: addr & !3,
            length_dw,
            first_be,
            last_be,
        }
    }

    /// An MWr of `bytes` (0..=4096) at byte address `addr`; the disabled bytes
    /// of the first and last DW are sent as 0.
    pub fn mem_write(requester_id: u16, tag: u8, addr: u64, bytes: &[u8]) -> TlpRepr {
        let (length_dw, first_be, last_be) = byte_enables(addr, bytes.len() as u64);
        let mut data = vec![0u8; length_dw as usize * 4];
        let off = (addr & 3) as usize;
        data[off..off + bytes.len()].copy_from_slice(bytes);
        TlpRepr::MemWrite {
            requester_id,
            tag,
            address: addr & !3,
            first_be,
            last_be,
            poisoned: false,
            data,
        }
    }

    pub fn parse<T: AsRef<[u8]>>(tlp: &Tlp<T>) -> Result<TlpRepr> {
        tlp.check_len()?;
        Ok(match tlp.kind()? {
            TlpKind::MemRead => TlpRepr::MemRead {
                requester_id: tlp.requester_id(),
                tag: tlp.tag(),
                address: tlp.address(),
                length_dw: tlp.length_dw(),
                first_be: tlp.first_be(),
                last_be: tlp.last_be(),
            },
            TlpKind::MemWrite => TlpRepr::MemWrite {
                requester_id: tlp.requester_id(),
                tag: tlp.tag(),
                address: tlp.address(),
                first_be: tlp.first_be(),
                last_be: tlp.last_be(),
                poisoned: tlp.ep(),
                data: tlp.payload().to_vec(),
            },
            kind @ (TlpKind::Cpl | TlpKind::CplD) => TlpRepr::Completion {
                status: CplStatus::from_bits(tlp.status())?,
                byte_count: tlp.byte_count(),
                lower_address: tlp.lower_address(),
                requester_id: tlp.requester_id(),
                completer_id: tlp.completer_id(),
                tag: tlp.tag(),
                poisoned: tlp.ep(),
                data: (kind == TlpKind::CplD).then(|| tlp.payload().to_vec()),
            },
        })
    }

    /// Parses raw TLP bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<TlpRepr> {
        TlpRepr::parse(&Tlp::new_checked(bytes)?)
    }

    /// Header size this TLP is emitted with: 4 DW only for addresses >= 4 GB.
    pub fn header_len(&self) -> usize {
        match self {
            TlpRepr::MemRead { address, .. } | TlpRepr::MemWrite { address, .. }
                if *address >= 1 << 32 =>
            {
                field::HEADER_4DW
            }
            _ => field::HEADER_3DW,
        }
    }

    pub fn buffer_len(&self) -> usize {
        let payload = match self {
            TlpRepr::MemRead { .. } => 0,
            TlpRepr::MemWrite { data, .. } => data.len(),
            TlpRepr::Completion { data, .. } => data.as_ref().map_or(0, Vec::len),
        };
        self.header_len() + payload
    }

    /// Writes the TLP into `tlp`, whose buffer must be exactly
    /// [`buffer_len`](Self::buffer_len) bytes. Reserved bits are written 0.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, tlp: &mut Tlp<T>) {
        tlp.bm().fill(0);
        let four = self.header_len() == field::HEADER_4DW;
        match self {
            TlpRepr::MemRead {
                requester_id,
                tag,
                address,
                length_dw,
                first_be,
                last_be,
            } => {
                let ft = if four {
                    fmt_type::MRD_4DW
                } else {
                    fmt_type::MRD_3DW
                };
                tlp.set_fmt_type(ft);
                tlp.set_length_dw(*length_dw);
                tlp.set_requester_id(*requester_id);
                tlp.set_tag(*tag);
                tlp.set_first_be(*first_be);
                tlp.set_last_be(*last_be);
                tlp.set_address(*address);
            }
            TlpRepr::MemWrite {
                requester_id,
                tag,
                address,
                first_be,
                last_be,
                poisoned,
                data,
            } => {
                let ft = if four {
                    fmt_type::MWR_4DW
                } else {
                    fmt_type::MWR_3DW
                };
                tlp.set_fmt_type(ft);
                tlp.set_length_dw((data.len() / 4) as u16);
                tlp.set_ep(*poisoned);
                tlp.set_requester_id(*requester_id);
                tlp.set_tag(*tag);
                tlp.set_first_be(*first_be);
                tlp.set_last_be(*last_be);
                tlp.set_address(*address);
                tlp.payload_mut().copy_from_slice(data);
            }
            TlpRepr::Completion {
                status,
                byte_count,
                lower_address,
                requester_id,
                completer_id,
                tag,
                poisoned,
                data,
            } => {
                tlp.set_fmt_type(if data.is_some() {
                    fmt_type::CPLD
                } else {
                    fmt_type::CPL
                });
                tlp.set_ep(*poisoned);
                tlp.set_completer_id(*completer_id);
                tlp.set_status(status.bits());
                tlp.set_byte_count(*byte_count);
                tlp.set_requester_id(*requester_id);
                tlp.set_tag(*tag);
                tlp.set_lower_address(*lower_address);
                if let Some(d) = data {
                    tlp.set_length_dw((d.len() / 4) as u16);
                    tlp.payload_mut().copy_from_slice(d);
                }
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut tlp = Tlp::new_unchecked(vec![0u8; self.buffer_len()]);
        self.emit(&mut tlp);
        tlp.into_inner()
    }

    /// For MRd/MWr: the first byte address and the byte count the request
    /// covers, from the first enabled byte to the last enabled byte (PCIe's
    /// Byte Count rule; a zero-length read, first BE 0 with Length 1, counts
    /// as 1 byte). `None` for completions.
    pub fn byte_range(&self) -> Option<(u64, u32)> {
        let (address, length_dw, first_be, last_be) = match self {
            TlpRepr::MemRead {
                address,
                length_dw,
                first_be,
                last_be,
                ..
            } => (*address, *length_dw as u64, *first_be, *last_be),
            TlpRepr::MemWrite {
                address,
                first_be,
                last_be,
                data,
                ..
            } => (*address, (data.len() / 4) as u64, *first_be, *last_be),
            TlpRepr::Completion { .. } => return None,
        };
        let lo = |be: u8| {
            if be == 0 {
                0
            } else {
                be.trailing_zeros() as u64
            }
        };
        let hi = |be: u8| {
            if be == 0 {
                3
            } else {
                7 - be.leading_zeros() as u64
            }
        };
        // Wrapping: a request may run past 2^64; no panic on DUT input.
        let start = address.wrapping_add(lo(first_be));
        let end = if length_dw <= 1 {
            address.wrapping_add(if first_be == 0 { 0 } else { hi(first_be) })
        } else {
            address.wrapping_add((length_dw - 1) * 4 + hi(last_be))
        };
        Some((start, end.wrapping_sub(start).wrapping_add(1) as u32))
    }

    /// For a CplD: the bytes of the request this completion carries (from
    /// `lower_address & 3`, at most `byte_count`). Empty for a Cpl.
    pub fn completion_bytes(&self) -> &[u8] {
        match self {
            TlpRepr::Completion {
                data: Some(d),
                lower_address,
                byte_count,
                ..
            } => {
                let off = (*lower_address & 3) as usize;
                let end = d.len().min(off + *byte_count as usize);
                d.get(off..end).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests;
