//! A second adversarial pass over the typed codec and the derive: properties over the forms at
//! their boundaries (widths 1 to 40, `i128::MIN`, `u128::MAX`, NaN payloads, the ends of time,
//! escape bytes, descending options), typed ranges of every optional and descending form, the
//! borrowed decode against the owned one under every prefix, the feature kinds, and the derive
//! against its own `layout()`. Damaged keys must decode to a value that encodes to exactly the
//! damaged text, or not at all.
//!
//! Faults this pass found and fixed, each with its test: `a_nested_key_s_own_delimiter_does_not_stop_the_outer_layout`
//! here; `tests/ui/audit2_width_zero_on_non_integer.rs`; the second `compile_fail` example of
//! `pk_codec::_derive`'s "Borrowing decode" (a prefixed borrowing struct, which compile errors
//! that only appear when code is generated need: trybuild only checks).

use std::borrow::Cow;
use std::ops::Bound;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pk_codec::{
    BorrowDecodeKey, DecodeKey, FieldSpec, IntBits, KeyShape, Kind, PartitionKey, Value,
};
use proptest::prelude::*;

mod support;

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Wide {
    #[pk(width = 40)]
    a: u128,
    #[pk(width = 40, desc)]
    b: i128,
    #[pk(desc)]
    c: Option<char>,
    d: Option<Vec<u8>>,
    #[pk(desc)]
    e: Option<f32>,
    #[pk(desc, precision = ns)]
    f: Option<SystemTime>,
    #[pk(width = 1)]
    g: u8,
    #[pk(width = 2, desc)]
    h: i8,
    i: Option<char>,
    #[pk(desc, escaped)]
    j: String,
    #[pk(escaped)]
    k: Option<String>,
}

fn sys(n: i64) -> SystemTime {
    if n >= 0 {
        UNIX_EPOCH + Duration::from_nanos(n as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(n.unsigned_abs())
    }
}

fn wide() -> impl Strategy<Value = Wide> {
    (
        (
            any::<u128>(),
            any::<i128>(),
            any::<Option<char>>(),
            prop::option::of(prop::collection::vec(any::<u8>(), 0..3)),
            any::<Option<u32>>().prop_map(|o| o.map(f32::from_bits)),
            prop::option::of(any::<i64>()),
        ),
        (
            0u8..10,
            -10i8..10,
            any::<Option<char>>(),
            "(?s).{0,3}",
            prop::option::of("(?s).{0,3}"),
        ),
    )
        .prop_map(|((a, b, c, d, e, f), (g, h, i, j, k))| Wide {
            a,
            b,
            c,
            d,
            e,
            f: f.map(sys),
            g,
            h,
            i,
            j,
            k,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
    #[test]
    fn wide_round_trip_and_damage(w in wide(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 0..4)) {
        let key = w.encode().unwrap();
        let back = Wide::decode(&key).unwrap();
        prop_assert_eq!(back.encode().unwrap(), key.clone());
        let mut bytes = key.clone().into_bytes();
        support::damage(&mut bytes, &edits);
        if let Ok(text) = String::from_utf8(bytes)
            && let Ok(v) = Wide::decode(&text)
        {
            prop_assert_eq!(v.encode().unwrap(), text);
        }
    }
}

fn within<T: PartialOrd>(v: &T, lo: &Bound<T>, hi: &Bound<T>) -> bool {
    (match lo {
        Bound::Included(l) => v >= l,
        Bound::Excluded(l) => v > l,
        Bound::Unbounded => true,
    }) && (match hi {
        Bound::Included(h) => v <= h,
        Bound::Excluded(h) => v < h,
        Bound::Unbounded => true,
    })
}

fn bound<S: Strategy + Clone>(s: S) -> impl Strategy<Value = Bound<S::Value>>
where
    S::Value: Clone,
{
    prop_oneof![
        s.clone().prop_map(Bound::Included),
        s.prop_map(Bound::Excluded),
        Just(Bound::Unbounded),
    ]
}

macro_rules! range_case {
    ($test:ident, $name:ident, [$($attr:tt)*], $ty:ty, $strat:expr) => {
        range_case!($test, $name, [$($attr)*], $ty, $strat, |x| &x, |x| x);
    };
    ($test:ident, $name:ident, [$($attr:tt)*], $ty:ty, $strat:expr, |$x:ident| $eqe:expr, |$y:ident| $bde:expr) => {
        #[derive(PartitionKey, Debug, Clone, PartialEq)]
        struct $name {
            #[pk(width = 1)]
            a: u8,
            $($attr)*
            b: $ty,
            #[pk(width = 1)]
            c: u8,
        }
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(support::cases(200)))]
            #[test]
            fn $test(rows in prop::collection::vec((0u8..2, $strat, 0u8..2), 1..10), a in 0u8..2, lo in bound($strat), hi in bound($strat)) {
                let lo2 = lo.as_ref().map(|$y| $bde);
                let hi2 = hi.as_ref().map(|$y| $bde);
                let ranges = $name::ranges_b(a, (lo2, hi2)).unwrap();
                for (ra, rb, rc) in rows {
                    let k = $name { a: ra, b: rb.clone(), c: rc };
                    let key = k.encode().unwrap();
                    prop_assert_eq!($name::decode(&key).unwrap(), k.clone());
                    let inside = ranges.iter().any(|r| r.contains(&key));
                    prop_assert_eq!(inside, ra == a && within(&rb, &lo, &hi), "{:?} {:?} {:?} {:?}", k, key, ranges, (&lo, &hi));
                    let eq = { let $x = rb.clone(); $name::ranges_b_eq(ra, $eqe).unwrap() };
                    prop_assert!(eq.iter().any(|r| r.contains(&key)));
                }
            }
        }
    };
}

range_case!(r_desc_opt_str, RDescOptStr, [#[pk(desc)]], Option<String>, prop::option::of("[a-c\u{0}-\u{2f}]{0,2}"), |x| &x, |x| x.clone());
range_case!(
    r_opt_bytes,
    ROptBytes,
    [],
    Option<Vec<u8>>,
    prop::option::of(prop::collection::vec(0u8..3, 0..3)),
    |x| &x,
    |x| x.clone()
);
range_case!(r_esc, REsc, [#[pk(escaped)]], String, "[a-c,\u{0}-]{0,3}", |x| &x, |x| x.as_str());
range_case!(r_desc_esc, RDescEsc, [#[pk(desc, escaped)]], String, "[a-c,\u{0}-]{0,3}", |x| &x, |x| x.as_str());
range_case!(r_desc_char, RDescChar, [#[pk(desc)]], char, any::<char>(), |x| x, |x| *x);
range_case!(
    r_opt_char,
    ROptChar,
    [],
    Option<char>,
    prop::option::of(prop_oneof![
        Just(','),
        Just('-'),
        Just('a'),
        Just('\u{0}'),
        Just('é')
    ]),
    |x| &x,
    |x| *x
);
range_case!(r_desc_opt_char, RDescOptChar, [#[pk(desc)]], Option<char>, prop::option::of(prop_oneof![Just(','), Just('-'), Just('a'), Just('\u{0}'), Just('é')]), |x| &x, |x| *x);
range_case!(r_desc_opt_i8, RDescOptI8, [#[pk(desc, width = 2)]], Option<i8>, prop::option::of(-10i8..10), |x| &x, |x| *x);
range_case!(r_opt_i8, ROptI8, [#[pk(width = 2)]], Option<i8>, prop::option::of(-10i8..10), |x| &x, |x| *x);
range_case!(r_desc_bool, RDescBool, [#[pk(desc)]], Option<bool>, any::<Option<bool>>(), |x| &x, |x| *x);
range_case!(r_desc_u8, RDescU8, [#[pk(desc, width = 1)]], u8, 0u8..10, |x| x, |x| *x);
range_case!(r_desc_bytes, RDescBytes, [#[pk(desc)]], Vec<u8>, prop::collection::vec(0u8..3, 0..3), |x| &x, |x| x.as_slice());
range_case!(r_opt_esc, ROptEsc, [#[pk(escaped)]], Option<String>, prop::option::of("[a,\u{0}-]{0,2}"), |x| &x, |x| x.clone());
range_case!(
    r_opt_str,
    ROptStr,
    [],
    Option<String>,
    prop::option::of("[a-c.=]{0,2}"),
    |x| &x,
    |x| x.clone()
);
range_case!(r_desc_opt_esc, RDescOptEsc, [#[pk(desc, escaped)]], Option<String>, prop::option::of("[a,\u{0}-]{0,2}"), |x| &x, |x| x.clone());

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(2000)))]
    #[test]
    fn int_text_decodes_only_as_written(width in 1u8..=40, desc in any::<bool>(), signed in any::<bool>(), bits in 0usize..5, first in prop::sample::select(vec!['-', '0', '1', '9', '3']), rest in prop::collection::vec(prop::sample::select(vec!['0', '9', '1', '5', '4']), 40), wide in any::<u128>(), neg in any::<bool>()) {
        let bits = [IntBits::B8, IntBits::B16, IntBits::B32, IntBits::B64, IntBits::B128][bits];
        let kind = if signed { Kind::Int { bits } } else { Kind::Uint { bits } };
        let mut spec = FieldSpec::new(kind).with_width(width);
        if desc { spec = spec.descending(); }
        let shape = KeyShape::new(b',');
        let text: String = std::iter::once(first).chain(rest.iter().copied().take(usize::from(width) - 1)).collect();
        let (min, max): (i128, u128) = match bits {
            IntBits::B8 => if signed { (i8::MIN.into(), i8::MAX as u128) } else { (0, u8::MAX.into()) },
            IntBits::B16 => if signed { (i16::MIN.into(), i16::MAX as u128) } else { (0, u16::MAX.into()) },
            IntBits::B32 => if signed { (i32::MIN.into(), i32::MAX as u128) } else { (0, u32::MAX.into()) },
            IntBits::B64 => if signed { (i64::MIN.into(), i64::MAX as u128) } else { (0, u64::MAX.into()) },
            _ => if signed { (i128::MIN, i128::MAX as u128) } else { (0, u128::MAX) },
        };
        let read = |key: &str| -> Option<(Option<i128>, Option<u128>)> {
            shape.decode_with(key, |r| {
                r.begin_field("f")?;
                Ok(if signed {
                    if bits == IntBits::B128 { (Some(r.int128(&spec, "f", min, max as i128)?), None) }
                    else { (Some(i128::from(r.int64(&spec, "f", min as i64, max as i64)?)), None) }
                } else if bits == IntBits::B128 { (None, Some(r.uint128(&spec, "f", max)?)) }
                else { (None, Some(u128::from(r.uint64(&spec, "f", max as u64)?))) })
            }).ok()
        };
        let write = |v: (Option<i128>, Option<u128>)| -> Option<String> {
            let mut s = String::new();
            shape.encode_with(&mut s, |w| {
                w.begin_field();
                match v {
                    (Some(i), _) if bits == IntBits::B128 => w.int128(&spec, "f", i),
                    (Some(i), _) => w.int64(&spec, "f", i as i64),
                    (_, Some(u)) if bits == IntBits::B128 => w.uint128(&spec, "f", u),
                    (_, Some(u)) => w.uint64(&spec, "f", u as u64),
                    _ => unreachable!(),
                }
            }).ok().map(|()| s)
        };
        if let Some(v) = read(&text) {
            prop_assert_eq!(write(v), Some(text.clone()), "{:?} {:?}", spec, v);
        }
        // A value of the type: if it encodes, it decodes back.
        let v = if signed {
            let x = (wide as i128).clamp(min, max as i128);
            let x = if neg { x.checked_neg().unwrap_or(x) } else { x };
            (Some(x.clamp(min, max as i128)), None)
        } else { (None, Some(wide.min(max))) };
        // Also try small values, which fit narrow widths.
        for v in [v, if signed { (Some((wide % 10) as i128 * if neg { -1 } else { 1 }), None) } else { (None, Some(wide % 10)) }] {
            if let Some(key) = write(v) {
                prop_assert_eq!(read(&key), Some(v), "{:?} {}", spec, key);
                prop_assert_eq!(key.len(), usize::from(width));
            }
        }
    }
}

macro_rules! twins {
    ($test:ident, $r:ident, $o:ident, [$($attr:tt)*]) => {
        #[derive(PartitionKey, Debug, PartialEq)]
        $($attr)*
        struct $r<'a> {
            a: &'a str,
            #[pk(escaped)]
            b: Cow<'a, str>,
            c: Option<&'a str>,
            #[pk(desc)]
            d: Option<Cow<'a, str>>,
            #[pk(width = 2)]
            e: u8,
            #[pk(desc)]
            f: Cow<'a, str>,
        }
        #[derive(PartitionKey, Debug, PartialEq, Clone)]
        $($attr)*
        struct $o {
            a: String,
            #[pk(escaped)]
            b: String,
            c: Option<String>,
            #[pk(desc)]
            d: Option<String>,
            #[pk(width = 2)]
            e: u8,
            #[pk(desc)]
            f: String,
        }
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
            #[test]
            fn $test(a in "[.a-c]{0,2}", b in "[,a-]{0,2}", c in prop::option::of("[a=]{0,2}"), d in prop::option::of("[a,]{0,2}"), e in 0u8..100, f in "[a,]{0,2}",
                     edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(b",-=~az0a9.".to_vec()), 0u8..3), 0..3)) {
                let o = $o { a, b, c, d, e, f };
                let key = o.encode().unwrap();
                let r = $r { a: &o.a, b: Cow::Borrowed(&o.b), c: o.c.as_deref(), d: o.d.as_deref().map(Cow::Borrowed), e: o.e, f: Cow::Borrowed(&o.f) };
                prop_assert_eq!(r.encode().unwrap(), key.clone());
                let mut bytes = key.into_bytes();
                support::damage(&mut bytes, &edits);
                let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
                let owned = $o::decode(&text);
                let borrowed = $r::decode_borrowed(&text);
                match (&owned, &borrowed) {
                    (Ok(o2), Ok(r2)) => {
                        prop_assert_eq!(o2.encode().unwrap(), text.clone());
                        prop_assert_eq!(r2.encode().unwrap(), text.clone());
                    }
                    (Err(x), Err(y)) => prop_assert_eq!(x, y),
                    _ => prop_assert!(false, "{:?} {:?} {:?}", text, owned, borrowed),
                }
            }
        }
    };
}

twins!(twins_plain, TPlainRef, TPlain, []);
twins!(twins_hash_leading, THashRef, THash, [#[pk(hash(xxh3, len = 3, separator, fields(a, b)))]]);
twins!(twins_bucket_mod, TModRef, TMod, [#[pk(buckets(count = 7, modulo = e))]]);
twins!(twins_bucket_hash, TBucketHashRef, TBucketHash, [#[pk(buckets(count = 12, hash(a, c, f), separator))]]);
twins!(twins_hash_key, THashKeyRef, THashKey, [#[pk(hash(md5, len = 2))]]);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(3000)))]
    #[test]
    fn timestamp_text_decodes_only_as_written(p in 0usize..4, desc in any::<bool>(), digits in prop::collection::vec(prop::sample::select(b"0123456789".to_vec()), 30), nanos in any::<i64>()) {
        let precision = [pk_codec::Precision::Seconds, pk_codec::Precision::Millis, pk_codec::Precision::Micros, pk_codec::Precision::Nanos][p];
        let mut spec = FieldSpec::new(Kind::Timestamp).with_precision(precision);
        if desc { spec = spec.descending(); }
        // A text of the field's shape, digits anywhere.
        let mut text = String::from("0000-00-00T00:00:00");
        if precision.digits() > 0 { text.push('.'); text.push_str(&"0".repeat(precision.digits() as usize)); }
        text.push('Z');
        let mut bytes = text.into_bytes();
        let mut d = digits.iter();
        for b in bytes.iter_mut() { if b.is_ascii_digit() { *b = *d.next().unwrap(); } }
        let text = String::from_utf8(bytes).unwrap();
        let shape = KeyShape::new(b',');
        let read = |key: &str| shape.decode_with(key, |r| { r.begin_field("t")?; r.timestamp(&spec, "t") });
        let write = |n: i128| { let mut s = String::new(); shape.encode_with(&mut s, |w| { w.begin_field(); w.timestamp(&spec, "t", n) }).map(|()| s) };
        if let Ok(n) = read(&text) {
            prop_assert_eq!(write(n).unwrap(), text);
        }
        let n = i128::from(nanos) * 1000 / i128::from(10i64.pow(9 - precision.digits())) * i128::from(10i64.pow(9 - precision.digits()));
        if let Ok(key) = write(n) {
            prop_assert_eq!(read(&key).unwrap(), n);
        }
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10000, modulo = m, separator), delimiter = '#')]
struct Kinds {
    #[pk(desc)]
    u: Option<uuid::Uuid>,
    #[pk(precision = us)]
    t: Option<time::OffsetDateTime>,
    #[pk(desc, precision = s)]
    c: chrono::DateTime<chrono::Utc>,
    #[pk(width = 39)]
    m: u128,
    #[pk(desc)]
    f: Option<f64>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
    #[test]
    fn feature_kinds_agree_with_their_layout(u in any::<Option<u128>>(), t in prop::option::of(-62_167_219_200_000_000i64..253_402_300_799_000_000), c in -62_167_219_200i64..253_402_300_799, m in any::<u128>(), f in any::<Option<u64>>()) {
        let k = Kinds {
            u: u.map(uuid::Uuid::from_u128),
            t: t.map(|t| time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(t) * 1000).unwrap()),
            c: chrono::DateTime::from_timestamp(c, 0).unwrap(),
            m,
            f: f.map(f64::from_bits),
        };
        let key = k.encode().unwrap();
        let back = Kinds::decode(&key).unwrap();
        prop_assert_eq!(back.encode().unwrap(), key.clone());
        let layout = Kinds::layout();
        let values = layout.decode(&key).unwrap();
        prop_assert_eq!(layout.encode(&values).unwrap(), key.clone());
        let text: pk_codec::Layout = layout.to_string().parse().unwrap();
        prop_assert_eq!(text.encode(&values).unwrap(), key);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(500)))]
    #[test]
    fn derive_and_layout_decode_the_same_texts(w in wide(), edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(b",-=~az0a9.pz".to_vec()), 0u8..3), 0..3),
        o in ("[.a-c]{0,2}", "[,a-]{0,2}", prop::option::of("[a=]{0,2}"), prop::option::of("[a,]{0,2}"), 0u8..100, "[a,]{0,2}")) {
        let key = w.encode().unwrap();
        let mut bytes = key.into_bytes();
        support::damage(&mut bytes, &edits);
        if let Ok(text) = String::from_utf8(bytes) {
            let layout = Wide::layout();
            prop_assert_eq!(Wide::decode(&text).map(|_| ()), layout.decode(&text).map(|_| ()), "{:?} {:?} {:?}", text, Wide::decode(&text), layout.decode(&text));
        }
        let (a, b, c, d, e, f) = o;
        macro_rules! same { ($($t:ident),*) => {$(
            let k = $t { a: a.clone(), b: b.clone(), c: c.clone(), d: d.clone(), e, f: f.clone() }.encode().unwrap();
            let mut bytes = k.into_bytes();
            support::damage(&mut bytes, &edits);
            if let Ok(text) = String::from_utf8(bytes) {
                let layout = $t::layout();
                prop_assert_eq!($t::decode(&text).map(|_| ()), layout.decode(&text).map(|_| ()), "{} {:?} {:?} {:?}", stringify!($t), text, $t::decode(&text), layout.decode(&text));
                if let Ok(v) = layout.decode(&text) { prop_assert_eq!(layout.encode(&v).unwrap(), text); }
            }
        )*}}
        same!(TPlain, THash, TMod, TBucketHash, THashKey);
    }
}

/// A generic key whose own delimiter its instance could not use on its own (`.` does not sort
/// below the `-` of an optional signed field), spliced into a key whose delimiter it can: the
/// nested key's own delimiter is not used when nested, so the outer key and its layout are valid.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(delimiter = '.')]
struct DottedInner<V: pk_codec::KeyField> {
    #[pk(width = 2)]
    v: V,
    #[pk(width = 1)]
    w: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct DottedOuter {
    i: DottedInner<Option<i8>>,
    #[pk(width = 1)]
    n: u8,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(100)))]
    #[test]
    fn a_nested_key_s_own_delimiter_does_not_stop_the_outer_layout(v in prop::option::of(-10i8..10), w in 0u8..10, n in 0u8..10) {
        let o = DottedOuter { i: DottedInner { v, w }, n };
        let key = o.encode().unwrap();
        prop_assert_eq!(DottedOuter::decode(&key).unwrap(), o);
        let layout = DottedOuter::layout();
        prop_assert_eq!(layout.to_string(), "i.v: i8 width=2 optional; i.w: u8 width=1; n: u8 width=1");
        let values = layout.decode(&key).unwrap();
        prop_assert_eq!(layout.encode(&values).unwrap(), key);
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh32, len = 8, fields(dev, tag)))]
struct LeadRanges {
    #[pk(width = 1)]
    dev: u8,
    tag: Option<String>,
    #[pk(desc, width = 2)]
    ts: i8,
    #[pk(escaped)]
    name: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 3, hash(tag, name), separator))]
struct HashBucketRanges {
    #[pk(width = 1)]
    dev: u8,
    tag: Option<String>,
    #[pk(desc, width = 2)]
    ts: i8,
    #[pk(escaped)]
    name: String,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(200)))]
    #[test]
    fn prefixed_typed_ranges_hold_exactly_their_keys(
        rows in prop::collection::vec((0u8..2, prop::option::of("[ab]{0,1}"), -3i8..3, "[a,]{0,2}"), 1..10),
        dev in 0u8..2, tag in prop::option::of("[ab]{0,1}"), lo in bound(-3i8..3), hi in bound(-3i8..3),
        nlo in bound("[a,]{0,2}"), nhi in bound("[a,]{0,2}"),
    ) {
        let lead = LeadRanges::ranges_ts(dev, &tag, (lo, hi)).unwrap();
        prop_assert_eq!(lead.len(), 1);
        let buckets = HashBucketRanges::ranges_ts(dev, &tag, (lo, hi)).unwrap();
        prop_assert_eq!(buckets.len(), 3);
        let nb = (nlo.as_ref().map(String::as_str), nhi.as_ref().map(String::as_str));
        let lead_names = LeadRanges::ranges_name(dev, &tag, 0, nb).unwrap();
        let bucket_names = HashBucketRanges::ranges_name(dev, &tag, 0, nb).unwrap();
        for (d, t, ts, name) in rows {
            let want = d == dev && t == tag && within(&ts, &lo, &hi);
            let want_name = d == dev && t == tag && ts == 0 && within(&name, &nlo, &nhi);
            let l = LeadRanges { dev: d, tag: t.clone(), ts, name: name.clone() }.encode().unwrap();
            prop_assert_eq!(lead.iter().any(|r| r.contains(&l)), want, "{}", l);
            prop_assert_eq!(lead_names.iter().any(|r| r.contains(&l)), want_name, "{}", l);
            let b = HashBucketRanges { dev: d, tag: t, ts, name }.encode().unwrap();
            prop_assert_eq!(buckets.iter().any(|r| r.contains(&b)), want, "{}", b);
            prop_assert_eq!(bucket_names.iter().any(|r| r.contains(&b)), want_name, "{}", b);
        }
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Addr {
    city: String,
    #[pk(width = 2)]
    zip: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Trip {
    from: Addr,
    to: Addr,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
    /// An error in a field of a nested key names that field as the layout does (`to.city`), so
    /// that it says which of two nested keys of one type is wrong (an encode error has no
    /// position to tell them apart).
    #[test]
    fn errors_in_nested_keys_name_the_field_as_the_layout_does(
        cities in prop::array::uniform2("[a,]{0,2}"), zips in prop::array::uniform2(any::<u8>()),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(b",0x".to_vec()), 0u8..3), 0..3),
    ) {
        let trip = Trip {
            from: Addr { city: cities[0].clone(), zip: zips[0] },
            to: Addr { city: cities[1].clone(), zip: zips[1] },
        };
        let layout = Trip::layout();
        let values = [cities[0].as_str().into(), zips[0].into(), cities[1].as_str().into(), zips[1].into()];
        prop_assert_eq!(trip.encode(), layout.encode(&values));
        let of_from = Trip::ranges_from_eq(&trip.from);
        prop_assert_eq!(of_from.is_ok(), trip.from.encode().is_ok());
        if let Err(e) = of_from {
            prop_assert_eq!(Err::<String, _>(e), layout.encode(&values[..2].iter().cloned().chain([Value::from(""), Value::from(0u8)]).collect::<Vec<_>>()));
        }
        let fixed = Trip {
            from: Addr { city: cities[0].replace(',', "a"), zip: zips[0] % 100 },
            to: Addr { city: cities[1].replace(',', "a"), zip: zips[1] % 100 },
        };
        let mut bytes = fixed.encode().unwrap().into_bytes();
        support::damage(&mut bytes, &edits);
        let text = String::from_utf8(bytes).unwrap();
        prop_assert_eq!(Trip::decode(&text).map(|_| ()), layout.decode(&text).map(|_| ()));
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10000, modulo = ts))]
struct MostBuckets {
    #[pk(desc)]
    ts: i128,
    tag: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 1, hash(tag), separator))]
struct OneBucket {
    ts: u128,
    tag: String,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(100)))]
    #[test]
    fn buckets_at_their_limits(ts in any::<i128>(), tag in "[a-c]{0,2}") {
        let most = MostBuckets { ts, tag: tag.clone() };
        let key = most.encode().unwrap();
        prop_assert_eq!(&key[..4], format!("{:04}", ts.rem_euclid(10_000)));
        prop_assert_eq!(MostBuckets::decode(&key).unwrap(), most.clone());
        let one = MostBuckets::ranges_tag_eq(ts, &tag).unwrap();
        prop_assert_eq!(one.len(), 1);
        prop_assert!(one[0].contains(&key));
        let all = MostBuckets::ranges_ts(..=ts).unwrap();
        prop_assert_eq!(all.len(), 10_000);
        prop_assert_eq!(all.iter().filter(|r| r.contains(&key)).count(), 1);
        let bucket = <MostBuckets as PartitionKey>::SHAPE.bucket_of_key(&key).unwrap();
        prop_assert_eq!(<MostBuckets as PartitionKey>::SHAPE.bucket_prefix(bucket).unwrap(), key[..4].to_string());
        let first = OneBucket { ts: ts.unsigned_abs(), tag };
        let key = first.encode().unwrap();
        prop_assert!(key.starts_with("0,"));
        prop_assert_eq!(OneBucket::decode(&key).unwrap(), first.clone());
        let ranges = OneBucket::ranges_ts(first.ts..).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        prop_assert!(ranges[0].contains(&key));
    }
}

#[test]
fn split_points_of_the_most_buckets_are_every_bucket() {
    let shape = <MostBuckets as PartitionKey>::SHAPE;
    let points = shape.split_points(9_999).unwrap();
    assert_eq!(points.len(), 9_999);
    assert_eq!(
        (points[0].as_str(), points[9_998].as_str()),
        ("0001", "9999")
    );
    assert!(shape.split_points(10_000).is_err());
    assert!(<OneBucket as PartitionKey>::SHAPE.split_points(1).is_err());
    assert_eq!(
        <OneBucket as PartitionKey>::SHAPE.split_points(0).unwrap(),
        Vec::<String>::new()
    );
}

/// The delimiter just below the `=` of `Some`: the byte after the delimiter, where ranges end,
/// is the marker itself.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(delimiter = '<')]
struct BelowMarker {
    #[pk(width = 1)]
    a: u8,
    b: Option<String>,
    #[pk(width = 1)]
    c: u8,
}

/// The delimiter just below `0`: the byte after it is the first digit.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(delimiter = '/')]
struct BelowDigits {
    #[pk(width = 1)]
    a: u8,
    #[pk(width = 1)]
    b: Option<u8>,
    d: Option<Vec<u8>>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(200)))]
    #[test]
    fn ranges_where_the_byte_after_the_delimiter_is_a_field_byte(
        rows in prop::collection::vec((0u8..2, prop::option::of("[=>a]{0,2}"), 0u8..2, prop::option::of(0u8..3), prop::option::of(prop::collection::vec(0u8..2, 0..2))), 1..10),
        a in 0u8..2,
        lo in bound(prop::option::of("[=>a]{0,2}")), hi in bound(prop::option::of("[=>a]{0,2}")),
        dlo in bound(prop::option::of(0u8..3)), dhi in bound(prop::option::of(0u8..3)),
        b in prop::option::of(0u8..3),
    ) {
        let ranges = BelowMarker::ranges_b(a, (lo.clone(), hi.clone())).unwrap();
        let digits = BelowDigits::ranges_b(a, (dlo, dhi)).unwrap();
        let eq = BelowDigits::ranges_b_eq(a, &b).unwrap();
        for (ra, rb, rc, db, dd) in rows {
            let k = BelowMarker { a: ra, b: rb.clone(), c: rc };
            let key = k.encode().unwrap();
            prop_assert_eq!(BelowMarker::decode(&key).unwrap(), k);
            prop_assert_eq!(ranges.iter().any(|r| r.contains(&key)), ra == a && within(&rb, &lo, &hi), "{}", key);
            let k = BelowDigits { a: ra, b: db, d: dd };
            let key = k.encode().unwrap();
            prop_assert_eq!(BelowDigits::decode(&key).unwrap(), k);
            prop_assert_eq!(digits.iter().any(|r| r.contains(&key)), ra == a && within(&db, &dlo, &dhi), "{}", key);
            prop_assert_eq!(eq.iter().any(|r| r.contains(&key)), ra == a && db == b, "{}", key);
        }
    }
}
