//! `rnic run VECTOR --plot FILE.svg`: per-QP DCQCN current and target rate,
//! alpha, and the PFC pause state of each priority over time, sampled from
//! the model's registers as a vector runs.

use std::path::Path;

use plotters::prelude::*;

/// Samples of a run: `cycles[k]` is when sample k was taken.
#[derive(Debug, Clone, Default)]
pub struct CcTrace {
    pub cycles: Vec<u64>,
    /// The QPs plotted (those with congestion control enabled, else all configured).
    pub qps: Vec<u32>,
    /// Per plotted QP, Gb/s.
    pub rc: Vec<Vec<f64>>,
    pub rt: Vec<Vec<f64>>,
    /// Per plotted QP, 0..1.
    pub alpha: Vec<Vec<f64>>,
    /// Bit p = priority p paused.
    pub pause: Vec<u8>,
    /// Core clock, for the time axis.
    pub clock_mhz: f64,
}

/// The series colours of every plot, in order.
pub const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// Draws `t` as three stacked panels (rates, alpha, pause) into an SVG file.
pub fn draw_svg(t: &CcTrace, title: &str, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plotting to {}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 760)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(&e))?;
    let panels = root.split_by_breakpoints::<i32, i32, _, _>([], [330, 560]);
    let us = |c: u64| c as f64 / t.clock_mhz;
    let x_max = t.cycles.last().map_or(1.0, |&c| us(c)).max(1e-3);
    let r_max =
        t.rc.iter()
            .chain(&t.rt)
            .flatten()
            .fold(1.0f64, |a, &b| a.max(b))
            * 1.08;

    let mut rates = ChartBuilder::on(&panels[0])
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..r_max)
        .map_err(|e| err(&e))?;
    rates
        .configure_mesh()
        .y_desc("rate (Gb/s)")
        .x_desc("time (us)")
        .draw()
        .map_err(|e| err(&e))?;
    for (k, qp) in t.qps.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let pts = |v: &[f64]| -> Vec<(f64, f64)> {
            t.cycles.iter().zip(v).map(|(&x, &y)| (us(x), y)).collect()
        };
        rates
            .draw_series(LineSeries::new(pts(&t.rc[k]), c.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(format!("QP {qp} Rc"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)));
        rates
            .draw_series(LineSeries::new(pts(&t.rt[k]), c.mix(0.45).stroke_width(1)))
            .map_err(|e| err(&e))?
            .label(format!("QP {qp} Rt"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.mix(0.45)));
    }
    rates
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;

    let mut alpha = ChartBuilder::on(&panels[1])
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..1.05)
        .map_err(|e| err(&e))?;
    alpha
        .configure_mesh()
        .y_desc("alpha")
        .draw()
        .map_err(|e| err(&e))?;
    for (k, _) in t.qps.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let pts: Vec<(f64, f64)> = t
            .cycles
            .iter()
            .zip(&t.alpha[k])
            .map(|(&x, &y)| (us(x), y))
            .collect();
        alpha
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))
            .map_err(|e| err(&e))?;
    }

    let mut pause = ChartBuilder::on(&panels[2])
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..8.0)
        .map_err(|e| err(&e))?;
    pause
        .configure_mesh()
        .y_desc("PFC paused (priority)")
        .y_labels(9)
        .draw()
        .map_err(|e| err(&e))?;
    for p in 0..8u8 {
        let c = COLORS[p as usize % COLORS.len()];
        let pts: Vec<(f64, f64)> = t
            .cycles
            .iter()
            .zip(&t.pause)
            .map(|(&x, &b)| (us(x), p as f64 + if b >> p & 1 != 0 { 0.8 } else { 0.0 }))
            .collect();
        pause
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
