//! Timestamp fields: fixed-width UTC text a person can read in a store console
//! (`2026-11-22T10:26:00.123Z`), whose byte order is time order.
//!
//! Values are nanoseconds since the Unix epoch ([`Value::Timestamp`](crate::Value::Timestamp)),
//! from `0000-01-01T00:00:00Z` to `9999-12-31T23:59:59.999999999Z` (proleptic Gregorian
//! calendar, no leap seconds). A field's [`Precision`] fixes how many fraction digits it writes;
//! a value with digits below the precision is refused rather than truncated, so that distinct
//! values never share a key. Descending fields write every digit `d` as `9 - d`.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// How many fraction digits a timestamp field writes.
///
/// # Examples
///
/// ```
/// use pk_codec::Precision;
///
/// assert_eq!(Precision::Millis.digits(), 3);
/// assert_eq!(Precision::Seconds.text_len(), "2026-11-22T10:26:00Z".len());
/// assert_eq!(Precision::from_name("us"), Some(Precision::Micros));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Precision {
    /// Whole seconds: `2026-11-22T10:26:00Z`.
    #[cfg_attr(feature = "serde", serde(rename = "s"))]
    Seconds,
    /// Milliseconds (the default): `2026-11-22T10:26:00.123Z`.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "ms"))]
    Millis,
    /// Microseconds: `2026-11-22T10:26:00.123456Z`.
    #[cfg_attr(feature = "serde", serde(rename = "us"))]
    Micros,
    /// Nanoseconds: `2026-11-22T10:26:00.123456789Z`.
    #[cfg_attr(feature = "serde", serde(rename = "ns"))]
    Nanos,
}

impl Precision {
    /// The fraction digits written.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn digits(self) -> u32 {
        match self {
            Self::Seconds => 0,
            Self::Millis => 3,
            Self::Micros => 6,
            Self::Nanos => 9,
        }
    }

    /// The length of the field's text in bytes.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn text_len(self) -> usize {
        match self.digits() {
            0 => 20,
            d => 21 + d as usize,
        }
    }

    /// The name in a spec: `s`, `ms`, `us`, `ns`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Seconds => "s",
            Self::Millis => "ms",
            Self::Micros => "us",
            Self::Nanos => "ns",
        }
    }

    /// The precision named `name` (usable in constants, as derived keys do).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn from_name(name: &str) -> Option<Self> {
        match name.as_bytes() {
            b"s" => Some(Self::Seconds),
            b"ms" => Some(Self::Millis),
            b"us" => Some(Self::Micros),
            b"ns" => Some(Self::Nanos),
            _ => None,
        }
    }

    /// The nanoseconds in one unit of this precision.
    #[cfg_attr(debug_assertions, inline)]
    const fn unit(self) -> i128 {
        10i128.pow(9 - self.digits())
    }
}

/// The first second written: `0000-01-01T00:00:00Z`.
pub(crate) const MIN_SECS: i64 = -62_167_219_200;
/// The last second written: `9999-12-31T23:59:59Z`.
pub(crate) const MAX_SECS: i64 = 253_402_300_799;

/// Why a timestamp cannot be written.
pub(crate) enum Unwritable {
    /// Before year 0 or after year 9999.
    OutOfRange,
    /// Digits below the field's precision.
    BelowPrecision,
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + if m <= 2 { 1 } else { 0 }, m, d)
}

#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Writes `nanos` (since the epoch) at `precision` into `out`, digits complemented when
/// `descending`.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write(
    out: &mut String,
    nanos: i128,
    precision: Precision,
    descending: bool,
) -> Result<(), Unwritable> {
    let secs = nanos.div_euclid(1_000_000_000);
    let sub = nanos.rem_euclid(1_000_000_000);
    if secs < i128::from(MIN_SECS) || secs > i128::from(MAX_SECS) {
        return Err(Unwritable::OutOfRange);
    }
    if sub % precision.unit() != 0 {
        return Err(Unwritable::BelowPrecision);
    }
    let secs = secs as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let tod = secs.rem_euclid(86_400);
    let mut buf = [0u8; 30];
    let mut i = 0;
    let digits = |buf: &mut [u8; 30], i: &mut usize, v: i64, n: u32| {
        let mut p = 10i64.pow(n - 1);
        while p > 0 {
            buf[*i] = b'0' + ((v / p) % 10) as u8;
            *i += 1;
            p /= 10;
        }
    };
    let sep = |buf: &mut [u8; 30], i: &mut usize, c: u8| {
        buf[*i] = c;
        *i += 1;
    };
    digits(&mut buf, &mut i, y, 4);
    sep(&mut buf, &mut i, b'-');
    digits(&mut buf, &mut i, mo, 2);
    sep(&mut buf, &mut i, b'-');
    digits(&mut buf, &mut i, d, 2);
    sep(&mut buf, &mut i, b'T');
    digits(&mut buf, &mut i, tod / 3600, 2);
    sep(&mut buf, &mut i, b':');
    digits(&mut buf, &mut i, tod / 60 % 60, 2);
    sep(&mut buf, &mut i, b':');
    digits(&mut buf, &mut i, tod % 60, 2);
    if precision.digits() > 0 {
        sep(&mut buf, &mut i, b'.');
        digits(
            &mut buf,
            &mut i,
            (sub / precision.unit()) as i64,
            precision.digits(),
        );
    }
    sep(&mut buf, &mut i, b'Z');
    for &b in &buf[..i] {
        let b = if descending && b.is_ascii_digit() {
            b'9' - (b - b'0')
        } else {
            b
        };
        out.push(char::from(b));
    }
    Ok(())
}

/// Reads the text a field of `precision` writes; `Err((offset, reason))` for any other text.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn read(
    text: &[u8],
    precision: Precision,
    descending: bool,
) -> Result<i128, (usize, &'static str)> {
    let len = precision.text_len();
    if text.len() < len {
        return Err((text.len(), "the timestamp ends early"));
    }
    let mut at = 0;
    let number = |at: &mut usize, n: usize| -> Result<i64, (usize, &'static str)> {
        let mut v = 0i64;
        for _ in 0..n {
            let b = text[*at];
            if !b.is_ascii_digit() {
                return Err((*at, "expected a digit of the timestamp"));
            }
            let d = i64::from(b - b'0');
            v = v * 10 + if descending { 9 - d } else { d };
            *at += 1;
        }
        Ok(v)
    };
    let expect = |at: &mut usize, c: u8| -> Result<(), (usize, &'static str)> {
        if text[*at] == c {
            *at += 1;
            Ok(())
        } else {
            Err((
                *at,
                "expected a separator of the timestamp (`-`, `T`, `:`, `.` or `Z`)",
            ))
        }
    };
    let y = number(&mut at, 4)?;
    expect(&mut at, b'-')?;
    let mo_at = at;
    let mo = number(&mut at, 2)?;
    expect(&mut at, b'-')?;
    let d_at = at;
    let d = number(&mut at, 2)?;
    expect(&mut at, b'T')?;
    let h_at = at;
    let h = number(&mut at, 2)?;
    expect(&mut at, b':')?;
    let mi_at = at;
    let mi = number(&mut at, 2)?;
    expect(&mut at, b':')?;
    let s_at = at;
    let s = number(&mut at, 2)?;
    let mut sub = 0i64;
    if precision.digits() > 0 {
        expect(&mut at, b'.')?;
        sub = number(&mut at, precision.digits() as usize)?;
    }
    expect(&mut at, b'Z')?;
    if !(1..=12).contains(&mo) {
        return Err((mo_at, "month out of range"));
    }
    if d < 1 || d > days_in_month(y, mo) {
        return Err((d_at, "day out of range for its month"));
    }
    if h > 23 {
        return Err((h_at, "hour out of range"));
    }
    if mi > 59 {
        return Err((mi_at, "minute out of range"));
    }
    if s > 59 {
        return Err((s_at, "second out of range"));
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    Ok(i128::from(secs) * 1_000_000_000 + i128::from(sub) * precision.unit())
}

/// Nanoseconds since the epoch of a `SystemTime`.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn system_time_nanos(t: std::time::SystemTime) -> i128 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// The `SystemTime` at `nanos` since the epoch, if the platform can hold it.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn system_time_from_nanos(nanos: i128) -> Option<std::time::SystemTime> {
    let d = std::time::Duration::new(
        u64::try_from(nanos.unsigned_abs() / 1_000_000_000).ok()?,
        (nanos.unsigned_abs() % 1_000_000_000) as u32,
    );
    if nanos >= 0 {
        std::time::UNIX_EPOCH.checked_add(d)
    } else {
        std::time::UNIX_EPOCH.checked_sub(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(nanos: i128, p: Precision, desc: bool) -> String {
        let mut s = String::new();
        assert!(write(&mut s, nanos, p, desc).is_ok());
        s
    }

    #[test]
    fn known_instants() {
        assert_eq!(text(0, Precision::Seconds, false), "1970-01-01T00:00:00Z");
        assert_eq!(
            text(1_795_343_160_123_000_000, Precision::Millis, false),
            "2026-11-22T10:26:00.123Z"
        );
        let first = i128::from(MIN_SECS) * 1_000_000_000;
        assert_eq!(
            text(first, Precision::Nanos, false),
            "0000-01-01T00:00:00.000000000Z"
        );
        let last = i128::from(MAX_SECS) * 1_000_000_000 + 999_999_999;
        assert_eq!(
            text(last, Precision::Nanos, false),
            "9999-12-31T23:59:59.999999999Z"
        );
        assert!(write(&mut String::new(), last + 1, Precision::Nanos, false).is_err());
        assert!(write(&mut String::new(), first - 1, Precision::Nanos, false).is_err());
        assert!(write(&mut String::new(), 1, Precision::Millis, false).is_err());
        assert_eq!(text(0, Precision::Seconds, true), "8029-98-98T99:99:99Z");
    }

    #[test]
    fn every_day_round_trips() {
        for day in (MIN_SECS / 86_400..=MAX_SECS / 86_400).step_by(7) {
            let nanos = i128::from(day) * 86_400 * 1_000_000_000 + 45_296_789_000_000;
            for desc in [false, true] {
                let t = text(nanos, Precision::Millis, desc);
                assert_eq!(
                    read(t.as_bytes(), Precision::Millis, desc).ok(),
                    Some(nanos),
                    "{t}"
                );
            }
        }
        assert!(read(b"2026-02-29T00:00:00Z", Precision::Seconds, false).is_err());
        assert!(read(b"2024-02-29T00:00:00Z", Precision::Seconds, false).is_ok());
        assert!(read(b"2024-13-01T00:00:00Z", Precision::Seconds, false).is_err());
        assert!(read(b"2024-12-01T24:00:00Z", Precision::Seconds, false).is_err());
    }
}
