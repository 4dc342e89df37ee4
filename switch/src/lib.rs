//! A cycle-level model of an output-queued, shared-buffer Ethernet switch:
//! the fabric that many NICs share in the testbench's fabric experiments.
//!
//! It is pure Rust and knows nothing of the NIC; the testbench feeds it
//! frames with the cycle they finished arriving and drains departures.
