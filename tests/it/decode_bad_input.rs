//! Decoding text that is not a key: an error, or a value that encodes back to exactly that text,
//! never a panic. Integer and timestamp text decodes only as the writer writes it; seeded
//! random specs, texts and values through the runtime layout, derived keys and the table's
//! sortable bytes. Every case here once panicked, hung or allocated without bound, or was
//! suspicious and turned out fine; each comment says which.

use pk_codec::table::PrimaryKey;
use pk_codec::{FieldSpec, IntBits, KeyShape, Kind, Layout, Value};
use proptest::prelude::*;

use crate::support;

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

#[test]
fn from_sortable_bytes_of_random_bytes_never_panics() {
    let mut r = Rng(42);
    for _ in 0..5_000 {
        let n = r.below(24);
        let b: Vec<u8> = (0..n)
            .map(|_| *r.pick(&[0u8, 1, 2, 3, 4, 5, 0xff, b'a']))
            .collect();
        if let Some(k) = PrimaryKey::from_sortable_bytes(&b) {
            assert_eq!(
                PrimaryKey::from_sortable_bytes(&k.to_sortable_bytes()),
                Some(k)
            );
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    /// `text` after `edits` random edits of a character each: removed, or a character of
    /// `insert` inserted, or overwritten with one of `overwrite`.
    fn edit(&mut self, text: &str, edits: usize, insert: &[char], overwrite: &[char]) -> String {
        let mut b: Vec<char> = text.chars().collect();
        for _ in 0..edits {
            if b.is_empty() {
                break;
            }
            let at = self.below(b.len());
            match self.below(3) {
                0 => {
                    b.remove(at);
                }
                1 => b.insert(at, *self.pick(insert)),
                _ => b[at] = *self.pick(overwrite),
            }
        }
        b.into_iter().collect()
    }
}

const KINDS: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "str",
    "bytes",
    "bool",
    "char",
    "f32",
    "f64",
    "uuid",
    "timestamp",
];

fn rand_spec(r: &mut Rng) -> String {
    let n = 1 + r.below(4);
    let mut parts = Vec::new();
    let mut names = Vec::new();
    for i in 0..n {
        let k = *r.pick(KINDS);
        let mut f = format!("f{i}: {k}");
        if k.starts_with('u') && k != "uuid" && r.below(2) == 0 {
            f += &format!(" width={}", 1 + r.below(40));
        }
        if k.starts_with('i') && r.below(2) == 0 {
            f += &format!(" width={}", 2 + r.below(39));
        }
        if r.below(3) == 0 {
            f += " desc";
        }
        if k == "str" && r.below(3) == 0 {
            f += " escaped";
        }
        if r.below(4) == 0 {
            f += " optional";
        }
        if k == "timestamp" && r.below(2) == 0 {
            f += &format!(" precision={}", r.pick(&["s", "ms", "us", "ns"]));
        }
        names.push((format!("f{i}"), k));
        parts.push(f);
    }
    match r.below(6) {
        0 => parts.push(format!(
            "hash={}:{}",
            r.pick(&["md5", "xxh32", "xxh64", "xxh3"]),
            1 + r.below(8)
        )),
        1 => parts.push(format!(
            "hash=md5(f0):{}{}",
            1 + r.below(8),
            if r.below(2) == 0 { ":sep" } else { "" }
        )),
        2 => parts.push(format!(
            "buckets={}:mod(f0){}",
            1 + r.below(200),
            if r.below(2) == 0 { ":sep" } else { "" }
        )),
        3 => parts.push(format!(
            "buckets={}:hash{}",
            1 + r.below(20000),
            if r.below(2) == 0 { ":sep" } else { "" }
        )),
        _ => {}
    }
    if r.below(4) == 0 {
        parts.push(format!(
            "delimiter='{}'",
            r.pick(&[",", "/", "#", "!", "~", "-", ":", "|"])
        ));
    }
    if r.below(6) == 0 {
        parts.push(format!("max_len={}", r.below(100)));
    }
    parts.join("; ")
}

const ALPHA: &[u8] = b"0123456789abcdef,-=~!/#:|\x7f ABZz\\";

fn rand_text(r: &mut Rng, len: usize) -> String {
    let mut s = String::new();
    for _ in 0..len {
        if r.below(20) == 0 {
            s.push(*r.pick(&['é', '\u{80}', '\u{10FFFF}', '\0']));
        } else {
            s.push(*r.pick(ALPHA) as char);
        }
    }
    s
}

fn rand_value(r: &mut Rng) -> Value {
    match r.below(11) {
        0 => Value::Null,
        1 => Value::Uint(r.next() as u128 * if r.below(2) == 0 { 1 } else { u64::MAX as u128 }),
        2 => {
            Value::Int(r.next() as i64 as i128 * if r.below(2) == 0 { 1 } else { i64::MAX as i128 })
        }
        3 => {
            let n = r.below(6);
            Value::Str(rand_text(r, n))
        }
        4 => Value::Bytes((0..r.below(5)).map(|_| r.next() as u8).collect()),
        5 => Value::Bool(r.below(2) == 0),
        6 => Value::Char(*r.pick(&['a', ',', '\0', 'é', '\u{10FFFF}'])),
        7 => Value::F32(f32::from_bits(r.next() as u32)),
        8 => Value::F64(f64::from_bits(r.next())),
        9 => Value::Uuid(r.next() as u128),
        _ => Value::Timestamp(
            r.next() as i64 as i128
                * if r.below(2) == 0 {
                    1
                } else {
                    1_000_000_000_000
                },
        ),
    }
}

/// Seeded: random layout specs (some damaged), round-tripped through text and JSON; random values
/// encoded, keys damaged, cut and decoded; random ranges and split points. Found no panic.
#[test]
fn seeded_layouts_never_panic() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    let (mut parsed, mut encoded, mut decoded) = (0, 0, 0);
    for _ in 0..300 {
        let spec = rand_spec(&mut r);
        // mutate the spec text sometimes
        let spec = if r.below(4) == 0 {
            const INSERT: &[char] = &['=', ':', ';', '\'', '(', ')', 'é', '9', ' '];
            r.edit(&spec, 3, INSERT, &INSERT[..INSERT.len() - 1])
        } else {
            spec
        };
        let Ok(layout) = spec.parse::<Layout>() else {
            continue;
        };
        parsed += 1;
        let printed = layout.to_string();
        let again: Layout = printed
            .parse()
            .unwrap_or_else(|e| panic!("{spec} -> {printed}: {e}"));
        assert_eq!(again, layout);
        let json = serde_json::to_string(&layout).unwrap();
        let _: Layout = serde_json::from_str(&json).unwrap();
        for _ in 0..30 {
            let vals: Vec<Value> = (0..layout.fields().len())
                .map(|_| rand_value(&mut r))
                .collect();
            if let Ok(k) = layout.encode(&vals) {
                encoded += 1;
                let d = layout.decode(&k);
                if d.is_ok() {
                    decoded += 1;
                }
                // damage
                let mut b: Vec<char> = k.chars().collect();
                if !b.is_empty() {
                    let i = r.below(b.len());
                    b[i] = *r.pick(&['0', '9', 'f', ',', '-', '=', '~', 'é', '/']);
                }
                let _ = layout.decode(&b.into_iter().collect::<String>());
                let cut = r.below(k.len() + 1);
                if k.is_char_boundary(cut) {
                    let _ = layout.decode(&k[..cut]);
                }
            }
            let n = r.below(60);
            let t = rand_text(&mut r, n);
            let _ = layout.decode(&t);
            let np = r.below(layout.fields().len() + 1);
            let lo = rand_value(&mut r);
            let hi = rand_value(&mut r);
            let bnd = |v: &Value, k: usize| match k {
                0 => std::ops::Bound::Included(v.clone()),
                1 => std::ops::Bound::Excluded(v.clone()),
                _ => std::ops::Bound::Unbounded,
            };
            let (a, b) = (bnd(&lo, r.below(3)), bnd(&hi, r.below(3)));
            let _ = layout.ranges(&vals[..np.min(vals.len())], a.as_ref(), b.as_ref());
            let _ = layout.prefix_ranges(&vals[..np.min(vals.len())]);
            let _ = layout.shape().split_points(r.below(70000));
            let _ = layout.shape().bucket_of_key(&t);
        }
    }
    assert!(
        parsed > 50 && encoded > 50 && decoded == encoded,
        "{parsed} {encoded} {decoded}"
    );
}

#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
struct DInner {
    a: i8,
    b: Option<Vec<u8>>,
}

#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 7, hash(a, c)), delimiter = '!')]
struct DBucket {
    a: u16,
    #[pk(desc)]
    b: Option<i64>,
    c: String,
    d: DInner,
}

#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 6, separator))]
struct DHash {
    #[pk(width = 40)]
    a: u128,
    #[pk(escaped)]
    s: String,
    ch: char,
    f: f64,
    t: bool,
}

#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = ts, separator), max_len = 40)]
struct DMod {
    #[pk(width = 13)]
    ts: u64,
    #[pk(desc, escaped)]
    name: String,
    o: Option<u8>,
}

#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
struct DBorrow<'a> {
    s: &'a str,
    b: std::borrow::Cow<'a, str>,
    #[pk(desc)]
    x: i128,
}

/// Seeded: derived keys (nested, optional, desc, escaped, bucket, hash, borrowed) decoding damaged
/// and random text. Found no panic.
#[test]
fn seeded_derived_decode_never_panics() {
    use pk_codec::{DecodeKey, PartitionKey};
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let samples = [
        DBucket {
            a: 7,
            b: Some(-5),
            c: "x".into(),
            d: DInner {
                a: -1,
                b: Some(vec![0, 255]),
            },
        }
        .encode()
        .unwrap(),
        DHash {
            a: u128::MAX,
            s: "a,b\\-".into(),
            ch: 'é',
            f: -0.0,
            t: true,
        }
        .encode()
        .unwrap(),
        DMod {
            ts: 1_700_000_000_017,
            name: "zz".into(),
            o: None,
        }
        .encode()
        .unwrap(),
        DBorrow {
            s: "abc",
            b: "d".into(),
            x: i128::MIN,
        }
        .encode()
        .unwrap(),
    ];
    for i in 0..20_000 {
        let base = &samples[i % samples.len()];
        const EDITS: &[char] = &['0', '9', 'f', ',', '/', '-', '=', '~', 'é', '\\', '!'];
        let edits = 1 + r.below(3);
        let edited = r.edit(base, edits, EDITS, EDITS);
        let k: String = if r.below(5) == 0 {
            let n = r.below(50);
            rand_text(&mut r, n)
        } else {
            edited
        };
        let _ = DBucket::decode(&k);
        let _ = DHash::decode(&k);
        let _ = DMod::decode(&k);
        let _ = <DBorrow as pk_codec::BorrowDecodeKey>::decode_borrowed(&k);
        let _ = DBucket::layout().decode(&k);
        let _ = DMod::layout().decode(&k);
    }
}
