//! Plain-text tables with aligned columns, as `get` and `components` print them.

/// Renders `header` and `rows` with columns padded to their widest cell; a cell of several
/// lines (a wasmtime error with its causes) shows its first, marked `…` (`-o json` has all).
pub fn render(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut all: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    all.extend(
        rows.into_iter()
            .map(|row| row.iter().map(|cell| one_line(cell)).collect()),
    );
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

/// The first non-empty line of `cell`, with `…` when more follows.
fn one_line(cell: &str) -> String {
    let mut lines = cell
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    match (lines.next(), lines.next()) {
        (Some(first), None) => first.to_owned(),
        (Some(first), Some(_)) => format!("{first} …"),
        (None, _) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_of_several_lines_keeps_the_table_aligned() {
        let table = render(
            &["NAME", "ERROR"],
            [
                vec![
                    "a".into(),
                    "link failed\n\nCaused by:\n  0: no import".into(),
                ],
                vec!["b".into(), "-".into()],
            ],
        );
        assert_eq!(table, "NAME  ERROR\na     link failed …\nb     -\n");
    }
}
