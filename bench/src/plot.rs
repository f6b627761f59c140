//! PNG plots of the report's series with plotters' bitmap backend. Text is drawn with
//! ab_glyph from a TrueType file (no fontconfig): `$REACTOR_BENCH_FONT` or Debian's
//! DejaVu Sans (fonts-dejavu-core, installed by scripts/setup.sh).

use crate::report::Series;
use anyhow::{Context, anyhow};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::OnceLock;

const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

fn register_font() -> anyhow::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let candidates = std::env::var("REACTOR_BENCH_FONT")
            .into_iter()
            .chain(FONTS.iter().map(|s| s.to_string()));
        for path in candidates {
            if let Ok(bytes) = std::fs::read(&path) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                    .map_err(|_| format!("{path}: not a usable TrueType font"));
            }
        }
        Err("no TrueType font found: install fonts-dejavu-core or set REACTOR_BENCH_FONT".into())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// Draws `series` into `path` (PNG, 800×480), x on a log scale.
pub fn draw(series: &Series, path: &Path) -> anyhow::Result<()> {
    register_font()?;
    let points = series.lines.iter().flat_map(|l| l.points.iter());
    let (mut x_max, mut y_max, mut x_min) = (1.0f64, 0.0f64, f64::MAX);
    for &(x, y) in points {
        x_max = x_max.max(x);
        x_min = x_min.min(x);
        y_max = y_max.max(y);
    }
    let x_min = if x_min == f64::MAX { 1.0 } else { x_min };
    let root = BitMapBackend::new(path, (800, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&series.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(
            ((x_min * 0.8)..(x_max * 1.25)).log_scale(),
            0.0..(y_max * 1.15).max(1.0),
        )?;
    chart
        .configure_mesh()
        .x_desc(series.x_label.as_str())
        .y_desc(series.y_label.as_str())
        .label_style(("sans-serif", 14))
        .draw()?;
    for (line, color) in series.lines.iter().zip(COLORS.iter().cycle()) {
        let style = ShapeStyle::from(color).stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.points.iter().copied(), style))?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        chart.draw_series(
            line.points
                .iter()
                .map(|&p| Circle::new(p, 4, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
