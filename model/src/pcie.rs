//! PCIe TLP header fields as the DMA engines build and parse them.
