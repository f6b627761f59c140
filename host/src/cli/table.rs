//! Plain-text tables with aligned columns, as `get` and `components` print them.

/// Renders `header` and `rows` with columns padded to their widest cell.
pub fn render(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut all: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    all.extend(rows);
    let columns = header.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            all.iter()
                .map(|r| r.get(c).map_or(0, String::len))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in all {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
