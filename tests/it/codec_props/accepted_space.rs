//! The runtime codec's guarantees over the whole configuration space the crate accepts (every
//! width of every integer kind, above the default too; every ASCII delimiter; optional fields side
//! by side; prefixes; tight length limits): order, round trip and damaged keys, the three layout
//! forms, and exact ranges.

use std::collections::HashMap;
use std::ops::Bound;

use pk_codec::{Decimal, Error, FieldSpec, Form, IntBits, Kind, Layout, Precision, Value};
use proptest::prelude::*;

use crate::support::INT_BITS;

use crate::support;
use crate::support::typed_cmp;

/// Any field spec, including ones the rulebook refuses (the layout build must then name a rule).
fn any_spec() -> impl Strategy<Value = FieldSpec> {
    let kind = prop_oneof![
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Uint { bits }),
        3 => prop::sample::select(INT_BITS.to_vec()).prop_map(|bits| Kind::Int { bits }),
        3 => Just(Kind::Str),
        1 => Just(Kind::Bytes),
        1 => Just(Kind::Bool),
        1 => Just(Kind::Char),
        1 => Just(Kind::F32),
        1 => Just(Kind::F64),
        1 => Just(Kind::Uuid),
        1 => Just(Kind::Timestamp),
        // Scales above the width's digits too (the rule `param-range` refuses them).
        2 => (0u8..=40).prop_map(|scale| Kind::Decimal { scale }),
    ];
    let precision = prop::sample::select(vec![
        None,
        Some(Precision::Seconds),
        Some(Precision::Millis),
        Some(Precision::Micros),
        Some(Precision::Nanos),
    ]);
    (
        kind,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), (1u8..=40).prop_map(Some)],
        precision,
    )
        .prop_map(|(kind, desc, escaped, optional, width, precision)| {
            let mut spec = FieldSpec::new(kind);
            if let (Some(w), Some(_)) = (width, kind.width_form()) {
                spec = spec.with_width(w);
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
            if let (Some(p), Kind::Timestamp) = (precision, kind) {
                spec = spec.with_precision(p);
            }
            spec
        })
}

/// Characters that sit at the edges of the forms: below, at and above every floor, the escape,
/// the marker, the descending alphabet and terminator, the `None` of descending fields, DEL and
/// multi-byte characters.
const EDGE_CHARS: &[char] = &[
    '\0',
    '\u{1}',
    ' ',
    '!',
    '+',
    ',',
    '-',
    '.',
    '/',
    '0',
    '9',
    ':',
    '<',
    '=',
    '>',
    'a',
    'f',
    'g',
    'p',
    'z',
    '{',
    '|',
    '}',
    '~',
    '\u{7f}',
    '\u{80}',
    'é',
    '\u{ffff}',
    '\u{10ffff}',
];

fn any_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![3 => prop::sample::select(EDGE_CHARS), 1 => any::<char>()],
        0..5,
    )
    .prop_map(|c| c.into_iter().collect())
}

fn uint_max(bits: IntBits) -> u128 {
    if bits == IntBits::B128 {
        u128::MAX
    } else {
        (1u128 << bits.get()) - 1
    }
}

fn int_bounds(bits: IntBits) -> (i128, i128) {
    if bits == IntBits::B128 {
        (i128::MIN, i128::MAX)
    } else {
        (
            -(1i128 << (bits.get() - 1)),
            (1i128 << (bits.get() - 1)) - 1,
        )
    }
}

/// Values of the field's type (not only those its width holds: the encoder must refuse the rest).
fn any_value(spec: FieldSpec) -> BoxedStrategy<Value> {
    let inner: BoxedStrategy<Value> = match spec.kind() {
        Kind::Uint { bits } => {
            let max = uint_max(bits);
            let fit = 10u128
                .checked_pow(u32::from(spec.width()))
                .map_or(max, |p| max.min(p - 1));
            prop_oneof![
                (0..=max).prop_map(Value::Uint),
                (0..=fit).prop_map(Value::Uint),
                prop::sample::select(vec![0, 1, fit, fit.saturating_add(1).min(max), max])
                    .prop_map(Value::Uint),
            ]
            .boxed()
        }
        Kind::Int { bits } => {
            let (min, max) = int_bounds(bits);
            let (fmin, fmax) = match 10i128.checked_pow(u32::from(spec.width()) - 1) {
                Some(p) => (min.max(-p), max.min(p - 1)),
                None => (min, max),
            };
            prop_oneof![
                (min..=max).prop_map(Value::Int),
                (fmin..=fmax).prop_map(Value::Int),
                prop::sample::select(vec![min, fmin, -1, 0, 1, fmax, max]).prop_map(Value::Int),
            ]
            .boxed()
        }
        Kind::Str => any_text().prop_map(Value::Str).boxed(),
        Kind::Bytes => prop::collection::vec(
            prop_oneof![
                prop::sample::select(vec![0u8, 0x2c, 0x2d, 0x7f, 0xff]),
                any::<u8>()
            ],
            0..4,
        )
        .prop_map(Value::Bytes)
        .boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Char => prop_oneof![prop::sample::select(EDGE_CHARS), any::<char>()]
            .prop_map(Value::Char)
            .boxed(),
        Kind::F32 => prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            prop::sample::select(vec![
                f32::NEG_INFINITY,
                -0.0,
                0.0,
                f32::MIN_POSITIVE / 2.0,
                -f32::MIN_POSITIVE / 2.0,
                f32::INFINITY,
                f32::NAN,
                -f32::NAN,
            ]),
        ]
        .prop_map(Value::F32)
        .boxed(),
        Kind::F64 => prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            prop::sample::select(vec![
                f64::NEG_INFINITY,
                -0.0,
                0.0,
                f64::from_bits(1),
                -f64::from_bits(1),
                f64::INFINITY,
                f64::NAN,
                -f64::NAN,
            ]),
        ]
        .prop_map(Value::F64)
        .boxed(),
        Kind::Uuid => prop_oneof![any::<u128>(), prop::sample::select(vec![0, u128::MAX])]
            .prop_map(Value::Uuid)
            .boxed(),
        Kind::Timestamp => {
            let first = -62_167_219_200i128 * 1_000_000_000;
            let last = 253_402_300_800i128 * 1_000_000_000 - 1;
            let unit = 10i128.pow(9 - spec.precision().digits());
            prop_oneof![
                (first / unit..=last / unit).prop_map(move |u| Value::Timestamp(u * unit)),
                (first - 10..=last + 10).prop_map(Value::Timestamp),
                prop::sample::select(vec![first, last / unit * unit, first - unit, last + 1])
                    .prop_map(Value::Timestamp),
            ]
            .boxed()
        }
        // Any units at the field's scale (the width holds some), and numbers with one digit
        // after the point more than the scale (refused, never rounded).
        Kind::Decimal { scale } => prop_oneof![
            3 => any::<i128>().prop_map(move |u| Value::Decimal(Decimal::new(u, scale).unwrap())),
            3 => (-10_000i128..10_000).prop_map(move |u| Value::Decimal(Decimal::new(u, scale).unwrap())),
            1 => any::<i64>().prop_map(move |u| {
                Value::Decimal(Decimal::new(i128::from(u) * 10 + 1, (scale + 1).min(38)).unwrap())
            }),
            1 => any::<i64>().prop_map(|u| Value::Decimal(Decimal::new(i128::from(u), 0).unwrap())),
        ]
        .boxed(),
        _ => unreachable!("every kind is covered"),
    };
    if spec.is_optional() {
        prop_oneof![1 => Just(Value::Null), 3 => inner].boxed()
    } else {
        inner
    }
}

/// The prefix settings of a spec (appended to its fields), over fields `f0..fn`.
fn any_prefix(n: usize) -> impl Strategy<Value = String> {
    let alg = prop::sample::select(vec![
        ("md5", 32u8),
        ("xxh32", 8),
        ("xxh64", 16),
        ("xxh3", 16),
    ]);
    let count = prop_oneof![Just(1u32), Just(10), Just(11), 1u32..=10_000, Just(10_000)];
    let sep = prop::sample::select(vec!["", ":sep"]);
    (
        0u8..6,
        alg,
        any::<prop::sample::Index>(),
        count,
        sep,
        1..=n,
        prop::collection::vec(any::<bool>(), n),
    )
        .prop_map(move |(how, (alg, max), len, count, sep, lead, hashed)| {
            let len = 1 + len.index(usize::from(max));
            let names = |ix: Vec<usize>| {
                ix.into_iter()
                    .map(|i| format!("f{i}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            match how {
                0 | 1 => String::new(),
                2 => format!("; hash={alg}:{len}{sep}"),
                3 => format!("; hash={alg}({}):{len}{sep}", names((0..lead).collect())),
                4 => format!("; buckets={count}:mod(f{}){sep}", lead - 1),
                _ => {
                    let ix: Vec<usize> = (0..n).filter(|&i| hashed[i]).collect();
                    if ix.is_empty() {
                        format!("; buckets={count}:hash{sep}")
                    } else {
                        format!("; buckets={count}:hash({}){sep}", names(ix))
                    }
                }
            }
        })
}

fn spec_text(specs: &[FieldSpec], delimiter: u8, max_len: usize, prefix: &str) -> String {
    let fields = specs
        .iter()
        .enumerate()
        .fold(Layout::builder(), |b, (i, s)| b.field(format!("f{i}"), *s));
    // Print the fields through a layout with a harmless delimiter, then set the real one.
    let printed = match fields.build() {
        Ok(l) => l.to_string(),
        Err(_) => return String::new(),
    };
    let printed = printed
        .split("; ")
        .filter(|i| !i.starts_with("delimiter="))
        .collect::<Vec<_>>()
        .join("; ");
    format!("{printed}; delimiter='\\x{delimiter:02x}'; max_len={max_len}{prefix}")
}

/// A layout somewhere in the accepted space, or the refusal (which must name a rule or say what
/// is wrong, never panic).
fn any_layout() -> impl Strategy<Value = (String, Option<Layout>, Vec<FieldSpec>)> {
    prop::collection::vec(any_spec(), 1..5).prop_flat_map(|specs| {
        let n = specs.len();
        (
            Just(specs),
            prop_oneof![3 => 0u8..=0x2c, 3 => 0u8..0x80, 1 => Just(b',')],
            prop_oneof![Just(100_000usize), 1usize..120],
            any_prefix(n),
        )
            .prop_map(|(specs, d, max_len, prefix)| {
                let text = spec_text(&specs, d, max_len, &prefix);
                let layout = match text.parse::<Layout>() {
                    Ok(l) => Some(l),
                    Err(Error::BrokenRule { .. } | Error::InvalidLayout { .. }) => None,
                    Err(e) => panic!("`{text}` refused without a rule: {e:?}"),
                };
                (text, layout, specs)
            })
    })
}

fn any_layout_and_rows(
    rows: std::ops::Range<usize>,
) -> impl Strategy<Value = (Layout, Vec<Vec<Value>>)> {
    any_layout()
        .prop_filter_map("refused", |(_, l, specs)| l.map(|l| (l, specs)))
        .prop_flat_map(move |(layout, specs)| {
            let row: Vec<BoxedStrategy<Value>> = specs.iter().map(|s| any_value(*s)).collect();
            (Just(layout), prop::collection::vec(row, rows.clone()))
        })
}

/// The natural part of a key (without its prefix).
fn natural<'k>(layout: &Layout, key: &'k str) -> &'k str {
    &key[layout.shape().prefix().len()..]
}

fn bucket(layout: &Layout, key: &str) -> usize {
    layout.shape().bucket_of_key(key).map_or(0, |b| b as usize)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: support::cases(cases),
        max_global_rejects: 1_000_000,
        max_local_rejects: 1_000_000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(600))]

    /// Every accepted layout keeps every guarantee for every row it encodes; the rows it refuses
    /// are refused with a reason.
    #[test]
    fn the_whole_accepted_space_keeps_the_guarantees(
        (layout, rows) in any_layout_and_rows(1..7),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), prop_oneof![prop::sample::select(EDGE_CHARS), any::<char>()], 0u8..3),
            1..4,
        ),
    ) {
        let mut keys: Vec<(String, &Vec<Value>)> = Vec::new();
        for row in &rows {
            match layout.encode(row) {
                Ok(key) => {
                    let back = layout.decode(&key);
                    prop_assert_eq!(back.as_ref(), Ok(row), "`{}` key {:?}", layout, key);
                    keys.push((key, row));
                }
                Err(Error::ValueTooWide { .. } | Error::ValueOutOfRange { .. }
                    | Error::CharBelowDelimiter { .. } | Error::KeyTooLong { .. }) => {}
                Err(e) => prop_assert!(false, "`{}` {:?}: {:?}", layout, row, e),
            }
        }
        // Order within a bucket (or the whole key without a prefix); distinct keys.
        let mut seen: HashMap<&str, &Vec<Value>> = HashMap::new();
        for (ka, a) in &keys {
            if let Some(b) = seen.insert(ka, a) {
                prop_assert_eq!(b, *a, "`{}`: two rows share {:?}", layout, ka);
            }
            for (kb, b) in &keys {
                let hashed = matches!(layout.shape().prefix(), pk_codec::Prefix::Hash { .. });
                if hashed || bucket(&layout, ka) != bucket(&layout, kb) {
                    continue;
                }
                prop_assert_eq!(
                    natural(&layout, ka).cmp(natural(&layout, kb)),
                    typed_cmp(&layout, a, b),
                    "`{}`: {:?} vs {:?} as {:?} vs {:?}", layout, a, b, ka, kb
                );
            }
        }
        // Damaged keys: decode refuses them, or answers values that encode to those very bytes.
        for (key, _) in &keys {
            let mut chars: Vec<char> = key.chars().collect();
            for (at, c, op) in &edits {
                let i = if chars.is_empty() { 0 } else { at.index(chars.len()) };
                match op {
                    0 if !chars.is_empty() => { chars.remove(i); }
                    1 => chars.insert(i, *c),
                    _ if !chars.is_empty() => chars[i] = *c,
                    _ => {}
                }
            }
            let text: String = chars.into_iter().collect();
            match layout.decode(&text) {
                Err(Error::Malformed { position, .. } | Error::PrefixMismatch { position, .. }) => {
                    prop_assert!(position <= text.len(), "`{}` {:?}: position {}", layout, text, position);
                }
                Err(e) => prop_assert!(false, "`{}` {:?}: {:?}", layout, text, e),
                Ok(_) => {}
            }
            if let Ok(values) = layout.decode(&text) {
                let again = layout.encode(&values);
                prop_assert_eq!(again.as_ref(), Ok(&text), "`{}` decoded {:?} from {:?} (was {:?})", layout, values, text, key);
            }
            // Truncated and extended keys.
            for end in 0..key.len() {
                if !key.is_char_boundary(end) {
                    continue;
                }
                if let Ok(values) = layout.decode(&key[..end]) {
                    let again = layout.encode(&values);
                    prop_assert_eq!(again.as_deref(), Ok(&key[..end]), "`{}`", layout);
                }
            }
        }
    }

    /// Every accepted layout prints to a spec that parses back to it, and saves to JSON and TOML
    /// that load back to it.
    #[test]
    fn the_three_forms_agree((text, layout, _specs) in any_layout()) {
        if let Some(layout) = layout {
            let printed = layout.to_string();
            let reparsed = printed.parse::<Layout>();
            prop_assert_eq!(reparsed.as_ref(), Ok(&layout), "{} printed {}", text, printed);
            let json = serde_json::to_string(&layout).unwrap();
            let from_json = serde_json::from_str::<Layout>(&json).ok();
            prop_assert_eq!(from_json.as_ref(), Some(&layout), "{}", json);
            let toml_text = toml::to_string(&layout).unwrap();
            let from_toml: Result<Layout, _> = toml::from_str(&toml_text);
            prop_assert_eq!(from_toml.as_ref().ok(), Some(&layout), "{}", toml_text);
        }
    }

    /// Ranges over any accepted layout without a whole-key hash hold exactly the matching keys.
    #[test]
    fn ranges_hold_exactly_the_matching_keys(
        (layout, rows) in any_layout_and_rows(3..10),
        k in 0usize..4,
        picks in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        bounds in (0u8..3, 0u8..3),
    ) {
        ranges_hold_exactly(&layout, &rows, k, picks, bounds)?;
    }
}

/// The range property, in the layout's form: rows picked by `picks` give the leading fields (the
/// first `k`) and the bounds of the next (included, excluded or none, by `bounds`); every row's
/// key then lies in exactly one of the layout's byte ranges when it matches, in none otherwise.
/// (A text layout's byte ranges are its `ranges`, as bytes.)
fn ranges_hold_exactly(
    layout: &Layout,
    rows: &[Vec<Value>],
    k: usize,
    picks: (
        prop::sample::Index,
        prop::sample::Index,
        prop::sample::Index,
    ),
    bounds: (u8, u8),
) -> Result<(), TestCaseError> {
    let rows: Vec<&Vec<Value>> = rows
        .iter()
        .filter(|r| layout.encode_bytes(r).is_ok())
        .collect();
    prop_assume!(!rows.is_empty());
    let k = k.min(layout.fields().len() - 1);
    let base = rows[picks.0.index(rows.len())];
    let lo = &rows[picks.1.index(rows.len())][k];
    let hi = &rows[picks.2.index(rows.len())][k];
    let bound = |kind: u8, v: &Value| match kind {
        0 => Bound::Included(v.clone()),
        1 => Bound::Excluded(v.clone()),
        _ => Bound::Unbounded,
    };
    let (lower, upper) = (bound(bounds.0, lo), bound(bounds.1, hi));
    let Ok(ranges) = layout.byte_ranges(&base[..k], lower.as_ref(), upper.as_ref()) else {
        // A whole-key hash, or a hash over more leading fields than are given.
        return Ok(());
    };
    let in_bounds = |v: &Value| {
        (match &lower {
            Bound::Included(l) => v >= l,
            Bound::Excluded(l) => v > l,
            Bound::Unbounded => true,
        }) && (match &upper {
            Bound::Included(u) => v <= u,
            Bound::Excluded(u) => v < u,
            Bound::Unbounded => true,
        })
    };
    for r in &ranges {
        prop_assert!(
            r.end.as_ref().is_none_or(|e| r.start <= *e),
            "inverted {:?}",
            r
        );
    }
    for row in &rows {
        let key = layout.encode_bytes(row).unwrap();
        let want = row[..k] == base[..k] && in_bounds(&row[k]);
        let got = ranges.iter().filter(|r| r.contains(&key)).count();
        prop_assert_eq!(
            got,
            usize::from(want),
            "`{}` {:02x?} row {:?} key {:02x?}",
            layout,
            ranges,
            row,
            key
        );
    }
    Ok(())
}

/// The bucket of a binary key (its prefix's bytes, big-endian), 0 without a bucket prefix.
fn bin_bucket(layout: &Layout, key: &[u8]) -> usize {
    match layout.shape().prefix() {
        pk_codec::Prefix::Bucket { .. } => key[..layout.shape().prefix().bin_len()]
            .iter()
            .fold(0usize, |v, &b| v << 8 | usize::from(b)),
        _ => 0,
    }
}

proptest! {
    #![proptest_config(config(600))]

    /// The binary form of every accepted layout keeps every guarantee the text form keeps:
    /// byte order equals typed order (within a bucket; not across a whole-key hash), every key
    /// decodes back, distinct rows give distinct keys, exactly the keys that encode decode
    /// (damaged, truncated and extended keys either fail with a position inside the key or
    /// decode to values that encode to those very bytes).
    #[test]
    fn the_binary_form_keeps_the_guarantees(
        (layout, rows) in any_layout_and_rows(1..7),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), any::<u8>(), 0u8..3),
            1..4,
        ),
    ) {
        let layout = layout.with_form(Form::Binary);
        let mut keys: Vec<(Vec<u8>, &Vec<Value>)> = Vec::new();
        for row in &rows {
            match layout.encode_bytes(row) {
                Ok(key) => {
                    let back = layout.decode_bytes(&key);
                    prop_assert_eq!(back.as_ref(), Ok(row), "`{}` key {:02x?}", layout, key);
                    keys.push((key, row));
                }
                Err(Error::ValueTooWide { .. } | Error::ValueOutOfRange { .. } | Error::KeyTooLong { .. }) => {}
                Err(e) => prop_assert!(false, "`{}` {:?}: {:?}", layout, row, e),
            }
        }
        let hashed = matches!(layout.shape().prefix(), pk_codec::Prefix::Hash { .. });
        let plen = layout.shape().prefix().bin_len();
        for (ka, a) in &keys {
            for (kb, b) in &keys {
                if ka == kb {
                    prop_assert_eq!(a, b, "`{}`: two rows share {:02x?}", layout, ka);
                }
                if hashed || bin_bucket(&layout, ka) != bin_bucket(&layout, kb) {
                    continue;
                }
                prop_assert_eq!(
                    ka[plen..].cmp(&kb[plen..]),
                    typed_cmp(&layout, a, b),
                    "`{}`: {:?} vs {:?} as {:02x?} vs {:02x?}", layout, a, b, ka, kb
                );
            }
        }
        for (key, _) in &keys {
            let mut bytes = key.clone();
            for (at, b, op) in &edits {
                let i = if bytes.is_empty() { 0 } else { at.index(bytes.len()) };
                match op {
                    0 if !bytes.is_empty() => { bytes.remove(i); }
                    1 => bytes.insert(i, *b),
                    _ if !bytes.is_empty() => bytes[i] = *b,
                    _ => {}
                }
            }
            let mut damaged = vec![bytes];
            damaged.extend((0..key.len()).map(|end| key[..end].to_vec()));
            let mut longer = key.clone();
            longer.push(0);
            damaged.push(longer);
            for d in &damaged {
                match layout.decode_bytes(d) {
                    Err(Error::Malformed { position, .. } | Error::PrefixMismatch { position, .. }) => {
                        prop_assert!(position <= d.len(), "`{}` {:02x?}: position {}", layout, d, position);
                    }
                    Err(e) => prop_assert!(false, "`{}` {:02x?}: {:?}", layout, d, e),
                    Ok(values) => {
                        let again = layout.encode_bytes(&values);
                        prop_assert_eq!(again.as_ref(), Ok(d), "`{}` decoded {:?} from {:02x?} (was {:02x?})", layout, values, d, key);
                    }
                }
            }
        }
    }

    /// A binary layout prints to a spec that parses back to it, and saves to JSON and TOML that
    /// load back to it, its form included.
    #[test]
    fn a_binary_layout_keeps_its_form_in_the_three_forms((_text, layout, _specs) in any_layout()) {
        if let Some(layout) = layout {
            let layout = layout.with_form(Form::Binary);
            let printed = layout.to_string();
            prop_assert!(printed.contains("form=binary"), "{}", printed);
            let reparsed = printed.parse::<Layout>();
            prop_assert_eq!(reparsed.as_ref(), Ok(&layout), "{}", printed);
            let json = serde_json::to_string(&layout).unwrap();
            let from_json = serde_json::from_str::<Layout>(&json).ok();
            prop_assert_eq!(from_json.as_ref(), Some(&layout), "{}", json);
            let toml_text = toml::to_string(&layout).unwrap();
            let from_toml = toml::from_str::<Layout>(&toml_text).ok();
            prop_assert_eq!(from_toml.as_ref(), Some(&layout), "{}", toml_text);
        }
    }

    /// The byte ranges of a binary layout hold exactly the keys of the rows they match: leading
    /// fields equal, the next within bounds (both orders, every prefix but a whole-key hash, the
    /// buckets pruned as for the text form).
    #[test]
    fn binary_ranges_hold_exactly_the_matching_keys(
        (layout, rows) in any_layout_and_rows(3..10),
        k in 0usize..4,
        picks in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        bounds in (0u8..3, 0u8..3),
    ) {
        ranges_hold_exactly(&layout.with_form(Form::Binary), &rows, k, picks, bounds)?;
    }

    /// Decoding any bytes answers values or an error with a position inside the bytes, never a
    /// panic, whatever the layout.
    #[test]
    fn decoding_any_bytes_never_panics((_text, layout, _specs) in any_layout(), bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Some(layout) = layout {
            let layout = layout.with_form(Form::Binary);
            match layout.decode_bytes(&bytes) {
                Err(Error::Malformed { position, .. } | Error::PrefixMismatch { position, .. }) => {
                    prop_assert!(position <= bytes.len());
                }
                Err(e) => prop_assert!(false, "`{}` {:02x?}: {:?}", layout, bytes, e),
                Ok(values) => {
                    let again = layout.encode_bytes(&values);
                    prop_assert_eq!(again.as_ref(), Ok(&bytes));
                }
            }
        }
    }
}
