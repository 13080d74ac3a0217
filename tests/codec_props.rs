//! Property tests of the codec's guarantees over random layouts and values: order preservation,
//! round trip, injectivity (with prefixes too), exact ranges, the bucket merge, and decoding of
//! arbitrary text (never a panic; whatever decodes re-encodes to the same key).

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use pk_codec::{FieldSpec, HashAlg, Kind, Layout, Value};
use proptest::prelude::*;

/// One field of a random layout: its spec and how to make its values.
#[derive(Debug, Clone)]
struct FieldGen {
    spec: FieldSpec,
}

const INT_BITS: [u8; 5] = [8, 16, 32, 64, 128];

fn field_gen() -> impl Strategy<Value = FieldGen> {
    let kind = prop_oneof![
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Uint { bits }),
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Int { bits }),
        3 => Just(Kind::Str),
        2 => Just(Kind::Bytes),
        1 => Just(Kind::Bool),
        1 => Just(Kind::Char),
    ];
    (kind, any::<bool>(), any::<bool>(), any::<bool>(), 0u8..=40).prop_map(
        |(kind, desc, escaped, optional, w)| {
            let mut spec = FieldSpec::new(kind);
            if let Some(default) = kind.default_width() {
                // Half the time a narrower declared width (at least 1 digit, 2 for signed).
                let min = if matches!(kind, Kind::Int { .. }) {
                    2
                } else {
                    1
                };
                if w % 2 == 0 {
                    spec = spec.with_width(min.max(w.min(default)));
                }
            }
            if desc {
                spec = spec.descending();
            }
            if escaped && kind == Kind::Str {
                spec = spec.escaped();
            }
            if optional {
                spec = spec.optional();
            }
            FieldGen { spec }
        },
    )
}

fn pow10(n: u8) -> Option<u128> {
    10u128.checked_pow(u32::from(n))
}

/// Values that fit `spec`.
fn value_of(spec: FieldSpec) -> BoxedStrategy<Value> {
    let inner: BoxedStrategy<Value> = match spec.kind() {
        Kind::Uint { bits } => {
            let type_max = if bits == 128 {
                u128::MAX
            } else {
                (1u128 << bits) - 1
            };
            let max = pow10(spec.width()).map_or(type_max, |p| type_max.min(p - 1));
            prop_oneof![
                (0..=max).prop_map(Value::Uint),
                prop::sample::select(vec![0, 1, max / 2, max - 1, max]).prop_map(Value::Uint),
            ]
            .boxed()
        }
        Kind::Int { bits } => {
            let (tmin, tmax) = if bits == 128 {
                (i128::MIN, i128::MAX)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            let (min, max) = match pow10(spec.width() - 1).and_then(|p| i128::try_from(p).ok()) {
                Some(p) => (tmin.max(-p), tmax.min(p - 1)),
                None => (tmin, tmax),
            };
            prop_oneof![
                (min..=max).prop_map(Value::Int),
                prop::sample::select(vec![min, min + 1, -1, 0, 1, max - 1, max])
                    .prop_map(Value::Int),
            ]
            .boxed()
        }
        Kind::Str if spec.is_escaped() || spec.is_descending() => {
            prop::collection::vec(any::<char>(), 0..6)
                .prop_map(|c| Value::Str(c.into_iter().collect()))
                .boxed()
        }
        // Plain strings: every byte above any delimiter we pick (all are `,` or lower).
        Kind::Str => "[-./0-9a-z_é€😀]{0,6}".prop_map(Value::Str).boxed(),
        Kind::Bytes => prop::collection::vec(any::<u8>(), 0..6)
            .prop_map(Value::Bytes)
            .boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Char => any::<char>().prop_map(Value::Char).boxed(),
        _ => unreachable!("every kind is covered"),
    };
    if spec.is_optional() {
        prop_oneof![1 => Just(Value::Null), 4 => inner].boxed()
    } else {
        inner
    }
}

fn layout_of(fields: &[FieldGen], delimiter: char) -> Layout {
    fields
        .iter()
        .enumerate()
        .fold(
            Layout::builder().delimiter(delimiter).max_len(100_000),
            |b, (i, f)| b.field(format!("f{i}"), f.spec),
        )
        .build()
        .expect("generated layouts are valid")
}

fn rows_of(fields: &[FieldGen], n: std::ops::Range<usize>) -> BoxedStrategy<Vec<Vec<Value>>> {
    let row: Vec<BoxedStrategy<Value>> = fields.iter().map(|f| value_of(f.spec)).collect();
    prop::collection::vec(row, n).boxed()
}

/// A random layout (1 to 4 fields, a delimiter) and rows for it.
fn layout_and_rows(
    rows: std::ops::Range<usize>,
) -> impl Strategy<Value = (Layout, Vec<FieldGen>, Vec<Vec<Value>>)> {
    (
        prop::collection::vec(field_gen(), 1..5),
        prop::sample::select(vec![',', ' ', '!', '\u{1}', '\0', '+']),
    )
        .prop_flat_map(move |(fields, delimiter)| {
            let layout = layout_of(&fields, delimiter);
            (
                Just(layout),
                Just(fields.clone()),
                rows_of(&fields, rows.clone()),
            )
        })
}

/// The typed order of two rows: field by field, descending fields reversed.
fn typed_cmp(layout: &Layout, a: &[Value], b: &[Value]) -> Ordering {
    for ((def, x), y) in layout.fields().iter().zip(a).zip(b) {
        let ord = x.cmp(y);
        let ord = if def.spec().is_descending() {
            ord.reverse()
        } else {
            ord
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn key_order_equals_typed_order((layout, _f, rows) in layout_and_rows(2..8)) {
        let keys: Vec<String> = rows.iter().map(|r| layout.encode(r).unwrap()).collect();
        for (a, ka) in rows.iter().zip(&keys) {
            for (b, kb) in rows.iter().zip(&keys) {
                prop_assert_eq!(typed_cmp(&layout, a, b), ka.cmp(kb), "layout `{}`: {:?} vs {:?} gave {:?} vs {:?}", layout, a, b, ka, kb);
            }
        }
    }

    #[test]
    fn every_key_decodes_back((layout, _f, rows) in layout_and_rows(1..6)) {
        for row in &rows {
            let key = layout.encode(row).unwrap();
            prop_assert_eq!(&layout.decode(&key).unwrap(), row, "layout `{}` key {:?}", layout, key);
        }
    }

    #[test]
    fn text_spec_round_trips((layout, _f, _rows) in layout_and_rows(0..1)) {
        let text = layout.to_string();
        let parsed: Layout = text.parse().unwrap();
        prop_assert_eq!(&parsed, &layout, "spec {:?}", text);
        let json = serde_json::to_string(&layout).unwrap();
        prop_assert_eq!(serde_json::from_str::<Layout>(&json).unwrap(), layout);
    }

    #[test]
    fn distinct_values_give_distinct_keys_with_any_prefix(
        (layout, fields, rows) in layout_and_rows(2..10),
        prefix in 0usize..5,
    ) {
        let spec = layout.to_string();
        let prefixed: Layout = match prefix {
            0 => spec,
            1 => format!("{spec}; hash=md5:32"),
            2 => format!("{spec}; hash=xxh3:16:sep"),
            3 => format!("{spec}; buckets=7:hash"),
            _ => format!("{spec}; buckets=16:hash(f0):sep"),
        }.parse().unwrap();
        let _ = fields;
        let mut seen: HashMap<String, &Vec<Value>> = HashMap::new();
        for row in &rows {
            let key = prefixed.encode(row).unwrap();
            prop_assert_eq!(&prefixed.decode(&key).unwrap(), row);
            if let Some(other) = seen.insert(key.clone(), row) {
                prop_assert_eq!(other, row, "two rows share the key {:?}", key);
            }
        }
    }

    #[test]
    fn ranges_hold_exactly_the_matching_keys(
        (layout, _f, rows) in layout_and_rows(4..12),
        k in 0usize..4,
        picks in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        bounds in (0u8..3, 0u8..3),
    ) {
        let n = layout.fields().len();
        let k = k.min(n - 1);
        // Equality values from one row, bounds from two others (so they often hit real keys).
        let base = &rows[picks.0.index(rows.len())];
        let lo = &rows[picks.1.index(rows.len())][k];
        let hi = &rows[picks.2.index(rows.len())][k];
        let bound = |kind: u8, v: &Value| match kind {
            0 => Bound::Included(v.clone()),
            1 => Bound::Excluded(v.clone()),
            _ => Bound::Unbounded,
        };
        let (lower, upper) = (bound(bounds.0, lo), bound(bounds.1, hi));
        let range = layout.range(&base[..k], lower.as_ref(), upper.as_ref()).unwrap();
        let in_bounds = |v: &Value| {
            (match &lower { Bound::Included(l) => v >= l, Bound::Excluded(l) => v > l, Bound::Unbounded => true })
                && (match &upper { Bound::Included(u) => v <= u, Bound::Excluded(u) => v < u, Bound::Unbounded => true })
        };
        for row in &rows {
            let key = layout.encode(row).unwrap();
            let want = row[..k] == base[..k] && in_bounds(&row[k]);
            prop_assert_eq!(range.contains(&key), want, "layout `{}` range {:?} row {:?} key {:?}", layout, range, row, key);
        }
        // The prefix-only range holds exactly the rows that share the leading fields.
        let prefix_range = layout.range(&base[..=k], Bound::Unbounded, Bound::Unbounded).unwrap();
        for row in &rows {
            let key = layout.encode(row).unwrap();
            prop_assert_eq!(prefix_range.contains(&key), row[..=k] == base[..=k]);
        }
    }

    #[test]
    fn bucket_merge_equals_a_sort(
        (layout, _f, rows) in layout_and_rows(0..40),
        count in 1u32..20,
        by_hash in any::<bool>(),
        sep in any::<bool>(),
    ) {
        let spec = layout.to_string();
        let first = &layout.fields()[0];
        let modulo_ok = first.spec().kind().is_integer() && !first.spec().is_optional();
        let how = if by_hash || !modulo_ok { "hash".to_owned() } else { "mod(f0)".to_owned() };
        let sep = if sep { ":sep" } else { "" };
        let bucketed: Layout = format!("{spec}; buckets={count}:{how}{sep}").parse().unwrap();
        // What one range read per bucket returns: each bucket's keys, sorted.
        let mut per_bucket: Vec<BTreeSet<String>> = vec![BTreeSet::new(); count as usize];
        for row in &rows {
            let key = bucketed.encode(row).unwrap();
            per_bucket[bucketed.shape().bucket_of_key(&key).unwrap() as usize].insert(key);
        }
        let ranges = bucketed.prefix_ranges(&[]).unwrap();
        prop_assert_eq!(ranges.len(), count as usize);
        for (b, keys) in per_bucket.iter().enumerate() {
            for key in keys {
                prop_assert!(ranges[b].contains(key));
            }
        }
        let merged: Vec<String> = bucketed.shape().merge_buckets(per_bucket, |k: &String| k.as_str()).collect();
        let mut want: Vec<(Vec<Value>, String)> = merged.iter().map(|k| (bucketed.decode(k).unwrap(), k.clone())).collect();
        want.sort_by(|a, b| typed_cmp(&layout, &a.0, &b.0));
        let want: Vec<String> = want.into_iter().map(|(_, k)| k).collect();
        prop_assert_eq!(merged, want);
    }

    #[test]
    fn decoding_any_text_never_panics_and_round_trips_what_it_accepts(
        (layout, _f, rows) in layout_and_rows(1..3),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 0..4),
        noise in ".{0,12}",
    ) {
        let candidates = [layout.encode(&rows[0]).unwrap(), noise];
        for mut text in candidates {
            for (at, c, op) in &edits {
                let chars: Vec<char> = text.chars().collect();
                let i = if chars.is_empty() { 0 } else { at.index(chars.len()) };
                let mut chars = chars;
                match op {
                    0 if !chars.is_empty() => { chars.remove(i); }
                    1 => chars.insert(i.min(chars.len()), *c),
                    _ if !chars.is_empty() => chars[i] = *c,
                    _ => {}
                }
                text = chars.into_iter().collect();
            }
            if let Ok(values) = layout.decode(&text) {
                prop_assert_eq!(layout.encode(&values).unwrap(), text, "decode accepted a non-canonical key");
            }
        }
    }
}

#[test]
fn integer_boundaries_keep_order_and_round_trip_for_every_type() {
    for bits in INT_BITS {
        let (umax, imin, imax) = if bits == 128 {
            (u128::MAX, i128::MIN, i128::MAX)
        } else {
            (
                (1u128 << bits) - 1,
                -(1i128 << (bits - 1)),
                (1i128 << (bits - 1)) - 1,
            )
        };
        for desc in [false, true] {
            let order = if desc { " desc" } else { "" };
            let u: Layout = format!("v: u{bits}{order}").parse().unwrap();
            let i: Layout = format!("v: i{bits}{order}").parse().unwrap();
            let uvals = [0, 1, umax - 1, umax].map(Value::Uint);
            let ivals = [imin, imin + 1, -1, 0, 1, imax - 1, imax].map(Value::Int);
            for (layout, vals) in [(&u, &uvals[..]), (&i, &ivals[..])] {
                let keys: Vec<String> = vals
                    .iter()
                    .map(|v| layout.encode(std::slice::from_ref(v)).unwrap())
                    .collect();
                let width = keys[0].len();
                for (v, key) in vals.iter().zip(&keys) {
                    assert_eq!(key.len(), width, "`{layout}`: fixed width");
                    assert_eq!(
                        &layout.decode(key).unwrap()[0],
                        v,
                        "`{layout}` round trip of {key}"
                    );
                }
                let mut sorted = keys.clone();
                sorted.sort();
                if desc {
                    sorted.reverse();
                }
                assert_eq!(sorted, keys, "`{layout}`: key order of MIN..MAX");
            }
        }
    }
}

#[test]
fn hash_prefixes_of_every_length_round_trip() {
    for alg in [HashAlg::Md5, HashAlg::Xxh32, HashAlg::Xxh64, HashAlg::Xxh3] {
        for len in 1..=alg.max_len() {
            let layout: Layout = format!("order_number: u64 width=6; hash={}:{len}", alg.name())
                .parse()
                .unwrap();
            let key = layout.encode(&[200_001u64.into()]).unwrap();
            assert_eq!(key.len(), usize::from(len) + 6);
            assert_eq!(&key[..usize::from(len)], &alg.hex_prefix(b"200001", len));
            assert_eq!(layout.decode(&key).unwrap(), vec![Value::Uint(200_001)]);
        }
    }
}

#[test]
fn power_of_two_hash_buckets_stay_even_over_sequential_keys() {
    // A weak hash modulo a power of two leaves buckets uneven (CockroachDB's hash-sharded
    // indexes moved to a mixing hash for this). Sequential keys into 16 buckets must spread
    // within a few percent of even.
    let layout: Layout = "order_number: u64; buckets=16:hash".parse().unwrap();
    let mut counts = [0u32; 16];
    for n in 0..64_000u64 {
        let key = layout.encode(&[n.into()]).unwrap();
        counts[layout.shape().bucket_of_key(&key).unwrap() as usize] += 1;
    }
    let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert!(
        f64::from(*max) / f64::from(*min) < 1.1,
        "uneven buckets: {counts:?}"
    );
}
