//! Property tests of the codec's guarantees over random layouts and values: order preservation,
//! round trip, injectivity (with prefixes too), exact ranges, the bucket merge, and decoding of
//! arbitrary text (never a panic; whatever decodes re-encodes to the same key).
//!
//! `accepted_space.rs` runs the same guarantees over the whole configuration space the crate
//! accepts; here also `Layout` ranges and encodings at the extremes of every type.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use pk_codec::{
    Decimal, Error, FieldSpec, HashAlg, IntBits, Kind, Layout, MAX_BUCKETS, Precision, Rule,
    Separator, Value,
};
use proptest::prelude::*;

use crate::support;
use crate::support::typed_cmp;

/// One field of a random layout: its spec and how to make its values.
#[derive(Debug, Clone)]
struct FieldGen {
    spec: FieldSpec,
}

use crate::support::INT_BITS;

fn field_gen() -> impl Strategy<Value = FieldGen> {
    let kind = prop_oneof![
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Uint { bits }),
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Int { bits }),
        3 => Just(Kind::Str),
        2 => Just(Kind::Bytes),
        1 => Just(Kind::Bool),
        1 => Just(Kind::Char),
        1 => Just(Kind::F32),
        1 => Just(Kind::F64),
        1 => Just(Kind::Uuid),
        2 => Just(Kind::Timestamp),
        2 => (0u8..=38).prop_map(|scale| Kind::Decimal { scale }),
    ];
    let precision = prop::sample::select(vec![
        Precision::Seconds,
        Precision::Millis,
        Precision::Micros,
        Precision::Nanos,
    ]);
    (
        kind,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0u8..=40,
        precision,
    )
        .prop_map(|(kind, desc, escaped, optional, w, precision)| {
            // Half the time a narrower declared width.
            let width = support::narrowed_width(kind, w).filter(|_| w % 2 == 0);
            // A decimal's scale within its width's digits (the rule `param-range`).
            let kind = match kind {
                Kind::Decimal { scale } => support::decimal_kind(scale, width),
                other => other,
            };
            let mut spec = support::field_spec(kind, width, desc, escaped, optional);
            if kind == Kind::Timestamp && w % 3 != 0 {
                spec = spec.with_precision(precision);
            }
            FieldGen { spec }
        })
}

/// Values that fit `spec` in a layout with `delimiter`.
fn value_of(spec: FieldSpec, delimiter: char) -> BoxedStrategy<Value> {
    let inner: BoxedStrategy<Value> = match spec.kind() {
        Kind::Uint { .. } => {
            let max = support::uint_max(&spec);
            prop_oneof![
                (0..=max).prop_map(Value::Uint),
                prop::sample::select(vec![0, 1, max / 2, max - 1, max]).prop_map(Value::Uint),
            ]
            .boxed()
        }
        Kind::Int { .. } => {
            let (min, max) = support::int_range(&spec);
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
        // Plain strings: any characters whose bytes all sort above the delimiter (the only ones a
        // plain string may hold), printable ASCII and beyond.
        Kind::Str => prop::collection::vec(
            prop_oneof![3 => (0x20u8..0x80).prop_map(char::from), 1 => any::<char>()],
            0..6,
        )
        .prop_map(move |c| Value::Str(c.into_iter().filter(|&c| c > delimiter).collect()))
        .boxed(),
        Kind::Bytes => prop::collection::vec(any::<u8>(), 0..6)
            .prop_map(Value::Bytes)
            .boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Char => any::<char>().prop_map(Value::Char).boxed(),
        // Every bit pattern (NaNs with payloads, both zeros, subnormals) and the special values.
        Kind::F32 => prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            prop::sample::select(vec![
                f32::NEG_INFINITY,
                -1.0,
                -0.0,
                0.0,
                1.0,
                f32::INFINITY,
                f32::NAN,
                -f32::NAN
            ]),
        ]
        .prop_map(Value::F32)
        .boxed(),
        Kind::F64 => prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            prop::sample::select(vec![
                f64::NEG_INFINITY,
                -1.0,
                -0.0,
                0.0,
                1.0,
                f64::INFINITY,
                f64::NAN,
                -f64::NAN
            ]),
        ]
        .prop_map(Value::F64)
        .boxed(),
        Kind::Uuid => prop_oneof![any::<u128>(), prop::sample::select(vec![0, 1, u128::MAX])]
            .prop_map(Value::Uuid)
            .boxed(),
        Kind::Timestamp => {
            // Whole units of the precision, from 0000-01-01 to the last unit of 9999-12-31.
            let unit = 10i128.pow(9 - spec.precision().digits());
            let (first, last) = (
                -62_167_219_200 * 1_000_000_000 / unit,
                (253_402_300_800 * 1_000_000_000 - 1) / unit,
            );
            prop_oneof![
                (first..=last).prop_map(move |u| Value::Timestamp(u * unit)),
                prop::sample::select(vec![first, -1, 0, 1, last])
                    .prop_map(move |u| Value::Timestamp(u * unit)),
            ]
            .boxed()
        }
        Kind::Decimal { scale } => decimal_values(spec, scale),
        _ => unreachable!("every kind is covered"),
    };
    if spec.is_optional() {
        prop_oneof![1 => Just(Value::Null), 4 => inner].boxed()
    } else {
        inner
    }
}

/// Values of a decimal field: any units its width holds at its scale, the extremes, and the same
/// numbers given at a lower scale (trailing zeros dropped), as callers may. (Integers, which a
/// decimal field takes too, decode as decimals: `decimal_kind.rs` checks them.)
fn decimal_values(spec: FieldSpec, scale: u8) -> BoxedStrategy<Value> {
    let (min, max) = support::decimal_units_range(&spec);
    let units = prop_oneof![
        min..=max,
        prop::sample::select(vec![min, min + 1, -1, 0, 1, max - 1, max]),
    ];
    (units, any::<u8>())
        .prop_map(move |(units, shape)| {
            let d = Decimal::new(units, scale).unwrap();
            let lower = (0..scale).find_map(|s| d.rescale(s));
            match lower {
                Some(lower) if shape % 2 == 1 => Value::Decimal(lower),
                _ => Value::Decimal(d),
            }
        })
        .boxed()
}

/// The layout of `fields` with `delimiter`, if the rulebook accepts it. A refusal must name the
/// rule it breaks (and only the rules about delimiters can be broken by these fields).
fn layout_of(fields: &[FieldGen], delimiter: char) -> Option<Layout> {
    let built = fields
        .iter()
        .enumerate()
        .fold(
            Layout::builder()
                .delimiter(delimiter as u8)
                .max_len(100_000),
            |b, (i, f)| b.field(format!("f{i}"), f.spec),
        )
        .build();
    support::unless_delimiter_refused(built)
}

fn rows_of(
    fields: &[FieldGen],
    delimiter: char,
    n: std::ops::Range<usize>,
) -> BoxedStrategy<Vec<Vec<Value>>> {
    let row: Vec<BoxedStrategy<Value>> =
        fields.iter().map(|f| value_of(f.spec, delimiter)).collect();
    prop::collection::vec(row, n).boxed()
}

/// A random layout that the rulebook accepts (1 to 4 fields of every kind and option, any ASCII
/// delimiter) and rows for it.
fn layout_and_rows(
    rows: std::ops::Range<usize>,
) -> impl Strategy<Value = (Layout, Vec<FieldGen>, Vec<Vec<Value>>)> {
    (
        prop::collection::vec(field_gen(), 1..5),
        support::delimiter_gen(),
    )
        .prop_filter_map("the rulebook refuses the layout", |(fields, delimiter)| {
            layout_of(&fields, delimiter).map(|layout| (layout, fields, delimiter))
        })
        .prop_flat_map(move |(layout, fields, delimiter)| {
            (
                Just(layout),
                Just(fields.clone()),
                rows_of(&fields, delimiter, rows.clone()),
            )
        })
}

/// Bucket counts from 1 to the rulebook's maximum, small ones more often.
fn bucket_count() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 1u32..20,
        1 => 1..=MAX_BUCKETS,
        1 => Just(MAX_BUCKETS),
    ]
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: support::cases(256),
        // Layouts the rulebook refuses (a high delimiter with a variable-length field) are drawn
        // again: about four in ten, so the allowances grow with the cases of a soak run.
        max_global_rejects: support::cases(100_000),
        max_local_rejects: support::cases(65_536),
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
        (layout, _f, rows) in layout_and_rows(2..10),
        prefix in 0usize..6,
        alg in prop::sample::select(HashAlg::ALL.to_vec()),
        len in any::<prop::sample::Index>(),
        count in bucket_count(),
        hashed in prop::collection::vec(any::<bool>(), 4),
        sep in prop::sample::select(vec!["", ":sep"]),
    ) {
        let spec = layout.to_string();
        let len = 1 + len.index(usize::from(alg.max_len()));
        let hashed: Vec<String> = (0..layout.fields().len()).filter(|&i| hashed[i]).map(|i| format!("f{i}")).collect();
        let prefixed: Layout = match prefix {
            0 => spec,
            1 => format!("{spec}; hash={}:{len}{sep}", alg.name()),
            2 => format!("{spec}; buckets={count}:hash{sep}"),
            3 if !hashed.is_empty() => format!("{spec}; buckets={count}:hash({}){sep}", hashed.join(",")),
            3 => format!("{spec}; buckets={count}:hash(f0){sep}"),
            // A hash over the leading fields only.
            _ => {
                let lead: Vec<String> = (0..=len % layout.fields().len()).map(|i| format!("f{i}")).collect();
                format!("{spec}; hash={}({}):{len}{sep}", alg.name(), lead.join(","))
            }
        }.parse().unwrap();
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
        // Bounds that hold no value give an empty range, never one whose start lies past its end.
        prop_assert!(range.end.as_ref().is_none_or(|end| range.start <= *end), "inverted {:?}", range);
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
    fn ranges_under_a_hash_over_leading_fields_hold_exactly_the_matching_keys(
        (layout, _f, rows) in layout_and_rows(4..12),
        lead in 1usize..4,
        extra in 0usize..3,
        pick in any::<prop::sample::Index>(),
    ) {
        let n = layout.fields().len();
        let lead = lead.min(n);
        let hashed: Vec<String> = (0..lead).map(|i| format!("f{i}")).collect();
        let prefixed: Layout = format!("{layout}; hash=xxh3({}):6:sep", hashed.join(",")).parse().unwrap();
        let base = &rows[pick.index(rows.len())];
        let k = (lead + extra).min(n);
        let ranges = prefixed.prefix_ranges(&base[..k]).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        for row in &rows {
            let key = prefixed.encode(row).unwrap();
            prop_assert_eq!(&prefixed.decode(&key).unwrap(), row);
            prop_assert_eq!(ranges[0].contains(&key), row[..k] == base[..k], "`{}` {:?} {:?}", prefixed, ranges, key);
        }
        // Fewer equality values than hashed fields: no range, and an error that says why.
        prop_assert!(prefixed.prefix_ranges(&base[..lead - 1]).is_err());
    }

    #[test]
    fn bucket_merge_equals_a_sort(
        (layout, _f, rows) in layout_and_rows(0..40),
        count in bucket_count(),
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
        // One range per bucket that can hold a key: every bucket, or fewer when the modulo
        // field's type and width hold fewer values than there are buckets (`bucket_pruning.rs`).
        let ranges = bucketed.prefix_ranges(&[]).unwrap();
        prop_assert!(ranges.len() <= count as usize);
        for keys in &per_bucket {
            for key in keys {
                prop_assert_eq!(ranges.iter().filter(|r| r.contains(key)).count(), 1);
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

    #[test]
    fn exactly_the_keys_that_encode_decode_under_any_length_limit(
        (layout, _f, rows) in layout_and_rows(1..6),
        limit in any::<prop::sample::Index>(),
    ) {
        // A limit around the keys' lengths: some keys fit, some do not.
        let keys: Vec<String> = rows.iter().map(|r| layout.encode(r).unwrap()).collect();
        let longest = keys.iter().map(String::len).max().unwrap_or(0);
        let max_len = 1 + limit.index(longest + 2);
        let spec = layout.to_string().replace("max_len=100000", &format!("max_len={max_len}"));
        let limited: Layout = spec.parse().unwrap();
        for (row, key) in rows.iter().zip(&keys) {
            match limited.encode(row) {
                Ok(k) => {
                    prop_assert_eq!(&k, key);
                    prop_assert_eq!(&limited.decode(key).unwrap(), row);
                }
                Err(Error::KeyTooLong { len, limit }) => {
                    prop_assert_eq!((len, limit), (key.len(), max_len));
                    prop_assert!(
                        matches!(limited.decode(key), Err(Error::Malformed { position, .. }) if position == max_len),
                        "`{}` decoded {:?}, which it refuses to encode", limited, key
                    );
                }
                Err(other) => prop_assert!(false, "unexpected {other}"),
            }
        }
    }
}

/// Every field form (kind, order, escaped, optional), all at once.
fn every_field_form() -> Vec<FieldSpec> {
    let kinds = [
        Kind::Uint { bits: IntBits::B8 },
        Kind::Int { bits: IntBits::B8 },
        Kind::Str,
        Kind::Bytes,
        Kind::Bool,
        Kind::Char,
        Kind::F32,
        Kind::F64,
        Kind::Uuid,
        Kind::Timestamp,
        Kind::Decimal { scale: 2 },
    ];
    let mut out = Vec::new();
    for kind in kinds {
        for desc in [false, true] {
            for escaped in [false, true] {
                for optional in [false, true] {
                    if escaped && kind != Kind::Str {
                        continue;
                    }
                    let mut spec = FieldSpec::new(kind);
                    if desc {
                        spec = spec.descending();
                    }
                    if escaped {
                        spec = spec.escaped();
                    }
                    if optional {
                        spec = spec.optional();
                    }
                    out.push(spec);
                }
            }
        }
    }
    out
}

/// The extreme values of a field form that a layout with `delimiter` can encode.
fn boundary_values(spec: FieldSpec, delimiter: char) -> Vec<Value> {
    let mut values = match spec.kind() {
        Kind::Uint { .. } => vec![Value::Uint(0), Value::Uint(1), Value::Uint(255)],
        Kind::Int { .. } => [-128, -1, 0, 1, 127].map(Value::Int).to_vec(),
        Kind::Str => [
            "",
            "\0",
            "!",
            "-",
            "=",
            "_",
            "a",
            "~",
            "\u{7f}",
            "é",
            "~~",
            "\u{10ffff}",
        ]
        .iter()
        .filter(|s| spec.is_escaped() || spec.is_descending() || s.chars().all(|c| c > delimiter))
        .map(|&s| Value::Str(s.to_owned()))
        .collect(),
        Kind::Bytes => [&[][..], &[0], &[0, 0], &[0x2c], &[0xff]]
            .iter()
            .map(|b| Value::Bytes(b.to_vec()))
            .collect(),
        Kind::Bool => vec![Value::Bool(false), Value::Bool(true)],
        Kind::Char => ['\0', ',', 'a', '\u{10ffff}'].map(Value::Char).to_vec(),
        Kind::F32 => [f32::NEG_INFINITY, -0.0, 0.0, f32::NAN]
            .map(Value::F32)
            .to_vec(),
        Kind::F64 => [-f64::NAN, f64::MIN, -0.0, 0.0, f64::MAX, f64::NAN]
            .map(Value::F64)
            .to_vec(),
        Kind::Uuid => [0, 1, u128::MAX].map(Value::Uuid).to_vec(),
        Kind::Timestamp => [
            -62_167_219_200_000_000_000,
            -1_000_000,
            0,
            253_402_300_799_999_000_000,
        ]
        .map(Value::Timestamp)
        .to_vec(),
        Kind::Decimal { scale } => [i128::MIN, -1, 0, 1, i128::MAX]
            .map(|units| Value::Decimal(Decimal::new(units, scale).unwrap()))
            .to_vec(),
        _ => unreachable!(),
    };
    if spec.is_optional() {
        values.insert(0, Value::Null);
    }
    values
}

/// Not a sample: every ASCII delimiter against every field form, before and after another field,
/// on each form's extreme values. Every layout the rulebook accepts keeps order, round trip and
/// injectivity; every one it refuses names a delimiter rule.
#[test]
fn every_accepted_delimiter_keeps_every_guarantee_for_every_field_form() {
    let other = FieldSpec::new(Kind::Uint { bits: IntBits::B8 });
    let mut accepted = 0;
    for d in 0u8..0x80 {
        let delimiter = char::from(d);
        for spec in every_field_form() {
            for first in [true, false] {
                let fields = if first {
                    vec![FieldGen { spec }, FieldGen { spec: other }]
                } else {
                    vec![FieldGen { spec: other }, FieldGen { spec }]
                };
                let Some(layout) = layout_of(&fields, delimiter) else {
                    continue;
                };
                accepted += 1;
                let mut rows = Vec::new();
                for v in boundary_values(spec, delimiter) {
                    for o in [Value::Uint(0), Value::Uint(255)] {
                        rows.push(if first {
                            vec![v.clone(), o]
                        } else {
                            vec![o, v.clone()]
                        });
                    }
                }
                let keys: Vec<String> = rows.iter().map(|r| layout.encode(r).unwrap()).collect();
                for (a, ka) in rows.iter().zip(&keys) {
                    assert_eq!(&layout.decode(ka).unwrap(), a, "`{layout}`: {ka:?}");
                    for (b, kb) in rows.iter().zip(&keys) {
                        assert_eq!(
                            typed_cmp(&layout, a, b),
                            ka.cmp(kb),
                            "`{layout}`: {a:?} vs {b:?} gave {ka:?} vs {kb:?}"
                        );
                    }
                }
            }
        }
    }
    assert!(accepted > 1_000, "only {accepted} layouts were accepted");
}

#[test]
fn delimiter_del_is_refused_and_every_lower_punctuation_keeps_ranges_ascii() {
    let err = "a: u8; b: u8; delimiter='\\x7f'"
        .parse::<Layout>()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BrokenRule {
                rule: Rule::DelimiterTooHigh { delimiter: '\x7f' },
                ..
            }
        ),
        "{err}"
    );
    for d in (0u8..0x7f).filter(|d| !d.is_ascii_alphanumeric()) {
        let layout = Layout::builder()
            .delimiter(d)
            .field("a", FieldSpec::new(Kind::Uint { bits: IntBits::B8 }))
            .field("b", FieldSpec::new(Kind::Uint { bits: IntBits::B8 }))
            .build()
            .unwrap();
        let range = layout
            .range(
                &[Value::Uint(1)],
                Bound::Included(&Value::Uint(2)),
                Bound::Unbounded,
            )
            .unwrap();
        assert!(range.start.is_ascii() && range.end.as_deref().is_some_and(str::is_ascii));
    }
}

#[test]
fn integer_boundaries_keep_order_and_round_trip_for_every_type() {
    for bits in INT_BITS.map(IntBits::get) {
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

/// `10^digits - 1`, the largest value `digits` decimal digits hold (`u128::MAX` past it).
fn width_max(digits: u8) -> u128 {
    10u128
        .checked_pow(u32::from(digits))
        .map_or(u128::MAX, |p| p - 1)
}

/// How a layout may hold an integer field: its plain form, optional, or as the field a modulo
/// bucket takes (each takes its own path through the encoder).
fn integer_layout(spec: FieldSpec, path: u8) -> Layout {
    let spec = if path == 1 { spec.optional() } else { spec };
    let builder = Layout::builder().field("f", spec);
    let builder = if path == 2 {
        builder.buckets_by_modulo(7, "f", Separator::After)
    } else {
        builder
    };
    builder
        .build()
        .expect("every integer width from the narrowest to 40 is accepted")
}

proptest! {
    #![proptest_config(config())]

    /// An unsigned value encodes exactly when it fits its type and its width, as its zero-padded
    /// decimal (the nines' complement when descending), on every path a layout takes; otherwise
    /// the error says which limit it passes. Negative values are refused as out of range.
    #[test]
    fn unsigned_values_encode_exactly_when_they_fit(
        bits in prop::sample::select(INT_BITS.to_vec()),
        width in 1u8..=40,
        desc in any::<bool>(),
        path in 0u8..3,
        pick in 0u8..7,
        raw in any::<u128>(),
    ) {
        let type_max = if bits.get() == 128 { u128::MAX } else { (1u128 << bits.get()) - 1 };
        let wmax = width_max(width);
        let value = match pick {
            0 => Value::Uint(raw),
            1 => Value::Uint(raw % (wmax.min(type_max) / 2 + 1)),
            2 => Value::Uint(wmax),
            3 => Value::Uint(wmax.saturating_add(1)),
            4 => Value::Uint(type_max),
            5 => Value::Uint(type_max.saturating_add(1)),
            _ => Value::Int(-1 - (raw % 1000) as i128),
        };
        let mut spec = FieldSpec::new(Kind::Uint { bits }).with_width(width);
        if desc {
            spec = spec.descending();
        }
        let layout = integer_layout(spec, path);
        let encoded = layout.encode(std::slice::from_ref(&value));
        match value {
            Value::Uint(v) if v <= type_max && v <= wmax => {
                let key = encoded.unwrap();
                let digits = format!("{v:0w$}", w = usize::from(width));
                let digits: String = if desc {
                    digits.bytes().map(|d| char::from(b'9' - (d - b'0'))).collect()
                } else {
                    digits
                };
                // The optional form leads with its marker, the bucket prefix with its digits.
                prop_assert!(key.ends_with(&digits), "{layout}: {v} gave {key:?}, want ..{digits:?}");
                prop_assert_eq!(layout.decode(&key).unwrap(), vec![value]);
            }
            Value::Uint(v) if v > type_max => {
                let refused = matches!(encoded, Err(Error::ValueOutOfRange { ref field, .. }) if field == "f");
                prop_assert!(refused, "{layout}: {v} gave {encoded:?}");
            }
            Value::Uint(v) => {
                let refused = matches!(encoded, Err(Error::ValueTooWide { ref field, width: w, .. }) if field == "f" && w == width);
                prop_assert!(refused, "{layout}: {v} gave {encoded:?}");
            }
            _ => {
                let refused = matches!(encoded, Err(Error::ValueOutOfRange { ref field, .. }) if field == "f");
                prop_assert!(refused, "{layout}: {value:?} gave {encoded:?}");
            }
        }
    }
}

#[test]
fn layout_values_at_type_extremes() {
    // Every kind against values out of its range or of another kind: an error or a key that
    // decodes; ranges with such bounds: no panic.
    let values = [
        Value::Uint(u128::MAX),
        Value::Int(i128::MIN),
        Value::Int(i128::MAX),
        Value::Int(-1),
        Value::F32(f32::NAN),
        Value::F64(f64::NAN),
        Value::F64(-0.0),
        Value::F64(f64::NEG_INFINITY),
        Value::Timestamp(i128::MIN),
        Value::Timestamp(i128::MAX),
        Value::Timestamp(i128::from(i64::MAX) * 1000),
        Value::Null,
        Value::Char('\u{10FFFF}'),
        Value::Uuid(u128::MAX),
        Value::Bytes(vec![0xff; 100]),
    ];
    for spec in [
        "a: u8",
        "a: i8 desc",
        "a: u64 width=3",
        "a: f32",
        "a: f64 desc",
        "a: timestamp",
        "a: timestamp precision=s",
        "a: timestamp precision=ns desc",
        "a: char",
        "a: u128",
        "a: i128 desc",
        "a: uuid",
        "a: u8 optional",
        "a: bytes",
        "a: str escaped",
    ] {
        let l: Layout = spec.parse().unwrap();
        for v in &values {
            if let Ok(k) = l.encode(std::slice::from_ref(v)) {
                assert!(l.decode(&k).is_ok(), "{spec} {v:?} -> {k:?}");
            }
            let _ = l.ranges(&[], Bound::Included(v), Bound::Excluded(v));
            let _ = l.range(&[], Bound::Excluded(v), Bound::Unbounded);
        }
    }
    // Bounds of the wrong type, out of range, too many prefix values.
    let l: Layout = "a: u32; b: i64 desc; c: str optional; buckets=7:hash(a)"
        .parse()
        .unwrap();
    let p = [Value::Uint(1)];
    let r = l.ranges(
        &p,
        Bound::Included(&Value::Str("x".into())),
        Bound::Unbounded,
    );
    assert!(matches!(r, Err(Error::TypeMismatch { .. })), "{r:?}");
    let r = l.ranges(
        &p,
        Bound::Included(&Value::Int(i128::MAX)),
        Bound::Unbounded,
    );
    assert!(matches!(r, Err(Error::ValueOutOfRange { .. })), "{r:?}");
    let many = vec![Value::Uint(1); 100_000];
    assert!(matches!(
        l.prefix_ranges(&many),
        Err(Error::FieldCount { .. })
    ));
    // A huge value is refused by the key length limit (after encoding it: bounded by the input).
    let l: Layout = "a: bytes".parse().unwrap();
    assert!(l.encode(&[Value::Bytes(vec![0xff; 4 << 20])]).is_err());
}

mod accepted_space;
