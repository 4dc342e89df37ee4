//! What a vector may ask for. Each limit keeps a run's memory and time
//! bounded on an ordinary machine; a vector beyond one is refused with the
//! file, the field and the limit (exit 2) before anything runs. The README's
//! "Limits" table lists the same numbers.

/// Largest vector file read (bytes). Anything that is not a regular file
/// (a FIFO, `/dev/zero`) is refused too.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Host memory a vector may fill with `memory` regions, in total (bytes).
pub const MAX_MEMORY_BYTES: u64 = 1 << 30;

/// Frames the vector's `rx` list may send, counting every copy of a storm.
pub const MAX_RX_FRAMES: u64 = 1 << 22;

/// Largest frame on `rx_*` (bytes, no FCS): a jumbo frame.
pub const MAX_FRAME_BYTES: usize = 9600;

/// Largest `max_cycles`: about 20 minutes of the model alone.
pub const MAX_CYCLES: u64 = 1_000_000_000;

/// Bytes all WQEs of a vector may move, in total: the reference works out
/// every packet before the run.
pub const MAX_WQE_BYTES: u64 = 1 << 30;
