//! The derive accepts the names users write: fields named like the generated code's parameters,
//! types named by their full path, a module that shadows the prelude and the primitive types, a
//! module without the prelude, raw identifiers in the prefix attributes.

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

// ---- Raw identifiers named by the prefix attributes ---------------------------------------------

/// `r#ts` and `ts` are one identifier: a prefix attribute may name the field either way (`ts` was
/// "names no field of this struct").
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, modulo = ts))]
struct RawModulo {
    #[pk(width = 4)]
    r#ts: u16,
    r#type: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 2, fields(r#dev, kind)))]
struct RawHashed {
    #[pk(width = 3)]
    dev: u16,
    r#kind: u8,
    r#type: u8,
}

#[test]
fn prefix_attributes_name_raw_identifiers_either_way() {
    let k = RawModulo {
        ts: 7,
        r#type: "x".into(),
    };
    let text = k.encode().unwrap();
    assert_eq!(text, "30007,x");
    assert_eq!(RawModulo::decode(&text).unwrap(), k);
    assert_eq!(
        RawModulo::layout().to_string(),
        "ts: u16 width=4; type: str; buckets=4:mod(ts)"
    );
    let h = RawHashed {
        dev: 1,
        kind: 2,
        r#type: 3,
    };
    let text = h.encode().unwrap();
    assert_eq!(RawHashed::decode(&text).unwrap(), h);
    assert_eq!(
        RawHashed::layout()
            .encode(&[1u16.into(), 2u8.into(), 3u8.into()])
            .unwrap(),
        text
    );
    let r = RawHashed::ranges_type(1, 2, 3..=3).unwrap();
    assert!(r[0].contains(&text));
}
