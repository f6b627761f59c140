//! A component's declared permissions, kept in a `reactor-permissions` custom section.
//!
//! The section (JSON) is at the component's top level: read before it loads, written by
//! `component annotate`.

use reactor_core::component::Permissions;
use wasm_encoder::{CustomSection, Encode};
use wasmparser::{Encoding, Parser, Payload};

/// The name of the custom section that holds the declaration.
pub const SECTION: &str = "reactor-permissions";

/// Why a declaration could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DeclarationError {
    #[error("not a WebAssembly component: {0}")]
    Parse(#[from] wasmparser::BinaryReaderError),
    #[error("a core module, not a component: only a component carries a declaration")]
    CoreModule,
    #[error("the {SECTION} section appears twice")]
    Twice,
    #[error("the {SECTION} section is not a valid declaration: {0}")]
    Invalid(#[source] serde_json::Error),
    #[error("the {SECTION} section's header is not where its length says")]
    Header,
}

/// A top-level custom section named [`SECTION`]: its payload and where the whole section
/// (id and length included) lies.
struct Found<'a> {
    data: &'a [u8],
    section: std::ops::Range<usize>,
}

/// Every top-level [`SECTION`] of `bytes`.
fn find(bytes: &[u8]) -> Result<Vec<Found<'_>>, DeclarationError> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::Version { encoding, .. } => {
                if depth == 0 && encoding == Encoding::Module {
                    return Err(DeclarationError::CoreModule);
                }
                depth += 1;
            }
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(custom) if depth == 1 && custom.name() == SECTION => {
                let body = custom.range();
                let header = 1 + leb128_len(body.len());
                let start = body
                    .start
                    .checked_sub(header)
                    .ok_or(DeclarationError::Header)?;
                if bytes.get(start) != Some(&0) {
                    return Err(DeclarationError::Header);
                }
                found.push(Found {
                    data: custom.data(),
                    section: start..body.end,
                });
            }
            _ => {}
        }
    }
    Ok(found)
}

/// How many bytes the unsigned LEB128 encoding of `n` takes.
fn leb128_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

/// The permissions `bytes` declare; `None` for an undeclared component.
pub fn read(bytes: &[u8]) -> Result<Option<Permissions>, DeclarationError> {
    let found = find(bytes)?;
    match found.as_slice() {
        [] => Ok(None),
        [one] => serde_json::from_slice(one.data)
            .map(Some)
            .map_err(DeclarationError::Invalid),
        _ => Err(DeclarationError::Twice),
    }
}

/// `bytes` declaring `permissions`: any declaration it had is replaced, the rest kept as it
/// was, and the new section appended (so a signature made afterwards covers it).
pub fn annotate(bytes: &[u8], permissions: &Permissions) -> Result<Vec<u8>, DeclarationError> {
    let found = find(bytes)?;
    let mut out = Vec::with_capacity(bytes.len() + 256);
    let mut from = 0;
    for old in &found {
        out.extend_from_slice(&bytes[from..old.section.start]);
        from = old.section.end;
    }
    out.extend_from_slice(&bytes[from..]);
    let data = serde_json::to_vec(permissions).map_err(DeclarationError::Invalid)?;
    out.push(0);
    CustomSection {
        name: SECTION.into(),
        data: data.into(),
    }
    .encode(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component() -> Vec<u8> {
        wat::parse_str(
            r#"(component
                (core module (@custom "reactor-permissions" "not this one"))
            )"#,
        )
        .expect("wat")
    }

    fn declaring(kind: &str) -> Permissions {
        Permissions {
            writes: [kind.to_owned()].into(),
            ..Permissions::default()
        }
    }

    #[test]
    fn a_declaration_reads_back_and_a_second_replaces_the_first() {
        let bare = component();
        assert_eq!(
            read(&bare).expect("parses"),
            None,
            "a nested module's is not it"
        );
        let once = annotate(&bare, &declaring("Note")).expect("annotate");
        assert_eq!(read(&once).expect("parses"), Some(declaring("Note")));
        let twice = annotate(&once, &declaring("Secret")).expect("annotate again");
        assert_eq!(read(&twice).expect("parses"), Some(declaring("Secret")));
        assert_eq!(
            twice.len(),
            once.len() + 2,
            "Secret is two bytes longer than Note"
        );
        let back = annotate(&twice, &declaring("Note")).expect("and back");
        assert_eq!(back, once);
    }

    #[test]
    fn bad_input_is_refused_with_the_reason() {
        let module = wat::parse_str("(module)").expect("wat");
        assert!(matches!(
            annotate(&module, &Permissions::default()),
            Err(DeclarationError::CoreModule)
        ));
        assert!(matches!(
            read(b"\0asm garbage"),
            Err(DeclarationError::Parse(_))
        ));
        let mut bad = component();
        bad.push(0);
        CustomSection {
            name: SECTION.into(),
            data: br#"{"raeds": ["A"]}"#.as_slice().into(),
        }
        .encode(&mut bad);
        let err = read(&bad).expect_err("a typo").to_string();
        assert!(err.contains("raeds"), "{err}");
    }
}
