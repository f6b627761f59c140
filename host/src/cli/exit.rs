//! An exit status other than the usual 1, for commands whose status carries an answer
//! (`diff`: 1 when there are differences, 2 on an error).

/// Ends the program with `code`, printing `message` as an error line if there is one.
#[derive(Debug, thiserror::Error)]
#[error("{}", message.as_deref().unwrap_or(""))]
pub struct Exit {
    pub code: i32,
    pub message: Option<String>,
}
