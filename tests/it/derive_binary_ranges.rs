//! The typed range constructors of a `#[pk(form = binary)]` key answer byte ranges of its binary
//! keys (`Vec<ByteRange>`, the type says so): over random keys, a key lies in a constructor's
//! ranges exactly when its leading fields equal the given values and its next field lies within
//! the bounds, in at most one of them, for every prefix (none, bucket hash, modulo bucket, hash
//! over leading fields), both orders, optional fields, strings, bytes and nested keys. The
//! ranges are those of the key's runtime layout (`Layout::byte_ranges`), one path.

use std::ops::{Bound, RangeBounds};

use pk_codec::{ByteRange, PartitionKey, Value};
use proptest::prelude::*;

use crate::support::cases;

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary)]
struct Plain {
    a: u8,
    #[pk(desc)]
    b: i64,
    c: String,
    d: Option<Vec<u8>>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary, buckets(count = 8, hash(a)))]
struct HashBucket {
    a: u16,
    b: String,
    #[pk(desc)]
    c: u32,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary, buckets(count = 8, modulo = b, separator))]
struct ModBucket {
    a: String,
    #[pk(desc)]
    b: u32,
    c: Option<String>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary, hash(xxh3, len = 4, fields(a)))]
struct LeadHash {
    a: u8,
    b: Option<String>,
    #[pk(desc)]
    c: i16,
}

#[derive(PartitionKey, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[pk(form = binary)]
struct Inner {
    n: u16,
    s: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary, buckets(count = 4, hash(inner)))]
struct Outer {
    inner: Inner,
    seq: u32,
}

/// Every row's binary key lies in one of `ranges` exactly when `want` says so, and then in one
/// only; `ranges` are `from_layout`, what the key's runtime layout answers.
fn hold_exactly<K: PartitionKey + std::fmt::Debug>(
    ranges: &[ByteRange],
    from_layout: &[ByteRange],
    rows: &[K],
    want: impl Fn(&K) -> bool,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(ranges, from_layout);
    for row in rows {
        let key = row.encode_binary().unwrap();
        let hits = ranges.iter().filter(|r| r.contains(&key)).count();
        prop_assert!(hits <= 1, "{:?} lies in {} ranges {:?}", row, hits, ranges);
        prop_assert_eq!(
            hits == 1,
            want(row),
            "{:?} key {:?} ranges {:?}",
            row,
            key,
            ranges
        );
    }
    Ok(())
}

/// Bounds over small domains, so that they often equal a row's value.
fn bounds<T: std::fmt::Debug + Clone + 'static>(
    v: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = (Bound<T>, Bound<T>)> {
    let one = prop_oneof![
        Just(Bound::Unbounded),
        v.clone().prop_map(Bound::Included),
        v.prop_map(Bound::Excluded),
    ];
    (one.clone(), one)
}

/// A bound as a `Value`, for the layout's ranges.
fn value_bound<T: Clone + Into<Value>>(b: Bound<&T>) -> Bound<Value> {
    b.map(|v| v.clone().into())
}

fn small_string() -> impl Strategy<Value = String> + Clone {
    // `\0` and `\u{1}` too: the binary form escapes them, the text form could not hold `\0`.
    "[\0\u{1}ab]{0,2}"
}

fn plain() -> impl Strategy<Value = Plain> {
    (
        0u8..3,
        prop_oneof![Just(i64::MIN), -1i64..2, Just(i64::MAX)],
        small_string(),
        prop::option::of(prop::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(0xff)],
            0..2,
        )),
    )
        .prop_map(|(a, b, c, d)| Plain { a, b, c, d })
}

fn hash_bucket() -> impl Strategy<Value = HashBucket> {
    (
        0u16..4,
        small_string(),
        prop_oneof![Just(0u32), 1u32..3, Just(u32::MAX)],
    )
        .prop_map(|(a, b, c)| HashBucket { a, b, c })
}

fn mod_bucket() -> impl Strategy<Value = ModBucket> {
    (small_string(), 0u32..20, prop::option::of(small_string())).prop_map(|(a, b, c)| ModBucket {
        a,
        b,
        c,
    })
}

fn lead_hash() -> impl Strategy<Value = LeadHash> {
    (
        0u8..3,
        prop::option::of(small_string()),
        prop_oneof![Just(i16::MIN), -1i16..2, Just(i16::MAX)],
    )
        .prop_map(|(a, b, c)| LeadHash { a, b, c })
}

fn outer() -> impl Strategy<Value = Outer> {
    ((0u16..3, small_string()), 0u32..4).prop_map(|((n, s), seq)| Outer {
        inner: Inner { n, s },
        seq,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn binary_range_constructors_hold_exactly_the_matching_keys_without_a_prefix(
        rows in prop::collection::vec(plain(), 1..24),
        pick in any::<prop::sample::Index>(),
        a in bounds(0u8..3),
        b in bounds(prop_oneof![Just(i64::MIN), -1i64..2, Just(i64::MAX)]),
        c in bounds(small_string()),
        d in bounds(prop::option::of(prop::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0xff)], 0..2))),
    ) {
        let base = &rows[pick.index(rows.len())];
        let layout = Plain::layout();
        let v = |x: &Plain| -> Vec<Value> { vec![x.a.into(), x.b.into(), x.c.clone().into(), x.d.clone().map_or(Value::Null, Value::from)] };
        let bv = v(base);
        let layout_ranges = |k: usize, lo: Bound<Value>, hi: Bound<Value>| layout.byte_ranges(&bv[..k], lo.as_ref(), hi.as_ref()).unwrap();

        let ranges = Plain::ranges_a(a).unwrap();
        hold_exactly(&ranges, &layout_ranges(0, value_bound(a.0.as_ref()), value_bound(a.1.as_ref())), &rows, |r| a.contains(&r.a))?;
        let ranges = Plain::ranges_b(base.a, b).unwrap();
        hold_exactly(&ranges, &layout_ranges(1, value_bound(b.0.as_ref()), value_bound(b.1.as_ref())), &rows, |r| r.a == base.a && b.contains(&r.b))?;
        let c_str = (c.0.as_ref().map(String::as_str), c.1.as_ref().map(String::as_str));
        let ranges = Plain::ranges_c(base.a, base.b, c_str).unwrap();
        hold_exactly(&ranges, &layout_ranges(2, value_bound(c.0.as_ref()), value_bound(c.1.as_ref())), &rows, |r| r.a == base.a && r.b == base.b && c.contains(&r.c))?;
        let ranges = Plain::ranges_d(base.a, base.b, &base.c, d.clone()).unwrap();
        let d_value = |b: Bound<&Option<Vec<u8>>>| b.map(|v| v.clone().map_or(Value::Null, Value::from));
        hold_exactly(&ranges, &layout_ranges(3, d_value(d.0.as_ref()), d_value(d.1.as_ref())), &rows, |r| r.a == base.a && r.b == base.b && r.c == base.c && d.contains(&r.d))?;
        for k in 1..=4 {
            let ranges = match k {
                1 => Plain::ranges_a_eq(base.a),
                2 => Plain::ranges_b_eq(base.a, base.b),
                3 => Plain::ranges_c_eq(base.a, base.b, &base.c),
                _ => Plain::ranges_d_eq(base.a, base.b, &base.c, &base.d),
            }.unwrap();
            hold_exactly(&ranges, &layout_ranges(k, Bound::Unbounded, Bound::Unbounded), &rows, |r| v(r)[..k] == bv[..k])?;
        }
    }

    #[test]
    fn binary_range_constructors_hold_exactly_the_matching_keys_under_a_bucket_hash(
        rows in prop::collection::vec(hash_bucket(), 1..24),
        pick in any::<prop::sample::Index>(),
        a in bounds(0u16..4),
        c in bounds(prop_oneof![Just(0u32), 1u32..3, Just(u32::MAX)]),
    ) {
        let base = &rows[pick.index(rows.len())];
        let layout = HashBucket::layout();
        let bv: Vec<Value> = vec![base.a.into(), base.b.clone().into(), base.c.into()];
        let ranges = HashBucket::ranges_a(a).unwrap();
        let from = layout.byte_ranges(&[], value_bound(a.0.as_ref()).as_ref(), value_bound(a.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| a.contains(&r.a))?;
        // The hashed field given: its bucket alone.
        let ranges = HashBucket::ranges_b(base.a, ..).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        hold_exactly(&ranges, &layout.prefix_byte_ranges(&bv[..1]), &rows, |r| r.a == base.a)?;
        let ranges = HashBucket::ranges_c(base.a, &base.b, c).unwrap();
        let from = layout.byte_ranges(&bv[..2], value_bound(c.0.as_ref()).as_ref(), value_bound(c.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.a == base.a && r.b == base.b && c.contains(&r.c))?;
        let ranges = HashBucket::ranges_c_eq(base.a, &base.b, base.c).unwrap();
        hold_exactly(&ranges, &layout.prefix_byte_ranges(&bv), &rows, |r| r == base)?;
    }

    #[test]
    fn binary_range_constructors_hold_exactly_the_matching_keys_under_a_modulo_bucket(
        rows in prop::collection::vec(mod_bucket(), 1..24),
        pick in any::<prop::sample::Index>(),
        b in bounds(0u32..20),
        c in bounds(prop::option::of(small_string())),
    ) {
        let base = &rows[pick.index(rows.len())];
        let layout = ModBucket::layout();
        let bv: Vec<Value> = vec![base.a.clone().into(), base.b.into(), base.c.clone().map_or(Value::Null, Value::from)];
        // Bounds on the modulo field: only the buckets of the values they leave.
        let ranges = ModBucket::ranges_b(&base.a, b).unwrap();
        let from = layout.byte_ranges(&bv[..1], value_bound(b.0.as_ref()).as_ref(), value_bound(b.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.a == base.a && b.contains(&r.b))?;
        let ranges = ModBucket::ranges_c(&base.a, base.b, c.clone()).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        let c_value = |b: Bound<&Option<String>>| b.map(|v| v.clone().map_or(Value::Null, Value::from));
        let from = layout.byte_ranges(&bv[..2], c_value(c.0.as_ref()).as_ref(), c_value(c.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.a == base.a && r.b == base.b && c.contains(&r.c))?;
        let ranges = ModBucket::ranges_a_eq(&base.a).unwrap();
        hold_exactly(&ranges, &layout.prefix_byte_ranges(&bv[..1]), &rows, |r| r.a == base.a)?;
    }

    #[test]
    fn binary_range_constructors_hold_exactly_the_matching_keys_under_a_hash_over_leading_fields(
        rows in prop::collection::vec(lead_hash(), 1..24),
        pick in any::<prop::sample::Index>(),
        b in bounds(prop::option::of(small_string())),
        c in bounds(prop_oneof![Just(i16::MIN), -1i16..2, Just(i16::MAX)]),
    ) {
        let base = &rows[pick.index(rows.len())];
        let layout = LeadHash::layout();
        let bv: Vec<Value> = vec![base.a.into(), base.b.clone().map_or(Value::Null, Value::from), base.c.into()];
        let b_value = |x: Bound<&Option<String>>| x.map(|v| v.clone().map_or(Value::Null, Value::from));
        let ranges = LeadHash::ranges_b(base.a, b.clone()).unwrap();
        let from = layout.byte_ranges(&bv[..1], b_value(b.0.as_ref()).as_ref(), b_value(b.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.a == base.a && b.contains(&r.b))?;
        let ranges = LeadHash::ranges_c(base.a, &base.b, c).unwrap();
        let from = layout.byte_ranges(&bv[..2], value_bound(c.0.as_ref()).as_ref(), value_bound(c.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.a == base.a && r.b == base.b && c.contains(&r.c))?;
        let ranges = LeadHash::ranges_a_eq(base.a).unwrap();
        hold_exactly(&ranges, &layout.prefix_byte_ranges(&bv[..1]), &rows, |r| r.a == base.a)?;
    }

    #[test]
    fn binary_range_constructors_hold_exactly_the_matching_keys_of_a_hashed_nested_key(
        rows in prop::collection::vec(outer(), 1..24),
        pick in any::<prop::sample::Index>(),
        seq in bounds(0u32..4),
    ) {
        let base = &rows[pick.index(rows.len())];
        let layout = Outer::layout();
        let bv: Vec<Value> = vec![base.inner.n.into(), base.inner.s.clone().into()];
        let ranges = Outer::ranges_seq(&base.inner, seq).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        let from = layout.byte_ranges(&bv, value_bound(seq.0.as_ref()).as_ref(), value_bound(seq.1.as_ref()).as_ref()).unwrap();
        hold_exactly(&ranges, &from, &rows, |r| r.inner == base.inner && seq.contains(&r.seq))?;
        let ranges = Outer::ranges_inner_eq(&base.inner).unwrap();
        hold_exactly(&ranges, &layout.prefix_byte_ranges(&bv), &rows, |r| r.inner == base.inner)?;
    }
}

/// What the text form's constructors still answer: `Vec<KeyRange>`, for a text key.
#[test]
fn a_text_key_keeps_text_ranges() {
    #[derive(PartitionKey)]
    struct Card {
        #[pk(width = 6)]
        device: u32,
        seq: u32,
    }
    let ranges: Vec<pk_codec::KeyRange> = Card::ranges_device_eq(54).unwrap();
    assert!(ranges[0].contains(&Card { device: 54, seq: 1 }.encode().unwrap()));
}

/// A layout's ranges of rows whose leading fields are `prefix`, as bytes.
trait PrefixBytes {
    fn prefix_byte_ranges(&self, prefix: &[Value]) -> Vec<ByteRange>;
}

impl PrefixBytes for pk_codec::Layout {
    fn prefix_byte_ranges(&self, prefix: &[Value]) -> Vec<ByteRange> {
        self.byte_ranges(prefix, Bound::Unbounded, Bound::Unbounded)
            .unwrap()
    }
}
