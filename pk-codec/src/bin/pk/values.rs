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
        Kind::F32 => Value::F32(float(text).map_err(&bad)?),
        Kind::F64 => Value::F64(float(text).map_err(&bad)?),
        Kind::Uuid => {
            let hex: String = text.chars().filter(|c| *c != '-').collect();
            // Hex digits only: `from_str_radix` would also take a leading `+`.
            if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad("32 hex digits, hyphens allowed"));
            }
            Value::Uuid(u128::from_str_radix(&hex, 16).map_err(|_| bad("32 hex digits"))?)
        }
        Kind::Timestamp => Value::Timestamp(timestamp_nanos(text).map_err(&bad)?),
        _ => return Err(bad("this kind is not supported on the command line")),
    };
    Ok(value)
}

/// A float type `pk` reads: [`float`] for both widths.
trait Float: std::str::FromStr {
    /// The float of these bits in hex, when they are a NaN's.
    fn nan_of_hex(hex: &str) -> Option<Self>;
    /// Whether it is an infinity.
    fn is_infinite(&self) -> bool;
}

macro_rules! float_of_bits {
    ($($f:ty = $bits:ty),*) => {$(
        impl Float for $f {
            fn nan_of_hex(hex: &str) -> Option<Self> {
                <$bits>::from_str_radix(hex, 16)
                    .ok()
                    .map(<$f>::from_bits)
                    .filter(|f| f.is_nan())
            }
            fn is_infinite(&self) -> bool {
                <$f>::is_infinite(*self)
            }
        }
    )*};
}
float_of_bits!(f32 = u32, f64 = u64);

/// A float of `text`: a number, `inf`, `NaN` and the like, or a NaN written by its bits,
/// `NaN:0x<hex>` (what [`to_json`] prints of a NaN with a payload of its own; only a NaN's
/// bits are taken). A number too large for the type (which the parser rounds to infinity) is
/// refused: only an infinity written as one (`inf`, `-infinity`) is infinite.
fn float<F: Float>(text: &str) -> Result<F, &'static str> {
    match text.strip_prefix("NaN:0x") {
        // Hex digits only: `from_str_radix` would take a `+` too.
        Some(hex) => hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| F::nan_of_hex(hex))
            .flatten()
            .ok_or("a NaN's bits in hex (NaN:0x7ff8000000000001), a NaN"),
        None => {
            let f: F = text.parse().map_err(|_| "a number")?;
            let word = text.trim_start_matches(['+', '-']);
            let infinity =
                word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity");
            if f.is_infinite() && !infinity {
                return Err("a number within the type's range; infinities are written inf or -inf");
            }
            Ok(f)
        }
    }
}

/// Nanoseconds since the epoch of `text`, milliseconds since 1970-01-01 UTC with at most six
/// decimals (what [`to_json`] prints of a timestamp below the millisecond).
fn timestamp_nanos(text: &str) -> Result<i128, &'static str> {
    const WHAT: &str = "milliseconds since 1970-01-01 UTC, with at most 6 decimals";
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    let ms: i128 = whole.parse().map_err(|_| WHAT)?;
    let digits = decimals.len();
    if text.contains('.')
        && (digits == 0 || digits > 6 || !decimals.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(WHAT);
    }
    // At most 6 digits: below 10^6.
    let fraction: i128 = if digits == 0 {
        0
    } else {
        decimals.parse::<i128>().map_err(|_| WHAT)? * 10i128.pow(6 - digits as u32)
    };
    let negative = whole.trim_start().starts_with('-');
    // Checked: the text may hold any i128, and the value is in nanoseconds.
    ms.checked_mul(1_000_000)
        .and_then(|ns| {
            if negative {
                ns.checked_sub(fraction)
            } else {
                ns.checked_add(fraction)
            }
        })
        .ok_or("milliseconds since 1970-01-01 UTC: too far from 1970 to count in nanoseconds")
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
        _ => J::String(format!("{v:?}")),
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
