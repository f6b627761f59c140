//! A failed callback's message as the host shows it: the first line in the status, the rest
//! (a guest's traceback) in the event and the component's log, each bounded.
//!
//! A reactor's message is the guest's: any size, any lines. The Python and JavaScript SDKs
//! send an unexpected exception as one line (`KeyError: 'plan'`), a newline, and its
//! traceback; a component of any WIT version that sends one line is shown as before.

/// Longest first line kept, in bytes; a longer one is cut, marked `…`.
pub const LINE_MAX: usize = 1024;
/// Longest detail (the lines after the first) kept, in bytes; a longer one loses its top,
/// since a traceback's last lines say where it failed.
pub const DETAIL_MAX: usize = 8 * 1024;

/// A failure's message split for showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureText {
    /// The first non-empty line: what `lastError` shows.
    pub line: String,
    /// What followed it (a traceback), if anything.
    pub detail: Option<String>,
}

impl FailureText {
    /// Splits `message` into its first non-empty line and the rest, each within its bound.
    pub fn new(message: &str) -> Self {
        let message = message.trim_start_matches(|c: char| c.is_whitespace());
        let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
        let rest = rest.trim_end();
        Self {
            line: cut_end(first.trim_end(), LINE_MAX),
            detail: (!rest.trim().is_empty()).then(|| cut_top(rest, DETAIL_MAX)),
        }
    }

    /// The line with its detail below it, as the event carries it.
    pub fn whole(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{}\n{detail}", self.line),
            None => self.line.clone(),
        }
    }

    /// Writes the detail, if any, to `component`'s log at error level, headed by the
    /// object and the line: `reactor-host logs COMPONENT` shows the whole traceback.
    pub fn log(&self, component: &str, key: &reactor_core::object::ObjectKey) {
        self.log_headed(component, &format!("{key} failed"));
    }

    /// Writes the detail, if any, to `component`'s log at error level, headed by `head` and
    /// the line.
    pub fn log_headed(&self, component: &str, head: &str) {
        let Some(detail) = &self.detail else {
            return;
        };
        let message = format!("[host] {head}: {}\n{detail}", self.line);
        reactor_runtime::log_for_component(component, reactor_runtime::LogLevel::Error, message);
    }
}

/// `text` within `max` bytes: its start, marked `…` when cut.
fn cut_end(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…", &text[..text.floor_char_boundary(max)])
}

/// `text` within about `max` bytes: its end, after a line saying how much was cut.
fn cut_top(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let from = text.ceil_char_boundary(text.len() - max);
    // From the start of a line, where there is one in reach.
    let from = match text[from..].find('\n') {
        Some(at) if at < max / 2 => from + at + 1,
        _ => from,
    };
    format!("[{from} bytes cut by the host]\n{}", &text[from..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_the_line_and_the_rest_the_detail() {
        let text = FailureText::new(
            "KeyError: 'plan'\r\nTraceback (most recent call last):\n  File \"app.py\", line 7\n",
        );
        assert_eq!(text.line, "KeyError: 'plan'");
        assert_eq!(
            text.detail.as_deref(),
            Some("Traceback (most recent call last):\n  File \"app.py\", line 7")
        );
        assert_eq!(
            text.whole(),
            "KeyError: 'plan'\nTraceback (most recent call last):\n  File \"app.py\", line 7"
        );
        let one = FailureText::new("asked to fail");
        assert_eq!((one.line.as_str(), one.detail), ("asked to fail", None));
        let blank = FailureText::new("\n\n  boom  \n \n");
        assert_eq!((blank.line.as_str(), blank.detail), ("boom", None));
        assert_eq!(FailureText::new("").whole(), "");
    }

    #[test]
    fn a_long_line_and_a_long_detail_are_bounded() {
        let long = "é".repeat(LINE_MAX);
        let text = FailureText::new(&format!("{long}\n{}", "  frame\n".repeat(5000)));
        assert!(
            text.line.len() <= LINE_MAX + '…'.len_utf8(),
            "{}",
            text.line.len()
        );
        assert!(text.line.ends_with('…'));
        let detail = text.detail.expect("a detail");
        assert!(detail.len() <= DETAIL_MAX + 40, "{}", detail.len());
        assert!(detail.starts_with("[") && detail.contains("bytes cut by the host]\n  frame\n"));
        assert!(detail.ends_with("  frame"));
        // One line with no newline in reach is cut where it must be, on a char boundary.
        let wide = FailureText::new(&format!("x\n{}", "ü".repeat(DETAIL_MAX)));
        assert!(wide.detail.expect("a detail").ends_with('ü'));
    }
}
