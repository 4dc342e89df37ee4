//! Root package: hosts the integration tests in `tests/`. See the `rnic-model` and `rnic-testbench` crates.
