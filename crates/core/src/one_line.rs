//! An error and its causes as one line, each cause once.

/// `error` and its sources in one line, each cause once (tonic's transport errors repeat
/// themselves: "transport error: transport error: …"; reqwest puts "connection refused" in a
/// source).
pub fn one_line(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.contains(&text) {
            line = format!("{line}: {text}");
        }
        source = cause.source();
    }
    line.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer: inner")]
    struct Repeats(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("pull failed")]
    struct Wraps(#[source] std::io::Error);

    #[test]
    fn causes_join_once_on_one_line() {
        let refused = || std::io::Error::other("connection\nrefused");
        assert_eq!(
            one_line(&Wraps(refused())),
            "pull failed: connection refused"
        );
        let inner = std::io::Error::other("inner");
        assert_eq!(one_line(&Repeats(inner)), "outer: inner");
    }
}
