//! A cycle-level model of an output-queued, shared-buffer Ethernet switch:
//! the fabric that many NICs share in the testbench's fabric experiments.
//!
//! It is pure Rust and knows nothing of the NIC; the testbench feeds it
//! frames with the cycle they finished arriving and drains departures.
//!
//! The rules, their timing and the defaults are in docs/switch.md.

mod config;
mod counters;
mod ecmp;
mod parse;
mod pfc;
mod red;
mod rng;
mod sched;
mod switch;

pub use config::{ConfigError, PfcCfg, QueueCfg, Red, Route, Sched, SwitchConfig, PRIOS};
pub use counters::{PortCounters, QueueCounters, SwitchCounters};
pub use ecmp::flow_hash;
pub use parse::{ipv4_checksum, pfc_frame};
pub use pfc::{headroom_needed, pause_cycles, wire_cycles};
pub use red::mark_probability;
pub use rng::SplitMix64;
pub use switch::{Departure, Switch};
