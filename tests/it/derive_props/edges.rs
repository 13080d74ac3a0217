//! Derived keys at the edges of every value space: keys of every kind at the integer bounds keep
//! order, decode and agree with the layout, and their ranges (bucketed too) hold exactly their
//! keys; exactly the keys that encode decode, over adjacent options, NUL delimiters, chars,
//! floats and nesting; `encode_into` appends, or leaves the buffer as it was on error; string
//! ranges over the whole alphabet.

use std::ops::Bound;

use pk_codec::{DecodeKey, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

// ---- Range constructors over every kind, at the bounds of the value space ----------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh64, len = 2, separator, fields(a)))]
struct Wide {
    a: Option<i8>,
    #[pk(desc)]
    b: i128,
    c: u128,
    #[pk(desc)]
    d: Option<char>,
    e: f64,
    #[pk(desc)]
    f: Option<Vec<u8>>,
    g: Option<bool>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 3, modulo = b))]
struct WideBucket {
    a: Option<String>,
    b: isize,
    #[pk(desc)]
    c: usize,
}

fn in_ranges(ranges: &[pk_codec::KeyRange], key: &str) -> bool {
    ranges.iter().filter(|r| r.contains(key)).count() == 1
}

fn within<T: PartialOrd>(v: &T, (lo, hi): &(Bound<T>, Bound<T>)) -> bool {
    super::within(v, lo, hi)
}

fn bounds<S: Strategy + Clone>(s: S) -> impl Strategy<Value = (Bound<S::Value>, Bound<S::Value>)>
where
    S::Value: Clone + std::fmt::Debug,
{
    let one = prop_oneof![
        s.clone().prop_map(Bound::Included),
        s.prop_map(Bound::Excluded),
        Just(Bound::Unbounded)
    ];
    (one.clone(), one)
}

fn edge_i128() -> impl Strategy<Value = i128> + Clone {
    prop_oneof![
        Just(i128::MIN),
        Just(i128::MAX),
        Just(-1i128),
        Just(0i128),
        -3i128..3,
        any::<i128>()
    ]
}

fn edge_u128() -> impl Strategy<Value = u128> + Clone {
    prop_oneof![Just(u128::MAX), Just(0u128), 0u128..3, any::<u128>()]
}

fn edge_isize() -> impl Strategy<Value = isize> + Clone {
    prop_oneof![
        Just(isize::MIN),
        Just(isize::MAX),
        -3isize..3,
        any::<isize>()
    ]
}

fn edge_usize() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![Just(usize::MAX), Just(0usize), 0usize..3, any::<usize>()]
}

fn small_char() -> impl Strategy<Value = Option<char>> + Clone {
    prop::option::of(prop_oneof![
        Just('\0'),
        Just(','),
        Just('-'),
        Just('~'),
        Just('é'),
        Just(char::MAX),
        any::<char>()
    ])
}

fn wide() -> impl Strategy<Value = Wide> {
    (
        prop::option::of(prop_oneof![Just(i8::MIN), Just(i8::MAX), -2i8..2]),
        edge_i128(),
        edge_u128(),
        small_char(),
        prop_oneof![
            Just(f64::NEG_INFINITY),
            Just(-0.0f64),
            Just(0.0f64),
            Just(f64::MAX),
            -2.0f64..2.0
        ],
        prop::option::of(prop::collection::vec(any::<u8>(), 0..3)),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(a, b, c, d, e, f, g)| Wide {
            a,
            b,
            c,
            d,
            e,
            f,
            g,
        })
}

/// `Reverse`-free typed comparison of two `Wide` values in key order.
fn wide_order(x: &Wide, y: &Wide) -> std::cmp::Ordering {
    x.a.cmp(&y.a)
        .then(y.b.cmp(&x.b))
        .then(x.c.cmp(&y.c))
        .then_with(|| match (x.d, y.d) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (Some(p), Some(q)) => q.cmp(&p),
        })
        .then(x.e.total_cmp(&y.e))
        .then_with(|| match (&x.f, &y.f) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (Some(p), Some(q)) => q.cmp(p),
        })
        .then(x.g.cmp(&y.g))
}

fn wide_values(w: &Wide) -> Vec<Value> {
    vec![
        w.a.into(),
        w.b.into(),
        w.c.into(),
        w.d.into(),
        w.e.into(),
        w.f.clone().into(),
        w.g.into(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn wide_keys_keep_order_decode_and_agree_with_the_layout(x in wide(), y in wide()) {
        let (kx, ky) = (x.encode().unwrap(), y.encode().unwrap());
        prop_assert_eq!(&Wide::layout().encode(&wide_values(&x)).unwrap(), &kx);
        prop_assert_eq!(Wide::layout().decode(&kx).unwrap(), wide_values(&x));
        prop_assert_eq!(Wide::decode(&kx).unwrap(), x.clone());
        if x.a == y.a {
            // One hash prefix: the natural order.
            prop_assert_eq!(wide_order(&x, &y), kx.cmp(&ky), "{} {}", kx, ky);
        }
        if wide_order(&x, &y).is_eq() {
            prop_assert_eq!(&kx, &ky);
        }
    }

    #[test]
    fn wide_ranges_hold_exactly_their_keys(
        x in wide(),
        bb in bounds(edge_i128()),
        bc in bounds(edge_u128()),
        bd in bounds(small_char()),
    ) {
        let key = x.encode().unwrap();
        let r = Wide::ranges_b(&x.a, bb).unwrap();
        prop_assert_eq!(in_ranges(&r, &key), within(&x.b, &bb), "{} {:?}", key, r);
        let r = Wide::ranges_c(&x.a, x.b, bc).unwrap();
        prop_assert_eq!(in_ranges(&r, &key), within(&x.c, &bc), "{} {:?}", key, r);
        // Bounds are in value order (`None` below every `Some`) for a descending field too.
        let r = Wide::ranges_d(&x.a, x.b, x.c, bd).unwrap();
        prop_assert_eq!(in_ranges(&r, &key), within(&x.d, &bd), "{} {:?} {:?}", key, r, bd);
        let r = Wide::ranges_g_eq(&x.a, x.b, x.c, &x.d, x.e, &x.f, &x.g).unwrap();
        prop_assert!(in_ranges(&r, &key));
        let other = Wide { a: x.a.map(|v| v.wrapping_add(1)).or(Some(0)), ..x.clone() };
        let r = Wide::ranges_a_eq(&other.a).unwrap();
        prop_assert!(!in_ranges(&r, &key));
        prop_assert!(in_ranges(&r, &other.encode().unwrap()));
    }

    #[test]
    fn bucketed_ranges_at_the_integer_bounds_hold_exactly_their_keys(
        a in prop::option::of("[a-c=-]{0,2}"), b in edge_isize(), c in edge_usize(),
        bb in bounds(edge_isize()), bc in bounds(edge_usize()),
    ) {
        let k = WideBucket { a: a.clone(), b, c };
        let key = k.encode().unwrap();
        prop_assert_eq!(WideBucket::decode(&key).unwrap(), k.clone());
        prop_assert_eq!(&WideBucket::layout().encode(&[a.clone().into(), (b as i64).into(), (c as u64).into()]).unwrap(), &key);
        let r = WideBucket::ranges_b(&a, bb).unwrap();
        // One range per bucket the bounds reach (`bucket_pruning.rs` pins which).
        prop_assert!((1..=3).contains(&r.len()));
        prop_assert_eq!(in_ranges(&r, &key), within(&b, &bb));
        let r = WideBucket::ranges_c(&a, b, bc).unwrap();
        prop_assert_eq!(r.len(), 1);
        prop_assert_eq!(in_ranges(&r, &key), within(&c, &bc));
    }
}

// ---- Exactly the keys that encode decode, over adjacent options, chars, floats, nesting --------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct AdjacentOptions {
    a: Option<String>,
    b: Option<String>,
    #[pk(desc)]
    c: Option<u8>,
    d: Option<char>,
    #[pk(desc)]
    e: Option<String>,
    f: Option<Vec<u8>>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(delimiter = '\0')]
struct NulDelimited(
    #[pk(escaped)] Option<String>,
    Option<String>,
    #[pk(desc)] char,
    Option<bool>,
);

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10, modulo = 1, separator), delimiter = '+')]
struct NestedModulo(NulInner, #[pk(width = 2)] i16, #[pk(desc)] Option<f32>);

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct NulInner {
    #[pk(escaped, desc)]
    s: String,
    t: Option<i8>,
}

fn any_str() -> impl Strategy<Value = String> {
    prop::string::string_regex("(?s)[\\x00 !+,\\-=a~é\\u{10FFFF}]{0,3}").unwrap()
}

fn adjacent() -> impl Strategy<Value = AdjacentOptions> {
    (
        prop::option::of("[a=~é]{0,2}"),
        prop::option::of("[a=~é]{0,2}"),
        prop::option::of(any::<u8>()),
        prop::option::of(any::<char>()),
        prop::option::of(any_str()),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..2)),
    )
        .prop_map(|(a, b, c, d, e, f)| AdjacentOptions { a, b, c, d, e, f })
}

fn nul() -> impl Strategy<Value = NulDelimited> {
    (
        prop::option::of(any_str()),
        prop::option::of("[a=~é,]{0,2}"),
        any::<char>(),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(a, b, c, d)| NulDelimited(a, b, c, d))
}

fn nested_modulo() -> impl Strategy<Value = NestedModulo> {
    (
        any_str(),
        prop::option::of(any::<i8>()),
        -10i16..=9,
        prop::option::of(any::<f32>()),
    )
        .prop_map(|(s, t, n, f)| NestedModulo(NulInner { s, t }, n, f.filter(|f| !f.is_nan())))
}

/// Decoding `text` fails, or gives a value that encodes to exactly `text` and that the layout
/// reads alike.
macro_rules! exactly {
    ($t:ty, $text:expr) => {{
        let text: &str = $text;
        let derived = <$t>::decode(text);
        let layout = <$t>::layout().decode(text);
        prop_assert_eq!(
            derived.is_ok(),
            layout.is_ok(),
            "{:?}: {:?} / {:?}",
            text,
            derived,
            layout
        );
        if let Ok(v) = derived {
            prop_assert_eq!(v.encode().unwrap(), text, "{:?}", v);
        }
    }};
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(512), ..ProptestConfig::default() })]

    #[test]
    fn exactly_the_keys_that_encode_decode(
        x in adjacent(), y in adjacent(), n in nul(), m in nested_modulo(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..3),
    ) {
        let (kx, ky) = (x.encode().unwrap(), y.encode().unwrap());
        prop_assert_eq!(AdjacentOptions::decode(&kx).unwrap(), x.clone());
        let kn = n.encode();
        let km = m.encode().unwrap();
        prop_assert_eq!(NestedModulo::decode(&km).unwrap(), m.clone());
        let mut texts = vec![kx.clone(), km.clone()];
        if let Ok(kn) = &kn {
            prop_assert_eq!(NulDelimited::decode(kn).unwrap(), n.clone());
            texts.push(kn.clone());
        }
        for key in texts.clone() {
            let mut bytes = key.into_bytes();
            support::damage(&mut bytes, &edits);
            if let Ok(t) = String::from_utf8(bytes) {
                texts.push(t);
            }
        }
        for t in &texts {
            exactly!(AdjacentOptions, t);
            exactly!(NulDelimited, t);
            exactly!(NestedModulo, t);
        }
        if x == y {
            prop_assert_eq!(kx, ky);
        } else {
            prop_assert_ne!(kx, ky);
        }
    }
}

// ---- encode_into appends, and leaves the buffer as it was on error -----------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 5, hash(b, c)), max_len = 16)]
struct Appended {
    #[pk(width = 2)]
    a: u8,
    b: String,
    c: NulInner,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn encode_into_appends_or_leaves_the_buffer(
        before in "(?s).{0,6}", a in 0u8..120, b in "[a-c,]{0,8}", s in any_str(), t in prop::option::of(any::<i8>()),
        m in nested_modulo(), w in wide(),
    ) {
        let key = Appended { a, b, c: NulInner { s, t } };
        let mut out = before.clone();
        match (key.encode(), key.encode_into(&mut out)) {
            (Ok(alone), Ok(())) => {
                prop_assert_eq!(&out, &format!("{before}{alone}"));
                prop_assert_eq!(Appended::decode(&alone).unwrap(), key);
            }
            (Err(e1), Err(e2)) => {
                prop_assert_eq!(e1.to_string(), e2.to_string());
                prop_assert_eq!(&out, &before);
            }
            (x, y) => prop_assert!(false, "{:?} {:?}", x, y),
        }
        let mut out = before.clone();
        m.encode_into(&mut out).unwrap();
        prop_assert_eq!(&out, &format!("{before}{}", m.encode().unwrap()));
        let mut out = before.clone();
        w.encode_into(&mut out).unwrap();
        prop_assert_eq!(&out, &format!("{before}{}", w.encode().unwrap()));
        // A modulo key whose field does not fit: the buffer is as it was.
        let mut out = before.clone();
        prop_assert!(NestedModulo(m.0.clone(), 10, None).encode_into(&mut out).is_err());
        prop_assert_eq!(&out, &before);
    }
}

// ---- String ranges over the whole alphabet -------------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct EscInner {
    #[pk(escaped)]
    s: String,
    t: Option<u8>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Strings {
    a: Option<String>,
    b: String,
    c: EscInner,
    #[pk(desc)]
    d: String,
    #[pk(escaped)]
    e: Option<String>,
}

fn alphabet(max: usize) -> BoxedStrategy<String> {
    prop::string::string_regex(&format!("[\\-.=a~é\\x7f\\u{{10FFFF}}]{{0,{max}}}"))
        .unwrap()
        .boxed()
}

fn any_alphabet(max: usize) -> BoxedStrategy<String> {
    prop::string::string_regex(&format!("[\\x00,\\-.=a~é\\x7f]{{0,{max}}}"))
        .unwrap()
        .boxed()
}

fn strings() -> impl Strategy<Value = Strings> {
    (
        prop::option::of(alphabet(2)),
        alphabet(2),
        any_alphabet(2),
        prop::option::of(any::<u8>()),
        any_alphabet(2),
        prop::option::of(any_alphabet(2)),
    )
        .prop_map(|(a, b, s, t, d, e)| Strings {
            a,
            b,
            c: EscInner { s, t },
            d,
            e,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(512), ..ProptestConfig::default() })]

    #[test]
    fn string_ranges_over_the_whole_alphabet_hold_exactly_their_keys(
        keys in prop::collection::vec(strings(), 1..6),
        ba in bounds(prop::option::of(alphabet(2))),
        bb in bounds(alphabet(3)),
        bc in bounds((any_alphabet(2), prop::option::of(any::<u8>()))),
        bd in bounds(any_alphabet(3)),
        be in bounds(prop::option::of(any_alphabet(2))),
    ) {
        let probe = &keys[0];
        let ra = Strings::ranges_a(ba.clone()).unwrap();
        let rb = Strings::ranges_b(&probe.a, (bb.0.as_ref().map(String::as_str), bb.1.as_ref().map(String::as_str))).unwrap();
        let inner = |(s, t): &(String, Option<u8>)| EscInner { s: s.clone(), t: *t }.encode().unwrap();
        let bc_keys = (bc.0.as_ref().map(inner), bc.1.as_ref().map(inner));
        let to_inner = |(s, t): &(String, Option<u8>)| EscInner { s: s.clone(), t: *t };
        let rc = Strings::ranges_c(&probe.a, &probe.b, (bc.0.as_ref().map(to_inner), bc.1.as_ref().map(to_inner))).unwrap();
        let rd = Strings::ranges_d(&probe.a, &probe.b, &probe.c, (bd.0.as_ref().map(String::as_str), bd.1.as_ref().map(String::as_str))).unwrap();
        let re = Strings::ranges_e(&probe.a, &probe.b, &probe.c, &probe.d, be.clone()).unwrap();
        for k in &keys {
            let key = k.encode().unwrap();
            prop_assert_eq!(Strings::decode(&key).unwrap(), k.clone());
            prop_assert_eq!(in_ranges(&ra, &key), within(&k.a, &ba), "a {:?} {:?}", key, ra);
            let head_a = k.a == probe.a;
            prop_assert_eq!(in_ranges(&rb, &key), head_a && within(&k.b, &bb), "b {:?} {:?}", key, rb);
            let head_b = head_a && k.b == probe.b;
            let kc = k.c.encode().unwrap();
            prop_assert_eq!(in_ranges(&rc, &key), head_b && within(&kc, &bc_keys), "c {:?} {:?}", key, rc);
            let head_c = head_b && k.c == probe.c;
            prop_assert_eq!(in_ranges(&rd, &key), head_c && within(&k.d, &bd), "d {:?} {:?}", key, rd);
            let head_d = head_c && k.d == probe.d;
            prop_assert_eq!(in_ranges(&re, &key), head_d && within(&k.e, &be), "e {:?} {:?}", key, re);
        }
    }
}
