//! Order-preserving, checked primary keys for range-partitioned stores (Tablestore, HBase,
//! Bigtable, TiKV, RocksDB, ...).
//!
//! Stores sort keys bytewise. Splicing columns into one key by hand breaks that order (`167`
//! sorts before `54`, `a1001` before `a100`), collides, or runs one partition hot. This crate
//! makes the key layout a declared thing whose order, round trip and uniqueness are guaranteed:
//!
//! ```
//! use pk_codec::{DecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct CardKey {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     seller_id: String,
//!     #[pk(width = 6)]
//!     card_id: u64,
//! }
//!
//! let mut keys: Vec<String> = [(167, "a101", 283408), (54, "a1001", 6777), (16, "a100", 66661), (54, "a100", 6777)]
//!     .into_iter()
//!     .map(|(d, s, c)| CardKey { device_id: d, seller_id: s.into(), card_id: c }.encode())
//!     .collect::<Result<_, _>>()?;
//! keys.sort();
//! assert_eq!(keys, ["000016,a100,066661", "000054,a100,006777", "000054,a1001,006777", "000167,a101,283408"]);
//! assert_eq!(CardKey::decode(&keys[1])?.seller_id, "a100");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! Layouts known only at run time use [`Layout`], built in code, parsed from a text spec
//! (`"device_id: u32 width=6; seller_id: str"`) or loaded with serde; both ways write the same
//! bytes, through [`KeyShape`].
//!
//! # The key format
//!
//! A key is an optional prefix, then the fields joined by the delimiter (default `,`). Each
//! field is written in its kind's form: the table on [`Kind`] lists them all (integers
//! zero-padded to a width, signed and descending numbers in complement forms, strings plain,
//! escaped or descending, bytes in hex, floats in IEEE 754 total order, UUIDs in byte order,
//! timestamps as UTC text, `Option` with a marker), and each kind's own module holds its form.
//!
//! Prefixes: a hash prefix is the first N lower-case hex characters of MD5, xxHash32, xxHash64 or
//! XXH3 over the natural key (the key without prefix), or over its leading fields only
//! ([`HashOver::LeadingFields`], so that range reads work once those fields are fixed); a bucket prefix is `value % count` of an
//! integer field or `xxh3_64 % count` of some fields, zero-padded to the width of `count - 1`.
//! Either may be followed by the delimiter.
//!
//! The delimiter must be ASCII below `0x7f`, not a letter or digit, and sort below every byte
//! that a variable-length field can hold (`=` before `Some` of an optional string or byte string,
//! `-` for signed optional numbers and escaped strings, `0` for hex, `a` for descending forms);
//! plain strings are checked value by value. Fixed-width fields never compare their bytes against
//! the delimiter, so they do not constrain it.
//!
//! Every such rule is written once, in [`rules`]: runtime [`Layout`]s check them when built and
//! `#[derive(PartitionKey)]` checks the same `const fn`s at compile time. A layout that could not
//! keep the guarantees is refused with [`Error::BrokenRule`], which names the rule.
//!
//! # Guarantees
//!
//! For every layout the rules accept, without a hash or bucket prefix: keys compare bytewise as
//! the values compare field by field (descending fields reversed); every key decodes back to its
//! values; distinct values give distinct keys (with prefixes too); exactly the keys that encode
//! decode (the length limit included). Decoding any string returns a value or an error with a
//! byte position, never panics. These are checked by property tests over every accepted
//! delimiter, field form, bucket count and length limit.
//!
//! # Format stability
//!
//! The format above is frozen: a key written by this version decodes to the same values in every
//! later version, and the same values encode to the same key. Golden files in the repository's
//! `tests/golden/` pin every field form and prefix; changing them is a breaking format change,
//! made only deliberately, with a new major version and a note in the changelog.
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

#[cfg(feature = "derive")]
pub mod _derive;
mod bin_io;
mod error;
mod field;
mod field_spec;
mod hash;
mod io;
mod key;
mod key_range;
mod kinds;
mod layout;
mod num;
mod prefix;
mod range;
pub mod rules;
pub mod schedule;
mod scratch;
mod shape;
mod text;
pub mod timeline;
mod timestamp;

/// An in-memory, range-partitioned reference model of the store, to see whether a key design runs hot.
#[cfg(feature = "table")]
pub mod table;

#[cfg(feature = "store")]
pub mod store;

pub use bin_io::{BinReader, BinWriter};
pub use error::{Error, Result};
pub use field::{DecodeField, KeyField};
pub use field_spec::FieldSpec;
pub use hash::HashAlg;
pub use io::{KeyReader, KeyWriter};
pub use key::{BorrowDecodeKey, BorrowDecodePart, DecodeKey, DecodePart, KeyPart, PartitionKey};
pub use key_range::{ByteRange, KeyBounds, KeyRange};
pub use kinds::*;
pub use layout::{FieldDef, Layout, LayoutBuilder};
pub use prefix::{
    BucketBy, BucketValue, HashOver, MAX_SPLIT_POINTS, MergeSorted, Prefix, Separator,
    merge_sorted_by,
};
pub use range::{BinRangeBuilder, RangeBuilder};
pub use rules::{MAX_BUCKETS, MAX_WIDTH, Rule};
pub use shape::{DEFAULT_DELIMITER, DEFAULT_MAX_LEN, KeyShape};
pub use timestamp::Precision;

/// `#[derive(PartitionKey)]`: see [`_derive`] for every `#[pk(...)]` attribute, with examples.
#[cfg(feature = "derive")]
pub use pk_derive::PartitionKey;

/// Items the derive's generated code uses. Not a public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    use crate::rules::enforce;
    use crate::{FieldSpec, HashAlg, KeyShape};

    /// [`FieldSpec::delimiter_floor`], as a byte (`u8::MAX` for none), for the derive's
    /// compile-time delimiter checks of nested keys.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn delimiter_floor(spec: &FieldSpec) -> u8 {
        match spec.delimiter_floor() {
            Some(floor) => floor,
            None => u8::MAX,
        }
    }

    /// The delimiter byte of `#[pk(delimiter = c)]`, or a compile error naming the rule it breaks.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn delimiter(c: char) -> u8 {
        enforce(crate::rules::check_delimiter(c))
    }

    /// The precision of `#[pk(precision = name)]`, or a compile error listing the names.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn precision(name: &str) -> crate::Precision {
        match crate::Precision::from_name(name) {
            Some(p) => p,
            None => panic!("unknown precision in #[pk(precision = ...)]: expected s, ms, us or ns"),
        }
    }

    /// The algorithm of `#[pk(hash(name, ...))]`, or a compile error listing the names.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn hash_alg(name: &str) -> HashAlg {
        match HashAlg::from_name(name) {
            Some(alg) => alg,
            None => panic!(
                "unknown hash algorithm in #[pk(hash(...))]: expected md5, xxh32, xxh64 or xxh3"
            ),
        }
    }

    /// The prefix of a derived key, checked against the rulebook (a compile error if it breaks a
    /// rule).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn prefix(prefix: crate::Prefix) -> crate::Prefix {
        enforce(match prefix.check() {
            Ok(()) => Ok(prefix),
            Err(rule) => Err(rule),
        })
    }

    /// The shape of a derived key, checked against the rulebook (a compile error if it breaks a
    /// rule).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn shape(shape: KeyShape) -> KeyShape {
        enforce(match shape.check() {
            Ok(()) => Ok(shape),
            Err(rule) => Err(rule),
        })
    }

    /// A derived key's field, checked against the rulebook in `shape` (a compile error if it
    /// breaks a rule).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn field(shape: &KeyShape, spec: FieldSpec) {
        // The delimiter is checked apart, on the attribute: `floor_broken`.
        let _ = shape;
        enforce::<()>(spec.check_own());
    }

    /// The delimiter-floor rule's message when `delimiter` cannot order a field (or a spliced
    /// key) whose lowest byte is `floor` ([`part_floor`], [`delimiter_floor`]); `None` when it
    /// can. The derive panics with it in its `SHAPE` constant, spanned on the `delimiter`
    /// attribute, so the compile error points there and names the case.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn floor_broken(delimiter: u8, floor: u8) -> Option<&'static str> {
        match crate::rules::check_delimiter_floor(delimiter, Some(floor)) {
            Ok(()) => None,
            Err(rule) => Some(rule.summary()),
        }
    }

    /// The field a derived key's modulo bucket reads, checked (a compile error if it cannot).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn modulo_field(spec: FieldSpec) {
        enforce::<()>(crate::rules::check_modulo_field(&spec));
    }

    /// The hashed-field flags of a derived key's hash prefix over chosen fields, checked (a
    /// compile error unless they are the leading fields).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn hash_leading(hashed: &[bool]) {
        enforce::<()>(crate::rules::check_hash_leading(hashed));
    }

    /// The hashed-field flags of a derived key's bucket hash, checked (a compile error if they
    /// form too many runs).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn hash_runs(hashed: &[bool]) {
        enforce::<()>(crate::rules::check_hash_runs(hashed));
    }

    /// A derived key's field name, checked (a compile error if a layout could not name it).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn field_name(name: &str) {
        enforce::<()>(crate::rules::check_field_name(name));
    }

    /// Declares the bucket value of a modulo bucket's field while writing.
    #[inline]
    pub fn bucket_value<T: crate::KeyPart + ?Sized>(w: &mut crate::KeyWriter<'_>, value: &T) {
        if let Some(v) = value.part_bucket_value() {
            w.bucket_value(v);
        }
    }

    /// Declares the bounds of a derived range constructor whose bounded field is the modulo
    /// bucket's ([`RangeBuilder::bucket_bounds`](crate::RangeBuilder::bucket_bounds)): each
    /// bound's value as the bucket reads it.
    #[inline]
    pub fn bucket_bounds<T: crate::KeyPart + ?Sized>(
        b: &mut crate::RangeBuilder<'_>,
        spec: &FieldSpec,
        lower: core::ops::Bound<&T>,
        upper: core::ops::Bound<&T>,
    ) {
        let value = |v: &T| v.part_bucket_value();
        b.bucket_bounds(
            spec,
            crate::prefix::bucket_bound(lower, value),
            crate::prefix::bucket_bound(upper, value),
        );
    }

    /// [`bucket_bounds`] for a binary key's range constructors
    /// ([`BinRangeBuilder::bucket_bounds`](crate::BinRangeBuilder::bucket_bounds)).
    #[inline]
    pub fn bin_bucket_bounds<T: crate::KeyPart + ?Sized>(
        b: &mut crate::BinRangeBuilder<'_>,
        spec: &FieldSpec,
        lower: core::ops::Bound<&T>,
        upper: core::ops::Bound<&T>,
    ) {
        let value = |v: &T| v.part_bucket_value();
        b.bucket_bounds(
            spec,
            crate::prefix::bucket_bound(lower, value),
            crate::prefix::bucket_bound(upper, value),
        );
    }

    /// [`KeyShape::encode_with`] for a derived key, whose shape was checked when its constant
    /// was evaluated (a compile error if it breaks a rule): no check at run time.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::encode_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode(
        shape: &KeyShape,
        out: &mut String,
        body: impl FnOnce(&mut crate::KeyWriter<'_>) -> crate::Result<()>,
    ) -> crate::Result<()> {
        shape.encode_checked(out, body)
    }

    /// [`KeyShape::decode_with`] for a derived key, whose shape was checked when its constant
    /// was evaluated: no check at run time.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::decode_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn decode<'k, T>(
        shape: &KeyShape,
        key: &'k str,
        body: impl FnOnce(&mut crate::KeyReader<'k>) -> crate::Result<T>,
    ) -> crate::Result<T> {
        shape.decode_checked(key, body)
    }

    /// Encodes a derived key whose prefix is a modulo bucket of its field `value`: the bucket is
    /// known before the fields are written, so its digits go first (no placeholder to fill).
    ///
    /// # Errors
    ///
    /// As [`KeyShape::encode_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn encode_modulo<T: crate::KeyPart + ?Sized>(
        shape: &KeyShape,
        out: &mut String,
        value: &T,
        body: impl FnOnce(&mut crate::KeyWriter<'_>) -> crate::Result<()>,
    ) -> crate::Result<()> {
        shape.encode_with_modulo(out, value.part_bucket_value(), body)
    }

    /// [`KeyShape::encode_bytes_with`] for a derived key, whose shape was checked when its
    /// constant was evaluated: no check at run time.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::encode_bytes_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode_bytes(
        shape: &KeyShape,
        out: &mut Vec<u8>,
        body: impl FnOnce(&mut crate::BinWriter<'_>) -> crate::Result<()>,
    ) -> crate::Result<()> {
        shape.encode_bytes_checked(out, body)
    }

    /// [`KeyShape::decode_bytes_with`] for a derived key, whose shape was checked when its
    /// constant was evaluated: no check at run time.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::decode_bytes_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn decode_bytes<'k, T>(
        shape: &KeyShape,
        key: &'k [u8],
        body: impl FnOnce(&mut crate::BinReader<'k>) -> crate::Result<T>,
    ) -> crate::Result<T> {
        shape.decode_bytes_checked(key, body)
    }

    /// Declares the bucket value of a modulo bucket's field while writing a binary key.
    #[inline]
    pub fn bin_bucket_value<T: crate::KeyPart + ?Sized>(w: &mut crate::BinWriter<'_>, value: &T) {
        if let Some(v) = value.part_bucket_value() {
            w.bucket_value(v);
        }
    }

    /// Declares the bucket value of a modulo bucket's field while reading a binary key.
    #[inline]
    pub fn read_bin_bucket_value<T: crate::KeyPart + ?Sized>(
        r: &mut crate::BinReader<'_>,
        value: &T,
    ) {
        if let Some(v) = value.part_bucket_value() {
            r.bucket_value(v);
        }
    }

    /// The form of `#[pk(form = name)]`, or a compile error listing the names ([`Form::name`](crate::Form::name)).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn form(name: &str) -> crate::Form {
        const FORMS: [crate::Form; 2] = [crate::Form::Text, crate::Form::Binary];
        let mut i = 0;
        while i < FORMS.len() {
            let (a, b) = (name.as_bytes(), FORMS[i].name().as_bytes());
            if a.len() == b.len() {
                let mut j = 0;
                while j < a.len() && a[j] == b[j] {
                    j += 1;
                }
                if j == a.len() {
                    return FORMS[i];
                }
            }
            i += 1;
        }
        panic!("unknown form in #[pk(form = ...)]: expected text or binary")
    }

    /// Declares the bucket value of a modulo bucket's field while reading.
    #[inline]
    pub fn read_bucket_value<T: crate::KeyPart + ?Sized>(r: &mut crate::KeyReader<'_>, value: &T) {
        if let Some(v) = value.part_bucket_value() {
            r.bucket_value(v);
        }
    }

    /// A field of a derived key whose type the derive reaches through [`KeyPart`](crate::KeyPart): a nested key's
    /// fields against the delimiter and no field attributes on it, or a field's rules (a compile
    /// error if it breaks one).
    pub const fn part<T: crate::KeyPart + ?Sized>(
        shape: &KeyShape,
        spec: FieldSpec,
        attributes: bool,
    ) {
        if T::NESTED {
            if attributes {
                enforce::<()>(Err(crate::rules::Rule::NestedAttributes));
            }
            // Its fields' floor is checked against the delimiter apart: `floor_broken`.
            let _ = T::NESTED_FLOOR;
        } else {
            field(shape, spec);
        }
    }

    /// A field of a derived key given `#[pk(width = N)]`: an integer field, whatever `N` (a
    /// compile error otherwise; a nested key is refused by [`part`] first). `width = 0` leaves
    /// the spec as if no width were given, so [`field`] cannot see it.
    pub const fn declared_width<T: crate::KeyPart + ?Sized>(spec: FieldSpec) {
        if !T::NESTED {
            enforce::<()>(crate::rules::check_width_declared(spec.kind()));
        }
    }

    /// The field of a modulo bucket, reached through [`KeyPart`](crate::KeyPart): a field, never a nested key.
    pub const fn modulo_part<T: crate::KeyPart + ?Sized>(spec: FieldSpec) {
        if T::NESTED {
            enforce::<()>(Err(crate::rules::Rule::ModuloField));
        }
        modulo_field(spec);
    }

    /// A field read by borrowing its text (`&str`): a plain ascending string only (a compile
    /// error otherwise).
    pub const fn borrow_form<'de, T: crate::BorrowDecodePart<'de>>(spec: FieldSpec) {
        if T::BORROWS_TEXT && (spec.is_descending() || spec.is_escaped()) {
            enforce::<()>(Err(crate::rules::Rule::BorrowedStrForm));
        }
    }

    /// The lowest delimiter floor of a part: a nested key's fields, or the field's own.
    #[must_use]
    pub const fn part_floor<T: crate::KeyPart + ?Sized>(spec: &FieldSpec) -> u8 {
        if T::NESTED {
            T::NESTED_FLOOR
        } else {
            delimiter_floor(spec)
        }
    }

    /// An error from the fields of a key spliced into another as `part`, its field named as the
    /// layout names it (`part.field`).
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    #[must_use]
    pub fn in_part(error: crate::Error, part: &str) -> crate::Error {
        error.in_part(part)
    }

    /// The smaller of two floors, in const context.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn min_floor(a: u8, b: u8) -> u8 {
        if a < b { a } else { b }
    }
}

/// The README's examples run as doc tests, so the README cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
