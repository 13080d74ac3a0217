//! The text form of a layout: `"device_id: u32 width=6; seller_id: str"`, parsed by
//! [`FromStr`] and printed by [`Display`](fmt::Display).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::kinds::Form;
use crate::kinds::Kind;
use crate::prefix::BucketBy;
use crate::timestamp::Precision;

use super::Layout;
use super::config::{FieldConfig, LayoutConfig, OrderConfig, ParamValue, PrefixConfig};

/// A piece of the text being parsed, with its byte offset in the whole text: every error names
/// the position of the piece it is about, and every piece is cut from another by these methods,
/// which keep the offset.
#[derive(Debug, Clone, Copy)]
struct Piece<'s> {
    text: &'s str,
    at: usize,
}

impl<'s> Piece<'s> {
    #[cfg_attr(debug_assertions, inline)]
    fn str(self) -> &'s str {
        self.text
    }

    #[cfg_attr(debug_assertions, inline)]
    fn is_empty(self) -> bool {
        self.text.is_empty()
    }

    /// The piece from byte `i` on.
    #[cfg_attr(debug_assertions, inline)]
    fn from(self, i: usize) -> Self {
        Piece {
            text: &self.text[i..],
            at: self.at + i,
        }
    }

    /// The piece up to byte `i`.
    #[cfg_attr(debug_assertions, inline)]
    fn to(self, i: usize) -> Self {
        Piece {
            text: &self.text[..i],
            at: self.at,
        }
    }

    #[cfg_attr(debug_assertions, inline)]
    fn trim(self) -> Self {
        let start = self.text.len() - self.text.trim_start().len();
        let piece = self.from(start);
        piece.to(piece.text.trim_end().len())
    }

    #[cfg_attr(debug_assertions, inline)]
    fn find(self, c: char) -> Option<usize> {
        self.text.find(c)
    }

    #[cfg_attr(debug_assertions, inline)]
    fn split_once(self, c: char) -> Option<(Self, Self)> {
        let i = self.text.find(c)?;
        Some((self.to(i), self.from(i + c.len_utf8())))
    }

    #[cfg_attr(debug_assertions, inline)]
    fn rsplit_once(self, c: char) -> Option<(Self, Self)> {
        let i = self.text.rfind(c)?;
        Some((self.to(i), self.from(i + c.len_utf8())))
    }

    #[cfg_attr(debug_assertions, inline)]
    fn strip_prefix(self, prefix: &str) -> Option<Self> {
        self.text
            .starts_with(prefix)
            .then(|| self.from(prefix.len()))
    }

    #[cfg_attr(debug_assertions, inline)]
    fn strip_suffix(self, suffix: &str) -> Option<Self> {
        self.text
            .ends_with(suffix)
            .then(|| self.to(self.text.len() - suffix.len()))
    }

    /// The pieces between the `c`s (as [`str::split`]).
    #[cfg_attr(debug_assertions, inline)]
    fn split(self, c: char) -> impl Iterator<Item = Self> {
        let mut rest = Some(self);
        std::iter::from_fn(move || {
            let piece = rest?;
            match piece.split_once(c) {
                Some((before, after)) => {
                    rest = Some(after);
                    Some(before)
                }
                None => {
                    rest = None;
                    Some(piece)
                }
            }
        })
    }

    /// The words between runs of whitespace (as [`str::split_whitespace`]).
    #[cfg_attr(debug_assertions, inline)]
    fn words(self) -> impl Iterator<Item = Self> {
        let mut rest = self;
        std::iter::from_fn(move || {
            rest = rest.from(rest.text.len() - rest.text.trim_start().len());
            if rest.is_empty() {
                return None;
            }
            let end = rest
                .text
                .find(char::is_whitespace)
                .unwrap_or(rest.text.len());
            let word = rest.to(end);
            rest = rest.from(end);
            Some(word)
        })
    }
}

/// Parses the text form into the serde form, which [`Layout`]'s `TryFrom` then checks.
struct TextParser;

impl TextParser {
    #[cfg_attr(debug_assertions, inline)]
    fn err(at: Piece<'_>, reason: impl Into<String>) -> Error {
        Error::InvalidSpec {
            position: at.at,
            reason: reason.into(),
        }
    }

    /// Splits on `;` outside single quotes.
    #[cfg_attr(debug_assertions, inline)]
    fn items(text: Piece<'_>) -> Vec<Piece<'_>> {
        let mut items = Vec::new();
        let mut start = 0;
        let mut quoted = false;
        let mut escaped = false;
        for (i, c) in text.str().char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '\'' => quoted = !quoted,
                ';' if !quoted => {
                    items.push(text.from(start).to(i - start));
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(text.from(start));
        items
    }

    #[cfg_attr(debug_assertions, inline)]
    fn parse(text: &str) -> Result<LayoutConfig> {
        let mut config = LayoutConfig {
            delimiter: None,
            max_len: None,
            prefix: None,
            form: None,
            fields: Vec::new(),
        };
        for item in Self::items(Piece { text, at: 0 }) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            match (item.find(':'), item.find('=')) {
                (Some(c), Some(e)) if e < c => Self::setting(item, e, &mut config)?,
                (None, Some(e)) => Self::setting(item, e, &mut config)?,
                (Some(c), _) => config.fields.push(Self::field(item, c)?),
                (None, None) => {
                    return Err(Self::err(
                        item,
                        format!(
                            "expected `name: type` or `setting=value`, found {:?}",
                            item.str()
                        ),
                    ));
                }
            }
        }
        Ok(config)
    }

    fn number<T: FromStr>(text: Piece<'_>, what: &str) -> Result<T> {
        let trimmed = text.trim().str();
        trimmed
            .parse()
            .map_err(|_| Self::err(text, format!("expected {what}, found {trimmed:?}")))
    }

    #[cfg_attr(debug_assertions, inline)]
    fn field(item: Piece<'_>, colon: usize) -> Result<FieldConfig> {
        let name = item.to(colon).trim().str();
        let rest = item.from(colon + 1);
        let mut words = rest.words();
        let Some(ty) = words.next() else {
            return Err(Self::err(
                rest,
                format!("field `{name}` needs a type after `:`"),
            ));
        };
        let Some(kind) = Kind::from_name(ty.str()) else {
            return Err(Self::err(
                ty,
                format!(
                    "unknown type {:?}; expected one of {}",
                    ty.str(),
                    Kind::names()
                ),
            ));
        };
        let mut field = FieldConfig {
            name: name.to_owned(),
            ty: ty.str().to_owned(),
            width: None,
            order: OrderConfig::Asc,
            escaped: false,
            optional: false,
            precision: None,
            params: BTreeMap::new(),
        };
        let (mut order_given, mut escaped_given, mut optional_given) = (false, false, false);
        for word in words {
            match word.str() {
                "desc" | "asc" => {
                    Self::once(word, order_given, "an order (asc or desc)")?;
                    order_given = true;
                    field.order = if word.str() == "desc" {
                        OrderConfig::Desc
                    } else {
                        OrderConfig::Asc
                    };
                }
                "escaped" => {
                    Self::once(word, escaped_given, "escaped")?;
                    escaped_given = true;
                    field.escaped = true;
                }
                "optional" => {
                    Self::once(word, optional_given, "optional")?;
                    optional_given = true;
                    field.optional = true;
                }
                _ => {
                    if let Some(name) = word.strip_prefix("precision=") {
                        Self::once(word, field.precision.is_some(), "precision")?;
                        field.precision =
                            Some(Precision::from_name(name.str()).ok_or_else(|| {
                                Self::err(
                                    name,
                                    format!(
                                        "unknown precision {:?}; expected s, ms, us or ns",
                                        name.str()
                                    ),
                                )
                            })?);
                    } else if let Some(width) = word.strip_prefix("width=") {
                        Self::once(word, field.width.is_some(), "width")?;
                        field.width = Some(Self::number(width, "a width from 1 to 40")?);
                    } else if let Some((param, _)) = word.str().split_once('=')
                        && kind.param_names().contains(&param)
                    {
                        Self::once(word, field.params.contains_key(param), param)?;
                        let value = word.from(param.len() + 1);
                        field.params.insert(
                            param.to_owned(),
                            ParamValue::Number(Self::number(value, "a number")?),
                        );
                    } else {
                        let params: String = kind
                            .param_names()
                            .iter()
                            .map(|p| format!(", {p}=N"))
                            .collect();
                        return Err(Self::err(
                            word,
                            format!(
                                "unknown modifier {:?}; expected width=N, desc, escaped, optional or precision=P{params}",
                                word.str()
                            ),
                        ));
                    }
                }
            }
        }
        Ok(field)
    }

    #[cfg_attr(debug_assertions, inline)]
    fn setting(item: Piece<'_>, eq: usize, config: &mut LayoutConfig) -> Result<()> {
        let key = item.to(eq).trim();
        let value = item.from(eq + 1).trim();
        match key.str() {
            "delimiter" => {
                Self::once(key, config.delimiter.is_some(), "delimiter")?;
                config.delimiter = Some(Self::char_literal(value)?);
            }
            "max_len" => {
                Self::once(key, config.max_len.is_some(), "max_len")?;
                config.max_len = Some(Self::number(value, "a length in bytes")?);
            }
            "form" => {
                Self::once(key, config.form.is_some(), "form")?;
                config.form = Some(Form::from_name(value.str()).ok_or_else(|| {
                    Self::err(
                        value,
                        format!("unknown form {:?}; expected text or binary", value.str()),
                    )
                })?);
            }
            "hash" => {
                let mut parts = value.split(':');
                let alg_part = parts.next().unwrap_or(value);
                let (alg, hashed) = match alg_part.split_once('(') {
                    Some((alg, rest)) => {
                        let inner = rest.strip_suffix(")").ok_or_else(|| {
                            Self::err(
                                rest,
                                "expected `)` after the hashed fields, e.g. `hash=md5(device_id):4`",
                            )
                        })?;
                        (alg, Self::names(inner))
                    }
                    None => (alg_part, Vec::new()),
                };
                let algorithm = HashAlg::from_name(alg.str()).ok_or_else(|| {
                    Self::err(
                        alg,
                        format!(
                            "unknown hash {:?}; expected md5, xxh32, xxh64 or xxh3",
                            alg.str()
                        ),
                    )
                })?;
                let len_text = parts.next().ok_or_else(|| {
                    Self::err(
                        value,
                        "expected `hash=ALG:LEN` or `hash=ALG(fields):LEN`, e.g. `hash=md5:4`",
                    )
                })?;
                let len = Self::number(len_text, "a prefix length in hex characters")?;
                let separator = Self::separator(parts.next())?;
                if let Some(extra) = parts.next() {
                    return Err(Self::err(
                        extra,
                        format!("unexpected {:?} after `hash=ALG:LEN[:sep]`", extra.str()),
                    ));
                }
                Self::once(key, config.prefix.is_some(), "a prefix (hash or buckets)")?;
                config.prefix = Some(PrefixConfig::Hash {
                    algorithm,
                    len,
                    separator,
                    fields: hashed,
                });
            }
            "buckets" => {
                let (count_text, rest) = value.split_once(':').ok_or_else(|| {
                    Self::err(
                        value,
                        "expected `buckets=N:mod(field)` or `buckets=N:hash(fields)`",
                    )
                })?;
                let count = Self::number(count_text, "a bucket count")?;
                let (how, sep) = match rest.rsplit_once(':') {
                    Some((how, sep)) if !sep.str().contains(')') => (how, Some(sep)),
                    _ => (rest, None),
                };
                let (by, fields) = if let Some(inner) =
                    how.strip_prefix("mod(").and_then(|s| s.strip_suffix(")"))
                {
                    (BucketBy::Modulo, vec![inner.trim().str().to_owned()])
                } else if how.str() == "hash" {
                    (BucketBy::Hash, Vec::new())
                } else if let Some(inner) =
                    how.strip_prefix("hash(").and_then(|s| s.strip_suffix(")"))
                {
                    (BucketBy::Hash, Self::names(inner))
                } else {
                    return Err(Self::err(
                        how,
                        format!(
                            "expected `mod(field)` or `hash(fields)`, found {:?}",
                            how.str()
                        ),
                    ));
                };
                Self::once(key, config.prefix.is_some(), "a prefix (hash or buckets)")?;
                config.prefix = Some(PrefixConfig::Buckets {
                    count,
                    by,
                    fields,
                    separator: Self::separator(sep)?,
                });
            }
            _ => {
                return Err(Self::err(
                    key,
                    format!(
                        "unknown setting {:?}; expected delimiter, max_len, hash, buckets or form",
                        key.str()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Field names separated by `,`.
    #[cfg_attr(debug_assertions, inline)]
    fn names(list: Piece<'_>) -> Vec<String> {
        list.split(',').map(|f| f.trim().str().to_owned()).collect()
    }

    /// Refuses a second `what` at `at`.
    #[cfg_attr(debug_assertions, inline)]
    fn once(at: Piece<'_>, given: bool, what: &str) -> Result<()> {
        if given {
            Err(Self::err(
                at,
                format!("{what} is given twice; give it once"),
            ))
        } else {
            Ok(())
        }
    }

    #[cfg_attr(debug_assertions, inline)]
    fn separator(word: Option<Piece<'_>>) -> Result<bool> {
        match word {
            None => Ok(false),
            Some(sep) if sep.str() == "sep" => Ok(true),
            Some(other) => Err(Self::err(
                other,
                format!("expected `sep`, found {:?}", other.str()),
            )),
        }
    }

    #[cfg_attr(debug_assertions, inline)]
    fn char_literal(value: Piece<'_>) -> Result<char> {
        let inner = value
            .strip_prefix("'")
            .and_then(|v| v.strip_suffix("'"))
            .ok_or_else(|| Self::err(value, "expected a quoted character, e.g. ','"))?
            .str();
        let c = if let Some(hex) = inner.strip_prefix("\\x") {
            u8::from_str_radix(hex, 16).ok().map(char::from)
        } else {
            match inner {
                "\\t" => Some('\t'),
                "\\\\" => Some('\\'),
                "\\'" => Some('\''),
                _ => {
                    let mut chars = inner.chars();
                    chars.next().filter(|_| chars.next().is_none())
                }
            }
        };
        c.ok_or_else(|| {
            Self::err(
                value,
                format!("expected one character or '\\xNN', found {}", value.str()),
            )
        })
    }
}

impl FromStr for Layout {
    type Err = Error;

    #[cfg_attr(debug_assertions, inline)]
    fn from_str(text: &str) -> Result<Self> {
        TextParser::parse(text)?.try_into()
    }
}

impl fmt::Display for Layout {
    /// The text spec of this layout; it parses back to an equal layout.
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = LayoutConfig::from(self.clone());
        let mut items: Vec<String> = Vec::new();
        for field in &config.fields {
            let mut s = format!("{}: {}", field.name, field.ty);
            if let Some(w) = field.width {
                s.push_str(&format!(" width={w}"));
            }
            if field.order == OrderConfig::Desc {
                s.push_str(" desc");
            }
            if field.escaped {
                s.push_str(" escaped");
            }
            if field.optional {
                s.push_str(" optional");
            }
            if let Some(p) = field.precision {
                s.push_str(" precision=");
                s.push_str(p.name());
            }
            for (param, value) in &field.params {
                if let ParamValue::Number(n) = value {
                    s.push_str(&format!(" {param}={n}"));
                }
            }
            items.push(s);
        }
        if let Some(d) = config.delimiter {
            let lit = match d {
                '\'' | '\\' => format!("'\\{d}'"),
                d if d.is_ascii_graphic() || d == ' ' => format!("'{d}'"),
                d => format!("'\\x{:02x}'", u32::from(d)),
            };
            items.push(format!("delimiter={lit}"));
        }
        if let Some(m) = config.max_len {
            items.push(format!("max_len={m}"));
        }
        if let Some(form) = config.form {
            items.push(format!("form={}", form.name()));
        }
        let sep = |s: bool| if s { ":sep" } else { "" };
        match &config.prefix {
            None => {}
            Some(PrefixConfig::Hash {
                algorithm,
                len,
                separator,
                fields,
            }) => {
                let over = if fields.is_empty() {
                    String::new()
                } else {
                    format!("({})", fields.join(","))
                };
                items.push(format!(
                    "hash={}{over}:{len}{}",
                    algorithm.name(),
                    sep(*separator)
                ));
            }
            Some(PrefixConfig::Buckets {
                count,
                by,
                fields,
                separator,
            }) => {
                let how = match (by, fields.is_empty()) {
                    (BucketBy::Modulo, _) => format!("mod({})", fields.join(",")),
                    (BucketBy::Hash, true) => "hash".to_owned(),
                    (BucketBy::Hash, false) => format!("hash({})", fields.join(",")),
                };
                items.push(format!("buckets={count}:{how}{}", sep(*separator)));
            }
        }
        f.write_str(&items.join("; "))
    }
}
