//! What the switch counts, for reports and for tests to assert on.

use crate::config::PRIOS;

/// Per queue of a port. The egress-side fields count the port's egress
/// queue of that priority; `xoff_sent`/`xon_sent` count PFC frames sent on
/// that port for that priority, that is about its ingress side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Highest egress queue depth, bytes, right after an enqueue.
    pub depth_hwm_bytes: u64,
    pub enqueued: u64,
    /// Frames marked CE on enqueue.
    pub marked: u64,
    /// Frames refused for lack of buffer (lossy) or of headroom (lossless).
    pub dropped: u64,
    /// Frames dropped by the PFC watchdog during a storm.
    pub watchdog_drops: u64,
    /// PFC frames with a non-zero pause time (XOFF and refreshes) started.
    pub xoff_sent: u64,
    /// PFC frames with pause time 0 (XON) started.
    pub xon_sent: u64,
    /// Cycles this egress queue honours a received pause, counted when a
    /// pause is received for its full length and corrected when a later
    /// frame or the watchdog cuts it short.
    pub paused_cycles: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Every frame received, PFC frames and malformed ones included.
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Every frame started on the wire, PFC frames included (bytes padded).
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub pause_frames_rx: u64,
    pub pause_frames_tx: u64,
    pub queues: [QueueCounters; PRIOS],
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwitchCounters {
    pub ports: Vec<PortCounters>,
    pub rx_frames: u64,
    pub tx_frames: u64,
    /// Every frame not forwarded other than PFC frames: buffer, headroom and
    /// watchdog drops, unroutable and malformed frames.
    pub dropped_frames: u64,
    pub unroutable: u64,
    pub malformed: u64,
}

impl SwitchCounters {
    pub fn new(ports: usize) -> Self {
        SwitchCounters {
            ports: vec![PortCounters::default(); ports],
            ..Default::default()
        }
    }

    /// Flat `name, value` pairs, non-zero only: `rx_frames`,
    /// `port2.tx_bytes`, `port2.q3.marked`, ...
    pub fn named(&self) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        let mut put = |name: String, x: u64| {
            if x != 0 {
                v.push((name, x));
            }
        };
        put("rx_frames".into(), self.rx_frames);
        put("tx_frames".into(), self.tx_frames);
        put("dropped_frames".into(), self.dropped_frames);
        put("unroutable".into(), self.unroutable);
        put("malformed".into(), self.malformed);
        for (i, p) in self.ports.iter().enumerate() {
            put(format!("port{i}.rx_frames"), p.rx_frames);
            put(format!("port{i}.rx_bytes"), p.rx_bytes);
            put(format!("port{i}.tx_frames"), p.tx_frames);
            put(format!("port{i}.tx_bytes"), p.tx_bytes);
            put(format!("port{i}.pause_frames_rx"), p.pause_frames_rx);
            put(format!("port{i}.pause_frames_tx"), p.pause_frames_tx);
            for (k, q) in p.queues.iter().enumerate() {
                let f = |n: &str| format!("port{i}.q{k}.{n}");
                put(f("depth_hwm_bytes"), q.depth_hwm_bytes);
                put(f("enqueued"), q.enqueued);
                put(f("marked"), q.marked);
                put(f("dropped"), q.dropped);
                put(f("watchdog_drops"), q.watchdog_drops);
                put(f("xoff_sent"), q.xoff_sent);
                put(f("xon_sent"), q.xon_sent);
                put(f("paused_cycles"), q.paused_cycles);
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn named_lists_non_zero_entries() {
        let mut c = super::SwitchCounters::new(2);
        c.rx_frames = 3;
        c.ports[1].queues[3].marked = 2;
        assert_eq!(
            c.named(),
            vec![
                ("rx_frames".to_string(), 3),
                ("port1.q3.marked".to_string(), 2)
            ]
        );
    }
}
