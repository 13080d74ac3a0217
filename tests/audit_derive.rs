//! Audit of `#[derive(PartitionKey)]`: each test here failed before the fix it names, or checks a
//! guarantee over a configuration the other suites do not cover.

use pk_codec::{DecodeKey, PartitionKey};

// ---- Range constructors of fields named `bounds`, `bounds_` -----------------------------------

/// Fields named `bounds_` and `bounds`: the bounds parameter of `ranges_x` must be named after
/// neither (it was `bounds_`, a second parameter of that name: E0415 inside the derive).
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct BoundsNames {
    bounds_: u8,
    bounds: u8,
    x: u8,
}

#[test]
fn fields_named_like_the_bounds_parameter_get_range_constructors() {
    let key = BoundsNames {
        bounds_: 1,
        bounds: 2,
        x: 3,
    };
    let text = key.encode().unwrap();
    assert_eq!(BoundsNames::decode(&text).unwrap(), key);
    let ranges = BoundsNames::ranges_x(1, 2, 3..=3).unwrap();
    assert_eq!(ranges.len(), 1);
    assert!(ranges[0].contains(&text));
    let ranges = BoundsNames::ranges_x(1, 2, 4..).unwrap();
    assert!(!ranges[0].contains(&text));
    let ranges = BoundsNames::ranges_bounds(1, ..=2).unwrap();
    assert!(ranges[0].contains(&text));
}

// ---- Types named by their full path -----------------------------------------------------------

/// `&core::primitive::str` is `&str` (it was refused: "a reference field must be `&str`...").
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct QualifiedStr<'a> {
    s: &'a ::core::primitive::str,
    t: &'a std::primitive::str,
    n: ::core::primitive::u16,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct PlainStr<'a> {
    s: &'a str,
    t: &'a str,
    n: u16,
}

#[test]
fn a_str_named_by_its_path_is_a_str_field() {
    use pk_codec::BorrowDecodeKey;
    let q = QualifiedStr {
        s: "a",
        t: "b",
        n: 7,
    };
    let text = q.encode().unwrap();
    assert_eq!(
        text,
        PlainStr {
            s: "a",
            t: "b",
            n: 7
        }
        .encode()
        .unwrap()
    );
    assert_eq!(QualifiedStr::decode_borrowed(&text).unwrap(), q);
    assert_eq!(QualifiedStr::layout(), PlainStr::layout());
    let r = QualifiedStr::ranges_t("a", "b"..="b").unwrap();
    assert!(r[0].contains(&text));
}

// ---- Hygiene: a module that shadows the prelude and the primitive types ------------------------

#[allow(non_camel_case_types, dead_code, unreachable_pub)]
mod shadowed {
    use pk_codec::PartitionKey;

    pub struct Result;
    pub struct Option;
    pub struct Some;
    pub struct None;
    pub struct Ok;
    pub struct Err;
    pub struct String;
    pub struct Vec;
    pub struct Box;
    pub mod std {}
    pub mod core {}
    // The primitive types the generated code names.
    pub struct str;
    pub struct u8;
    pub struct usize;
    pub struct bool;
    pub struct char;

    #[derive(PartitionKey, Debug, Clone, PartialEq)]
    #[pk(buckets(count = 4, modulo = a))]
    pub struct Shadowed {
        pub a: ::core::primitive::u32,
        pub s: ::std::string::String,
        pub b: ::std::vec::Vec<::core::primitive::u8>,
        pub o: ::core::option::Option<::std::string::String>,
    }

    #[derive(PartitionKey, Debug, Clone, PartialEq)]
    #[pk(hash(xxh3, len = 4, fields(s)))]
    pub struct ShadowedRef<'a> {
        pub s: &'a ::core::primitive::str,
        pub b: &'a [::core::primitive::u8],
        pub c: ::core::primitive::char,
    }
}

#[test]
fn generated_code_names_nothing_the_user_can_shadow() {
    let key = shadowed::Shadowed {
        a: 5,
        s: "x".into(),
        b: vec![1, 2],
        o: Some("y".into()),
    };
    let text = key.encode().unwrap();
    assert_eq!(shadowed::Shadowed::decode(&text).unwrap(), key);
    assert_eq!(
        shadowed::Shadowed::layout()
            .encode(&[
                5u32.into(),
                "x".into(),
                vec![1u8, 2].into(),
                Some("y".to_owned()).into()
            ])
            .unwrap(),
        text
    );
    let r = shadowed::Shadowed::ranges_s(5, "a".."z").unwrap();
    assert!(r[0].contains(&text));
    let r = shadowed::ShadowedRef::ranges_b("x", &b"\x00"[..]..).unwrap();
    let k = shadowed::ShadowedRef {
        s: "x",
        b: &[1],
        c: 'q',
    }
    .encode()
    .unwrap();
    assert!(r[0].contains(&k));
}

// ---- A module without the prelude -------------------------------------------------------------

#[allow(dead_code, unreachable_pub)]
mod no_prelude {
    #![no_implicit_prelude]

    #[derive(::pk_codec::PartitionKey, Debug, Clone, PartialEq)]
    #[pk(buckets(count = 3, hash(a, c), separator))]
    pub struct NoPrelude<'a> {
        pub a: &'a str,
        #[pk(width = 4)]
        pub b: u16,
        pub c: ::std::option::Option<::std::string::String>,
        #[pk(desc)]
        pub d: i128,
    }

    #[derive(::pk_codec::PartitionKey, Debug, Clone, PartialEq)]
    #[pk(hash(md5, len = 3, fields(0)))]
    pub struct NoPreludeOwned(
        pub ::std::string::String,
        #[pk(desc)] pub u128,
        pub ::std::vec::Vec<u8>,
    );
}

#[test]
fn a_module_without_the_prelude_can_derive() {
    use pk_codec::BorrowDecodeKey;
    let k = no_prelude::NoPrelude {
        a: "x",
        b: 3,
        c: None,
        d: i128::MIN,
    };
    let text = k.encode().unwrap();
    assert_eq!(no_prelude::NoPrelude::decode_borrowed(&text).unwrap(), k);
    let o = no_prelude::NoPreludeOwned("k".into(), u128::MAX, vec![0, 255]);
    let text = o.encode().unwrap();
    assert_eq!(no_prelude::NoPreludeOwned::decode(&text).unwrap(), o);
    let r = no_prelude::NoPreludeOwned::ranges_1("k", ..).unwrap();
    assert!(r[0].contains(&text));
}

// ---- Borrowing decode against the owned one, with every prefix ---------------------------------

mod support;

use pk_codec::BorrowDecodeKey;
use proptest::prelude::*;

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
        let h = HashOwned { a: c.as_deref().map(|s| plain(s, ',')), b: a.clone(), c: plain(&d, ','), d: i.max(-9).min(9) };
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
