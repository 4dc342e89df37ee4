//! Switch parameters, their defaults (docs/switch.md, "Defaults") and the
//! checks that keep the model's arithmetic meaningful.

use std::net::IpAddr;

use thiserror::Error;

/// Number of priorities (802.1p) and so of queues per egress port.
pub const PRIOS: usize = 8;

/// How an egress queue competes for its port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sched {
    /// Served before every DWRR queue; among strict queues the higher
    /// priority number goes first.
    Strict,
    /// Deficit round robin among the non-strict queues, `quantum` bytes per
    /// turn.
    Dwrr { quantum: u32 },
}

/// RED/ECN marking of one egress queue (DCQCN style: marks, never drops).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Red {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueCfg {
    pub sched: Sched,
    pub lossless: bool,
    pub red: Option<Red>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcCfg {
    pub enabled: bool,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub headroom_bytes: u64,
    pub pause_quanta: u16,
    pub refresh_cycles: u64,
    pub src_mac: [u8; 6],
}

/// A forwarding entry: longest prefix wins; several ports form an ECMP group.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub dst: IpAddr,
    pub prefix: u8,
    pub ports: Vec<usize>,
}

impl Route {
    /// A host route (/32 or /128) to a single port.
    pub fn host(dst: IpAddr, port: usize) -> Route {
        let prefix = if dst.is_ipv4() { 32 } else { 128 };
        Route {
            dst,
            prefix,
            ports: vec![port],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    pub ports: usize,
    pub buffer_bytes: u64,
    pub bits_per_cycle: u32,
    pub queues: [QueueCfg; PRIOS],
    pub dscp_prio: [u8; 64],
    pub pfc: PfcCfg,
    pub watchdog_cycles: Option<u64>,
    pub seed: u64,
    pub routes: Vec<Route>,
}

#[derive(Clone, Debug, Error, PartialEq)]
pub enum ConfigError {
    #[error("a switch needs at least one port")]
    NoPorts,
    #[error("bits_per_cycle must be at least 1")]
    ZeroRate,
    #[error("queue {0}: DWRR quantum must be at least 1 byte")]
    ZeroQuantum(usize),
    #[error("queue {0}: RED needs kmin <= kmax and 0 <= pmax <= 1")]
    BadRed(usize),
    #[error("dscp_prio[{0}] = {1} is not a priority (0..=7)")]
    BadDscpPrio(usize, u8),
    #[error("PFC needs xon_bytes <= xoff_bytes")]
    XonAboveXoff,
    #[error("PFC refresh_cycles must be at least 1")]
    ZeroRefresh,
    #[error("route {0}: prefix /{1} is longer than the address")]
    BadPrefix(usize, u8),
    #[error("route {0}: needs at least one port, all below the port count")]
    BadRoutePorts(usize),
    #[error("watchdog_cycles must be at least 1 when set")]
    ZeroWatchdog,
}

impl SwitchConfig {
    /// The defaults of docs/switch.md: RoCE traffic lossless on priority 3
    /// with DCQCN-style marking, CNPs strict on priority 6, the rest lossy
    /// DWRR; no routes.
    pub fn new(ports: usize) -> Self {
        let lossy = QueueCfg {
            sched: Sched::Dwrr { quantum: 4200 },
            lossless: false,
            red: None,
        };
        let mut queues = [lossy; PRIOS];
        queues[3] = QueueCfg {
            sched: Sched::Dwrr { quantum: 4200 },
            lossless: true,
            red: Some(Red {
                kmin_bytes: 5_000,
                kmax_bytes: 200_000,
                pmax: 0.01,
            }),
        };
        queues[6].sched = Sched::Strict;
        let mut dscp_prio = [0u8; 64];
        for (d, p) in dscp_prio.iter_mut().enumerate() {
            *p = (d >> 3) as u8;
        }
        SwitchConfig {
            ports,
            buffer_bytes: 16 << 20,
            bits_per_cycle: 400,
            queues,
            dscp_prio,
            pfc: PfcCfg {
                enabled: true,
                xoff_bytes: 64 << 10,
                xon_bytes: 32 << 10,
                headroom_bytes: 48 << 10,
                pause_quanta: 65535,
                refresh_cycles: 40_000,
                src_mac: [0x02, 0, 0, 0, 0, 0xfe],
            },
            watchdog_cycles: None,
            seed: 1,
            routes: Vec::new(),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.ports == 0 {
            return Err(ConfigError::NoPorts);
        }
        if self.bits_per_cycle == 0 {
            return Err(ConfigError::ZeroRate);
        }
        for (p, q) in self.queues.iter().enumerate() {
            if let Sched::Dwrr { quantum: 0 } = q.sched {
                return Err(ConfigError::ZeroQuantum(p));
            }
            if let Some(r) = q.red {
                // NaN fails the range check too, which is what we want.
                if r.kmin_bytes > r.kmax_bytes || !(0.0..=1.0).contains(&r.pmax) {
                    return Err(ConfigError::BadRed(p));
                }
            }
        }
        for (d, &p) in self.dscp_prio.iter().enumerate() {
            if p as usize >= PRIOS {
                return Err(ConfigError::BadDscpPrio(d, p));
            }
        }
        if self.pfc.enabled {
            if self.pfc.xon_bytes > self.pfc.xoff_bytes {
                return Err(ConfigError::XonAboveXoff);
            }
            if self.pfc.refresh_cycles == 0 {
                return Err(ConfigError::ZeroRefresh);
            }
        }
        if self.watchdog_cycles == Some(0) {
            return Err(ConfigError::ZeroWatchdog);
        }
        for (i, r) in self.routes.iter().enumerate() {
            let max = if r.dst.is_ipv4() { 32 } else { 128 };
            if r.prefix > max {
                return Err(ConfigError::BadPrefix(i, r.prefix));
            }
            if r.ports.is_empty() || r.ports.iter().any(|&p| p >= self.ports) {
                return Err(ConfigError::BadRoutePorts(i));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_as_documented() {
        let c = SwitchConfig::new(4);
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(
            (c.buffer_bytes, c.bits_per_cycle, c.seed),
            (16 << 20, 400, 1)
        );
        assert!(c.queues[3].lossless && c.queues[3].red.is_some());
        assert_eq!(c.queues[6].sched, Sched::Strict);
        assert_eq!(c.queues[0].sched, Sched::Dwrr { quantum: 4200 });
        assert_eq!((c.dscp_prio[26], c.dscp_prio[48]), (3, 6));
        assert_eq!(c.watchdog_cycles, None);
        // The refresh must come before a held XOFF runs out: 65535 quanta
        // last 83,885 cycles at 400 bits per cycle.
        assert!(c.pfc.refresh_cycles < crate::pfc::pause_cycles(c.pfc.pause_quanta, 400));
    }

    #[test]
    fn bad_configs_are_rejected() {
        let ok = SwitchConfig::new(2);
        let mut c = ok.clone();
        c.ports = 0;
        assert_eq!(c.validate(), Err(ConfigError::NoPorts));
        let mut c = ok.clone();
        c.queues[2].sched = Sched::Dwrr { quantum: 0 };
        assert_eq!(c.validate(), Err(ConfigError::ZeroQuantum(2)));
        let mut c = ok.clone();
        c.queues[3].red = Some(Red {
            kmin_bytes: 2,
            kmax_bytes: 1,
            pmax: 0.5,
        });
        assert_eq!(c.validate(), Err(ConfigError::BadRed(3)));
        let mut c = ok.clone();
        c.pfc.xon_bytes = c.pfc.xoff_bytes + 1;
        assert_eq!(c.validate(), Err(ConfigError::XonAboveXoff));
        let mut c = ok.clone();
        c.routes.push(Route::host("10.0.0.1".parse().unwrap(), 2));
        assert_eq!(c.validate(), Err(ConfigError::BadRoutePorts(0)));
        let mut c = ok.clone();
        c.routes.push(Route {
            dst: "10.0.0.0".parse().unwrap(),
            prefix: 33,
            ports: vec![0],
        });
        assert_eq!(c.validate(), Err(ConfigError::BadPrefix(0, 33)));
        let mut c = ok;
        c.dscp_prio[5] = 8;
        assert_eq!(c.validate(), Err(ConfigError::BadDscpPrio(5, 8)));
    }
}
