//! Samples read from the Prometheus text of `/metrics`.

/// The value of a Prometheus sample whose line starts with `series` (name and labels).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(series) && line[series.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}
