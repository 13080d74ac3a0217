//! Figures as a person reads them: sizes in KB, MB and GB, counts with separators, spans in
//! the largest unit that reads well.

/// Bytes in decimal units: `512 bytes`, `283.1 MB`, `10.0 GB`.
///
/// # Examples
///
/// ```
/// use pk_codec::table::analysis::format::bytes;
///
/// assert_eq!(bytes(512), "512 bytes");
/// assert_eq!(bytes(283_109_655), "283.1 MB");
/// assert_eq!(bytes(10_000_000_000), "10.0 GB");
/// ```
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (unit, size) in UNITS {
        if n as f64 >= size {
            return format!("{:.1} {unit}", n as f64 / size);
        }
    }
    format!("{n} bytes")
}

/// A count with thousands separators: `336,776`.
///
/// # Examples
///
/// ```
/// use pk_codec::table::analysis::format::count;
///
/// assert_eq!(count(336_776), "336,776");
/// assert_eq!(count(7), "7");
/// ```
#[must_use]
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A span of ms in the largest unit that reads well: `3.5 days`, `50.0 min`, `1.2 s`.
///
/// # Examples
///
/// ```
/// use pk_codec::table::analysis::format::span;
///
/// assert_eq!(span(3_000_000), "50.0 min");
/// ```
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn span(ms: i64) -> String {
    let ms = ms as f64;
    match ms {
        m if m >= 86_400_000.0 => format!("{:.1} days", m / 86_400_000.0),
        m if m >= 3_600_000.0 => format!("{:.1} h", m / 3_600_000.0),
        m if m >= 60_000.0 => format!("{:.1} min", m / 60_000.0),
        m => format!("{:.1} s", m / 1_000.0),
    }
}
