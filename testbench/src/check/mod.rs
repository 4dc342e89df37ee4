//! Checks of the DUT's behaviour that are independent of either DUT
//! implementation.

pub mod pcie;
pub mod scapy;

pub use pcie::{PcieChecker, PcieCheckerConfig, PcieViolation};
