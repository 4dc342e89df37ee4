//! `rnic run FABRIC_VECTOR --plot FILE.svg`: the lossless queue of every
//! switch port facing a host (and of the busiest switch-to-switch links),
//! against the RED thresholds, and the pauses the switches sent each host,
//! drawn as intervals.

use std::path::Path;

use plotters::prelude::*;

use crate::plot::COLORS;
use crate::scenario::fabric::{FabricReport, LOSSLESS};
use crate::wire::pfc;

/// Switch-to-switch links drawn at most: a fat-tree has dozens.
pub const MAX_LINKS: usize = 6;

/// What the plot shows, in microseconds and KiB.
#[derive(Debug, Clone, Default)]
pub struct FabricTrace {
    /// Sample times.
    pub us: Vec<f64>,
    /// Per port with a queue ever non-empty: (`port to h3` or
    /// `ring0>ring1`, KiB per sample); the links at most
    /// [`MAX_LINKS`], the highest peaks first.
    pub queues: Vec<(String, Vec<f64>)>,
    /// RED's Kmin and Kmax on the lossless priority, KiB (none when off).
    pub red: Option<(f64, f64)>,
    /// Per host paused at least once: (host, [start, end) intervals in us)
    /// of the lossless priority's pause toward it.
    pub pauses: Vec<(usize, Vec<(f64, f64)>)>,
}

impl FabricTrace {
    /// From a run: `red` the switch's (Kmin, Kmax) in bytes,
    /// `bits_per_cycle` the link's, `clock_mhz` the core clock.
    pub fn new(
        r: &FabricReport,
        red: Option<(u64, u64)>,
        bits_per_cycle: u32,
        clock_mhz: f64,
    ) -> Self {
        let us = |c: u64| c as f64 / clock_mhz;
        let hosts = r.hosts.len();
        let kib = |v: u64| v as f64 / 1024.0;
        let mut queues: Vec<(String, Vec<f64>)> = (0..hosts)
            .filter(|&h| r.samples.iter().any(|s| s.lossless[h] > 0))
            .map(|h| {
                let q = r.samples.iter().map(|s| kib(s.lossless[h]));
                (format!("port to h{h}"), q.collect())
            })
            .collect();
        let peak = |l: usize| r.samples.iter().map(|s| s.links[l]).max().unwrap_or(0);
        let mut links: Vec<usize> = (0..r.links.len()).filter(|&l| peak(l) > 0).collect();
        // Highest peak first; ties in link order.
        links.sort_by_key(|&l| std::cmp::Reverse(peak(l)));
        links.truncate(MAX_LINKS);
        links.sort_unstable();
        for l in links {
            let q = r.samples.iter().map(|s| kib(s.links[l]));
            queues.push((r.links[l].clone(), q.collect()));
        }
        // A pause of Q quanta from the cycle after the frame's last beat
        // lasts ceil(Q * 512 / B) cycles; another frame replaces it, and
        // Q = 0 ends it.
        let mut pauses: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
        for h in 0..hosts {
            let mut iv: Vec<(u64, u64)> = Vec::new();
            for (at, f) in r
                .pauses
                .iter()
                .filter(|p| p.0 == h)
                .filter_map(|p| Some((p.1, pfc::Repr::parse_bytes(&p.2).ok()?)))
            {
                if f.enable >> LOSSLESS & 1 == 0 {
                    continue;
                }
                let q = f.times[LOSSLESS];
                let end = at + (q as u64 * 512).div_ceil(bits_per_cycle as u64);
                match iv.last_mut() {
                    Some(l) if l.1 > at => l.1 = end.max(at),
                    _ if q > 0 => iv.push((at, end)),
                    _ => {}
                }
            }
            if !iv.is_empty() {
                pauses.push((h, iv.into_iter().map(|(a, b)| (us(a), us(b))).collect()));
            }
        }
        FabricTrace {
            us: r.samples.iter().map(|s| us(s.cycle)).collect(),
            queues,
            red: red.map(|(a, b)| (a as f64 / 1024.0, b as f64 / 1024.0)),
            pauses,
        }
    }
}

/// Two panels: the queues with the RED thresholds, one legend; the
/// pauses as bars per host.
pub fn draw_svg(t: &FabricTrace, title: &str, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plotting to {}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(&e))?;
    let panels = root.split_by_breakpoints::<i32, i32, _, _>([], [400]);
    let x_max = t.us.last().copied().unwrap_or(1.0).max(1e-3);
    let q_max = t
        .queues
        .iter()
        .flat_map(|q| q.1.iter())
        .chain(t.red.iter().map(|r| &r.1))
        .fold(1.0f64, |a, &b| a.max(b))
        * 1.08;
    let mut q = ChartBuilder::on(&panels[0])
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..q_max)
        .map_err(|e| err(&e))?;
    q.configure_mesh()
        .y_desc("lossless queue (KiB)")
        .x_desc("time (us)")
        .draw()
        .map_err(|e| err(&e))?;
    for (k, (name, v)) in t.queues.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let pts: Vec<(f64, f64)> = t.us.iter().copied().zip(v.iter().copied()).collect();
        q.draw_series(LineSeries::new(pts, c.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    if let Some((kmin, kmax)) = t.red {
        for (name, y) in [("RED Kmin", kmin), ("RED Kmax", kmax)] {
            q.draw_series(LineSeries::new([(0.0, y), (x_max, y)], BLACK.mix(0.5)))
                .map_err(|e| err(&e))?
                .label(format!("{name} {y:.0} KiB"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.5)));
        }
    }
    q.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;

    let rows = t.pauses.len().max(1);
    let mut p = ChartBuilder::on(&panels[1])
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, -0.5..rows as f64 - 0.5)
        .map_err(|e| err(&e))?;
    let names: Vec<String> = t.pauses.iter().map(|(h, _)| format!("h{h}")).collect();
    p.configure_mesh()
        .y_desc("paused toward (priority 3)")
        .y_labels(rows + 1)
        .y_label_formatter(&|y| {
            // One label per row, at its centre (an integer).
            let k = y.round();
            if (y - k).abs() < 1e-6 && k >= 0.0 {
                names.get(k as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (k, (_, iv)) in t.pauses.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        p.draw_series(iv.iter().map(|&(a, b)| {
            Rectangle::new(
                [(a, k as f64 - 0.35), (b.min(x_max), k as f64 + 0.35)],
                c.filled(),
            )
        }))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
