//! A write refused at admission (a reactor's `validate`, the Kind's schema), answered as the
//! API's error.

use reactor_controller::AdmissionError;
use reactor_core::wire::ErrorCode;
use reactor_http::{ApiError, code_of};

/// The answer to a write `error` refused.
pub(crate) fn refused(error: AdmissionError) -> ApiError {
    let code = match &error {
        AdmissionError::Refused { .. }
        | AdmissionError::Invalid { .. }
        | AdmissionError::Unregistered { .. }
        | AdmissionError::Kind { .. } => ErrorCode::Invalid,
        AdmissionError::Store { source, .. } => code_of(source),
    };
    ApiError::new(code, error.to_string())
}
