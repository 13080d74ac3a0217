//! Field values from command-line text, and back to JSON.

use pk_codec::{FieldDef, Layout, Value};

/// Parses `text` as a value of `field`'s kind ([`field_value`](pk_codec::table::analysis::field_value)).
/// An empty text is `null` for an optional field.
pub(crate) fn parse(field: &FieldDef, text: &str) -> Result<Value, String> {
    pk_codec::table::analysis::field_value(field, text)
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

/// A value as JSON, keeping every bit of it: integers as numbers when they fit 64 bits, else as
/// strings; floats as numbers when finite, else as `inf`, `-inf`, `NaN` or `-NaN`, or a NaN with
/// a payload of its own as its bits, `NaN:0x7ff8000000000001` (what [`parse`] reads back); bytes as text when they are UTF-8, else as an array of byte values;
/// timestamps as whole milliseconds since the epoch, or as a decimal string of milliseconds
/// when they have digits below the millisecond.
pub(crate) fn to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Uint(n) => u64::try_from(*n).map_or_else(|_| J::String(n.to_string()), J::from),
        Value::Int(n) => i64::try_from(*n).map_or_else(|_| J::String(n.to_string()), J::from),
        Value::Str(s) => J::String(s.clone()),
        Value::Bytes(b) => std::str::from_utf8(b).map_or_else(
            |_| J::Array(b.iter().map(|&byte| J::from(byte)).collect()),
            |text| J::String(text.to_owned()),
        ),
        Value::Bool(b) => J::Bool(*b),
        Value::Char(c) => J::String(c.to_string()),
        // A NaN whose payload is not the plain quiet NaN's prints by its bits, which the key
        // keeps (`NaN` would read back as the plain one, another key).
        Value::F32(f) if f.is_nan() && f.to_bits() & !(1 << 31) != f32::NAN.to_bits() => {
            J::String(format!("NaN:{:#010x}", f.to_bits()))
        }
        Value::F64(f) if f.is_nan() && f.to_bits() & !(1 << 63) != f64::NAN.to_bits() => {
            J::String(format!("NaN:{:#018x}", f.to_bits()))
        }
        Value::F32(f) => float_json(f64::from(*f)),
        Value::F64(f) => float_json(*f),
        Value::Uuid(u) => J::String(format!("{u:032x}")),
        Value::Timestamp(ns) if ns % 1_000_000 == 0 => i64::try_from(ns / 1_000_000)
            .map_or_else(|_| J::String((ns / 1_000_000).to_string()), J::from),
        Value::Timestamp(ns) => {
            let sign = if *ns < 0 { "-" } else { "" };
            let abs = ns.unsigned_abs();
            let decimals = format!("{:06}", abs % 1_000_000);
            J::String(format!(
                "{sign}{}.{}",
                abs / 1_000_000,
                decimals.trim_end_matches('0')
            ))
        }
        _ => J::String(v.to_string()),
    }
}

/// A float as JSON: a number when finite (JSON has no other), else the text [`parse`] reads.
fn float_json(f: f64) -> serde_json::Value {
    if f.is_finite() {
        serde_json::Value::from(f)
    } else {
        let text = match (f.is_nan(), f.is_sign_negative()) {
            (true, false) => "NaN",
            (true, true) => "-NaN",
            (false, false) => "inf",
            (false, true) => "-inf",
        };
        serde_json::Value::String(text.to_owned())
    }
}
