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
const FORMAT: u8 = 1;
pub const HEADER: usize = 5;

/// An empty record buffer with room for the frame; write the body after it, then [`seal`].
pub fn buffer(capacity: usize) -> Vec<u8> {
    let mut record = Vec::with_capacity(HEADER + capacity);
    record.resize(HEADER, 0);
    record
}

/// Fills in the frame of a record made with [`buffer`], for the record stored under `key`.
pub fn seal(key: &[u8], record: &mut [u8]) {
    let sum = checksum(key, &record[HEADER..]);
    record[0] = FORMAT;
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
    let corrupt = |reason: String| StoreError::Corrupt {
        record: name(),
        reason,
    };
    if record.len() < HEADER || record[0] != FORMAT {
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
    let computed = checksum(key, body);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        )));
    }
    Ok(body)
}

fn checksum(key: &[u8], body: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
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
}
