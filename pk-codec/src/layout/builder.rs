//! [`LayoutBuilder`]: a layout built in code.

use crate::error::Result;
use crate::field_spec::FieldSpec;
use crate::hash::HashAlg;
use crate::kinds::Form;
use crate::prefix::{BucketBy, Separator};

use super::config::{FieldConfig, LayoutConfig, PrefixConfig};
use super::{FieldDef, Layout};

/// Builds a [`Layout`] in code.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, Kind, Layout, Separator};
///
/// let layout = Layout::builder()
///     .field("ts", FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(13))
///     .buckets_by_modulo(16, "ts", Separator::After)
///     .build()?;
/// assert_eq!(layout.encode(&[1_700_000_000_017u64.into()])?, "01,1700000000017");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct LayoutBuilder {
    fields: Vec<FieldDef>,
    delimiter: Option<char>,
    max_len: Option<usize>,
    prefix: Option<PrefixConfig>,
    form: Option<Form>,
}

impl LayoutBuilder {
    /// Adds a field.
    #[cfg_attr(debug_assertions, inline)]
    pub fn field(mut self, name: impl Into<String>, spec: FieldSpec) -> Self {
        self.fields.push(FieldDef {
            name: name.into(),
            spec,
        });
        self
    }

    /// Sets the delimiter (default `b','`), a byte as in [`KeyShape::new`](crate::KeyShape::new).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn delimiter(mut self, delimiter: u8) -> Self {
        self.delimiter = Some(delimiter as char);
        self
    }

    /// Sets the key length limit in bytes (default 1024).
    #[cfg_attr(debug_assertions, inline)]
    pub const fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = Some(max_len);
        self
    }

    /// Adds a hash prefix: the first `len` hex characters of `alg` over the natural key.
    #[cfg_attr(debug_assertions, inline)]
    pub fn hash_prefix(mut self, alg: HashAlg, len: u8, separator: Separator) -> Self {
        self.prefix = Some(PrefixConfig::Hash {
            algorithm: alg,
            len,
            separator: separator.is_after(),
            fields: Vec::new(),
        });
        self
    }

    /// Adds a hash prefix over the named leading fields only: the first `len` hex characters of
    /// `alg` over their text, so that the keys of one entity (one `device_id`) stay together and
    /// range reads over the later fields work once the hashed fields are fixed. With no field
    /// named it hashes the whole natural key, as [`LayoutBuilder::hash_prefix`] (and as
    /// [`LayoutBuilder::buckets_by_hash`] does with none).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, HashAlg, IntBits, Kind, Layout, Separator, Value};
    /// use std::ops::Bound;
    ///
    /// let layout = Layout::builder()
    ///     .field("device_id", FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6))
    ///     .field("ts", FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(13))
    ///     .hash_prefix_over(HashAlg::Md5, 4, Separator::After, ["device_id"])
    ///     .build()?;
    /// let key = layout.encode(&[54u32.into(), 1_700_000_000_000u64.into()])?;
    /// assert_eq!(&key[..4], HashAlg::Md5.hex_prefix(b"000054", 4));
    /// // One device's hour: one range read.
    /// let (lo, hi) = (Value::from(1_700_000_000_000u64), Value::from(1_700_003_600_000u64));
    /// let range = layout.range(&[54u32.into()], Bound::Included(&lo), Bound::Excluded(&hi))?;
    /// assert!(range.contains(&key));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    pub fn hash_prefix_over<S: Into<String>>(
        mut self,
        alg: HashAlg,
        len: u8,
        separator: Separator,
        fields: impl IntoIterator<Item = S>,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Hash {
            algorithm: alg,
            len,
            separator: separator.is_after(),
            fields: fields.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Adds a bucket prefix: `value % count` of the integer field `field`.
    #[cfg_attr(debug_assertions, inline)]
    pub fn buckets_by_modulo(
        mut self,
        count: u32,
        field: impl Into<String>,
        separator: Separator,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Buckets {
            count,
            by: BucketBy::Modulo,
            fields: vec![field.into()],
            separator: separator.is_after(),
        });
        self
    }

    /// Adds a bucket prefix: `xxh3_64 % count` over the named fields' text (all fields if empty).
    pub fn buckets_by_hash<S: Into<String>>(
        mut self,
        count: u32,
        fields: impl IntoIterator<Item = S>,
        separator: Separator,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Buckets {
            count,
            by: BucketBy::Hash,
            fields: fields.into_iter().map(Into::into).collect(),
            separator: separator.is_after(),
        });
        self
    }

    /// The keys' form: [`Form::Text`] (the default) or [`Form::Binary`], which
    /// [`Layout::encode_bytes`](crate::Layout::encode_bytes) writes.
    #[cfg_attr(debug_assertions, inline)]
    pub const fn form(mut self, form: Form) -> Self {
        self.form = Some(form);
        self
    }

    /// Checks everything and builds the layout.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLayout`](crate::Error::InvalidLayout) saying what cannot work: no fields, a duplicate or empty name,
    /// a bad width, a delimiter that cannot order a field, a bad prefix.
    #[cfg_attr(debug_assertions, inline)]
    pub fn build(self) -> Result<Layout> {
        LayoutConfig {
            delimiter: self.delimiter,
            max_len: self.max_len,
            prefix: self.prefix,
            form: self.form,
            fields: self.fields.into_iter().map(FieldConfig::from).collect(),
        }
        .try_into()
    }
}
