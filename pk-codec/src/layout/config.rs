//! The serde form of a layout ([`LayoutConfig`]), which [`LayoutBuilder`](super::LayoutBuilder) and the
//! text form also go through, so that every way in is validated by one function.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::hash::HashAlg;
use crate::kinds::Form;
use crate::kinds::{Kind, Order};
use crate::prefix::{BucketBy, HashOver, Prefix, Separator};
use crate::rules;
use crate::shape::{DEFAULT_DELIMITER, DEFAULT_MAX_LEN, KeyShape};
use crate::timestamp::Precision;
use std::collections::BTreeMap;

use super::plan::Plan;
use super::{BucketFields, FieldDef, Layout};

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub(super) struct LayoutConfig {
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) delimiter: Option<char>,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) max_len: Option<usize>,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) prefix: Option<PrefixConfig>,
    /// The keys' form; text unless given.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) form: Option<Form>,
    pub(super) fields: Vec<FieldConfig>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)
)]
pub(super) enum PrefixConfig {
    Hash {
        algorithm: HashAlg,
        len: u8,
        #[cfg_attr(feature = "serde", serde(default))]
        separator: bool,
        /// The leading fields hashed; empty for the whole natural key.
        #[cfg_attr(
            feature = "serde",
            serde(default, skip_serializing_if = "Vec::is_empty")
        )]
        fields: Vec<String>,
    },
    Buckets {
        count: u32,
        by: BucketBy,
        #[cfg_attr(
            feature = "serde",
            serde(default, skip_serializing_if = "Vec::is_empty")
        )]
        fields: Vec<String>,
        #[cfg_attr(feature = "serde", serde(default))]
        separator: bool,
    },
}

// No `deny_unknown_fields`: every key a field does not name is a parameter of its kind
// (`params`, flattened), and a key no kind takes is refused by `to_def`, naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub(super) struct FieldConfig {
    pub(super) name: String,
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub(super) ty: String,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) width: Option<u8>,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_asc"))]
    pub(super) order: OrderConfig,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub(super) escaped: bool,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub(super) optional: bool,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub(super) precision: Option<Precision>,
    /// The kind's own parameters ([`Kind::params`]), e.g. a decimal's `scale`.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub(super) params: BTreeMap<String, ParamValue>,
}

/// A kind parameter's value as a config holds it: a number, or what a config may hold by
/// mistake under a key no field option names, so that the mistake is refused by name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
// Without serde only the text form makes these, and it makes numbers.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(super) enum ParamValue {
    /// A number, what every kind parameter is.
    Number(u32),
    /// A boolean, under a key that is no parameter.
    Flag(bool),
    /// Text, under a key that is no parameter.
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub(super) enum OrderConfig {
    #[default]
    Asc,
    Desc,
}

#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)]
#[cfg_attr(debug_assertions, inline)]
pub(super) fn is_asc(o: &OrderConfig) -> bool {
    *o == OrderConfig::Asc
}

#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)]
#[cfg_attr(debug_assertions, inline)]
pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

impl From<FieldDef> for FieldConfig {
    #[cfg_attr(debug_assertions, inline)]
    fn from(def: FieldDef) -> Self {
        let spec = def.spec;
        Self {
            ty: spec.kind().name().to_owned(),
            // Any width but the kind's own (none, 0, for a kind without widths): a width on a
            // non-integer spec made in code is refused when the config is checked, not dropped.
            width: (spec.width() != spec.kind().default_width().unwrap_or(0))
                .then_some(spec.width()),
            order: match spec.order() {
                Order::Asc => OrderConfig::Asc,
                Order::Desc => OrderConfig::Desc,
            },
            escaped: spec.is_escaped(),
            optional: spec.is_optional(),
            precision: spec.has_precision().then(|| spec.precision()),
            params: spec
                .kind()
                .params()
                .into_iter()
                .map(|(name, value)| (name.to_owned(), ParamValue::Number(value)))
                .collect(),
            name: def.name,
        }
    }
}

impl FieldConfig {
    #[cfg_attr(debug_assertions, inline)]
    fn to_def(&self) -> Result<FieldDef> {
        let mut kind = Kind::from_name(&self.ty).ok_or_else(|| {
            Error::layout(
                Some(&self.name),
                format!(
                    "unknown type {:?}; expected one of {}",
                    self.ty,
                    Kind::names()
                ),
            )
        })?;
        for (param, value) in &self.params {
            let refused = |why: String| {
                Error::layout(Some(&self.name), format!("unknown field `{param}`: {why}"))
            };
            kind = match value {
                ParamValue::Number(n) => kind.with_param(param, *n).map_err(refused)?,
                _ => {
                    return Err(refused(kind.with_param(param, 0).err().unwrap_or_else(
                        || format!("{param} of type {} is a number", kind.name()),
                    )));
                }
            };
        }
        let mut spec = FieldSpec::new(kind);
        if let Some(width) = self.width {
            // A spec holds width 0 for "no width", so `FieldSpec::check` cannot see a declared
            // `width=0` on a kind without widths: the rule for a declared width, as the derive's.
            rules::check_width_declared(kind)
                .map_err(|rule| Error::broken(Some(&self.name), rule))?;
            spec = spec.with_width(width);
        }
        if self.order == OrderConfig::Desc {
            spec = spec.descending();
        }
        if self.escaped {
            spec = spec.escaped();
        }
        if self.optional {
            spec = spec.optional();
        }
        if let Some(p) = self.precision {
            spec = spec.with_precision(p);
        }
        Ok(FieldDef {
            name: self.name.clone(),
            spec,
        })
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn check_name(name: &str) -> Result<()> {
    rules::check_field_name(name).map_err(|rule| Error::broken(Some(name), rule))
}

impl TryFrom<LayoutConfig> for Layout {
    type Error = Error;

    #[cfg_attr(debug_assertions, inline)]
    fn try_from(config: LayoutConfig) -> Result<Self> {
        if config.fields.is_empty() {
            return Err(Error::layout(None, "a layout needs at least one field"));
        }
        let delimiter = match config.delimiter {
            None => DEFAULT_DELIMITER,
            Some(c) => rules::check_delimiter(c).map_err(|rule| Error::broken(None, rule))?,
        };
        let mut fields: Vec<FieldDef> = Vec::with_capacity(config.fields.len());
        // Each name's field: a map, so that a layout of many fields, and a prefix that names
        // many of them, load in linear time.
        let mut names = std::collections::HashMap::with_capacity(config.fields.len());
        for (i, field) in config.fields.iter().enumerate() {
            check_name(&field.name)?;
            if names.insert(field.name.as_str(), i).is_some() {
                return Err(Error::layout(
                    Some(&field.name),
                    "the name is used by an earlier field",
                ));
            }
            fields.push(field.to_def()?);
        }
        let index_of = |name: &str| -> Result<usize> {
            names.get(name).copied().ok_or_else(|| {
                Error::layout(
                    None,
                    format!("the prefix names `{name}`, which is not a field"),
                )
            })
        };
        let (prefix, bucket) = match &config.prefix {
            None => (Prefix::None, BucketFields::None),
            Some(PrefixConfig::Hash {
                algorithm,
                len,
                separator,
                fields: names,
            }) => {
                let (over, bucket) = if names.is_empty() {
                    (HashOver::Key, BucketFields::None)
                } else {
                    let mut hashed = vec![false; fields.len()];
                    let mut indices = Vec::with_capacity(names.len());
                    for name in names {
                        let i = index_of(name)?;
                        if hashed[i] {
                            return Err(Error::layout(
                                Some(name),
                                "the hash prefix names this field twice",
                            ));
                        }
                        hashed[i] = true;
                        indices.push(i);
                    }
                    rules::check_hash_leading(&hashed).map_err(|rule| Error::broken(None, rule))?;
                    indices.sort_unstable();
                    (HashOver::LeadingFields, BucketFields::Hash(indices))
                };
                (
                    Prefix::Hash {
                        alg: *algorithm,
                        len: *len,
                        separator: Separator::from(*separator),
                        over,
                    },
                    bucket,
                )
            }
            Some(PrefixConfig::Buckets {
                count,
                by,
                fields: names,
                separator,
            }) => {
                let bucket = match by {
                    BucketBy::Modulo => {
                        let [name] = names.as_slice() else {
                            return Err(Error::layout(
                                None,
                                format!(
                                    "a modulo bucket prefix names exactly one integer field, not {}",
                                    names.len()
                                ),
                            ));
                        };
                        let i = index_of(name)?;
                        rules::check_modulo_field(&fields[i].spec)
                            .map_err(|rule| Error::broken(Some(name), rule))?;
                        BucketFields::Modulo(i)
                    }
                    BucketBy::Hash => {
                        let mut hashed = vec![false; fields.len()];
                        let mut indices = Vec::with_capacity(names.len());
                        for name in names {
                            let i = index_of(name)?;
                            if hashed[i] {
                                return Err(Error::layout(
                                    Some(name),
                                    "the bucket hash names this field twice",
                                ));
                            }
                            hashed[i] = true;
                            indices.push(i);
                        }
                        indices.sort_unstable();
                        rules::check_hash_runs(&hashed)
                            .map_err(|rule| Error::broken(None, rule))?;
                        BucketFields::Hash(indices)
                    }
                };
                (
                    Prefix::Bucket {
                        count: *count,
                        by: *by,
                        separator: Separator::from(*separator),
                    },
                    bucket,
                )
            }
        };
        let shape = KeyShape::new(delimiter)
            .with_prefix(prefix)
            .with_max_len(config.max_len.unwrap_or(DEFAULT_MAX_LEN));
        shape.validate()?;
        for def in &fields {
            shape.check_field(&def.name, &def.spec)?;
        }
        let plan = Plan::new(&fields, &bucket, &shape);
        Ok(Self {
            fields,
            shape,
            bucket,
            plan,
            form: config.form.unwrap_or_default(),
        })
    }
}

impl From<Layout> for LayoutConfig {
    #[cfg_attr(debug_assertions, inline)]
    fn from(layout: Layout) -> Self {
        let shape = layout.shape;
        let names = |indices: &[usize]| -> Vec<String> {
            indices
                .iter()
                .map(|&i| layout.fields[i].name.clone())
                .collect()
        };
        let prefix = match shape.prefix() {
            Prefix::None => None,
            Prefix::Hash {
                alg,
                len,
                separator,
                ..
            } => Some(PrefixConfig::Hash {
                algorithm: alg,
                len,
                separator: separator.is_after(),
                fields: match &layout.bucket {
                    BucketFields::Hash(v) => names(v),
                    _ => Vec::new(),
                },
            }),
            Prefix::Bucket {
                count,
                by,
                separator,
            } => Some(PrefixConfig::Buckets {
                count,
                by,
                fields: match &layout.bucket {
                    BucketFields::Modulo(i) => names(&[*i]),
                    BucketFields::Hash(v) => names(v),
                    BucketFields::None => Vec::new(),
                },
                separator: separator.is_after(),
            }),
        };
        Self {
            delimiter: (shape.delimiter() != DEFAULT_DELIMITER)
                .then(|| char::from(shape.delimiter())),
            max_len: (shape.max_len() != DEFAULT_MAX_LEN).then_some(shape.max_len()),
            prefix,
            form: (layout.form != Form::Text).then_some(layout.form),
            fields: layout.fields.into_iter().map(FieldConfig::from).collect(),
        }
    }
}
