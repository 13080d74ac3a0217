//! [`BinWriter`] and [`BinReader`]: the field-by-field engine of the binary form, the mirror of
//! [`KeyWriter`](crate::KeyWriter) and [`KeyReader`](crate::KeyReader) for keys of bytes.
//!
//! Every binary field form is self-delimiting (fixed-size numbers; strings and bytes escaped and
//! terminated), so the fields follow one another with no delimiter. Each kind's binary form is
//! written and read by methods in the kind's own file under `kinds/`; this file holds what every
//! field shares: the optional markers, the bucket seed, positions and errors.

use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::prefix::{BucketSeed, BucketValue};

/// The byte before `None` of an optional field, ascending (descending: its complement, `0xff`,
/// so that `None` sorts last, as in the text form).
pub(crate) const NONE_MARK: u8 = 0x00;
/// The byte before `Some` of an optional field, ascending (descending: `0xfe`).
pub(crate) const SOME_MARK: u8 = 0x01;

/// Writes the fields of one binary key, in order, into a `Vec<u8>`.
///
/// Obtained from [`Layout::encode_bytes_into`](crate::Layout::encode_bytes_into) and its
/// siblings; each field is one call of a kind's method.
#[derive(Debug)]
pub struct BinWriter<'a> {
    pub(crate) out: &'a mut Vec<u8>,
    natural_start: usize,
    pub(crate) seed: BucketSeed,
}

impl<'a> BinWriter<'a> {
    #[inline]
    pub(crate) fn new(out: &'a mut Vec<u8>, natural_start: usize) -> Self {
        Self {
            out,
            natural_start,
            seed: BucketSeed::default(),
        }
    }

    /// The write position in the key (for [`BinWriter::bucket_span`]).
    #[inline]
    #[must_use]
    pub fn position(&self) -> usize {
        self.out.len()
    }

    /// Declares the bytes from `start` to here as a field a bucket hash covers.
    #[inline]
    pub fn bucket_span(&mut self, start: usize) {
        let end = self.out.len();
        self.seed
            .add_key_span_gap(self.natural_start, start, end, 0);
    }

    /// Declares the integer a modulo bucket takes.
    #[inline]
    pub fn bucket_value(&mut self, value: impl Into<BucketValue>) {
        self.seed.value = Some(value.into());
    }

    /// Writes `None` of an optional field.
    #[inline]
    pub fn none(&mut self, spec: &FieldSpec, field: &str) {
        let _ = field;
        self.out.push(mark(NONE_MARK, spec));
    }

    /// Writes the marker before `Some` of an optional field.
    #[inline]
    pub fn some(&mut self, spec: &FieldSpec, field: &str) {
        let _ = field;
        self.out.push(mark(SOME_MARK, spec));
    }

    /// Appends the `n`-byte binary form of the signed integer `v` ([`signed_bytes`]), inverted
    /// when `desc`: what signed integers, timestamps and decimals write.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn put_signed(&mut self, v: i128, n: usize, desc: bool) {
        self.put(&signed_bytes(v, n)[16 - n..], desc);
    }

    /// Appends `bytes`, each inverted when `desc`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn put(&mut self, bytes: &[u8], desc: bool) {
        if desc {
            self.out.extend(bytes.iter().map(|b| !b));
        } else {
            self.out.extend_from_slice(bytes);
        }
    }
}

/// An optional field's marker in the field's order.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
const fn mark(byte: u8, spec: &FieldSpec) -> u8 {
    if spec.is_descending() { !byte } else { byte }
}

/// Reads the fields of one binary key, in order, checking every byte: the mirror of
/// [`BinWriter`].
#[derive(Debug)]
pub struct BinReader<'a> {
    pub(crate) key: &'a [u8],
    pub(crate) pos: usize,
    natural_start: usize,
    pub(crate) seed: BucketSeed,
}

impl<'a> BinReader<'a> {
    #[inline]
    pub(crate) fn new(key: &'a [u8], natural_start: usize) -> Self {
        Self {
            key,
            pos: natural_start,
            natural_start,
            seed: BucketSeed::default(),
        }
    }

    /// A decoding error at byte `at` of the key.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn fault(field: &str, at: usize, reason: impl Into<String>) -> Error {
        Error::malformed(Some(field), at, reason)
    }

    /// The read position in the key.
    #[inline]
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Declares the bytes from `start` to here as a field a bucket hash covers.
    #[inline]
    pub fn bucket_span(&mut self, start: usize) {
        self.seed
            .add_key_span_gap(self.natural_start, start, self.pos, 0);
    }

    /// Declares the integer a modulo bucket takes.
    #[inline]
    pub fn bucket_value(&mut self, value: impl Into<BucketValue>) {
        self.seed.value = Some(value.into());
    }

    /// Whether the whole key was read.
    #[inline]
    #[must_use]
    pub fn at_end(&self) -> bool {
        self.pos == self.key.len()
    }

    /// Refuses bytes after the last field.
    #[inline]
    pub(crate) fn finish(&self) -> Result<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.trailing())
        }
    }

    /// The error of bytes after the last field.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn trailing(&self) -> Error {
        Error::malformed(
            None,
            self.pos,
            format!(
                "{} bytes after the last field, which no key of this layout has",
                self.key.len() - self.pos
            ),
        )
    }

    /// Takes exactly `n` bytes.
    #[inline]
    pub(crate) fn take(&mut self, field: &str, n: usize) -> Result<&'a [u8]> {
        match self.key.get(self.pos..self.pos + n) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(Self::fault(
                field,
                self.pos,
                format!(
                    "expected {n} bytes, found {}",
                    self.key.len().saturating_sub(self.pos)
                ),
            )),
        }
    }

    /// Takes the `n`-byte binary form of a signed integer ([`BinWriter::put_signed`]), inverted
    /// when `desc`, and answers the integer.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn take_signed(&mut self, field: &str, n: usize, desc: bool) -> Result<i128> {
        let mut bytes = [0u8; 16];
        bytes[..n].copy_from_slice(self.take(field, n)?);
        if desc {
            for b in &mut bytes[..n] {
                *b = !*b;
            }
        }
        Ok(signed_of(&bytes[..n]))
    }

    /// Takes `N` bytes as an array, each inverted when `desc`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn take_array<const N: usize>(
        &mut self,
        field: &str,
        desc: bool,
    ) -> Result<[u8; N]> {
        let bytes = self.take(field, N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        if desc {
            for b in &mut out {
                *b = !*b;
            }
        }
        Ok(out)
    }

    /// Whether an optional field holds `None` (consuming its marker when it does).
    #[inline]
    pub fn none(&mut self, spec: &FieldSpec, field: &str) -> bool {
        let _ = field;
        if self.key.get(self.pos) == Some(&mark(NONE_MARK, spec)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Reads the marker before `Some` of an optional field.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when the byte is neither marker.
    #[inline]
    pub fn some(&mut self, spec: &FieldSpec, field: &str) -> Result<()> {
        match self.key.get(self.pos) {
            Some(&b) if b == mark(SOME_MARK, spec) => {
                self.pos += 1;
                Ok(())
            }
            found => Err(Self::fault(
                field,
                self.pos,
                format!(
                    "expected the marker of an optional field ({:#04x} for None, {:#04x} for Some), found {}",
                    mark(NONE_MARK, spec),
                    mark(SOME_MARK, spec),
                    found.map_or_else(|| "the end of the key".to_owned(), |b| format!("{b:#04x}"))
                ),
            )),
        }
    }
}

/// Whether `v` has at most `width` decimal digits: the values an unsigned field of that width
/// takes, in the binary form as in the text form.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn fits_unsigned(v: u128, width: u8) -> bool {
    match 10u128.checked_pow(u32::from(width)) {
        Some(limit) => v < limit,
        None => true,
    }
}

/// Whether `v` is written by a signed field of `width` characters (a sign and `width - 1`
/// digits: `-10^(width-1)` to `10^(width-1) - 1`), in the binary form as in the text form.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn fits_signed(v: i128, width: u8) -> bool {
    match 10i128.checked_pow(u32::from(width.saturating_sub(1))) {
        Some(limit) => v >= -limit && v < limit,
        None => true,
    }
}

/// The error of a value its field's width cannot hold, as the text form's.
#[cold]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn too_wide(field: &str, value: impl ToString, width: u8) -> Error {
    Error::ValueTooWide {
        field: field.to_owned(),
        value: value.to_string(),
        width,
    }
}

/// The binary form of a signed integer of `n` bytes: its two's complement with the sign bit
/// flipped, big-endian, so that unsigned byte order is signed order.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn signed_bytes(v: i128, n: usize) -> [u8; 16] {
    let bits = (v as u128) ^ (1u128 << (8 * n - 1));
    bits.to_be_bytes()
}

/// The signed integer of `n` bytes (the last `n` of `b`) written by [`signed_bytes`].
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn signed_of(b: &[u8]) -> i128 {
    let n = b.len();
    let mut v: u128 = 0;
    for &x in b {
        v = v << 8 | u128::from(x);
    }
    let v = v ^ (1u128 << (8 * n - 1));
    // Sign-extend from 8n bits.
    let shift = 128 - 8 * n as u32;
    ((v << shift) as i128) >> shift
}
