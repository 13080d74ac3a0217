//! [`KeyShape`]: the delimiter, prefix and length limit of a key, and the one engine that encodes
//! and decodes keys for runtime layouts and derived types alike.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::kinds::Form;
use crate::prefix::{
    BucketBy, BucketSeed, BucketValue, MergeSorted, Prefix, merge_sorted_by, modulo_bucket_text,
};
use crate::rules::{MAX_KEY_LEN, Rule};

/// The stores' limit on a String primary-key column: 1 KB.
pub const DEFAULT_MAX_LEN: usize = 1024;

/// The default delimiter, `,`: it sorts below every byte the field forms write.
pub const DEFAULT_DELIMITER: u8 = b',';

/// The parts of a key layout that are not fields: delimiter, prefix and length limit.
///
/// Its [`encode_with`](KeyShape::encode_with) and [`decode_with`](KeyShape::decode_with) run the
/// fields' writer or reader between the prefix and the length check: runtime [`Layout`]s and
/// `#[derive(PartitionKey)]` both go through them.
///
/// [`Layout`]: crate::Layout
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, HashAlg, HashOver, IntBits, KeyShape, Kind, Prefix, Separator};
///
/// let shape = KeyShape::new(b',').with_prefix(Prefix::Hash {
///     alg: HashAlg::Md5,
///     len: 4,
///     separator: Separator::None,
///     over: HashOver::Key,
/// });
/// let order = FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(6);
/// let mut key = String::new();
/// shape.encode_with(&mut key, |w| {
///     w.begin_field();
///     w.uint64(&order, "order_number", 200_001)
/// })?;
/// assert_eq!(key, "ee8f200001");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyShape {
    delimiter: u8,
    prefix: Prefix,
    max_len: usize,
}

impl Default for KeyShape {
    #[cfg_attr(debug_assertions, inline)]
    fn default() -> Self {
        Self::new(DEFAULT_DELIMITER)
    }
}

impl KeyShape {
    /// A shape with this delimiter, no prefix and the default 1024-byte limit.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn new(delimiter: u8) -> Self {
        Self {
            delimiter,
            prefix: Prefix::None,
            max_len: DEFAULT_MAX_LEN,
        }
    }

    /// The same shape with a prefix.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn with_prefix(mut self, prefix: Prefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// The same shape with another limit on the key's length in bytes.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// The delimiter.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// The prefix.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// The limit on a key's length in bytes.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn max_len(&self) -> usize {
        self.max_len
    }

    /// Checks the shape on its own: the delimiter, the prefix's parameters, the limit (the
    /// rulebook's shape rules, see [`rules`](crate::rules)).
    ///
    /// # Errors
    ///
    /// The [`Rule`] the shape breaks.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{BucketBy, KeyShape, Prefix, Rule, Separator};
    ///
    /// assert_eq!(KeyShape::new(b',').check(), Ok(()));
    /// assert_eq!(KeyShape::new(0x7f).check(), Err(Rule::DelimiterTooHigh { delimiter: '\x7f' }));
    /// let huge = Prefix::Bucket { count: u32::MAX, by: BucketBy::Hash, separator: Separator::None };
    /// assert_eq!(KeyShape::new(b',').with_prefix(huge).check(), Err(Rule::BucketCount { count: u32::MAX }));
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn check(&self) -> Result<(), Rule> {
        if let Err(rule) = crate::rules::check_delimiter(self.delimiter as char) {
            return Err(rule);
        }
        if let Err(rule) = self.prefix.check() {
            return Err(rule);
        }
        if self.max_len <= self.prefix.len() || self.max_len > MAX_KEY_LEN {
            return Err(Rule::KeyLen {
                max_len: self.max_len,
                prefix_len: self.prefix.len(),
            });
        }
        Ok(())
    }

    /// Checks that `spec` keeps its guarantees in this shape ([`FieldSpec::check`] with this
    /// delimiter).
    ///
    /// # Errors
    ///
    /// The [`Rule`] the field breaks.
    #[cfg_attr(debug_assertions, inline)]
    pub const fn check_field_rules(&self, spec: &FieldSpec) -> Result<(), Rule> {
        spec.check(self.delimiter)
    }

    /// [`KeyShape::check`], as this crate's error.
    ///
    /// # Errors
    ///
    /// [`Error::BrokenRule`] naming the rule.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(|rule| Error::broken(None, rule))
    }

    /// [`KeyShape::check_field_rules`], as this crate's error naming `field`.
    ///
    /// # Errors
    ///
    /// [`Error::BrokenRule`] naming `field` and the rule.
    #[cfg_attr(debug_assertions, inline)]
    pub fn check_field(&self, field: &str, spec: &FieldSpec) -> Result<()> {
        self.check_field_rules(spec)
            .map_err(|rule| Error::broken(Some(field), rule))
    }

    /// Encodes one key into `out` (appending): the prefix, then the fields that `body` writes,
    /// then the prefix's value and the length check. On error `out` is left as it was.
    ///
    /// # Errors
    ///
    /// Whatever `body` returns; [`Error::KeyTooLong`] over the limit; [`Error::InvalidLayout`]
    /// when a modulo bucket's field was never declared with [`KeyWriter::bucket_value`], or a
    /// hashed span ([`KeyWriter::bucket_span`]) lies outside the fields written;
    /// [`Error::BrokenRule`] for a shape that breaks a rule ([`KeyShape::check`]: a shape built
    /// by hand; the derive's and a [`Layout`](crate::Layout)'s are checked when they are made,
    /// and for a constant shape the check folds away).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode_with(
        &self,
        out: &mut String,
        body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        self.validate()?;
        self.encode_checked(out, body)
    }

    /// [`KeyShape::encode_with`] for a shape known to keep the rules (a layout's, checked when
    /// the layout was built).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn encode_checked(
        &self,
        out: &mut String,
        body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        let base = out.len();
        if self.prefix.is_empty() {
            let mut writer = KeyWriter::new(out, self.delimiter);
            let written = body(&mut writer);
            return self.finish_key(out, base, written);
        }
        self.push_placeholder(out);
        let mut writer = KeyWriter::new(out, self.delimiter);
        let mut written = body(&mut writer);
        let seed = writer.seed;
        // A key over the limit is refused by `finish_key` without its prefix: the prefix's
        // spans are positions of at most `MAX_KEY_LEN` (32 bits), which a longer key passes.
        if written.is_ok() && out.len() - base <= self.max_len {
            written = self.fill_prefix(out, base, &seed);
        }
        self.finish_key(out, base, written)
    }

    /// [`KeyShape::encode_with`] for a key whose modulo bucket's `value` is known before its
    /// fields are written (a derived key's own field): the bucket's digits are written first,
    /// where `encode_with` writes a placeholder and fills it in once the fields are written (a
    /// check of the placeholder's bytes and a second write). The same key. With another prefix, or
    /// no value, this is [`KeyShape::encode_checked`]; like it, for a shape known to keep the
    /// rules (a derived key's, checked when its constant is evaluated).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn encode_with_modulo(
        &self,
        out: &mut String,
        value: Option<BucketValue>,
        body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        let (
            Prefix::Bucket {
                count,
                by: BucketBy::Modulo,
                ..
            },
            Some(value),
        ) = (self.prefix, value)
        else {
            return self.encode_checked(out, body);
        };
        let base = out.len();
        let mut buf = [0u8; 32];
        for &digit in modulo_bucket_text(value, count, &mut buf) {
            out.push(char::from(digit));
        }
        if self.has_separator() {
            out.push(char::from(self.delimiter));
        }
        let mut writer = KeyWriter::new(out, self.delimiter);
        let written = body(&mut writer);
        self.finish_key(out, base, written)
    }

    /// A placeholder of the prefix's length (separator included), overwritten by
    /// [`KeyShape::fill_prefix`] once the natural key is known. With a constant shape, a store of
    /// a few constant bytes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn push_placeholder(&self, out: &mut String) {
        const ZEROS: &str = "0000000000000000000000000000000000000000";
        let prefix_len = self.prefix.len();
        if self.has_separator() {
            out.push_str(&ZEROS[..prefix_len - 1]);
            out.push(char::from(self.delimiter));
        } else {
            out.push_str(&ZEROS[..prefix_len]);
        }
    }

    /// Undoes a failed key and checks the length of a written one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn finish_key(&self, out: &mut String, base: usize, written: Result<()>) -> Result<()> {
        if let Err(e) = written {
            out.truncate(base);
            return Err(e);
        }
        let len = out.len() - base;
        if len > self.max_len {
            return Err(self.key_too_long(out, base));
        }
        Ok(())
    }

    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn key_too_long(&self, out: &mut String, base: usize) -> Error {
        let len = out.len() - base;
        out.truncate(base);
        Error::KeyTooLong {
            len,
            limit: self.max_len,
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn has_separator(&self) -> bool {
        self.prefix.has_separator()
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn fill_prefix(&self, out: &mut String, base: usize, seed: &BucketSeed) -> Result<()> {
        let natural_start = base + self.prefix.len();
        let mut buf = [0u8; 32];
        let text = self
            .prefix
            .compute(self.delimiter, &out[natural_start..], seed, &mut buf)?;
        // Hex or decimal digits over the placeholder's `0`s.
        crate::num::overwrite_ascii(out, base, text);
        Ok(())
    }

    /// The natural key of `key`: the key without its prefix (checked for form, not for value).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when the prefix is short or holds a byte it cannot;
    /// [`Error::BrokenRule`] for a shape that breaks a rule, as [`KeyShape::decode_with`].
    #[inline]
    pub fn split_prefix<'k>(&self, key: &'k str) -> Result<(&'k str, &'k str)> {
        self.validate()?;
        self.split_checked(key)
    }

    /// [`KeyShape::split_prefix`] for a shape known to keep the rules (a layout's).
    #[inline]
    fn split_checked<'k>(&self, key: &'k str) -> Result<(&'k str, &'k str)> {
        if self.prefix.is_empty() {
            return Ok(("", key));
        }
        self.prefix.split(self.delimiter, key)
    }

    /// The bucket number of a bucketed key (checked for form, not recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`] when the shape has no bucket prefix; [`Error::Malformed`] for a
    /// bad prefix or a bucket number not below the count; [`Error::BrokenRule`] for a shape that
    /// breaks a rule, as [`KeyShape::decode_with`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn bucket_of_key(&self, key: &str) -> Result<u32> {
        self.validate()?;
        self.prefix.bucket_of_key(self.delimiter, key)
    }

    /// Decodes one key: checks the prefix's form, runs `body` over the natural key, checks that
    /// nothing is left, then recomputes the prefix and compares. The reader's lifetime is the
    /// key's, so `body` may return slices of the key ([`KeyReader::str_ref`]).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] with the byte position for any text this shape and `body` would not
    /// write; [`Error::PrefixMismatch`] when the prefix is not the one the natural key gives;
    /// [`Error::InvalidLayout`] for a hashed span ([`KeyReader::bucket_span`]) outside the fields
    /// read; [`Error::BrokenRule`] for a shape that breaks a rule, as [`KeyShape::encode_with`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn decode_with<'k, T>(
        &self,
        key: &'k str,
        body: impl FnOnce(&mut KeyReader<'k>) -> Result<T>,
    ) -> Result<T> {
        self.validate()?;
        self.decode_checked(key, body)
    }

    /// [`KeyShape::decode_with`] for a shape known to keep the rules (a layout's).
    #[inline]
    pub(crate) fn decode_checked<'k, T>(
        &self,
        key: &'k str,
        body: impl FnOnce(&mut KeyReader<'k>) -> Result<T>,
    ) -> Result<T> {
        if key.len() > self.max_len {
            return Err(self.too_long(key));
        }
        let (prefix, natural) = self.split_checked(key)?;
        let natural_start = key.len() - natural.len();
        let mut reader = KeyReader::new(key, natural_start, self.delimiter);
        let value = body(&mut reader)?;
        reader.finish()?;
        if !self.prefix.is_empty() {
            let mut buf = [0u8; 32];
            let expected = self
                .prefix
                .compute(self.delimiter, natural, &reader.seed, &mut buf)?;
            if expected != prefix.as_bytes() {
                let position = expected
                    .iter()
                    .zip(prefix.as_bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                return Err(Error::PrefixMismatch {
                    position,
                    found: prefix.to_owned(),
                    expected: String::from_utf8_lossy(expected).into_owned(),
                });
            }
        }
        Ok(value)
    }

    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn too_long(&self, key: &str) -> Error {
        Error::malformed(
            None,
            self.max_len,
            format!(
                "the key is {} bytes, over the layout's limit of {} bytes, so no key of this layout is this long",
                key.len(),
                self.max_len
            ),
        )
    }

    /// `n` split keys evenly spaced over the key space of this shape's prefix, ready to pre-split
    /// a table before a large import (as HBase's `RegionSplitter` does): the boundaries between
    /// bucket numbers for a bucket prefix, between hex values for a hash prefix. These are text
    /// keys' points: for binary keys use [`KeyShape::split_points_in`] (or
    /// [`Layout::split_points`](crate::Layout::split_points), in the layout's form).
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`] without a prefix (split from a sample of keys instead), or for
    /// more split points than the prefix has values (or than [`MAX_SPLIT_POINTS`](crate::MAX_SPLIT_POINTS)).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Layout;
    ///
    /// let hashed: Layout = "order: u64 width=8; hash=md5:4".parse()?;
    /// assert_eq!(hashed.shape().split_points(3)?, ["4000", "8000", "c000"]);
    /// let buckets: Layout = "ts: u64; buckets=16:mod(ts):sep".parse()?;
    /// assert_eq!(buckets.shape().split_points(3)?, ["04", "08", "12"]);
    /// assert!("ts: u64".parse::<Layout>()?.shape().split_points(3).is_err());
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn split_points(&self, n: usize) -> Result<Vec<String>> {
        self.validate()?;
        self.prefix.split_points(n)
    }

    /// [`KeyShape::split_points`] for keys of `form`, as bytes: the text points' bytes for
    /// [`Form::Text`], and for [`Form::Binary`] the boundaries between the binary prefix's
    /// values (a bucket number's one or two bytes, a hash prefix's first bytes, at most 8),
    /// which lie inside the binary key space: text points would sort above every binary key
    /// (a binary prefix starts with a byte below `0`), leaving every row in one partition.
    /// [`Layout::split_points`](crate::Layout::split_points) answers the layout's own form.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::split_points`]; a binary hash prefix has `256^bytes` values.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Form, Layout};
    ///
    /// let buckets: Layout = "ts: u64; buckets=16:mod(ts)".parse()?;
    /// assert_eq!(buckets.shape().split_points_in(Form::Binary, 3)?, [[4], [8], [12]]);
    /// let hashed: Layout = "order: u64; hash=md5:4".parse()?;
    /// assert_eq!(hashed.shape().split_points_in(Form::Binary, 1)?, [[0x80, 0x00]]);
    /// assert_eq!(hashed.shape().split_points_in(Form::Text, 1)?, [b"8000"]);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn split_points_in(&self, form: Form, n: usize) -> Result<Vec<Vec<u8>>> {
        self.validate()?;
        self.prefix.split_points_in(form, n)
    }

    /// The key text of bucket `bucket`'s prefix, separator included: the text every key of that
    /// bucket starts with, for a scatter-gather read that goes bucket by bucket.
    ///
    /// `None` when the shape has no bucket prefix, has no bucket `bucket` (buckets are numbered
    /// from 0 to the count less one), or breaks a rule ([`KeyShape::check`]: a shape built by
    /// hand, which encodes no key): no key starts with such a text.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Layout;
    ///
    /// let layout: Layout = "ts: u64; buckets=16:mod(ts):sep".parse()?;
    /// assert_eq!(layout.shape().bucket_prefix(3).as_deref(), Some("03,"));
    /// assert!(layout.encode(&[19u64.into()])?.starts_with("03,"));
    /// assert_eq!(layout.shape().bucket_prefix(16), None);
    /// assert_eq!("ts: u64".parse::<Layout>()?.shape().bucket_prefix(0), None);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn bucket_prefix(&self, bucket: u32) -> Option<String> {
        match self.prefix {
            Prefix::Bucket { count, .. } if bucket < count && self.check().is_ok() => {
                Some(self.prefix.bucket_text(self.delimiter, bucket))
            }
            _ => None,
        }
    }

    /// Merges per-bucket streams of keys (or rows, through `key_of`), each sorted, into one stream
    /// in natural-key order: the read side of a bucket prefix.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Layout;
    ///
    /// let layout: Layout = "buckets=4:mod(ts); ts: u64 width=4".parse()?;
    /// // What four range reads, one per bucket, would return:
    /// let per_bucket: Vec<Vec<String>> = (0..4)
    ///     .map(|b| (0..12u64).filter(|t| t % 4 == b).map(|t| layout.encode(&[t.into()]).unwrap()).collect())
    ///     .collect();
    /// let merged: Vec<String> = layout.shape().merge_buckets(per_bucket, |k: &String| k.as_str()).collect();
    /// let times: Vec<u64> = merged.iter().map(|k| layout.decode(k).unwrap()[0].as_u64().unwrap()).collect();
    /// assert_eq!(times, (0..12).collect::<Vec<_>>());
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    pub fn merge_buckets<S, T, F>(
        &self,
        streams: impl IntoIterator<Item = S>,
        key_of: F,
    ) -> MergeSorted<S::IntoIter, impl FnMut(&T, &T) -> std::cmp::Ordering>
    where
        S: IntoIterator<Item = T>,
        F: Fn(&T) -> &str,
    {
        let skip = self.prefix.len();
        merge_sorted_by(streams, move |a: &T, b: &T| {
            let (x, y) = (key_of(a), key_of(b));
            x.get(skip..).unwrap_or(x).cmp(y.get(skip..).unwrap_or(y))
        })
    }
}

// A spec's own rules as this crate's error, the sibling of `KeyShape::check_field`: written here,
// above the error type, because `field_spec.rs` sits below the rulebook and the error.
impl FieldSpec {
    /// Checks the spec on its own (not against a delimiter): [`FieldSpec::check`] for rules that
    /// do not involve the delimiter.
    ///
    /// # Errors
    ///
    /// [`Error::BrokenRule`] naming `field` and the rule.
    #[cfg_attr(debug_assertions, inline)]
    pub fn validate(&self, field: &str) -> Result<()> {
        match self.check(0) {
            Ok(()) | Err(Rule::DelimiterFloor { .. }) => Ok(()),
            Err(rule) => Err(Error::broken(Some(field), rule)),
        }
    }
}
impl KeyShape {
    /// Encodes one key in the binary form into `out`: the prefix's bytes, then what `body`
    /// writes. The mirror of [`KeyShape::encode_with`] for keys of bytes; the delimiter plays no
    /// part (binary fields are self-delimiting).
    ///
    /// # Errors
    ///
    /// As [`KeyShape::encode_with`].
    #[inline]
    pub fn encode_bytes_with(
        &self,
        out: &mut Vec<u8>,
        body: impl FnOnce(&mut BinWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        self.validate()?;
        self.encode_bytes_checked(out, body)
    }

    /// [`KeyShape::encode_bytes_with`] for a shape known to keep the rules.
    #[inline]
    pub(crate) fn encode_bytes_checked(
        &self,
        out: &mut Vec<u8>,
        body: impl FnOnce(&mut BinWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        let base = out.len();
        let n = self.prefix.bin_len();
        out.resize(base + n, 0);
        let mut writer = BinWriter::new(out, base + n);
        let mut written = body(&mut writer);
        let seed = writer.seed;
        if written.is_ok() && n > 0 && out.len() - base <= self.max_len {
            let mut buf = [0u8; 32];
            match self.prefix.compute_bin(&out[base + n..], &seed, &mut buf) {
                Ok(prefix) => out[base..base + n].copy_from_slice(prefix),
                Err(e) => written = Err(e),
            }
        }
        if let Err(e) = written {
            out.truncate(base);
            return Err(e);
        }
        let len = out.len() - base;
        if len > self.max_len {
            out.truncate(base);
            return Err(Error::KeyTooLong {
                len,
                limit: self.max_len,
            });
        }
        Ok(())
    }

    /// Decodes one key in the binary form: checks the prefix's form, runs `body` over the
    /// natural key, checks that nothing is left, then recomputes the prefix and compares. The
    /// mirror of [`KeyShape::decode_with`].
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] with the byte position for any bytes this shape and `body` would not
    /// write; [`Error::PrefixMismatch`] (its prefixes in hex) when the prefix is not the one the
    /// natural key gives.
    #[inline]
    pub fn decode_bytes_with<'k, T>(
        &self,
        key: &'k [u8],
        body: impl FnOnce(&mut BinReader<'k>) -> Result<T>,
    ) -> Result<T> {
        self.validate()?;
        self.decode_bytes_checked(key, body)
    }

    /// [`KeyShape::decode_bytes_with`] for a shape known to keep the rules.
    #[inline]
    pub(crate) fn decode_bytes_checked<'k, T>(
        &self,
        key: &'k [u8],
        body: impl FnOnce(&mut BinReader<'k>) -> Result<T>,
    ) -> Result<T> {
        if key.len() > self.max_len {
            return Err(Error::malformed(
                None,
                self.max_len,
                format!(
                    "the key is {} bytes, over the layout's limit of {} bytes, so no key of this layout is this long",
                    key.len(),
                    self.max_len
                ),
            ));
        }
        let (prefix, natural) = self.prefix.split_bin(key)?;
        let mut reader = BinReader::new(key, prefix.len());
        let value = body(&mut reader)?;
        reader.finish()?;
        if !prefix.is_empty() {
            let mut buf = [0u8; 32];
            let expected = self.prefix.compute_bin(natural, &reader.seed, &mut buf)?;
            if expected != prefix {
                let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
                return Err(Error::PrefixMismatch {
                    position: expected
                        .iter()
                        .zip(prefix)
                        .position(|(a, b)| a != b)
                        .unwrap_or(0),
                    found: hex(prefix),
                    expected: hex(expected),
                });
            }
        }
        Ok(value)
    }
}

/// How a key of each form is printed and read back as text: one place for the crate's
/// messages, `pk`'s output and `pk`'s input.
impl Form {
    /// A key of this form as the crate prints it: a text key as its text, a binary key as `0x`
    /// and two lower-case hex digits a byte. [`Form::parse_key`] reads it back.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Form;
    ///
    /// assert_eq!(Form::Binary.show_key(&[0, 0x36, 0xff]), "0x0036ff");
    /// assert_eq!(Form::Text.show_key(b"000054,a100"), "000054,a100");
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn show_key(self, key: &[u8]) -> String {
        match self {
            Self::Text => String::from_utf8_lossy(key).into_owned(),
            Self::Binary => {
                let mut out = String::with_capacity(2 + 2 * key.len());
                out.push_str("0x");
                crate::text::write_hex(&mut out, key);
                out
            }
        }
    }

    /// The bytes of a key of this form given as text: a text key's own bytes; a binary key's
    /// hex, two digits a byte, with or without a leading `0x` (what [`Form::show_key`] and the
    /// crate's messages print, and the plain hex `pk encode` prints), in either case.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a binary key that is not hex, with the
    /// position of the first byte that is not a hex digit, or of the odd last digit.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Form;
    ///
    /// assert_eq!(Form::Binary.parse_key("0x0036FF")?, [0, 0x36, 0xff]);
    /// assert_eq!(Form::Binary.parse_key("0036ff")?, [0, 0x36, 0xff]);
    /// assert_eq!(Form::Text.parse_key("0x00")?, b"0x00");
    /// let err = Form::Binary.parse_key("0x00g1").unwrap_err();
    /// assert!(err.to_string().contains("byte 4"), "{err}");
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn parse_key(self, text: &str) -> Result<Vec<u8>> {
        match self {
            Self::Text => Ok(text.as_bytes().to_vec()),
            Self::Binary => {
                let (skip, digits) =
                    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                        Some(rest) => (2, rest),
                        None => (0, text),
                    };
                crate::text::read_hex(&digits.to_ascii_lowercase()).map_err(|(at, reason)| {
                    Error::malformed(
                        None,
                        skip + at,
                        format!(
                            "a binary key is hex, two digits a byte, after an optional 0x: {reason}"
                        ),
                    )
                })
            }
        }
    }
}
