//! Derived keys decode exactly what they encode: a struct of every form at its boundaries
//! round-trips, and damaged text decodes to a value that encodes back to exactly that text, or
//! to the answer its layout gives. Borrowing decode (`BorrowDecodeKey`): structs of `&str` and
//! `Cow<str>` fields decode the same texts as their owned twins, to the same values, under every
//! prefix; `'static` borrowed fields encode as owned ones.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pk_codec::{BorrowDecodeKey, DecodeKey, PartitionKey};
use proptest::prelude::*;

use crate::support;

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

// ---- Borrowing decode against the owned one, with every prefix ---------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 7, modulo = b, separator))]
struct ModRef<'a> {
    a: &'a str,
    #[pk(width = 3)]
    b: u16,
    c: Option<&'a str>,
    #[pk(escaped)]
    d: std::borrow::Cow<'a, str>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 7, modulo = b, separator))]
struct ModOwned {
    a: String,
    #[pk(width = 3)]
    b: u16,
    c: Option<String>,
    #[pk(escaped)]
    d: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh32, len = 3, fields(a, b)))]
struct HashRef<'a> {
    a: Option<&'a str>,
    #[pk(desc)]
    b: std::borrow::Cow<'a, str>,
    c: &'a str,
    #[pk(width = 2)]
    d: i8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh32, len = 3, fields(a, b)))]
struct HashOwned {
    a: Option<String>,
    #[pk(desc)]
    b: String,
    c: String,
    #[pk(width = 2)]
    d: i8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 11, hash(b, d)), delimiter = '!')]
struct BucketRef<'a> {
    a: &'a str,
    b: Option<&'a str>,
    c: u8,
    d: &'a str,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 11, hash(b, d)), delimiter = '!')]
struct BucketOwned {
    a: String,
    b: Option<String>,
    c: u8,
    d: String,
}

fn text() -> impl Strategy<Value = String> {
    prop::string::string_regex("(?s)[a-c,!=~\\-0-9é\\x00]{0,4}").unwrap()
}

/// Same answer from the owned and the borrowed decode of `$text`; an accepted text re-encodes to
/// itself, and the runtime layout reads it alike.
macro_rules! same_answer {
    ($text:expr, $owned:ty, $borrowed:ident, $to_owned:expr) => {{
        let text: &str = $text;
        let owned = <$owned>::decode(text);
        let borrowed = $borrowed::decode_borrowed(text);
        let layout = <$owned>::layout().decode(text);
        prop_assert_eq!(
            owned.is_ok(),
            layout.is_ok(),
            "{:?}: {:?} {:?}",
            text,
            owned,
            layout
        );
        match (&owned, &borrowed) {
            (Ok(o), Ok(b)) => {
                let to_owned: fn(&$borrowed<'_>) -> $owned = $to_owned;
                prop_assert_eq!(o, &to_owned(b));
                prop_assert_eq!(o.encode().unwrap(), text);
                prop_assert_eq!(b.encode().unwrap(), text);
            }
            (Err(_), Err(_)) => {}
            _ => prop_assert!(
                false,
                "{:?}: owned {:?}, borrowed {:?}",
                text,
                owned,
                borrowed
            ),
        }
    }};
}

fn mod_owned(b: &ModRef<'_>) -> ModOwned {
    ModOwned {
        a: b.a.into(),
        b: b.b,
        c: b.c.map(Into::into),
        d: b.d.clone().into_owned(),
    }
}

fn hash_owned(b: &HashRef<'_>) -> HashOwned {
    HashOwned {
        a: b.a.map(Into::into),
        b: b.b.clone().into_owned(),
        c: b.c.into(),
        d: b.d,
    }
}

fn bucket_owned(b: &BucketRef<'_>) -> BucketOwned {
    BucketOwned {
        a: b.a.into(),
        b: b.b.map(Into::into),
        c: b.c,
        d: b.d.into(),
    }
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn borrowed_and_owned_decodes_agree_with_every_prefix(
        a in text(), c in opt_text(), d in text(), n in any::<u16>(), i in any::<i8>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 0..3),
        junk in "(?s).{0,12}",
    ) {
        let plain = |s: &str, d: char| -> String { s.chars().filter(|&ch| ch > d).collect() };
        let mut texts = vec![junk];
        let m = ModOwned { a: plain(&a, ','), b: n % 1000, c: c.as_deref().map(|s| plain(s, ',')), d: d.clone() };
        let h = HashOwned { a: c.as_deref().map(|s| plain(s, ',')), b: a.clone(), c: plain(&d, ','), d: i.clamp(-9, 9) };
        let b = BucketOwned { a: plain(&a, '!'), b: c.as_deref().map(|s| plain(s, '!')), c: n as u8, d: plain(&d, '!') };
        for key in [m.encode().unwrap(), h.encode().unwrap(), b.encode().unwrap()] {
            let mut bytes = key.clone().into_bytes();
            support::damage(&mut bytes, &edits);
            if let Ok(t) = String::from_utf8(bytes) {
                texts.push(t);
            }
            texts.push(key);
        }
        prop_assert_eq!(ModOwned::decode(&m.encode().unwrap()).unwrap(), m);
        prop_assert_eq!(HashOwned::decode(&h.encode().unwrap()).unwrap(), h);
        prop_assert_eq!(BucketOwned::decode(&b.encode().unwrap()).unwrap(), b);
        for t in &texts {
            same_answer!(t, ModOwned, ModRef, mod_owned);
            same_answer!(t, HashOwned, HashRef, hash_owned);
            same_answer!(t, BucketOwned, BucketRef, bucket_owned);
        }
    }
}

// ---- 'static borrowed fields in a struct without lifetimes --------------------------------------

/// A struct without lifetime parameters whose fields borrow (`&'static str`, `Cow<'static, str>`)
/// encodes only, as any borrowing struct: the derive implemented `BorrowDecodeKey` through a
/// `DecodeKey` it did not implement (E0277 inside the derive).
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, hash(a)))]
struct StaticFields {
    a: &'static str,
    b: std::borrow::Cow<'static, str>,
    #[pk(width = 3)]
    c: u16,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, hash(a)))]
struct StaticTwin {
    a: String,
    b: String,
    #[pk(width = 3)]
    c: u16,
}

#[test]
fn static_borrowed_fields_encode_as_owned_ones() {
    let key = StaticFields {
        a: "x",
        b: "y".into(),
        c: 7,
    };
    let text = key.encode().unwrap();
    assert_eq!(
        text,
        StaticTwin {
            a: "x".into(),
            b: "y".into(),
            c: 7
        }
        .encode()
        .unwrap()
    );
    assert_eq!(StaticFields::layout(), StaticTwin::layout());
    let r = StaticFields::ranges_c("x", &"y".into(), 7..8).unwrap();
    assert_eq!(r.iter().filter(|r| r.contains(&text)).count(), 1);
}

/// `Option<Cow<str>>` encoded but had no borrowing decode, so a borrowing struct could not hold
/// one (E0277 in the derive). It reads as `Option<&str>` does, owning only what must be unescaped
/// or reversed: the same values as the owned decode, for any text in every order and form.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct OptCowRef<'a> {
    a: Option<std::borrow::Cow<'a, str>>,
    #[pk(escaped)]
    b: Option<std::borrow::Cow<'a, str>>,
    #[pk(desc)]
    c: Option<std::borrow::Cow<'a, str>>,
    d: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct OptCowOwned {
    a: Option<String>,
    #[pk(escaped)]
    b: Option<String>,
    #[pk(desc)]
    c: Option<String>,
    d: u8,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn an_optional_cow_str_borrow_decodes_as_the_owned_option(
        a in proptest::option::of("[a-z]{0,4}"),
        b in proptest::option::of("[\\x00-\\x7f,~-]{0,6}"),
        c in proptest::option::of("[a-z]{0,4}"),
        d in any::<u8>(),
    ) {
        let owned = OptCowOwned { a: a.clone(), b: b.clone(), c: c.clone(), d };
        let key = owned.encode().unwrap();
        fn cow(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
            s.as_deref().map(std::borrow::Cow::Borrowed)
        }
        let by_ref = OptCowRef { a: cow(&a), b: cow(&b), c: cow(&c), d };
        prop_assert_eq!(&by_ref.encode().unwrap(), &key);
        let back = OptCowRef::decode_borrowed(&key).unwrap();
        prop_assert_eq!(&back, &by_ref);
        prop_assert_eq!(OptCowOwned::decode(&key).unwrap(), owned);
    }
}
