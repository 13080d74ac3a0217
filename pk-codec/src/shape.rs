//! [`KeyShape`]: the delimiter, prefix and length limit of a key, and the one engine that encodes
//! and decodes keys for runtime layouts and derived types alike.

use serde::{Deserialize, Serialize};

use crate::bucket::{MergeSorted, bucket_of_hash, bucket_of_value, bucket_width, merge_sorted_by};
use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::io::{BucketSeed, KeyReader, KeyWriter, MAX_SPANS};
use crate::rules::{MAX_BUCKETS, MAX_KEY_LEN, Rule};
use crate::spec::FieldSpec;

/// The stores' limit on a String primary-key column: 1 KB.
pub const DEFAULT_MAX_LEN: usize = 1024;

/// The default delimiter, `,`: it sorts below every byte the field forms write.
pub const DEFAULT_DELIMITER: u8 = b',';

/// What a bucket number is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BucketBy {
    /// `value % count` of one integer field (the time-bucket pattern: `timestamp % 16`).
    Modulo,
    /// `xxh3_64(encoded fields) % count` of some fields (all of them by default).
    Hash,
}

/// A prefix spliced in front of the natural key to spread load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// No prefix: keys sort in natural order.
    None,
    /// The first `len` hex characters of a hash of the natural key. Point lookups recompute it;
    /// range reads over the natural order are no longer possible.
    Hash {
        /// The hash function.
        alg: HashAlg,
        /// How many hex characters, 1 to [`HashAlg::max_len`].
        len: u8,
        /// Whether the delimiter follows the prefix (`ee8f,200001` rather than `ee8f200001`).
        separator: bool,
    },
    /// A bucket number `0..count`, zero-padded to the width of `count - 1`. Range reads become one
    /// range read per bucket, merged back with [`KeyShape::merge_buckets`].
    Bucket {
        /// How many buckets, at least 1.
        count: u32,
        /// What picks the bucket.
        by: BucketBy,
        /// Whether the delimiter follows the bucket number.
        separator: bool,
    },
}

impl Prefix {
    /// The prefix's length in bytes, separator included.
    #[must_use]
    pub const fn len(&self) -> usize {
        match *self {
            Self::None => 0,
            Self::Hash { len, separator, .. } => len as usize + separator as usize,
            Self::Bucket {
                count, separator, ..
            } => bucket_width(count) as usize + separator as usize,
        }
    }

    /// Checks the prefix's parameters: a hash prefix's length against its digest, a bucket count
    /// against [`MAX_BUCKETS`](crate::rules::MAX_BUCKETS).
    ///
    /// # Errors
    ///
    /// [`Rule::HashLen`] or [`Rule::BucketCount`].
    pub const fn check(&self) -> Result<(), Rule> {
        match *self {
            Self::None => Ok(()),
            Self::Hash { alg, len, .. } => {
                if len == 0 || len > alg.max_len() {
                    Err(Rule::HashLen {
                        len,
                        max: alg.max_len(),
                    })
                } else {
                    Ok(())
                }
            }
            Self::Bucket { count, .. } => {
                if count == 0 || count > MAX_BUCKETS {
                    Err(Rule::BucketCount { count })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Whether there is no prefix.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        matches!(self, Self::None)
    }
}

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
/// use pk_codec::{FieldSpec, HashAlg, Kind, KeyShape, Prefix};
///
/// let shape = KeyShape::new(b',').with_prefix(Prefix::Hash { alg: HashAlg::Md5, len: 4, separator: false });
/// let order = FieldSpec::new(Kind::Uint { bits: 64 }).with_width(6);
/// let mut key = String::new();
/// shape.encode_with(&mut key, |w| {
///     w.begin_field();
///     w.uint(&order, "order_number", 200_001)
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
    fn default() -> Self {
        Self::new(DEFAULT_DELIMITER)
    }
}

impl KeyShape {
    /// A shape with this delimiter, no prefix and the default 1024-byte limit.
    #[must_use]
    pub const fn new(delimiter: u8) -> Self {
        Self {
            delimiter,
            prefix: Prefix::None,
            max_len: DEFAULT_MAX_LEN,
        }
    }

    /// The same shape with a prefix.
    #[must_use]
    pub const fn with_prefix(mut self, prefix: Prefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// The same shape with another limit on the key's length in bytes.
    #[must_use]
    pub const fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// The delimiter.
    #[must_use]
    pub const fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// The prefix.
    #[must_use]
    pub const fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// The limit on a key's length in bytes.
    #[must_use]
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
    /// use pk_codec::{BucketBy, KeyShape, Prefix, Rule};
    ///
    /// assert_eq!(KeyShape::new(b',').check(), Ok(()));
    /// assert_eq!(KeyShape::new(0x7f).check(), Err(Rule::DelimiterTooHigh { delimiter: 0x7f }));
    /// let huge = Prefix::Bucket { count: u32::MAX, by: BucketBy::Hash, separator: false };
    /// assert_eq!(KeyShape::new(b',').with_prefix(huge).check(), Err(Rule::BucketCount { count: u32::MAX }));
    /// ```
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
    pub const fn check_field_rules(&self, spec: &FieldSpec) -> Result<(), Rule> {
        spec.check(self.delimiter)
    }

    /// [`KeyShape::check`], as this crate's error.
    ///
    /// # Errors
    ///
    /// [`Error::BrokenRule`] naming the rule.
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(|rule| Error::broken(None, rule))
    }

    /// [`KeyShape::check_field_rules`], as this crate's error naming `field`.
    ///
    /// # Errors
    ///
    /// [`Error::BrokenRule`] naming `field` and the rule.
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
    /// when a modulo bucket's field was never declared with [`KeyWriter::bucket_value`].
    #[inline]
    pub fn encode_with(
        &self,
        out: &mut String,
        body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>,
    ) -> Result<()> {
        let base = out.len();
        let prefix_len = self.prefix.len();
        if prefix_len > 0 {
            // A placeholder of the right length, overwritten once the natural key is known.
            const ZEROS: &str = "0000000000000000000000000000000000000000";
            if self.has_separator() {
                out.push_str(&ZEROS[..prefix_len - 1]);
                out.push(char::from(self.delimiter));
            } else {
                out.push_str(&ZEROS[..prefix_len]);
            }
        }
        let mut writer = KeyWriter::new(out, self.delimiter);
        let mut written = body(&mut writer);
        if !self.prefix.is_empty() && written.is_ok() {
            let seed = writer.seed;
            written = self.fill_prefix(out, base, &seed);
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

    fn has_separator(&self) -> bool {
        matches!(
            self.prefix,
            Prefix::Hash {
                separator: true,
                ..
            } | Prefix::Bucket {
                separator: true,
                ..
            }
        )
    }

    /// The prefix text for the key whose natural part is `natural`, into `buf`.
    fn compute_prefix<'b>(
        &self,
        natural: &str,
        seed: &BucketSeed,
        buf: &'b mut [u8; 32],
    ) -> Result<&'b [u8]> {
        match self.prefix {
            Prefix::None => Ok(&buf[..0]),
            Prefix::Hash { alg, len, .. } => Ok(alg.write_hex_prefix(natural.as_bytes(), len, buf)),
            Prefix::Bucket { count, by, .. } => {
                let bucket = match by {
                    BucketBy::Modulo => match seed.value {
                        Some(v) => bucket_of_value(v, count),
                        None => {
                            return Err(Error::layout(
                                None,
                                "a modulo bucket prefix needs the value of its integer field, and none was given",
                            ));
                        }
                    },
                    BucketBy::Hash => bucket_of_hash(self.hash_spans(natural, seed)?, count),
                };
                Ok(write_bucket(bucket, bucket_width(count), buf))
            }
        }
    }

    fn hash_spans(&self, natural: &str, seed: &BucketSeed) -> Result<u64> {
        use xxhash_rust::xxh3::{Xxh3, xxh3_64};
        let bytes = natural.as_bytes();
        match seed.span_count {
            0 => Ok(xxh3_64(bytes)),
            1 => {
                let (s, e) = seed.spans[0];
                Ok(xxh3_64(&bytes[s as usize..e as usize]))
            }
            n if n > MAX_SPANS => Err(Error::layout(
                None,
                format!("a bucket hash covers at most {MAX_SPANS} fields, not {n}"),
            )),
            n => {
                let mut hasher = Xxh3::new();
                for (i, &(s, e)) in seed.spans[..n].iter().enumerate() {
                    if i > 0 {
                        hasher.update(&[self.delimiter]);
                    }
                    hasher.update(&bytes[s as usize..e as usize]);
                }
                Ok(hasher.digest())
            }
        }
    }

    #[inline]
    fn fill_prefix(&self, out: &mut String, base: usize, seed: &BucketSeed) -> Result<()> {
        if self.prefix.is_empty() {
            return Ok(());
        }
        let natural_start = base + self.prefix.len();
        let mut buf = [0u8; 32];
        let text = self.compute_prefix(&out[natural_start..], seed, &mut buf)?;
        // Hex or decimal digits over the placeholder's `0`s.
        crate::num::overwrite_ascii(out, base, text);
        Ok(())
    }

    /// The natural key of `key`: the key without its prefix (checked for form, not for value).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when the prefix is short or holds a byte it cannot.
    #[inline]
    pub fn split_prefix<'k>(&self, key: &'k str) -> Result<(&'k str, &'k str)> {
        if self.prefix.is_empty() {
            return Ok(("", key));
        }
        self.split_prefix_slow(key)
    }

    fn split_prefix_slow<'k>(&self, key: &'k str) -> Result<(&'k str, &'k str)> {
        let bytes = key.as_bytes();
        let (digits, allowed): (usize, fn(u8) -> bool) = match self.prefix {
            Prefix::None => return Ok(("", key)),
            Prefix::Hash { len, .. } => {
                (usize::from(len), |b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
            Prefix::Bucket { count, .. } => {
                (usize::from(bucket_width(count)), |b| b.is_ascii_digit())
            }
        };
        let what = if matches!(self.prefix, Prefix::Hash { .. }) {
            "a lower-case hex digit of the hash prefix"
        } else {
            "a digit of the bucket number"
        };
        for i in 0..digits {
            match bytes.get(i) {
                Some(&b) if allowed(b) => {}
                Some(_) => {
                    let found = key[i..].chars().next().unwrap_or('?');
                    return Err(Error::malformed(
                        None,
                        i,
                        format!("expected {what}, found {found:?}"),
                    ));
                }
                None => {
                    return Err(Error::malformed(
                        None,
                        i,
                        format!("key ends inside its {digits}-character prefix"),
                    ));
                }
            }
        }
        let mut natural = digits;
        if self.has_separator() {
            if bytes.get(digits) != Some(&self.delimiter) {
                return Err(Error::malformed(
                    None,
                    digits,
                    format!(
                        "expected the delimiter {:?} after the prefix",
                        char::from(self.delimiter)
                    ),
                ));
            }
            natural += 1;
        }
        Ok((&key[..digits], &key[natural..]))
    }

    /// The bucket number of a bucketed key (checked for form, not recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`] when the shape has no bucket prefix; [`Error::Malformed`] for a
    /// bad prefix or a bucket number not below the count.
    pub fn bucket_of_key(&self, key: &str) -> Result<u32> {
        let Prefix::Bucket { count, .. } = self.prefix else {
            return Err(Error::RangeUnsupported {
                reason: "this layout has no bucket prefix".to_owned(),
            });
        };
        let (digits, _) = self.split_prefix(key)?;
        let bucket: u32 = digits.parse().unwrap_or(u32::MAX);
        if bucket >= count {
            return Err(Error::malformed(
                None,
                0,
                format!("bucket {digits} is not below the bucket count {count}"),
            ));
        }
        Ok(bucket)
    }

    /// Decodes one key: checks the prefix's form, runs `body` over the natural key, checks that
    /// nothing is left, then recomputes the prefix and compares.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] with the byte position for any text this shape and `body` would not
    /// write; [`Error::PrefixMismatch`] when the prefix is not the one the natural key gives.
    #[inline]
    pub fn decode_with<T>(
        &self,
        key: &str,
        body: impl FnOnce(&mut KeyReader<'_>) -> Result<T>,
    ) -> Result<T> {
        if key.len() > self.max_len {
            return Err(self.too_long(key));
        }
        let (prefix, natural) = self.split_prefix(key)?;
        let natural_start = key.len() - natural.len();
        let mut reader = KeyReader::new(key, natural_start, self.delimiter);
        let value = body(&mut reader)?;
        reader.finish()?;
        if !self.prefix.is_empty() {
            let mut buf = [0u8; 32];
            let expected = self.compute_prefix(natural, &reader.seed, &mut buf)?;
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
    #[inline(never)]
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

    /// The key text of bucket `bucket`'s prefix, separator included (empty without a bucket prefix).
    #[must_use]
    pub fn bucket_prefix(&self, bucket: u32) -> String {
        match self.prefix {
            Prefix::Bucket {
                count, separator, ..
            } => {
                let mut buf = [0u8; 32];
                let digits = write_bucket(bucket, bucket_width(count), &mut buf);
                let mut s: String = digits.iter().map(|&b| char::from(b)).collect();
                if separator {
                    s.push(char::from(self.delimiter));
                }
                s
            }
            _ => String::new(),
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

fn write_bucket(bucket: u32, width: u8, buf: &mut [u8; 32]) -> &[u8] {
    let width = usize::from(width);
    let mut v = bucket;
    for slot in buf[..width].iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    &buf[..width]
}
