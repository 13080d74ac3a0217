//! Floating-point fields (`f32`, `f64`): IEEE 754 total order as fixed-width hex.
//!
//! The bits are mapped so that their unsigned order is [`f64::total_cmp`]'s order (negative NaN,
//! -inf, ..., -0.0, +0.0, ..., +inf, NaN): a negative number has all its bits inverted, a
//! positive one its sign bit set. The result is written as lower-case hex, 8 characters for an
//! `f32` and 16 for an `f64` (inverted, digit by digit, when descending). Every bit pattern
//! round-trips, NaN payloads included.

/// The order-preserving image of an `f64`'s bits.
#[inline]
pub(crate) const fn f64_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The `f64` whose order-preserving image is `k`.
#[inline]
pub(crate) const fn f64_from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The order-preserving image of an `f32`'s bits.
#[inline]
pub(crate) const fn f32_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b >> 31 == 1 { !b } else { b | (1 << 31) }
}

/// The `f32` whose order-preserving image is `k`.
#[inline]
pub(crate) const fn f32_from_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_orders_as_total_cmp() {
        let values = [
            f64::from_bits(0xfff8_0000_0000_0001), // a negative NaN
            f64::NEG_INFINITY,
            f64::MIN,
            -1.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::from_bits(1),
            1.0,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in values.windows(2) {
            assert_eq!(w[0].total_cmp(&w[1]), f64_key(w[0]).cmp(&f64_key(w[1])));
            assert!(f64_key(w[0]) < f64_key(w[1]), "{} < {}", w[0], w[1]);
        }
        for v in values {
            assert_eq!(f64_from_key(f64_key(v)).to_bits(), v.to_bits());
            let s = v as f32;
            assert_eq!(f32_from_key(f32_key(s)).to_bits(), s.to_bits());
        }
    }
}
