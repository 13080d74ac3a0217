//! Field values from command-line text, and back to JSON.

use pk_codec::{FieldDef, Kind, Layout, Value};

/// Parses `text` as a value of `field`'s kind. An empty text is `null` for an optional field.
pub(crate) fn parse(field: &FieldDef, text: &str) -> Result<Value, String> {
    let spec = field.spec();
    if text.is_empty() && spec.is_optional() {
        return Ok(Value::Null);
    }
    let kind = spec.kind();
    let bad = |why: &str| {
        format!(
            "field {}: {text:?} is not a {} ({why})",
            field.name(),
            kind.name()
        )
    };
    let value = match kind {
        Kind::Uint { .. } => Value::Uint(text.parse().map_err(|_| bad("digits only"))?),
        Kind::Int { .. } => Value::Int(
            text.parse()
                .map_err(|_| bad("an optional minus and digits"))?,
        ),
        Kind::Str => Value::Str(text.to_owned()),
        Kind::Bytes => Value::Bytes(text.as_bytes().to_vec()),
        Kind::Bool => Value::Bool(text.parse().map_err(|_| bad("true or false"))?),
        Kind::Char => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Value::Char(c),
                _ => return Err(bad("one character")),
            }
        }
        Kind::F32 => Value::F32(text.parse().map_err(|_| bad("a number"))?),
        Kind::F64 => Value::F64(text.parse().map_err(|_| bad("a number"))?),
        Kind::Uuid => {
            let hex: String = text.chars().filter(|c| *c != '-').collect();
            if hex.len() != 32 {
                return Err(bad("32 hex digits, hyphens allowed"));
            }
            Value::Uuid(u128::from_str_radix(&hex, 16).map_err(|_| bad("32 hex digits"))?)
        }
        Kind::Timestamp => {
            let ms: i128 = text
                .parse()
                .map_err(|_| bad("milliseconds since 1970-01-01 UTC"))?;
            // Checked: the text may hold any i128, and the value is in nanoseconds.
            let ns = ms.checked_mul(1_000_000).ok_or_else(|| {
                bad("milliseconds since 1970-01-01 UTC: too far from 1970 to count in nanoseconds")
            })?;
            Value::Timestamp(ns)
        }
        _ => return Err(bad("this kind is not supported on the command line")),
    };
    Ok(value)
}

/// One value per field of `layout`.
pub(crate) fn parse_all(layout: &Layout, texts: &[String]) -> Result<Vec<Value>, String> {
    if texts.len() != layout.fields().len() {
        return Err(format!(
            "the spec has {} fields, {} values were given",
            layout.fields().len(),
            texts.len()
        ));
    }
    parse_all_prefix(layout, texts)
}

/// Values of the leading fields of `layout`.
pub(crate) fn parse_all_prefix(layout: &Layout, texts: &[String]) -> Result<Vec<Value>, String> {
    if texts.len() > layout.fields().len() {
        return Err(format!(
            "the spec has {} fields, {} values were given",
            layout.fields().len(),
            texts.len()
        ));
    }
    layout
        .fields()
        .iter()
        .zip(texts)
        .map(|(f, t)| parse(f, t))
        .collect()
}

/// A value as JSON: integers as numbers when they fit 64 bits, else as strings.
pub(crate) fn to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Uint(n) => u64::try_from(*n).map_or_else(|_| J::String(n.to_string()), J::from),
        Value::Int(n) => i64::try_from(*n).map_or_else(|_| J::String(n.to_string()), J::from),
        Value::Str(s) => J::String(s.clone()),
        Value::Bytes(b) => J::String(String::from_utf8_lossy(b).into_owned()),
        Value::Bool(b) => J::Bool(*b),
        Value::Char(c) => J::String(c.to_string()),
        Value::F32(f) => J::from(f64::from(*f)),
        Value::F64(f) => J::from(*f),
        Value::Uuid(u) => J::String(format!("{u:032x}")),
        Value::Timestamp(ns) => i64::try_from(ns.div_euclid(1_000_000))
            .map_or_else(|_| J::String(ns.to_string()), J::from),
        _ => J::String(format!("{v:?}")),
    }
}
