//! Bucket pruning: a range read of a bucketed key visits only the buckets that can hold its rows.
//!
//! Over random layouts with bucket prefixes (modulo and hash, every accepted delimiter, ascending
//! and descending fields, optional fields, signed and wide integers), random stored keys and
//! random reads: (1) the pruned read returns exactly the rows the read of every bucket returns,
//! in the same merged order; (2) the buckets it visits are exactly those that can hold its rows
//! when the read fixes what picks the bucket (the one bucket of a fully given hash, the
//! `value % count` of each value a modulo field's bounds leave), and every bucket otherwise.
//! Derived range constructors prune as the runtime layout does, and `pk ranges` prints one
//! range for one device of a `hash(device_id)` design.

use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};

use pk_codec::store::{MemoryStore, RangeStore};
use pk_codec::{FieldSpec, KeyRange, Kind, Layout, PartitionKey, Separator, Value};
use proptest::prelude::*;

use crate::support;
use crate::support::{INT_BITS, Reading, cases, pk, stderr, stdout};

/// The values an integer field can hold (its type's, within its width), in a key space where
/// they are consecutive `u128`s in value order: the oracle's own arithmetic, independent of the
/// crate's.
#[derive(Debug, Clone, Copy)]
enum Ints {
    Unsigned { max: u128 },
    Signed { min: i128, max: i128 },
}

const SIGN: u128 = 1 << 127;

impl Ints {
    fn of(spec: &FieldSpec) -> Option<Self> {
        match spec.kind() {
            Kind::Uint { .. } => Some(Self::Unsigned {
                max: support::uint_max(spec),
            }),
            Kind::Int { .. } => {
                let (min, max) = support::int_range(spec);
                Some(Self::Signed { min, max })
            }
            _ => None,
        }
    }

    /// The first and last value, in the key space.
    fn limits(self) -> (u128, u128) {
        match self {
            Self::Unsigned { max } => (0, max),
            Self::Signed { min, max } => ((min as u128) ^ SIGN, (max as u128) ^ SIGN),
        }
    }

    /// A value's place in the key space (values of either variant, as layouts take them).
    fn key(self, v: &Value) -> u128 {
        match (self, v) {
            (Self::Unsigned { .. }, Value::Uint(v)) => *v,
            (Self::Unsigned { .. }, Value::Int(v)) => u128::try_from(*v).unwrap(),
            (Self::Signed { .. }, Value::Int(v)) => (*v as u128) ^ SIGN,
            (Self::Signed { .. }, Value::Uint(v)) => (i128::try_from(*v).unwrap() as u128) ^ SIGN,
            _ => panic!("not an integer: {v:?}"),
        }
    }

    /// The value at `key`, as a [`Value`] of the field's own variant, or of the other one when
    /// it fits and `other` asks for it.
    fn value(self, key: u128, other: bool) -> Value {
        match self {
            Self::Unsigned { .. } => match i128::try_from(key) {
                Ok(v) if other => Value::Int(v),
                _ => Value::Uint(key),
            },
            Self::Signed { .. } => {
                let v = (key ^ SIGN) as i128;
                match u128::try_from(v) {
                    Ok(u) if other => Value::Uint(u),
                    _ => Value::Int(v),
                }
            }
        }
    }

    /// The bucket of the value at `key`: the value modulo `count`, never negative.
    fn bucket(self, key: u128, count: u32) -> u32 {
        match self {
            Self::Unsigned { .. } => (key % u128::from(count)) as u32,
            Self::Signed { .. } => ((key ^ SIGN) as i128).rem_euclid(i128::from(count)) as u32,
        }
    }

    /// The buckets that can hold a value within `lower` and `upper`: `None` when no value lies
    /// within them (any one bucket may then be read: its range holds no key).
    fn buckets_within(
        self,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        count: u32,
    ) -> Option<BTreeSet<u32>> {
        let (first, last) = self.limits();
        let lo = match lower {
            Bound::Included(v) => Some(self.key(v)),
            Bound::Excluded(v) => self.key(v).checked_add(1),
            Bound::Unbounded => Some(first),
        }?
        .max(first);
        let hi = match upper {
            Bound::Included(v) => Some(self.key(v)),
            Bound::Excluded(v) => self.key(v).checked_sub(1),
            Bound::Unbounded => Some(last),
        }?
        .min(last);
        if lo > hi {
            return None;
        }
        let values = (hi - lo).saturating_add(1);
        let first_bucket = self.bucket(lo, count);
        Some(if values >= u128::from(count) {
            (0..count).collect()
        } else {
            (0..values as u32)
                .map(|i| (first_bucket + i) % count)
                .collect()
        })
    }
}

/// One field of a random layout: its spec, the values rows and equalities take, and the values
/// bounds take (those and their neighbours).
#[derive(Debug, Clone)]
struct FieldGen {
    spec: FieldSpec,
    pool: Vec<Value>,
    bounds: Vec<Value>,
}

/// What picks the bucket: a modulo of field `i`, or a hash of some fields (all when empty).
#[derive(Debug, Clone)]
enum By {
    Modulo(usize),
    Hash(Vec<usize>),
}

fn spec_gen() -> impl Strategy<Value = FieldSpec> {
    // Every integer size, signed or not, twice as often as each other kind.
    let ints = INT_BITS
        .iter()
        .flat_map(|&bits| [Kind::Uint { bits }, Kind::Int { bits }]);
    let others = [Kind::Str, Kind::Str, Kind::Bytes, Kind::Bool, Kind::Char];
    let kinds: Vec<Kind> = ints.clone().chain(ints).chain(others).collect();
    (
        prop::sample::select(kinds),
        any::<bool>(),
        any::<bool>(),
        0u8..6,
        0u8..=40,
    )
        .prop_map(|(kind, desc, escaped, optional, w)| {
            // A third of the time a narrower width, and optional (a modulo field never is: the
            // rulebook says so).
            let width = support::narrowed_width(kind, w).filter(|_| w % 3 == 0);
            support::field_spec(kind, width, desc, escaped, optional < 2)
        })
}

/// The field of `spec` in a layout with `delimiter`, with its pools: for an integer, up to
/// seven consecutive values from `start` (at the type's or width's ends, around zero, or
/// anywhere), each written as either `Value` variant when it fits.
fn field_gen(spec: FieldSpec, delimiter: char, count: Option<u32>) -> BoxedStrategy<FieldGen> {
    let with_null = move |mut values: Vec<Value>| {
        if spec.is_optional() {
            values.push(Value::Null);
        }
        values
    };
    match Ints::of(&spec) {
        Some(ints) => {
            let (first, last) = ints.limits();
            let zero = ints.key(&Value::Uint(0));
            // For a modulo bucket's field, also values that run past a multiple of the count,
            // whose buckets wrap past the last to bucket 0.
            let wrapping = (first..=last).prop_map(move |k| match count {
                Some(count) => {
                    let up = u128::from(count - ints.bucket(k, count));
                    k.saturating_add(up).saturating_sub(2).clamp(first, last)
                }
                None => k,
            });
            let start = prop_oneof![
                1 => Just(first),
                1 => Just(last.saturating_sub(6).max(first)),
                1 => Just(zero.saturating_sub(3).max(first)),
                1 => first..=last,
                2 => wrapping,
            ];
            (start, 1u128..8, any::<u8>())
                .prop_map(move |(start, len, other)| {
                    let end = start.saturating_add(len - 1).min(last);
                    let pool: Vec<Value> = (start..=end)
                        .map(|k| ints.value(k, (k as u8 ^ other).is_multiple_of(3)))
                        .collect();
                    let below = start.checked_sub(1).filter(|&k| k >= first);
                    let above = end.checked_add(1).filter(|&k| k <= last);
                    // In value order (an open bound reaches the field's first or last value).
                    let bounds: Vec<Value> = below
                        .into_iter()
                        .chain(start..=end)
                        .chain(above)
                        .map(|k| ints.value(k, (k as u8).is_multiple_of(2)))
                        .collect();
                    FieldGen {
                        spec,
                        pool: with_null(pool),
                        bounds: with_null(bounds),
                    }
                })
                .boxed()
        }
        None => {
            let pool: Vec<Value> = match spec.kind() {
                Kind::Str if spec.is_escaped() || spec.is_descending() => {
                    ["", "a", ",", "a,b", "é", "~"]
                        .into_iter()
                        .map(Value::from)
                        .collect()
                }
                // A plain string holds only bytes above the delimiter.
                Kind::Str => ["", "a", "b", "ab", "~"]
                    .into_iter()
                    .filter(|s| s.bytes().all(|b| b > delimiter as u8))
                    .map(Value::from)
                    .collect(),
                Kind::Bytes => vec![
                    Value::Bytes(vec![]),
                    Value::Bytes(vec![0]),
                    Value::Bytes(vec![1, 2]),
                    Value::Bytes(vec![255]),
                ],
                Kind::Bool => vec![Value::Bool(false), Value::Bool(true)],
                Kind::Char => vec![Value::Char('a'), Value::Char(','), Value::Char('é')],
                other => unreachable!("no such field kind here: {other:?}"),
            };
            let pool = with_null(pool);
            Just(FieldGen {
                spec,
                pool: pool.clone(),
                bounds: pool,
            })
            .boxed()
        }
    }
}

/// A random bucketed layout the rulebook accepts: 1 to 4 fields, any ASCII delimiter, a modulo
/// bucket of an integer field or a hash bucket of some or all fields, 1 to 300 buckets, with or
/// without the separator.
fn layout_gen() -> impl Strategy<Value = (Layout, Vec<FieldGen>, By)> {
    let count = prop_oneof![6 => 1u32..=20, 2 => 21u32..=64, 1 => 65u32..=300];
    (
        prop::collection::vec(spec_gen(), 1..5),
        support::delimiter_gen(),
        count,
        any::<bool>(),
        0u8..3,
        any::<prop::sample::Index>(),
        prop::collection::vec(any::<bool>(), 4),
    )
        .prop_filter_map(
            "the rulebook refuses the layout",
            |(specs, delimiter, count, sep, modulo, pick, hashed)| {
                let moduli: Vec<usize> = (0..specs.len())
                    .filter(|&i| specs[i].kind().is_integer() && !specs[i].is_optional())
                    .collect();
                let by = if modulo != 0 && !moduli.is_empty() {
                    By::Modulo(moduli[pick.index(moduli.len())])
                } else {
                    By::Hash((0..specs.len()).filter(|&i| hashed[i]).collect())
                };
                let name = |i: &usize| format!("f{i}");
                let separator = if sep {
                    Separator::After
                } else {
                    Separator::None
                };
                let builder = specs
                    .iter()
                    .enumerate()
                    .fold(Layout::builder().delimiter(delimiter as u8), |b, (i, s)| {
                        b.field(name(&i), *s)
                    });
                let builder = match &by {
                    By::Modulo(i) => builder.buckets_by_modulo(count, name(i), separator),
                    By::Hash(fields) => {
                        builder.buckets_by_hash(count, fields.iter().map(name), separator)
                    }
                };
                support::unless_delimiter_refused(builder.build())
                    .map(|layout| (layout, specs, delimiter, by))
            },
        )
        .prop_flat_map(|(layout, specs, delimiter, by)| {
            let count = match layout.shape().prefix() {
                pk_codec::Prefix::Bucket { count, .. } => count,
                _ => unreachable!("a bucketed layout"),
            };
            let modulo = |i: usize| matches!(by, By::Modulo(m) if m == i).then_some(count);
            let fields: Vec<BoxedStrategy<FieldGen>> = specs
                .iter()
                .enumerate()
                .map(|(i, s)| field_gen(*s, delimiter, modulo(i)))
                .collect();
            (Just(layout), fields, Just(by))
        })
        // A plain string field at a high delimiter may have no value to hold but null.
        .prop_filter("a field has no values", |(_, fields, _)| {
            fields.iter().all(|f| !f.pool.is_empty())
        })
}

/// A read: the values of the leading fields, and bounds on the next one (when there is one).
#[derive(Debug, Clone)]
struct Read {
    prefix: Vec<Value>,
    lower: Bound<Value>,
    upper: Bound<Value>,
}

/// Bounds from `values` (in value order for an integer field): mostly a lower one at or before
/// the upper one, so that they leave values.
fn bounds_gen(values: Vec<Value>) -> impl Strategy<Value = (Bound<Value>, Bound<Value>)> {
    let n = values.len();
    (0..n, 0..n, 0u8..3, 0u8..3, 0u8..4).prop_map(move |(a, b, lo, hi, ordered)| {
        let (a, b) = if ordered > 0 {
            (a.min(b), a.max(b))
        } else {
            (a, b)
        };
        let bound = |how: u8, v: &Value| match how {
            0 => Bound::Unbounded,
            1 => Bound::Included(v.clone()),
            _ => Bound::Excluded(v.clone()),
        };
        (bound(lo, &values[a]), bound(hi, &values[b]))
    })
}

/// A layout, rows for it (their values from the pools, so reads find them) and a read.
fn case_gen() -> impl Strategy<Value = (Layout, Vec<FieldGen>, By, Vec<Vec<Value>>, Read, usize)> {
    layout_gen().prop_flat_map(|(layout, fields, by)| {
        let row: Vec<_> = fields
            .iter()
            .map(|f| prop::sample::select(f.pool.clone()))
            .collect();
        let n = fields.len();
        // Half the reads of a modulo layout bound its field, the read pruning most often misses.
        let p = match by {
            By::Modulo(m) => prop_oneof![Just(m), 0..=n].boxed(),
            By::Hash(_) => (0..=n).boxed(),
        };
        let read = p.prop_flat_map({
            let fields = fields.clone();
            move |p| {
                let prefix: Vec<_> = fields[..p]
                    .iter()
                    .map(|f| prop::sample::select(f.pool.clone()))
                    .collect();
                let bounds = match fields.get(p) {
                    Some(next) => bounds_gen(next.bounds.clone()).boxed(),
                    None => Just((Bound::Unbounded, Bound::Unbounded)).boxed(),
                };
                (prefix, bounds).prop_map(|(prefix, (lower, upper))| Read {
                    prefix,
                    lower,
                    upper,
                })
            }
        });
        (
            Just(layout),
            Just(fields),
            Just(by),
            prop::collection::vec(row, 0..40),
            read,
            1usize..6,
        )
    })
}

/// The ranges of every bucket for the natural-key range of `ranges` (which share it): the read
/// without pruning.
fn every_bucket(layout: &Layout, ranges: &[KeyRange]) -> Vec<KeyRange> {
    let shape = layout.shape();
    let first = &ranges[0];
    let bucket = shape.bucket_of_key(&first.start).unwrap();
    let own = shape.bucket_prefix(bucket).unwrap();
    let natural_start = &first.start[own.len()..];
    // An end that does not start with the bucket's text is the end of everything under it.
    let natural_end = first
        .end
        .as_deref()
        .and_then(|e| e.strip_prefix(own.as_str()));
    let mut all = Vec::new();
    for b in 0.. {
        let Some(text) = shape.bucket_prefix(b) else {
            break;
        };
        let end = match natural_end {
            Some(e) => format!("{text}{e}"),
            None => {
                let mut after = text[..text.len() - 1].to_owned();
                after.push(char::from(text.as_bytes()[text.len() - 1] + 1));
                after
            }
        };
        all.push(KeyRange {
            start: format!("{text}{natural_start}"),
            end: Some(end),
        });
    }
    all
}

/// The keys a scatter-gather read of `ranges` returns, merged, `page` rows per store read.
fn read_keys(
    store: &MemoryStore,
    layout: &Layout,
    ranges: &[KeyRange],
    page: usize,
) -> Vec<String> {
    let (keys, end) = support::scan_keys(store, layout, ranges, page, None, usize::MAX);
    assert_eq!(end, None);
    keys
}

/// What the oracle expects a read to visit: exactly these buckets, or any one bucket (bounds
/// that leave the modulo field no value).
#[derive(Debug, PartialEq)]
enum Visits {
    Exactly(BTreeSet<u32>),
    AnyOne,
}

impl Visits {
    /// The buckets a read whose bounds on a modulo bucket's field (of `spec`) are `lower` and
    /// `upper` can find rows in, of `count`.
    fn of_bounds(spec: &FieldSpec, lower: Bound<&Value>, upper: Bound<&Value>, count: u32) -> Self {
        let ints = Ints::of(spec).expect("a modulo field is an integer");
        match ints.buckets_within(lower, upper, count) {
            Some(buckets) => Self::Exactly(buckets),
            None => Self::AnyOne,
        }
    }

    /// Whether the buckets of `ranges` are these.
    fn are_those_of(&self, shape: &pk_codec::KeyShape, ranges: &[KeyRange]) -> bool {
        let visited: BTreeSet<u32> = buckets_of(shape, ranges).into_iter().collect();
        match self {
            Self::Exactly(want) => &visited == want,
            Self::AnyOne => visited.len() == 1,
        }
    }
}

/// The buckets that can hold the rows of `read`, by the oracle: a read that gives every hashed
/// field (every field for a hash over all of them) or the modulo field visits that value's
/// bucket; bounds on the modulo field visit the buckets of the values they leave; any other read
/// visits every bucket.
fn expected_visits(layout: &Layout, fields: &[FieldGen], by: &By, read: &Read) -> Visits {
    let pk_codec::Prefix::Bucket { count, .. } = layout.shape().prefix() else {
        unreachable!()
    };
    let p = read.prefix.len();
    // The bucket of any key whose leading fields are the read's (the rest from the pools).
    let bucket_of_prefix = || {
        let row: Vec<Value> = read
            .prefix
            .iter()
            .cloned()
            .chain(fields[p..].iter().map(|f| f.pool[0].clone()))
            .collect();
        let key = layout.encode(&row).unwrap();
        Visits::Exactly(BTreeSet::from([layout
            .shape()
            .bucket_of_key(&key)
            .unwrap()]))
    };
    match by {
        By::Hash(hashed) => {
            let given = hashed.last().map_or(fields.len(), |&last| last + 1);
            if p >= given {
                return bucket_of_prefix();
            }
        }
        By::Modulo(m) if *m < p => return bucket_of_prefix(),
        By::Modulo(m) if *m == p => {
            return Visits::of_bounds(
                &fields[p].spec,
                read.lower.as_ref(),
                read.upper.as_ref(),
                count,
            );
        }
        By::Modulo(_) => {}
    }
    Visits::Exactly((0..count).collect())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(256),
        max_global_rejects: cases(100_000),
        max_local_rejects: cases(65_536),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_pruned_read_returns_what_every_bucket_returns_and_visits_only_buckets_that_can_hold_rows(
        (layout, fields, by, rows, read, page) in case_gen(),
    ) {
        let store = MemoryStore::default();
        for row in &rows {
            store.put(&layout.encode_bytes(row).unwrap(), b"").unwrap();
        }
        let ranges = layout.ranges(&read.prefix, read.lower.as_ref(), read.upper.as_ref()).unwrap();
        prop_assert!(!ranges.is_empty());
        let visited: Vec<u32> = ranges.iter().map(|r| layout.shape().bucket_of_key(&r.start).unwrap()).collect();
        prop_assert!(visited.windows(2).all(|w| w[0] < w[1]), "buckets out of order: {:?}", visited);

        // (1) The pruned read returns the rows of the read of every bucket, in the same order.
        let all = every_bucket(&layout, &ranges);
        let pruned = read_keys(&store, &layout, &ranges, page);
        let unpruned = read_keys(&store, &layout, &all, page);
        prop_assert_eq!(&pruned, &unpruned, "layout `{}`, read {:?}: visited {:?}", layout, read, visited);

        // (2) It visits exactly the buckets that can hold its rows.
        let want = expected_visits(&layout, &fields, &by, &read);
        prop_assert!(want.are_those_of(layout.shape(), &ranges), "layout `{}`, read {:?}: visited {:?}, expected {:?}", layout, read, visited, want);
    }
}

// Derived keys: their range constructors prune as their runtime layouts do (the same rule, in
// pk-codec), and give the one bucket of a fixed hash or the buckets of a modulo field's bounds.

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = ts, separator))]
struct Event {
    #[pk(width = 4)]
    device: u16,
    #[pk(desc, width = 6)]
    ts: i32,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 12, hash(region, user)), delimiter = ';')]
struct Visit {
    region: Option<String>,
    #[pk(desc)]
    user: String,
    #[pk(width = 5)]
    seq: u32,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 8, hash))]
struct Whole {
    a: u8,
    #[pk(escaped, desc)]
    b: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 5, modulo = t))]
struct WideTime {
    #[pk(width = 3)]
    k: u8,
    t: i128,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Card {
    #[pk(width = 3)]
    n: u16,
    s: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 9, hash(card)))]
struct Outer {
    card: Card,
    #[pk(width = 4)]
    seq: u32,
}

/// A bound of `T` as a layout takes it.
fn value_bound<T: Clone + Into<Value>>(b: Bound<&T>) -> Bound<Value> {
    match b {
        Bound::Included(v) => Bound::Included(v.clone().into()),
        Bound::Excluded(v) => Bound::Excluded(v.clone().into()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The buckets `ranges` visit.
fn buckets_of(shape: &pk_codec::KeyShape, ranges: &[KeyRange]) -> Vec<u32> {
    ranges
        .iter()
        .map(|r| shape.bucket_of_key(&r.start).unwrap())
        .collect()
}

/// Checks the derived `ranges` of a key `K` whose first field is `first` and whose second, a
/// modulo bucket's field, lies within `lower` and `upper`: they are the ranges `K`'s runtime
/// layout gives, and they visit the buckets the oracle expects.
fn modulo_ranges_as_expected<K: PartitionKey, T: Clone + Into<Value> + std::fmt::Debug>(
    ranges: &[KeyRange],
    first: Value,
    lower: Bound<&T>,
    upper: Bound<&T>,
) -> Result<(), TestCaseError> {
    let layout = K::layout();
    let pk_codec::Prefix::Bucket { count, .. } = K::SHAPE.prefix() else {
        unreachable!("a bucketed key")
    };
    let (lo, hi) = (value_bound(lower), value_bound(upper));
    let from_layout = layout.ranges(&[first], lo.as_ref(), hi.as_ref()).unwrap();
    prop_assert_eq!(ranges, &from_layout[..]);
    let want = Visits::of_bounds(layout.fields()[1].spec(), lo.as_ref(), hi.as_ref(), count);
    prop_assert!(
        want.are_those_of(&K::SHAPE, ranges),
        "{:?}: {:?}",
        (lower, upper),
        want
    );
    Ok(())
}

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

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn derived_range_constructors_prune_as_their_layouts_do(
        device in 0u32..1000,
        (ts_lo, ts_hi) in bounds(1_700_000_000_000u64..1_700_000_000_050),
        ev_device in any::<u16>().prop_map(|d| d % 10_000),
        (ev_lo, ev_hi) in bounds(-99_999i32..=99_999),
        near in -20i32..20,
        region in prop::option::of("[a-c]{0,2}"),
        user in "[a-c,|]{0,3}",
        a in any::<u8>(),
        b in "[a-c,|]{0,3}",
        k in 0u8..100,
        (t_lo, t_hi) in bounds(prop_oneof![Just(i128::MIN), Just(i128::MAX), -3i128..3, (i128::MAX - 3)..=i128::MAX, i128::MIN..(i128::MIN + 3)]),
        n in 0u16..1000,
        s in "[a-z]{0,3}",
    ) {
        // A hash bucket of the device: one range, its bucket, once the device is given.
        let ranges = Reading::ranges_ts(device, (ts_lo, ts_hi)).unwrap();
        let layout = Reading::layout();
        let (lo, hi) = (value_bound(ts_lo.as_ref()), value_bound(ts_hi.as_ref()));
        prop_assert_eq!(&ranges, &layout.ranges(&[device.into()], lo.as_ref(), hi.as_ref()).unwrap());
        prop_assert_eq!(ranges.len(), 1);
        let key = Reading { device_id: device, ts: 1_700_000_000_000 }.encode().unwrap();
        prop_assert_eq!(buckets_of(&Reading::SHAPE, &ranges), vec![Reading::SHAPE.bucket_of_key(&key).unwrap()]);
        prop_assert_eq!(Reading::ranges_device_id(..).unwrap().len(), 16);

        // A descending signed modulo field under bounds: the buckets of the values they leave.
        let (ev_lo, ev_hi) = (ev_lo.map(|v| v.clamp(-99_999, 99_999)), ev_hi.map(|v| v.clamp(-99_999, 99_999)));
        for (lo, hi) in [(ev_lo, ev_hi), (ev_lo, ev_lo.map(|v| v.saturating_add(near).clamp(-99_999, 99_999)))] {
            let ranges = Event::ranges_ts(ev_device, (lo, hi)).unwrap();
            modulo_ranges_as_expected::<Event, _>(&ranges, ev_device.into(), lo.as_ref(), hi.as_ref())?;
            let in_range = |t: i32| (lo, hi).contains(&t);
            for t in [-99_999, -17, -1, 0, 1, 16, 99_999].into_iter().chain(match lo { Bound::Included(v) | Bound::Excluded(v) => vec![v - 1, v, v + 1], Bound::Unbounded => vec![] }) {
                let Ok(key) = (Event { device: ev_device, ts: t }).encode() else { continue };
                prop_assert_eq!(ranges.iter().any(|r| r.contains(&key)), in_range(t), "ts {}", t);
            }
        }

        // A hash of two fields, one optional, one descending, at another delimiter: one bucket
        // once both are given, every bucket before.
        let visit = Visit { region: region.clone(), user: user.clone(), seq: 7 };
        let ranges = Visit::ranges_seq(&region, &user, ..).unwrap();
        prop_assert_eq!(&ranges, &Visit::layout().prefix_ranges(&[region.clone().map_or(Value::Null, Value::from), user.clone().into()]).unwrap());
        prop_assert_eq!(ranges.len(), 1);
        prop_assert!(ranges[0].contains(&visit.encode().unwrap()));
        prop_assert_eq!(Visit::ranges_user(&region, ..).unwrap().len(), 12);

        // A hash over every field: one bucket only when the whole key is given.
        let ranges = Whole::ranges_b_eq(a, &b).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        let key = Whole { a, b: b.clone() }.encode().unwrap();
        prop_assert!(ranges[0].contains(&key));
        prop_assert_eq!(Whole::ranges_a_eq(a).unwrap().len(), 8);

        // A wide signed modulo field, bounded at the ends of i128.
        let ranges = WideTime::ranges_t(k, (t_lo, t_hi)).unwrap();
        modulo_ranges_as_expected::<WideTime, _>(&ranges, k.into(), t_lo.as_ref(), t_hi.as_ref())?;

        // A hashed nested key: one bucket once it is given.
        let card = Card { n, s: s.clone() };
        let ranges = Outer::ranges_seq(&card, ..).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        let key = Outer { card: card.clone(), seq: 5 }.encode().unwrap();
        prop_assert!(ranges[0].contains(&key));
        prop_assert_eq!(&ranges, &Outer::layout().prefix_ranges(&[n.into(), s.into()]).unwrap());
    }
}

#[test]
fn a_modulo_bucket_over_four_values_reads_four_buckets_and_wraps_past_the_last() {
    let layout: Layout = "ts: u64 width=13; buckets=16:mod(ts):sep".parse().unwrap();
    let read = |lo: u64, hi: u64| {
        let ranges = layout
            .ranges(
                &[],
                Bound::Included(&lo.into()),
                Bound::Included(&hi.into()),
            )
            .unwrap();
        buckets_of(layout.shape(), &ranges)
    };
    assert_eq!(read(100, 103), [4, 5, 6, 7]);
    assert_eq!(read(14, 17), [0, 1, 14, 15]);
    assert_eq!(read(0, 15), (0..16).collect::<Vec<_>>());
    assert_eq!(read(5, 5), [5]);
    // A narrow field is confined by its width: `d: u8 width=1` holds 0 to 9.
    let narrow: Layout = "d: u8 width=1; buckets=16:mod(d)".parse().unwrap();
    assert_eq!(narrow.prefix_ranges(&[]).unwrap().len(), 10);
}

#[test]
fn pk_ranges_of_one_device_of_a_hash_bucket_design_prints_one_range() {
    let spec = "device_id: u32 width=6; ts: u64 width=13; buckets=16:hash(device_id):sep";
    let o = pk(&["ranges", "--spec", spec, "54"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let (start, end) = lines[0].split_once(' ').unwrap();
    let key = pk(&["encode", "--spec", spec, "54", "1700000000000"]);
    let key = stdout(&key).trim().to_owned();
    assert!(
        start <= key.as_str() && key.as_str() < end,
        "{key} in {start} {end}"
    );
    // The note on standard error says what was pruned and what the end key means.
    let note = stderr(&o);
    assert!(note.contains("in 1 of 16 buckets"), "{note}");
    assert!(note.contains("excluded"), "{note}");
    // Without the device, every bucket.
    let o = pk(&["ranges", "--spec", spec]);
    assert_eq!(stdout(&o).lines().count(), 16);
    // ts from 100 to 103 of 16 modulo buckets: 4 ranges.
    let o = pk(&[
        "ranges",
        "--spec",
        "ts: u64 width=13; buckets=16:mod(ts):sep",
        "--from",
        "100",
        "--to",
        "103",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 4, "{}", stdout(&o));
}
