//! Derived keys over the configuration space the derive accepts, not one hand-picked corner:
//! every delimiter class (one struct per delimiter, generated), `Option` nesting reached through
//! type parameters, nested keys of every size inside bucket hashes and hash prefixes, and field
//! names that generated code uses for itself. Each derived key must write what its `layout()`
//! writes, keep typed order, and decode back.

use pk_codec::{DecodeKey, KeyField, Layout, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

/// The derived key and its runtime layout agree byte for byte, and the layout decodes the key to
/// `values`.
fn agrees<K: PartitionKey>(key: &K, values: &[Value]) -> Result<String, TestCaseError> {
    let derived = key
        .encode()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let layout: Layout = K::layout();
    prop_assert_eq!(
        &layout.encode(values).unwrap(),
        &derived,
        "layout `{}`",
        layout
    );
    prop_assert_eq!(&layout.decode(&derived).unwrap(), values);
    // The layout's text form loads back to the same layout.
    prop_assert_eq!(&layout.to_string().parse::<Layout>().unwrap(), &layout);
    Ok(derived)
}

// ---- One struct per delimiter ---------------------------------------------------------------

/// Fixed-width fields accept every delimiter below 0x7f that is not a letter or digit; an optional
/// string accepts those below `=`; a descending string those below `a`.
macro_rules! delimiter_cases {
    ($($name:ident $d:literal),* $(,)?) => {
        $(
            #[derive(PartitionKey, Debug, Clone, PartialEq)]
            #[pk(delimiter = $d)]
            struct $name {
                #[pk(width = 3)]
                a: u16,
                #[pk(desc)]
                b: i8,
                c: bool,
            }
        )*

        fn fixed_width_keys_keep_order_for_every_delimiter(rows: &[(u16, i8, bool)]) -> Result<(), TestCaseError> {
            $(
                let keys: Vec<String> = rows
                    .iter()
                    .map(|&(a, b, c)| agrees(&$name { a: a % 1000, b, c }, &[(a % 1000).into(), b.into(), c.into()]))
                    .collect::<Result<_, _>>()?;
                for (x, kx) in rows.iter().zip(&keys) {
                    for (y, ky) in rows.iter().zip(&keys) {
                        let typed = (x.0 % 1000).cmp(&(y.0 % 1000)).then(y.1.cmp(&x.1)).then(x.2.cmp(&y.2));
                        prop_assert_eq!(typed, kx.cmp(ky), "delimiter {:?}", $d);
                    }
                    prop_assert_eq!(&$name::decode(kx).unwrap(), &$name { a: x.0 % 1000, b: x.1, c: x.2 });
                }
            )*
            Ok(())
        }
    };
}

delimiter_cases!(
    D00 '\0', D01 '\x01', D1f '\x1f', DSpace ' ', DBang '!', DPlus '+', DComma ',', DDash '-',
    DDot '.', DColon ':', DLt '<', DEq '=', DGt '>', DAt '@', DUnder '_', DTick '`', DPipe '|',
    DTilde '~',
);

macro_rules! optional_string_cases {
    ($($name:ident $d:literal),* $(,)?) => {
        $(
            #[derive(PartitionKey, Debug, Clone, PartialEq)]
            #[pk(delimiter = $d)]
            struct $name {
                a: Option<String>,
                b: u16,
            }
        )*

        fn optional_strings_keep_order_below_the_marker(rows: &[(Option<String>, u16)]) -> Result<(), TestCaseError> {
            $(
                let rows: Vec<(Option<String>, u16)> = rows
                    .iter()
                    .map(|(a, b)| (a.as_ref().map(|s| s.chars().filter(|&c| c > $d).collect()), *b))
                    .collect();
                let keys: Vec<String> = rows
                    .iter()
                    .map(|(a, b)| agrees(&$name { a: a.clone(), b: *b }, &[a.clone().into(), (*b).into()]))
                    .collect::<Result<_, _>>()?;
                for (x, kx) in rows.iter().zip(&keys) {
                    for (y, ky) in rows.iter().zip(&keys) {
                        prop_assert_eq!(x.cmp(y), kx.cmp(ky), "delimiter {:?}: {:?} {:?}", $d, kx, ky);
                    }
                }
            )*
            Ok(())
        }
    };
}

// Every delimiter the rulebook accepts for `Option<String>`: not alphanumeric, below `=`.
optional_string_cases!(
    O00 '\0', O1f '\x1f', OSpace ' ', OBang '!', OPlus '+', OComma ',', ODash '-', ODot '.',
    OSlash '/', OColon ':', OSemi ';', OLt '<',
);

// ---- Option nesting through type parameters ---------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Gen<V: KeyField> {
    a: V,
    b: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct GenOpt<V: KeyField> {
    a: Option<V>,
    b: u8,
}

type DeviceId = u32;

/// An alias inside an `Option` is the type it names.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Aliased {
    a: Option<DeviceId>,
    b: u8,
}

/// An alias as a field, with field attributes and as the modulo of a bucket prefix: the type it
/// names, through its `KeyPart` impl.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = device))]
struct AliasField {
    #[pk(width = 10, desc)]
    device: DeviceId,
    b: u8,
}

// ---- Nested keys of every size inside bucket hashes and hash prefixes --------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Nine(u8, u8, u8, u8, u8, u8, u8, u8, u8);

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Twelve(u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8);

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, hash(n)))]
struct BucketNine {
    n: Nine,
    t: u16,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10000, hash(x, n, y), separator))]
struct BucketTwelve {
    x: u8,
    n: Twelve,
    y: String,
    z: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 7, hash(a, c, e, g, i, k, m, o)))]
struct EightRuns {
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
    k: u8,
    l: u8,
    m: u8,
    n: u8,
    o: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 4, separator))]
struct HashedTwelve {
    n: Twelve,
    t: u16,
}

// ---- Field names that generated code uses ------------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[allow(non_snake_case)]
struct Reserved {
    __pk_b: u8,
    __pk_w: String,
    __pk_v: u16,
    __pk_x: u8,
}

fn nine(v: [u8; 9]) -> Nine {
    Nine(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])
}

fn twelve(v: [u8; 12]) -> Twelve {
    Twelve(
        v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
    )
}

fn values(v: &[u8]) -> Vec<Value> {
    v.iter().map(|&x| Value::from(x)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(128), ..ProptestConfig::default() })]

    #[test]
    fn fixed_width_fields_keep_order_under_every_delimiter(rows in prop::collection::vec((any::<u16>(), any::<i8>(), any::<bool>()), 2..6)) {
        fixed_width_keys_keep_order_for_every_delimiter(&rows)?;
    }

    #[test]
    fn optional_strings_keep_order_under_every_accepted_delimiter(
        rows in prop::collection::vec((prop::option::of("[ -~é]{0,3}"), 0u16..3), 2..8),
    ) {
        optional_strings_keep_order_below_the_marker(&rows)?;
    }

    #[test]
    fn options_through_type_parameters_are_optional_fields(
        rows in prop::collection::vec((prop::option::of(any::<u32>()), prop::option::of("[a-z]{0,3}"), any::<u8>()), 2..6),
    ) {
        let mut keys = Vec::new();
        for (n, s, b) in &rows {
            // `V = Option<u32>`: `None` must sort first and not collide with any `Some`.
            let k1 = agrees(&Gen { a: *n, b: *b }, &[(*n).into(), (*b).into()])?;
            prop_assert_eq!(&Gen::<Option<u32>>::decode(&k1).unwrap(), &Gen { a: *n, b: *b });
            // `V = Option<String>`: the layout calls it optional and decodes it as written.
            let k2 = agrees(&Gen { a: s.clone(), b: *b }, &[s.clone().into(), (*b).into()])?;
            prop_assert_eq!(&Gen::<Option<String>>::decode(&k2).unwrap(), &Gen { a: s.clone(), b: *b });
            let k3 = agrees(&GenOpt { a: s.clone(), b: *b }, &[s.clone().into(), (*b).into()])?;
            prop_assert_eq!(&k3, &k2);
            let k4 = agrees(&Aliased { a: *n, b: *b }, &[(*n).into(), (*b).into()])?;
            prop_assert_eq!(&k4, &k1);
            let device = n.unwrap_or(7);
            let k5 = agrees(&AliasField { device, b: *b }, &[device.into(), (*b).into()])?;
            prop_assert_eq!(&AliasField::decode(&k5).unwrap(), &AliasField { device, b: *b });
            let ranges = AliasField::ranges_b_eq(&device, *b).unwrap();
            prop_assert_eq!(ranges.len(), 1);
            prop_assert!(ranges[0].contains(&k5));
            keys.push(((*n, *b), k1));
        }
        for (x, kx) in &keys {
            for (y, ky) in &keys {
                prop_assert_eq!(x.cmp(y), kx.cmp(ky));
            }
        }
        prop_assert!(Gen::<Option<u32>>::layout().fields()[0].spec().is_optional());
        prop_assert!(Gen::<Option<String>>::layout().fields()[0].spec().is_optional());
    }

    #[test]
    fn nested_keys_of_any_size_hash_alike_in_the_derive_and_the_layout(
        a in any::<[u8; 9]>(),
        b in any::<[u8; 12]>(),
        c in any::<[u8; 15]>(),
        t in any::<u16>(),
        y in "[a-z]{0,4}",
    ) {
        let mut v = values(&a);
        v.push(t.into());
        let key = agrees(&BucketNine { n: nine(a), t }, &v)?;
        prop_assert_eq!(&BucketNine::decode(&key).unwrap(), &BucketNine { n: nine(a), t });

        let mut v = vec![Value::from(c[0])];
        v.extend(values(&b));
        v.push(y.clone().into());
        v.push(c[1].into());
        let k = BucketTwelve { x: c[0], n: twelve(b), y: y.clone(), z: c[1] };
        let key = agrees(&k, &v)?;
        prop_assert_eq!(&BucketTwelve::decode(&key).unwrap(), &k);

        let e = EightRuns { a: c[0], b: c[1], c: c[2], d: c[3], e: c[4], f: c[5], g: c[6], h: c[7], i: c[8], j: c[9], k: c[10], l: c[11], m: c[12], n: c[13], o: c[14] };
        let key = agrees(&e, &values(&c))?;
        prop_assert_eq!(&EightRuns::decode(&key).unwrap(), &e);

        let mut v = values(&b);
        v.push(t.into());
        let key = agrees(&HashedTwelve { n: twelve(b), t }, &v)?;
        prop_assert_eq!(&HashedTwelve::decode(&key).unwrap(), &HashedTwelve { n: twelve(b), t });
    }

    #[test]
    fn fields_named_like_generated_locals_work(b in any::<u8>(), w in "[a-z]{0,4}", v in any::<u16>(), x in any::<u8>()) {
        let key = Reserved { __pk_b: b, __pk_w: w.clone(), __pk_v: v, __pk_x: x };
        let text = agrees(&key, &[b.into(), w.clone().into(), v.into(), x.into()])?;
        prop_assert_eq!(&Reserved::decode(&text).unwrap(), &key);
        let ranges = Reserved::ranges___pk_v(b, &w, v..=v).unwrap();
        prop_assert!(ranges[0].contains(&text));
        let eq = Reserved::ranges___pk_x_eq(b, &w, v, x).unwrap();
        prop_assert!(eq[0].contains(&text));
    }
}

#[test]
fn layouts_of_derived_keys_count_hash_runs_as_the_derive_does() {
    // Twelve nested fields hashed with two scalars around them: one run in both.
    let layout = BucketTwelve::layout();
    assert_eq!(
        layout.to_string(),
        "x: u8; n._0: u8; n._1: u8; n._2: u8; n._3: u8; n._4: u8; n._5: u8; n._6: u8; n._7: u8; \
         n._8: u8; n._9: u8; n._10: u8; n._11: u8; y: str; z: u8; \
         buckets=10000:hash(x,n._0,n._1,n._2,n._3,n._4,n._5,n._6,n._7,n._8,n._9,n._10,n._11,y):sep"
    );
    assert_eq!(
        BucketTwelve::layout().prefix_ranges(&[]).unwrap().len(),
        10_000
    );
    // Eight separate runs is the most the rulebook allows; the runtime agrees.
    assert!(
        EightRuns::layout()
            .to_string()
            .contains("hash(a,c,e,g,i,k,m,o)")
    );
}

// ---- Borrowing decode ---------------------------------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct CardRef<'a> {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: &'a str,
    #[pk(escaped)]
    note: std::borrow::Cow<'a, str>,
    maybe: Option<&'a str>,
    inner: Inner,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Inner {
    #[pk(desc)]
    n: u16,
    owned: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, hash(seller_id), separator))]
struct BucketRef<'a> {
    seller_id: &'a str,
    #[pk(width = 4)]
    t: u16,
}

/// Encodes only: `&[u8]` has no borrowed form (its text is hex), so no `BorrowDecodeKey`.
#[derive(PartitionKey)]
struct RawRef<'a> {
    raw: &'a [u8],
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(128), ..ProptestConfig::default() })]

    #[test]
    fn borrowed_decode_returns_the_owned_values_and_borrows_plain_strings(
        device_id in any::<u32>().prop_map(|d| d % 1_000_000),
        seller in "[a-z0-9]{0,6}",
        note in "(?s).{0,6}",
        maybe in prop::option::of("[a-z]{0,4}"),
        n in any::<u16>(),
        owned in "[a-z]{0,4}",
        t in 0u16..10_000,
    ) {
        use pk_codec::BorrowDecodeKey;
        let card = CardRef {
            device_id,
            seller_id: &seller,
            note: note.as_str().into(),
            maybe: maybe.as_deref(),
            inner: Inner { n, owned: owned.clone() },
        };
        let key = card.encode().unwrap();
        let back = CardRef::decode_borrowed(&key).unwrap();
        prop_assert_eq!(&back, &card);
        // The plain string is the key's own text, not a copy.
        let at = key.find(&format!(",{seller},")).unwrap() + 1;
        prop_assert!(std::ptr::eq(back.seller_id.as_ptr(), key[at..].as_ptr()));
        // An escaped string borrows exactly when it holds nothing to unescape.
        let borrowed = matches!(back.note, std::borrow::Cow::Borrowed(_));
        prop_assert_eq!(borrowed, !note.bytes().any(|b| b <= b'-'));
        // The owned decode of the same layout reads the same values.
        let values = CardRef::layout().decode(&key).unwrap();
        prop_assert_eq!(values.len(), 6);

        let b = BucketRef { seller_id: &seller, t };
        let key = b.encode().unwrap();
        prop_assert_eq!(BucketRef::decode_borrowed(&key).unwrap(), b);
        // Owned keys decode through the same trait.
        let inner = Inner { n, owned };
        prop_assert_eq!(Inner::decode_borrowed(&inner.encode().unwrap()).unwrap(), inner);
    }
}

#[test]
fn a_borrowed_key_of_bytes_still_encodes() {
    assert_eq!(RawRef { raw: &[0xab, 0x01] }.encode().unwrap(), "ab01");
}
