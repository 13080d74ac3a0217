//! Properties of derived keys: key order equals field-by-field value order (descending fields
//! reversed), keys round-trip, typed ranges hold exactly the matching keys, and decoding any
//! text returns a value or an error.
//!
//! Typed ranges of every optional and descending form, under prefixes, and where the byte after
//! the delimiter is a field byte; `edges.rs` takes the same properties to the edges of every
//! value space.

use std::cmp::Reverse;
use std::ops::Bound;

use pk_codec::{DecodeKey, KeyRange, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Plain {
    #[pk(width = 6)]
    a: u32,
    b: String,
    #[pk(desc)]
    c: i16,
    d: Option<u8>,
    #[pk(escaped)]
    e: String,
    f: bool,
    #[pk(desc)]
    g: Vec<u8>,
    h: char,
    #[pk(desc)]
    i: Option<String>,
    #[pk(width = 3)]
    j: i64,
}

type PlainOrder = (
    u32,
    String,
    Reverse<i16>,
    Option<u8>,
    String,
    bool,
    Reverse<Vec<u8>>,
    String,
    Reverse<Option<String>>,
    i64,
);

impl Plain {
    /// What `#[derive(Ord)]` would compare, with descending fields reversed. A `char` compares as
    /// its UTF-8 bytes, which is the order of `char` too.
    fn order(&self) -> PlainOrder {
        (
            self.a,
            self.b.clone(),
            Reverse(self.c),
            self.d,
            self.e.clone(),
            self.f,
            Reverse(self.g.clone()),
            self.h.to_string(),
            Reverse(self.i.clone()),
            self.j,
        )
    }

    /// The values in `Layout` order.
    fn values(&self) -> Vec<Value> {
        vec![
            self.a.into(),
            self.b.clone().into(),
            self.c.into(),
            self.d.into(),
            self.e.clone().into(),
            self.f.into(),
            self.g.clone().into(),
            self.h.into(),
            self.i.clone().into(),
            self.j.into(),
        ]
    }
}

/// Plain strings: every byte above the delimiter `,`.
const PLAIN: &str = "[-./0-9A-Za-z~é]{0,4}";

fn plain() -> impl Strategy<Value = Plain> {
    (
        (
            0u32..1_000_000,
            PLAIN,
            any::<i16>(),
            any::<Option<u8>>(),
            "(?s).{0,4}",
        ),
        (
            any::<bool>(),
            prop::collection::vec(any::<u8>(), 0..4),
            any::<char>(),
            prop::option::of(PLAIN),
            -99i64..100,
        ),
    )
        .prop_map(|((a, b, c, d, e), (f, g, h, i, j))| Plain {
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
            i,
            j,
        })
}

/// A few values of each field so that equal leading fields occur often.
fn plain_clustered() -> impl Strategy<Value = Plain> {
    (
        0u32..4,
        "[ab]{0,2}",
        -2i16..2,
        prop::option::of(0u8..2),
        plain(),
    )
        .prop_map(|(a, b, c, d, mut p)| {
            p.a = a;
            p.b = b;
            p.c = c;
            p.d = d;
            p
        })
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Inner {
    a: i8,
    b: Option<Vec<u8>>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Outer(Inner, #[pk(desc)] u8, #[pk(desc, escaped)] String);

impl Outer {
    fn order(&self) -> (i8, Option<Vec<u8>>, Reverse<u8>, Reverse<String>) {
        (
            self.0.a,
            self.0.b.clone(),
            Reverse(self.1),
            Reverse(self.2.clone()),
        )
    }
}

fn outer() -> impl Strategy<Value = Outer> {
    (
        any::<i8>(),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..3)),
        any::<u8>(),
        "(?s).{0,3}",
    )
        .prop_map(|(a, b, c, d)| Outer(Inner { a, b }, c, d))
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 5, modulo = ts, separator))]
struct TimeKey {
    #[pk(width = 2)]
    device: u8,
    #[pk(desc)]
    ts: u64,
    kind: char,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 12, hash(user)))]
struct UserKey {
    user: String,
    seq: u16,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh3, len = 6, separator))]
struct Hashed {
    #[pk(escaped)]
    name: String,
    n: i32,
}

fn in_any(ranges: &[KeyRange], key: &str) -> bool {
    ranges.iter().any(|r| r.contains(key))
}

fn within<T: PartialOrd>(v: &T, lo: &Bound<T>, hi: &Bound<T>) -> bool {
    let above = match lo {
        Bound::Included(l) => v >= l,
        Bound::Excluded(l) => v > l,
        Bound::Unbounded => true,
    };
    let below = match hi {
        Bound::Included(h) => v <= h,
        Bound::Excluded(h) => v < h,
        Bound::Unbounded => true,
    };
    above && below
}

fn bound<T: Strategy + Clone>(s: T) -> impl Strategy<Value = Bound<T::Value>>
where
    T::Value: Clone,
{
    prop_oneof![
        s.clone().prop_map(Bound::Included),
        s.prop_map(Bound::Excluded),
        Just(Bound::Unbounded),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(200)))]

    #[test]
    fn key_order_is_value_order(a in plain_clustered(), b in plain_clustered()) {
        let (ka, kb) = (a.encode().unwrap(), b.encode().unwrap());
        prop_assert_eq!(ka.cmp(&kb), a.order().cmp(&b.order()), "{} vs {}", ka, kb);
    }

    #[test]
    fn nested_key_order_is_value_order(a in outer(), b in outer()) {
        let (ka, kb) = (a.encode().unwrap(), b.encode().unwrap());
        prop_assert_eq!(ka.cmp(&kb), a.order().cmp(&b.order()), "{} vs {}", ka, kb);
    }

    #[test]
    fn keys_round_trip_and_agree_with_the_layout(p in plain(), o in outer(), ts in any::<u64>(), user in "(?s).{0,3}") {
        let key = p.encode().unwrap();
        prop_assert_eq!(Plain::decode(&key).unwrap(), p.clone());
        let layout = Plain::layout();
        prop_assert_eq!(layout.encode(&p.values()).unwrap(), key.clone());
        prop_assert_eq!(layout.decode(&key).unwrap(), p.values());
        let key = o.encode().unwrap();
        prop_assert_eq!(Outer::decode(&key).unwrap(), o);
        let t = TimeKey { device: 7, ts, kind: 'é' };
        prop_assert_eq!(TimeKey::decode(&t.encode().unwrap()).unwrap(), t.clone());
        let u = UserKey { user: user.replace(|c: char| c <= ',', "_"), seq: 3 };
        prop_assert_eq!(UserKey::decode(&u.encode().unwrap()).unwrap(), u);
        let h = Hashed { name: user, n: -7 };
        prop_assert_eq!(Hashed::decode(&h.encode().unwrap()).unwrap(), h);
    }

    #[test]
    fn decoding_any_text_never_panics(text in "(?s).{0,40}", digits in "[0-9,a-z=~-]{0,30}") {
        for t in [&text, &digits] {
            let _ = Plain::decode(t);
            let _ = Outer::decode(t);
            let _ = TimeKey::decode(t);
            let _ = UserKey::decode(t);
            let _ = Hashed::decode(t);
        }
    }

    #[test]
    fn range_of_the_first_field_holds_exactly_its_keys(
        keys in prop::collection::vec(plain_clustered(), 1..12),
        lo in bound(0u32..5),
        hi in bound(0u32..5),
    ) {
        let ranges = Plain::ranges_a((lo, hi)).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        for k in &keys {
            prop_assert_eq!(in_any(&ranges, &k.encode().unwrap()), within(&k.a, &lo, &hi), "{:?}", k);
        }
    }

    #[test]
    fn range_after_equal_fields_holds_exactly_its_keys(
        keys in prop::collection::vec(plain_clustered(), 1..12),
        pick in any::<prop::sample::Index>(),
        lo in bound(-3i16..3),
        hi in bound(-3i16..3),
    ) {
        let probe = &keys[pick.index(keys.len())];
        // A descending field: the bounds are in value order all the same.
        let ranges = Plain::ranges_c(probe.a, &probe.b, (lo, hi)).unwrap();
        let eq = Plain::ranges_d_eq(probe.a, &probe.b, probe.c, &probe.d).unwrap();
        for k in &keys {
            let key = k.encode().unwrap();
            let same = k.a == probe.a && k.b == probe.b;
            prop_assert_eq!(in_any(&ranges, &key), same && within(&k.c, &lo, &hi), "{:?}", k);
            prop_assert_eq!(in_any(&eq, &key), same && k.c == probe.c && k.d == probe.d, "{:?}", k);
        }
    }

    #[test]
    fn range_of_a_string_field_holds_exactly_its_keys(
        keys in prop::collection::vec(plain_clustered(), 1..12),
        lo in bound("[ab]{0,2}"),
        hi in bound("[ab]{0,2}"),
    ) {
        let ranges = Plain::ranges_b(1, (lo.as_ref().map(String::as_str), hi.as_ref().map(String::as_str))).unwrap();
        for k in &keys {
            let key = k.encode().unwrap();
            prop_assert_eq!(in_any(&ranges, &key), k.a == 1 && within(&k.b, &lo, &hi), "{:?}", k);
        }
    }

    #[test]
    fn nested_and_bucketed_ranges_hold_exactly_their_keys(
        items in prop::collection::vec((0u8..3, 0u64..40, any::<i8>(), 0u8..4), 1..16),
        lo in bound(0u64..40),
        hi in bound(0u64..40),
        device in 0u8..3,
    ) {
        // Modulo buckets: a range over the time of one device is one range per bucket that
        // its times reach (one when the bounds hold no time).
        let ranges = TimeKey::ranges_ts(device, (lo, hi)).unwrap();
        let first = match lo {
            Bound::Included(t) => Some(t),
            Bound::Excluded(t) => t.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let last = match hi {
            Bound::Included(t) => Some(t),
            Bound::Excluded(t) => t.checked_sub(1),
            Bound::Unbounded => Some(u64::MAX),
        };
        let times = match (first, last) {
            (Some(f), Some(l)) if f <= l => (l - f).saturating_add(1),
            _ => 0,
        };
        prop_assert_eq!(ranges.len() as u64, times.clamp(1, 5));
        for &(d, ts, a, c) in &items {
            let key = TimeKey { device: d, ts, kind: 'k' }.encode().unwrap();
            prop_assert_eq!(in_any(&ranges, &key), d == device && within(&ts, &lo, &hi), "{}", key);
            // With the time fixed, one bucket holds it.
            let one = TimeKey::ranges_ts_eq(d, ts).unwrap();
            prop_assert_eq!(one.len(), 1);
            prop_assert!(one[0].contains(&key));
            // Nested keys: all keys whose inner key equals one value.
            let inner = Inner { a, b: None };
            let outer = Outer(inner.clone(), c, String::new());
            let of_inner = Outer::ranges_0_eq(&inner).unwrap();
            prop_assert!(in_any(&of_inner, &outer.encode().unwrap()));
            let other = Outer(Inner { a: a.wrapping_add(1), b: None }, c, String::new());
            prop_assert!(!in_any(&of_inner, &other.encode().unwrap()));
        }
    }

    #[test]
    fn hash_buckets_keep_order_within_a_bucket(user in "[a-z]{0,3}", s1 in any::<u16>(), s2 in any::<u16>()) {
        let (a, b) = (UserKey { user: user.clone(), seq: s1 }, UserKey { user: user.clone(), seq: s2 });
        let (ka, kb) = (a.encode().unwrap(), b.encode().unwrap());
        // One user's keys share a bucket, so they sort by sequence.
        prop_assert_eq!(&ka[..2], &kb[..2]);
        prop_assert_eq!(ka.cmp(&kb), s1.cmp(&s2));
        // The user fixes the bucket: one range read.
        let ranges = UserKey::ranges_user_eq(&user).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        prop_assert!(ranges[0].contains(&ka));
    }
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

mod edges;
