//! The frame of every stored record: a format byte and a CRC-32 of the record's key and body,
//! checked on every read, so a damaged record is an error naming it, never a different answer.
//!
//! redb checksums its B-tree pages (xxh3), but verifies them only in
//! `Database::check_integrity` and when it recovers from a crash; an ordinary read of a page
//! whose bytes changed on disk returns the changed bytes. The record checksum closes that gap on
//! the read path, and covers the key too, so a record found under another key (a flipped bit in
//! a key) is refused as well.

use crate::StoreError;

/// The first byte of a framed record. Records written before the frame existed start with the
/// `{` of their JSON; they are framed once when the store is opened (see [`unframed`]).
pub const FORMAT: u8 = 1;
/// The first byte of a log entry that holds no JSON but names the object whose record holds
/// it (see `tables::LogEntry`). Its checksum covers this byte too.
pub const REFERENCE: u8 = 2;
pub const HEADER: usize = 5;

/// An empty record buffer with room for the frame; write the body after it, then [`seal`].
pub fn buffer(capacity: usize) -> Vec<u8> {
    let mut record = Vec::with_capacity(HEADER + capacity);
    record.resize(HEADER, 0);
    record
}

/// Fills in the frame of a record made with [`buffer`], for the record stored under `key`.
pub fn seal(key: &[u8], record: &mut [u8]) {
    seal_as(FORMAT, key, record);
}

/// [`seal`] for a record of `format` ([`REFERENCE`] for a log entry that names its object).
pub fn seal_as(format: u8, key: &[u8], record: &mut [u8]) {
    let sum = checksum(format, key, &record[HEADER..]);
    record[0] = format;
    record[1..HEADER].copy_from_slice(&sum.to_le_bytes());
}

/// A framed copy of `body`.
pub fn framed(key: &[u8], body: &[u8]) -> Vec<u8> {
    let mut record = buffer(body.len());
    record.extend_from_slice(body);
    seal(key, &mut record);
    record
}

/// Whether `record` predates the frame (plain JSON).
pub fn unframed(record: &[u8]) -> bool {
    record.first() == Some(&b'{')
}

/// The body of the record stored under `key`, after checking its frame; `name` is how the
/// error names the record.
pub fn open<'a>(
    name: &dyn Fn() -> String,
    key: &[u8],
    record: &'a [u8],
) -> Result<&'a [u8], StoreError> {
    open_as(&[FORMAT], name, key, record).map(|(_, body)| body)
}

/// [`open`] for a record of one of `formats`: its format and its body.
pub fn open_as<'a>(
    formats: &[u8],
    name: &dyn Fn() -> String,
    key: &[u8],
    record: &'a [u8],
) -> Result<(u8, &'a [u8]), StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        record: name(),
        reason,
    };
    if record.len() < HEADER || !formats.contains(&record[0]) {
        return Err(corrupt(format!(
            "no valid frame (format byte {:?}, {} bytes)",
            record.first(),
            record.len()
        )));
    }
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&record[1..HEADER]);
    let stored = u32::from_le_bytes(stored);
    let body = &record[HEADER..];
    let computed = checksum(record[0], key, body);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        )));
    }
    Ok((record[0], body))
}

fn checksum(format: u8, key: &[u8], body: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    // Records of the first format were summed without it; the others are summed with it.
    if format != FORMAT {
        hasher.update(&[format]);
    }
    hasher.update(&(key.len() as u64).to_le_bytes());
    hasher.update(key);
    hasher.update(body);
    hasher.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> String {
        "A/a".into()
    }

    #[test]
    fn a_sealed_record_opens_and_any_flipped_bit_is_refused() {
        let record = framed(b"A/a", br#"{"kind":"A","name":"a"}"#);
        assert_eq!(
            open(&name, b"A/a", &record).expect("opens"),
            br#"{"kind":"A","name":"a"}"#
        );
        for bit in 0..record.len() * 8 {
            let mut flipped = record.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let err = open(&name, b"A/a", &flipped).expect_err("flipped bit");
            assert!(err.to_string().starts_with("corrupt record A/a: "), "{err}");
        }
        assert!(open(&name, b"A/b", &record).is_err(), "another key");
        assert!(open(&name, b"A/a", b"{}").is_err(), "no frame");
        assert!(open(&name, b"A/a", b"").is_err(), "empty");
    }

    #[test]
    fn a_reference_opens_only_where_one_is_expected_and_its_format_byte_is_summed() {
        let mut record = buffer(8);
        record.extend_from_slice(b"cA/a");
        seal_as(REFERENCE, b"7", &mut record);
        assert_eq!(
            open_as(&[FORMAT, REFERENCE], &name, b"7", &record).expect("opens"),
            (REFERENCE, &b"cA/a"[..])
        );
        assert!(open(&name, b"7", &record).is_err(), "not an object record");
        let mut as_first = record.clone();
        as_first[0] = FORMAT;
        assert!(
            open(&name, b"7", &as_first).is_err(),
            "the same bytes under the first format do not sum"
        );
    }
}
