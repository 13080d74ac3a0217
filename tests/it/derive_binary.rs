//! The derive's binary form (issue 31): every derived key writes, beside its text key, the binary
//! key its runtime layout writes in [`Form::Binary`], byte for byte, over every field kind, both
//! orders, optional fields, nested keys and every prefix; the binary key decodes back to the
//! value, sorts as the values sort (within a bucket, for a bucketed key), and any other bytes
//! either fail to decode or are the key of what they decode to.
//!
//! The values range over what the binary form accepts, which is more than the text form does
//! (a plain string may hold any character, `\0` included: the binary form has no delimiter).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use pk_codec::{DecodeKey, Form, Layout, PartitionKey, Value};
use proptest::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::support::{self, typed_cmp};

/// A key's values in its layout's order (a nested key's fields in its place).
trait Values {
    fn values(&self) -> Vec<Value>;
}

/// `vec![Value::from(self.a.clone()), ...]` for the fields named.
macro_rules! values {
    ($($ty:ident { $($f:tt),* $(,)? })*) => {$(
        impl Values for $ty {
            fn values(&self) -> Vec<Value> {
                vec![$(Value::from(self.$f.clone())),*]
            }
        }
    )*};
}

// ---- Every field kind, ascending, descending and optional -----------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Asc {
    a: u8,
    b: u16,
    #[pk(width = 6)]
    c: u32,
    d: u64,
    e: u128,
    f: usize,
    g: i8,
    h: i16,
    #[pk(width = 4)]
    i: i32,
    j: i64,
    k: i128,
    l: isize,
    m: String,
    #[pk(escaped)]
    n: String,
    o: Vec<u8>,
    p: bool,
    q: char,
    r: f32,
    s: f64,
    t: Uuid,
    #[pk(precision = us)]
    u: SystemTime,
    #[pk(precision = ns)]
    v: OffsetDateTime,
    #[pk(precision = s)]
    w: DateTime<Utc>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Desc {
    #[pk(desc)]
    a: u8,
    #[pk(desc)]
    b: u16,
    #[pk(width = 6, desc)]
    c: u32,
    #[pk(desc)]
    d: u64,
    #[pk(desc)]
    e: u128,
    #[pk(desc)]
    f: usize,
    #[pk(desc)]
    g: i8,
    #[pk(desc)]
    h: i16,
    #[pk(width = 4, desc)]
    i: i32,
    #[pk(desc)]
    j: i64,
    #[pk(desc)]
    k: i128,
    #[pk(desc)]
    l: isize,
    #[pk(desc)]
    m: String,
    #[pk(desc, escaped)]
    n: String,
    #[pk(desc)]
    o: Vec<u8>,
    #[pk(desc)]
    p: bool,
    #[pk(desc)]
    q: char,
    #[pk(desc)]
    r: f32,
    #[pk(desc)]
    s: f64,
    #[pk(desc)]
    t: Uuid,
    #[pk(precision = us, desc)]
    u: SystemTime,
    #[pk(precision = ns, desc)]
    v: OffsetDateTime,
    #[pk(precision = s, desc)]
    w: DateTime<Utc>,
}

/// Every kind optional, every other field descending.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Opt {
    a: Option<u8>,
    #[pk(desc)]
    b: Option<u16>,
    #[pk(width = 6)]
    c: Option<u32>,
    #[pk(desc)]
    d: Option<u64>,
    e: Option<u128>,
    #[pk(desc)]
    f: Option<usize>,
    g: Option<i8>,
    #[pk(desc)]
    h: Option<i16>,
    #[pk(width = 4)]
    i: Option<i32>,
    #[pk(desc)]
    j: Option<i64>,
    k: Option<i128>,
    #[pk(desc)]
    l: Option<isize>,
    m: Option<String>,
    #[pk(desc, escaped)]
    n: Option<String>,
    o: Option<Vec<u8>>,
    #[pk(desc)]
    p: Option<bool>,
    q: Option<char>,
    #[pk(desc)]
    r: Option<f32>,
    s: Option<f64>,
    #[pk(desc)]
    t: Option<Uuid>,
    #[pk(precision = us)]
    u: Option<SystemTime>,
    #[pk(precision = ns, desc)]
    v: Option<OffsetDateTime>,
    #[pk(precision = s)]
    w: Option<DateTime<Utc>>,
}

values! {
    Asc { a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w }
    Desc { a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w }
    Opt { a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w }
}

/// One row of values for the kinds above, each over what a field of its kind accepts.
#[derive(Debug, Clone)]
struct Row {
    ints: (u8, u16, u32, u64, u128, usize),
    signed: (i8, i16, i32, i64, i128, isize),
    strs: (String, String, Vec<u8>),
    small: (bool, char, f32, f64, u128),
    times: (SystemTime, OffsetDateTime, DateTime<Utc>),
    /// Which fields of [`Opt`] are `None`.
    nones: u32,
}

/// Strings that hold the bytes the binary form escapes (`\0`) or marks with (`\x01`, `\u{ff}`),
/// and any others.
fn any_str() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => "[\0\x01a\u{ff}]{0,4}",
        1 => "(?s).{0,6}",
    ]
}

fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xfe, 0xff]), 0..5),
        1 => prop::collection::vec(any::<u8>(), 0..6),
    ]
}

/// Seconds of the years 0000 to 9999, what a timestamp field writes.
const FIRST_SECS: i64 = -62_167_219_200;
const LAST_SECS: i64 = 253_402_300_799;

fn system_time(secs: i64, nanos: u32) -> SystemTime {
    let whole = Duration::from_secs(secs.unsigned_abs());
    let t = if secs < 0 {
        UNIX_EPOCH - whole
    } else {
        UNIX_EPOCH + whole
    };
    t + Duration::from_nanos(u64::from(nanos))
}

/// An instant of years 0000 to 9999 at a whole number of `unit` nanoseconds.
fn instant(unit: u32) -> impl Strategy<Value = (i64, u32)> {
    prop_oneof![
        1 => prop::sample::select(vec![FIRST_SECS, -1, 0, LAST_SECS]),
        3 => FIRST_SECS..=LAST_SECS,
    ]
    .prop_flat_map(move |s| {
        (
            Just(s),
            (0..1_000_000_000 / unit).prop_map(move |n| n * unit),
        )
    })
}

fn row() -> impl Strategy<Value = Row> {
    (
        (
            any::<u8>(),
            any::<u16>(),
            0u32..1_000_000,
            any::<u64>(),
            any::<u128>(),
            any::<usize>(),
        ),
        (
            any::<i8>(),
            any::<i16>(),
            -999i32..1000,
            any::<i64>(),
            any::<i128>(),
            any::<isize>(),
        ),
        (any_str(), any_str(), any_bytes()),
        (
            any::<bool>(),
            any::<char>(),
            any::<u32>().prop_map(f32::from_bits),
            any::<u64>().prop_map(f64::from_bits),
            any::<u128>(),
        ),
        (instant(1_000), instant(1), instant(1_000_000_000)),
        any::<u32>(),
    )
        .prop_map(|(ints, signed, strs, small, (u, v, w), nones)| Row {
            ints,
            signed,
            strs,
            small,
            times: (
                system_time(u.0, u.1),
                OffsetDateTime::from_unix_timestamp_nanos(
                    i128::from(v.0) * 1_000_000_000 + i128::from(v.1),
                )
                .expect("time holds years 0000 to 9999"),
                DateTime::from_timestamp(w.0, w.1).expect("chrono holds years 0000 to 9999"),
            ),
            nones,
        })
}

/// A few values per field, so that equal leading fields (and so the later fields' order) occur.
fn clustered_row() -> impl Strategy<Value = Row> {
    (row(), 0u8..3, 0u8..2).prop_map(|(mut r, x, y)| {
        r.ints = (x, u16::from(y), u32::from(x), u64::from(y), 0, 0);
        r.signed = (-(x as i8), 0, i32::from(y), 0, 0, 0);
        r.strs.0 = ["", "\0", "a"][usize::from(x)].to_owned();
        r.nones &= 0b111;
        r
    })
}

impl Row {
    fn asc(&self) -> Asc {
        let (a, b, c, d, e, f) = self.ints;
        let (g, h, i, j, k, l) = self.signed;
        let (m, n, o) = self.strs.clone();
        let (p, q, r, s, t) = self.small;
        let (u, v, w) = self.times;
        Asc {
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
            i,
            j,
            k,
            l,
            m,
            n,
            o,
            p,
            q,
            r,
            s,
            t: Uuid::from_u128(t),
            u,
            v,
            w,
        }
    }

    fn desc(&self) -> Desc {
        let x = self.asc();
        Desc {
            a: x.a,
            b: x.b,
            c: x.c,
            d: x.d,
            e: x.e,
            f: x.f,
            g: x.g,
            h: x.h,
            i: x.i,
            j: x.j,
            k: x.k,
            l: x.l,
            m: x.m,
            n: x.n,
            o: x.o,
            p: x.p,
            q: x.q,
            r: x.r,
            s: x.s,
            t: x.t,
            u: x.u,
            v: x.v,
            w: x.w,
        }
    }

    fn opt(&self) -> Opt {
        let x = self.asc();
        let some = |i: u32| self.nones & (1 << i) == 0;
        Opt {
            a: some(0).then_some(x.a),
            b: some(1).then_some(x.b),
            c: some(2).then_some(x.c),
            d: some(3).then_some(x.d),
            e: some(4).then_some(x.e),
            f: some(5).then_some(x.f),
            g: some(6).then_some(x.g),
            h: some(7).then_some(x.h),
            i: some(8).then_some(x.i),
            j: some(9).then_some(x.j),
            k: some(10).then_some(x.k),
            l: some(11).then_some(x.l),
            m: some(12).then_some(x.m),
            n: some(13).then_some(x.n),
            o: some(14).then_some(x.o),
            p: some(15).then_some(x.p),
            q: some(16).then_some(x.q),
            r: some(17).then_some(x.r),
            s: some(18).then_some(x.s),
            t: some(19).then_some(x.t),
            u: some(20).then_some(x.u),
            v: some(21).then_some(x.v),
            w: some(22).then_some(x.w),
        }
    }
}

// ---- Nested keys ---------------------------------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Inner {
    #[pk(desc)]
    a: i16,
    b: Option<String>,
    c: Vec<u8>,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Nested(Inner, #[pk(desc)] u8, Inner, #[pk(desc, escaped)] String);

impl Values for Inner {
    fn values(&self) -> Vec<Value> {
        vec![self.a.into(), self.b.clone().into(), self.c.clone().into()]
    }
}

impl Values for Nested {
    fn values(&self) -> Vec<Value> {
        let mut v = self.0.values();
        v.push(self.1.into());
        v.extend(self.2.values());
        v.push(self.3.clone().into());
        v
    }
}

fn inner() -> impl Strategy<Value = Inner> {
    (any::<i16>(), prop::option::of(any_str()), any_bytes()).prop_map(|(a, b, c)| Inner { a, b, c })
}

fn nested() -> impl Strategy<Value = Nested> {
    (inner(), any::<u8>(), inner(), any_str()).prop_map(|(a, b, c, d)| Nested(a, b, c, d))
}

/// A key that borrows its string encodes in both forms (it has no `decode`, so no
/// `decode_binary` either).
#[derive(PartitionKey, Debug)]
struct Borrowing<'a> {
    name: &'a str,
    #[pk(desc)]
    n: u32,
}

// ---- Every prefix ----------------------------------------------------------------------------

/// A hash prefix over the whole natural key.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh3, len = 4))]
struct HashKey {
    a: u32,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
    d: Inner,
}

/// A hash prefix of an odd number of hex digits over leading fields, a nested key among them.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 5, separator, fields(a, d)))]
struct HashLeading {
    a: u32,
    d: Inner,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
}

/// A modulo bucket over more than 256 buckets (two bytes), of a descending field.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 300, modulo = a))]
struct BucketModulo {
    #[pk(desc)]
    a: u32,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
    d: Inner,
}

/// A modulo bucket of a later field, with a separator (which the binary form does not write).
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = c, separator))]
struct BucketModuloLater {
    a: u32,
    #[pk(desc)]
    b: String,
    #[pk(width = 5)]
    c: i64,
    d: Inner,
}

/// A bucket hash over every field.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, hash))]
struct BucketHashAll {
    a: u32,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
    d: Inner,
}

/// A bucket hash over two runs of fields, a nested key in the second.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 12, hash(a, c, d)))]
struct BucketHashRuns {
    a: u32,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
    d: Inner,
}

/// `#[pk(form = binary)]`: the layout answers the binary form.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(form = binary, buckets(count = 4, hash(b)))]
struct BinaryForm {
    a: u32,
    #[pk(desc)]
    b: String,
    c: Option<i64>,
    d: Inner,
}

/// The values of the prefix structs whose fields are `a, b, c, d` in that order.
macro_rules! abcd_values {
    ($($ty:ident),*) => {$(
        impl Values for $ty {
            fn values(&self) -> Vec<Value> {
                let mut v = vec![self.a.into(), self.b.clone().into(), self.c.into()];
                v.extend(self.d.values());
                v
            }
        }
    )*};
}

abcd_values!(
    HashKey,
    BucketModulo,
    BucketModuloLater,
    BucketHashAll,
    BucketHashRuns,
    BinaryForm
);

impl Values for HashLeading {
    fn values(&self) -> Vec<Value> {
        let mut v = vec![self.a.into()];
        v.extend(self.d.values());
        v.extend([self.b.clone().into(), self.c.into()]);
        v
    }
}

/// The four fields every prefix struct has, as generated.
type Fields = (u32, String, Option<i64>, Inner);

fn fields() -> impl Strategy<Value = Fields> {
    (
        prop_oneof![0u32..3, any::<u32>()],
        any_str(),
        prop::option::of(-99_999i64..100_000),
        inner(),
    )
}

// ---- The checks ------------------------------------------------------------------------------

fn fail(e: pk_codec::Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// The binary key of `key`: what its runtime layout writes in the binary form, appended as
/// `encode_binary_into` appends it, and decoded back by the derive and the layout.
fn agrees<K: DecodeKey + Values>(key: &K, values: &[Value]) -> Result<Vec<u8>, TestCaseError> {
    let bin = key.encode_binary().map_err(fail)?;
    let layout: Layout = K::layout().with_form(Form::Binary);
    prop_assert_eq!(
        &layout.encode_bytes(values).map_err(fail)?,
        &bin,
        "layout `{}`",
        layout
    );
    let mut out = vec![0xab];
    key.encode_binary_into(&mut out).map_err(fail)?;
    prop_assert_eq!(&out[1..], &bin[..]);
    prop_assert_eq!(&K::decode_binary(&bin).map_err(fail)?.values(), values);
    prop_assert_eq!(&layout.decode_bytes(&bin).map_err(fail)?, values);
    Ok(bin)
}

/// Keys sort as their values do, field by field (descending fields reversed), among the keys
/// that share their first `prefix` bytes (a bucket); keys are equal exactly when values are.
fn ordered(
    layout: &Layout,
    rows: &[(Vec<Value>, Vec<u8>)],
    prefix: usize,
) -> Result<(), TestCaseError> {
    for (va, ka) in rows {
        for (vb, kb) in rows {
            prop_assert_eq!(va == vb, ka == kb, "{:?} {:?}", ka, kb);
            if ka[..prefix] == kb[..prefix] {
                let typed = typed_cmp(layout, va, vb);
                prop_assert_eq!(typed, ka.cmp(kb), "{:?} {:?} / {:?} {:?}", va, vb, ka, kb);
            }
        }
    }
    Ok(())
}

/// A damaged key either fails to decode or is the key of what it decodes to (canonical
/// decoding), and decoding never panics.
fn damaged<K: DecodeKey + Values>(
    key: &[u8],
    edits: &[support::Edit],
) -> Result<(), TestCaseError> {
    let mut bytes = key.to_vec();
    support::damage(&mut bytes, edits);
    if let Ok(decoded) = K::decode_binary(&bytes) {
        prop_assert_eq!(&decoded.encode_binary().map_err(fail)?, &bytes);
    }
    Ok(())
}

fn edits() -> impl Strategy<Value = Vec<support::Edit>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(200)))]

    #[test]
    fn every_kind_writes_the_layouts_binary_key_in_both_orders_and_optional(
        rows in prop::collection::vec(prop_oneof![row(), clustered_row()], 1..6),
        edits in edits(),
    ) {
        let mut asc = Vec::new();
        let mut desc = Vec::new();
        let mut opt = Vec::new();
        for r in &rows {
            let (a, d, o) = (r.asc(), r.desc(), r.opt());
            let ka = agrees(&a, &a.values())?;
            let kd = agrees(&d, &d.values())?;
            let ko = agrees(&o, &o.values())?;
            damaged::<Asc>(&ka, &edits)?;
            damaged::<Desc>(&kd, &edits)?;
            damaged::<Opt>(&ko, &edits)?;
            asc.push((a.values(), ka));
            desc.push((d.values(), kd));
            opt.push((o.values(), ko));
        }
        ordered(&Asc::layout(), &asc, 0)?;
        ordered(&Desc::layout(), &desc, 0)?;
        ordered(&Opt::layout(), &opt, 0)?;
    }

    #[test]
    fn nested_keys_are_their_fields_one_after_another(
        rows in prop::collection::vec(nested(), 1..8),
        edits in edits(),
    ) {
        let mut keys = Vec::new();
        for n in &rows {
            let key = agrees(n, &n.values())?;
            // The nested keys' own binary keys, one after another, then the outer fields.
            let mut spliced = n.0.encode_binary().map_err(fail)?;
            prop_assert!(key.starts_with(&spliced));
            spliced.push(!n.1);
            spliced.extend(n.2.encode_binary().map_err(fail)?);
            prop_assert!(key.starts_with(&spliced));
            damaged::<Nested>(&key, &edits)?;
            keys.push((n.values(), key));
        }
        ordered(&Nested::layout(), &keys, 0)?;
    }

    #[test]
    fn every_prefix_writes_the_layouts_binary_prefix(
        rows in prop::collection::vec(fields(), 1..8),
        edits in edits(),
    ) {
        let (mut hk, mut hl, mut bm, mut bl, mut ba, mut br, mut bf) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for (a, b, c, d) in &rows {
            let (a, b, c, d) = (*a, b.clone(), *c, d.clone());

            let k = HashKey { a, b: b.clone(), c, d: d.clone() };
            let v = k.values();
            hk.push((v.clone(), agrees(&k, &v)?));
            damaged::<HashKey>(&hk.last().unwrap().1, &edits)?;

            let k = HashLeading { a, d: d.clone(), b: b.clone(), c };
            let v = k.values();
            hl.push((v.clone(), agrees(&k, &v)?));
            damaged::<HashLeading>(&hl.last().unwrap().1, &edits)?;

            let k = BucketModulo { a, b: b.clone(), c, d: d.clone() };
            let v = k.values();
            let key = agrees(&k, &v)?;
            prop_assert_eq!(&key[..2], &u16::try_from(a % 300).unwrap().to_be_bytes()[..]);
            bm.push((v, key));
            damaged::<BucketModulo>(&bm.last().unwrap().1, &edits)?;

            let c5 = c.map_or(-7, |c| c % 10_000);
            let k = BucketModuloLater { a, b: b.clone(), c: c5, d: d.clone() };
            let v = k.values();
            let key = agrees(&k, &v)?;
            prop_assert_eq!(i64::from(key[0]), c5.rem_euclid(16));
            bl.push((v, key));
            damaged::<BucketModuloLater>(&bl.last().unwrap().1, &edits)?;

            let k = BucketHashAll { a, b: b.clone(), c, d: d.clone() };
            let v = k.values();
            ba.push((v.clone(), agrees(&k, &v)?));
            damaged::<BucketHashAll>(&ba.last().unwrap().1, &edits)?;

            let k = BucketHashRuns { a, b: b.clone(), c, d: d.clone() };
            let v = k.values();
            br.push((v.clone(), agrees(&k, &v)?));
            damaged::<BucketHashRuns>(&br.last().unwrap().1, &edits)?;

            let k = BinaryForm { a, b, c, d: d.clone() };
            let v = k.values();
            let key = agrees(&k, &v)?;
            // `form = binary`: the layout as it is, not only `with_form`, writes the binary key.
            prop_assert_eq!(&BinaryForm::layout().encode_bytes(&v).map_err(fail)?, &key);
            bf.push((v, key));
        }
        // Hash prefixes scatter the order: keys are distinct exactly when values are.
        distinct(&hk)?;
        distinct(&hl)?;
        // Within a bucket, keys sort as their values.
        ordered(&BucketModulo::layout(), &bm, 2)?;
        ordered(&BucketModuloLater::layout(), &bl, 1)?;
        ordered(&BucketHashAll::layout(), &ba, 1)?;
        ordered(&BucketHashRuns::layout(), &br, 1)?;
        ordered(&BinaryForm::layout(), &bf, 1)?;
    }

    #[test]
    fn a_borrowing_key_encodes_in_both_forms(name in any_str(), n in any::<u32>()) {
        let key = Borrowing { name: &name, n };
        let values = [Value::from(name.as_str()), Value::from(n)];
        let layout = Borrowing::layout().with_form(Form::Binary);
        let bin = key.encode_binary().map_err(fail)?;
        prop_assert_eq!(&layout.encode_bytes(&values).map_err(fail)?, &bin);
        prop_assert_eq!(&layout.decode_bytes(&bin).map_err(fail)?, &values[..]);
    }
}

/// Integer fields narrower than their types, both orders: the derive's fast paths and the
/// layout's general ones refuse the same values and read the same bytes.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Narrow {
    #[pk(width = 3)]
    a: u16,
    #[pk(width = 5, desc)]
    b: i32,
    #[pk(width = 2)]
    c: i8,
    #[pk(width = 19, desc)]
    d: u64,
    #[pk(width = 19)]
    e: i64,
}

values! {
    Narrow { a, b, c, d, e }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(500)))]

    #[test]
    fn narrow_integers_are_refused_and_read_alike_by_the_derive_and_the_layout(
        a in prop_oneof![0u16..1000, any::<u16>()],
        b in prop_oneof![-9999i32..10_000, any::<i32>()],
        c in any::<i8>(),
        d in prop_oneof![0u64..10_000_000_000_000_000_000, any::<u64>()],
        e in any::<i64>(),
        bytes in prop::collection::vec(any::<u8>(), 19..=19),
    ) {
        let k = Narrow { a, b, c, d, e };
        let layout = Narrow::layout().with_form(Form::Binary);
        let derived = k.encode_binary();
        let by_layout = layout.encode_bytes(&k.values()).ok();
        prop_assert_eq!(derived.as_ref().ok(), by_layout.as_ref());
        // Refused in the binary form exactly when refused in the text form.
        prop_assert_eq!(derived.is_ok(), k.encode().is_ok());
        // Any 19 bytes (the key's length): read alike, or refused alike at the same byte.
        match (Narrow::decode_binary(&bytes), layout.decode_bytes(&bytes)) {
            (Ok(n), Ok(v)) => {
                prop_assert_eq!(n.values(), v);
                prop_assert_eq!(&n.encode_binary().map_err(fail)?, &bytes);
            }
            (Err(x), Err(y)) => prop_assert_eq!(x.to_string(), y.to_string()),
            (x, y) => prop_assert!(false, "derive {:?}, layout {:?}", x, y),
        }
    }
}

/// Keys are equal exactly when their values are.
fn distinct(rows: &[(Vec<Value>, Vec<u8>)]) -> Result<(), TestCaseError> {
    for (va, ka) in rows {
        for (vb, kb) in rows {
            prop_assert_eq!(va == vb, ka == kb);
        }
    }
    Ok(())
}

#[test]
fn the_form_attribute_sets_the_layouts_form_and_nothing_else() {
    assert_eq!(BinaryForm::FORM, Form::Binary);
    assert_eq!(BinaryForm::layout().form(), Form::Binary);
    assert_eq!(Asc::FORM, Form::Text);
    assert_eq!(Asc::layout().form(), Form::Text);
    // The text key is the text layout's, whatever the form.
    let k = BinaryForm {
        a: 54,
        b: "a100".into(),
        c: None,
        d: Inner {
            a: -1,
            b: Some("x".into()),
            c: vec![1, 2],
        },
    };
    let values = k.values();
    let text = k.encode().unwrap();
    assert_eq!(
        BinaryForm::layout()
            .with_form(Form::Text)
            .encode(&values)
            .unwrap(),
        text
    );
    assert_eq!(BinaryForm::decode(&text).unwrap(), k);
    assert_eq!(
        BinaryForm::decode_binary(&k.encode_binary().unwrap()).unwrap(),
        k
    );
}

#[test]
fn the_student_card_is_its_fields_bytes() {
    #[derive(PartitionKey, Debug, PartialEq)]
    struct Card {
        #[pk(width = 6)]
        device_id: u32,
        seller_id: String,
        card_id: u64,
        order_number: u64,
    }
    let card = Card {
        device_id: 54,
        seller_id: "a100".into(),
        card_id: 6777,
        order_number: 200_001,
    };
    let key = card.encode_binary().unwrap();
    // Width 6: 999,999 fits 3 bytes.
    let mut expected = vec![0, 0, 54];
    expected.extend_from_slice(b"a100\0\x01");
    expected.extend_from_slice(&6777u64.to_be_bytes());
    expected.extend_from_slice(&200_001u64.to_be_bytes());
    assert_eq!(key, expected);
    assert_eq!(Card::decode_binary(&key).unwrap(), card);
    // Every error names the field and the byte.
    let err = Card::decode_binary(&key[..key.len() - 3]).unwrap_err();
    assert!(
        err.to_string().contains("order_number") && err.to_string().contains("byte 17"),
        "{err}"
    );
    // A value its field's width cannot hold is refused in the binary form as in the text form.
    let wide = Card {
        device_id: 1_000_000,
        ..card
    };
    assert!(matches!(
        wide.encode_binary(),
        Err(pk_codec::Error::ValueTooWide { .. })
    ));
    assert!(wide.encode().is_err());
}

#[test]
fn a_hand_written_key_without_a_binary_form_says_so() {
    struct Manual;
    impl PartitionKey for Manual {
        const SHAPE: pk_codec::KeyShape = pk_codec::KeyShape::new(b',');
        fn layout() -> Layout {
            "a: u8".parse().unwrap()
        }
        fn write_fields(&self, w: &mut pk_codec::KeyWriter<'_>) -> pk_codec::Result<()> {
            w.begin_field();
            w.uint64(&pk_codec::FieldSpec::of::<u8>(), "a", 1)
        }
        fn encode_into(&self, out: &mut String) -> pk_codec::Result<()> {
            Self::SHAPE.encode_with(out, |w| self.write_fields(w))
        }
    }
    let err = Manual.encode_binary().unwrap_err();
    assert!(err.to_string().contains("no binary form"), "{err}");
}
