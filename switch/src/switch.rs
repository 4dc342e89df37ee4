//! The switch core: admission, the event loop that starts frames on the
//! egress wires, and the bookkeeping that ties the buffer, the ingress
//! counts behind PFC and the counters together (docs/switch.md).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::config::{ConfigError, SwitchConfig, PRIOS};
use crate::counters::SwitchCounters;
use crate::ecmp;
use crate::parse::{self, Parsed, MIN_FRAME};
use crate::pfc::{pause_cycles, wire_cycles, Gen, Pause};
use crate::red;
use crate::rng::SplitMix64;
use crate::sched::{Queued, Queues};

/// A frame as it went out on an egress wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    pub port: usize,
    /// First and last wire cycle (FCS, preamble and gap included).
    pub first: u64,
    pub last: u64,
    /// As sent: padded to 60 bytes, CE applied.
    pub frame: Arc<[u8]>,
}

/// A PFC frame the switch owes upstream on a port.
#[derive(Clone, Copy, Debug)]
struct Ctrl {
    eligible: u64,
    prio: usize,
    quanta: u16,
}

#[derive(Clone, Debug, Default)]
struct Port {
    queues: Queues,
    /// First cycle the egress wire is free.
    free_at: u64,
    ctrl: VecDeque<Ctrl>,
    /// Pauses received on this port, honoured by its egress queues.
    pause: [Pause; PRIOS],
    /// XOFF state of this port as an ingress.
    gen: [Gen; PRIOS],
    /// Bytes that arrived here per priority and are queued anywhere.
    ingress: [u64; PRIOS],
    headroom_used: [u64; PRIOS],
}

/// Data frames and bytes (padded) through the switch, for conservation.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    in_frames: u64,
    in_bytes: u64,
    out_frames: u64,
    out_bytes: u64,
    drop_frames: u64,
    drop_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct Switch {
    cfg: SwitchConfig,
    ports: Vec<Port>,
    rng: SplitMix64,
    /// Every cycle before `now` has been simulated.
    now: u64,
    out: Vec<Departure>,
    counters: SwitchCounters,
    shared_used: u64,
    totals: Totals,
}

impl Switch {
    pub fn new(cfg: SwitchConfig) -> Result<Switch, ConfigError> {
        cfg.validate()?;
        Ok(Switch {
            ports: vec![Port::default(); cfg.ports],
            rng: SplitMix64::new(cfg.seed),
            now: 0,
            out: Vec::new(),
            counters: SwitchCounters::new(cfg.ports),
            shared_used: 0,
            totals: Totals::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// A frame has fully arrived on `port` at cycle `at`. Cycles up to and
    /// including `at` are simulated first, so frames starting at `at` left
    /// before this one is counted in any queue depth.
    pub fn receive(&mut self, port: usize, at: u64, frame: &[u8]) {
        self.run_to(at);
        let c = &mut self.counters;
        c.rx_frames += 1;
        let padded = frame.len().max(MIN_FRAME) as u64;
        let Some(pc) = c.ports.get_mut(port) else {
            // No such ingress: nothing to honour or account it to.
            c.malformed += 1;
            self.drop_data(padded);
            return;
        };
        pc.rx_frames += 1;
        pc.rx_bytes += frame.len() as u64;
        // The cycle this arrival is decided in: `at`, or the last simulated
        // cycle if the caller was late.
        let d = self.now - 1;
        match parse::parse(frame, &self.cfg.dscp_prio) {
            Err(_) => {
                self.counters.malformed += 1;
                self.drop_data(padded);
            }
            Ok(Parsed::Pfc { enable, quanta }) => {
                self.counters.ports[port].pause_frames_rx += 1;
                if !self.cfg.pfc.enabled {
                    return;
                }
                for (p, &q) in quanta.iter().enumerate() {
                    if enable & (1 << p) == 0 {
                        continue;
                    }
                    let n = pause_cycles(q, self.cfg.bits_per_cycle);
                    let delta = self.ports[port].pause[p].receive(d, n);
                    let pc = &mut self.counters.ports[port].queues[p].paused_cycles;
                    *pc = pc.saturating_add_signed(delta);
                }
            }
            Ok(Parsed::Data(ip)) => {
                let Some(e) = ecmp::egress(&self.cfg.routes, self.cfg.seed, &ip) else {
                    self.counters.unroutable += 1;
                    self.drop_data(padded);
                    return;
                };
                self.enqueue(port, e, ip, frame, d);
            }
        }
    }

    fn drop_data(&mut self, bytes: u64) {
        self.totals.in_frames += 1;
        self.totals.in_bytes += bytes;
        self.totals.drop_frames += 1;
        self.totals.drop_bytes += bytes;
        self.counters.dropped_frames += 1;
    }

    fn enqueue(&mut self, inp: usize, e: usize, ip: parse::IpFrame, frame: &[u8], d: u64) {
        let prio = ip.prio;
        let qcfg = self.cfg.queues[prio];
        let pfc = self.cfg.pfc;
        let len = frame.len().max(MIN_FRAME) as u64;
        if self.ports[e].pause[prio].storm {
            self.counters.ports[e].queues[prio].watchdog_drops += 1;
            self.drop_data(len);
            return;
        }
        let lossless = qcfg.lossless && pfc.enabled;
        let shared_room = self.shared_used + len <= self.cfg.buffer_bytes;
        let ing = &self.ports[inp];
        let in_headroom = if lossless {
            if ing.ingress[prio] < pfc.xoff_bytes && shared_room {
                false
            } else if ing.headroom_used[prio] + len <= pfc.headroom_bytes {
                true
            } else {
                self.counters.ports[e].queues[prio].dropped += 1;
                self.drop_data(len);
                return;
            }
        } else if shared_room {
            false
        } else {
            self.counters.ports[e].queues[prio].dropped += 1;
            self.drop_data(len);
            return;
        };
        let mut f = frame.to_vec();
        f.resize(len as usize, 0);
        let qc = &mut self.counters.ports[e].queues[prio];
        if let Some(r) = qcfg.red {
            let depth = self.ports[e].queues.depth[prio];
            if (ip.ecn == 1 || ip.ecn == 2) && red::decide(&r, depth, &mut self.rng) {
                parse::mark_ce(&mut f, ip.ecn_at);
                qc.marked += 1;
            }
        }
        self.totals.in_frames += 1;
        self.totals.in_bytes += len;
        if in_headroom {
            self.ports[inp].headroom_used[prio] += len;
        } else {
            self.shared_used += len;
        }
        let eq = &mut self.ports[e].queues;
        eq.push(
            prio,
            Queued {
                frame: f,
                eligible: d.saturating_add(1),
                in_port: inp,
                in_headroom,
            },
        );
        qc.enqueued += 1;
        qc.depth_hwm_bytes = qc.depth_hwm_bytes.max(eq.depth[prio]);
        let ing = &mut self.ports[inp];
        ing.ingress[prio] += len;
        if lossless && !ing.gen[prio].xoff && ing.ingress[prio] >= pfc.xoff_bytes {
            ing.gen[prio] = Gen {
                xoff: true,
                next_refresh: d.saturating_add(pfc.refresh_cycles),
            };
            self.owe_pfc(inp, prio, pfc.pause_quanta, d);
        }
    }

    /// Queues a PFC frame decided at `d` (it may start at `d + 1`). One
    /// pending frame per priority: a newer decision replaces an unsent one.
    fn owe_pfc(&mut self, port: usize, prio: usize, quanta: u16, d: u64) {
        let ctrl = &mut self.ports[port].ctrl;
        ctrl.retain(|c| c.prio != prio);
        ctrl.push_back(Ctrl {
            eligible: d.saturating_add(1),
            prio,
            quanta,
        });
    }

    /// A queued frame leaves the buffer (sent or dropped) at cycle `c`.
    fn release(&mut self, f: &Queued, prio: usize, c: u64) {
        let len = f.len();
        let ing = &mut self.ports[f.in_port];
        if f.in_headroom {
            ing.headroom_used[prio] -= len;
        } else {
            self.shared_used -= len;
        }
        ing.ingress[prio] -= len;
        if ing.gen[prio].xoff && ing.ingress[prio] <= self.cfg.pfc.xon_bytes {
            ing.gen[prio].xoff = false;
            self.owe_pfc(f.in_port, prio, 0, c);
        }
    }

    /// Runs the switch through cycle `now` and returns the frames that
    /// started on any wire since the last call, in start order (by cycle,
    /// then by port).
    pub fn advance(&mut self, now: u64) -> Vec<Departure> {
        self.run_to(now);
        std::mem::take(&mut self.out)
    }

    fn run_to(&mut self, t: u64) {
        while let Some(c) = self.next_event() {
            if c > t {
                break;
            }
            self.step(c);
            self.now = c.saturating_add(1);
            if c == u64::MAX {
                break;
            }
        }
        self.now = self.now.max(t.saturating_add(1));
    }

    /// The earliest cycle, not before the first unsimulated one, at which
    /// something can start or change state; `None` when nothing is pending.
    pub fn next_event(&self) -> Option<u64> {
        let now = self.now;
        let mut best: Option<u64> = None;
        let mut put = |t: u64| {
            let t = t.max(now);
            best = Some(best.map_or(t, |b: u64| b.min(t)));
        };
        for port in &self.ports {
            let mut start: Option<u64> = port.ctrl.iter().map(|c| c.eligible).min();
            for p in 0..PRIOS {
                if let Some(h) = port.queues.q[p].front() {
                    let t = port.pause[p].free_from(h.eligible.max(now));
                    start = Some(start.map_or(t, |s| s.min(t)));
                }
                if port.gen[p].xoff {
                    put(port.gen[p].next_refresh);
                }
                if let Some(w) = self.cfg.watchdog_cycles {
                    if let Some(t) = port.pause[p].watchdog_due(w) {
                        put(t);
                    }
                }
                if let Some(t) = port.pause[p].storm_end() {
                    put(t);
                }
            }
            if let Some(s) = start {
                put(s.max(port.free_at));
            }
        }
        best
    }

    fn step(&mut self, c: u64) {
        let refresh = self.cfg.pfc.refresh_cycles;
        for i in 0..self.ports.len() {
            for p in 0..PRIOS {
                if self.ports[i].pause[p].storm_end() == Some(c) {
                    let pz = &mut self.ports[i].pause[p];
                    pz.storm = false;
                    pz.since = None;
                }
                let due = self
                    .cfg
                    .watchdog_cycles
                    .and_then(|w| self.ports[i].pause[p].watchdog_due(w));
                if due.is_some_and(|t| t <= c) {
                    self.storm(i, p, c);
                }
                let g = self.ports[i].gen[p];
                if g.xoff && g.next_refresh <= c {
                    self.ports[i].gen[p].next_refresh = c.saturating_add(refresh);
                    self.owe_pfc(i, p, self.cfg.pfc.pause_quanta, c);
                }
            }
        }
        for i in 0..self.ports.len() {
            if self.ports[i].free_at <= c {
                self.start(i, c);
            }
        }
    }

    /// The watchdog fires on egress (port, prio) at `c`: stop honouring the
    /// pause and drop what is queued.
    fn storm(&mut self, port: usize, prio: usize, c: u64) {
        let pz = &mut self.ports[port].pause[prio];
        let left = pz.until.saturating_sub(c) + 1;
        pz.storm = true;
        let qc = &mut self.counters.ports[port].queues[prio];
        qc.paused_cycles = qc.paused_cycles.saturating_sub(left);
        while let Some(f) = self.ports[port].queues.pop(prio) {
            self.counters.ports[port].queues[prio].watchdog_drops += 1;
            self.counters.dropped_frames += 1;
            self.totals.drop_frames += 1;
            self.totals.drop_bytes += f.len();
            self.release(&f, prio, c);
        }
    }

    fn start(&mut self, i: usize, c: u64) {
        let port = &mut self.ports[i];
        let frame: Vec<u8>;
        if let Some(k) = port.ctrl.iter().position(|x| x.eligible <= c) {
            let Some(x) = port.ctrl.remove(k) else { return };
            frame = parse::pfc_frame(self.cfg.pfc.src_mac, x.prio, x.quanta);
            let pc = &mut self.counters.ports[i];
            pc.pause_frames_tx += 1;
            if x.quanta == 0 {
                pc.queues[x.prio].xon_sent += 1;
            } else {
                pc.queues[x.prio].xoff_sent += 1;
            }
        } else {
            let pause = port.pause;
            let heads: [Option<u64>; PRIOS] =
                std::array::from_fn(|p| port.queues.q[p].front().map(|f| f.eligible));
            let ready = |p: usize| heads[p].is_some_and(|e| e <= c) && !pause[p].blocks(c);
            let Some(p) = port.queues.pick(&self.cfg.queues, ready) else {
                return;
            };
            let Some(f) = port.queues.pop(p) else { return };
            self.release(&f, p, c);
            self.totals.out_frames += 1;
            self.totals.out_bytes += f.len();
            frame = f.frame;
        }
        let n = wire_cycles(frame.len(), self.cfg.bits_per_cycle);
        self.ports[i].free_at = c.saturating_add(n);
        let pc = &mut self.counters.ports[i];
        pc.tx_frames += 1;
        pc.tx_bytes += frame.len() as u64;
        self.counters.tx_frames += 1;
        self.out.push(Departure {
            port: i,
            first: c,
            last: c.saturating_add(n - 1),
            frame: frame.into(),
        });
    }

    pub fn counters(&self) -> &SwitchCounters {
        &self.counters
    }

    /// Bytes queued, shared pool and headroom together.
    pub fn buffer_used(&self) -> u64 {
        self.shared_used + self.headroom_total()
    }

    /// Bytes in the shared pool only.
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }

    fn headroom_total(&self) -> u64 {
        self.ports
            .iter()
            .map(|p| p.headroom_used.iter().sum::<u64>())
            .sum()
    }

    /// Headroom bytes in use by ingress (port, prio).
    pub fn headroom_used(&self, port: usize, prio: usize) -> u64 {
        self.ports
            .get(port)
            .map_or(0, |p| p.headroom_used[prio % PRIOS])
    }

    pub fn queue_depth(&self, port: usize, prio: usize) -> u64 {
        self.ports
            .get(port)
            .map_or(0, |p| p.queues.depth[prio % PRIOS])
    }

    pub fn ingress_bytes(&self, port: usize, prio: usize) -> u64 {
        self.ports.get(port).map_or(0, |p| p.ingress[prio % PRIOS])
    }

    /// Whether ingress (port, prio) is in XOFF (it has asked upstream to
    /// pause and not yet released it).
    pub fn xoff(&self, port: usize, prio: usize) -> bool {
        self.ports
            .get(port)
            .is_some_and(|p| p.gen[prio % PRIOS].xoff)
    }

    /// Whether egress (port, prio) may not start a frame in the first
    /// cycle not yet simulated (after `receive(.., at, ..)` that is `at + 1`,
    /// after `advance(now)` it is `now + 1`).
    pub fn paused(&self, port: usize, prio: usize) -> bool {
        self.ports
            .get(port)
            .is_some_and(|p| p.pause[prio % PRIOS].blocks(self.now))
    }

    /// Whether the watchdog has egress (port, prio) in a storm right now.
    pub fn in_storm(&self, port: usize, prio: usize) -> bool {
        self.ports
            .get(port)
            .is_some_and(|p| p.pause[prio % PRIOS].storm)
    }

    /// Data frames and bytes in == out + dropped + queued, and every
    /// running total agrees with the queues it summarises.
    pub fn check_conservation(&self) -> Result<(), String> {
        let t = &self.totals;
        let (mut qf, mut qb) = (0u64, 0u64);
        let mut ingress = 0u64;
        for (i, p) in self.ports.iter().enumerate() {
            for prio in 0..PRIOS {
                let b: u64 = p.queues.q[prio].iter().map(Queued::len).sum();
                if b != p.queues.depth[prio] {
                    return Err(format!(
                        "port {i} q{prio}: depth {} != {b}",
                        p.queues.depth[prio]
                    ));
                }
                qf += p.queues.q[prio].len() as u64;
                qb += b;
                ingress += p.ingress[prio];
                if p.headroom_used[prio] > self.cfg.pfc.headroom_bytes {
                    return Err(format!("port {i} q{prio}: headroom overused"));
                }
            }
        }
        if t.in_frames != t.out_frames + t.drop_frames + qf {
            return Err(format!(
                "frames: in {} != out {} + dropped {} + queued {qf}",
                t.in_frames, t.out_frames, t.drop_frames
            ));
        }
        if t.in_bytes != t.out_bytes + t.drop_bytes + qb {
            return Err(format!(
                "bytes: in {} != out {} + dropped {} + queued {qb}",
                t.in_bytes, t.out_bytes, t.drop_bytes
            ));
        }
        if self.buffer_used() != qb || ingress != qb {
            return Err(format!(
                "queued {qb} bytes but buffer {} and ingress {ingress}",
                self.buffer_used()
            ));
        }
        if self.shared_used > self.cfg.buffer_bytes {
            return Err("shared buffer overused".into());
        }
        if t.drop_frames != self.counters.dropped_frames {
            return Err("dropped_frames counter disagrees".into());
        }
        Ok(())
    }
}
