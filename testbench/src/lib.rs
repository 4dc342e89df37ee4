pub use rnic_model;
