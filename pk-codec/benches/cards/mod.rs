//! The student-card key and its baselines, shared by the criterion benches (`codec.rs`) and the
//! interleaved ratio harness (`ratios.rs`).
//!
//! Every baseline here is checked before anything is timed: [`check_baselines`] asserts that the
//! text baselines write exactly the crate's bytes and that the binary peers decode to the same
//! values.

#![allow(dead_code, unreachable_pub)] // Each bench uses a different part of this module.

use std::fmt::Write as _;

use pk_codec::{
    DecodeKey, FieldSpec, Form, IntBits, KeyReader, KeyShape, Kind, Layout, PartitionKey, Result,
    Value,
};
use serde::{Deserialize, Serialize};

/// The student-card key, for the peers (serde for memcomparable, storekey's own derive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, storekey::Encode, storekey::Decode)]
pub struct Card {
    pub device_id: u32,
    pub seller_id: String,
    pub card_id: u64,
    pub order_number: u64,
}

/// The same key through our derive (u64 fields at their default width, 20).
#[derive(Debug, Clone, PartialEq, PartitionKey)]
pub struct DerivedCard {
    #[pk(width = 6)]
    pub device_id: u32,
    pub seller_id: String,
    pub card_id: u64,
    pub order_number: u64,
}

/// A decoded card whose seller borrows from the key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CardRef<'a> {
    pub device_id: u32,
    pub seller_id: &'a str,
    pub card_id: u64,
    pub order_number: u64,
}

macro_rules! prefixed_card {
    ($(#[$attr:meta])* $name:ident) => {
        #[derive(Debug, Clone, PartialEq, PartitionKey)]
        $(#[$attr])*
        pub struct $name {
            #[pk(width = 6)]
            pub device_id: u32,
            pub seller_id: String,
            pub card_id: u64,
            pub order_number: u64,
        }

        impl From<&Card> for $name {
            fn from(c: &Card) -> Self {
                Self {
                    device_id: c.device_id,
                    seller_id: c.seller_id.clone(),
                    card_id: c.card_id,
                    order_number: c.order_number,
                }
            }
        }
    };
}

prefixed_card!(
    /// Four hex characters of XXH3 of the natural key in front.
    #[pk(hash(xxh3, len = 4))]
    Xxh3Card
);
prefixed_card!(
    /// Four hex characters of MD5 of the natural key in front.
    #[pk(hash(md5, len = 4))]
    Md5Card
);
prefixed_card!(
    /// 16 buckets by XXH3 of the natural key.
    #[pk(buckets(count = 16, hash))]
    BucketCard
);
prefixed_card!(
    /// 16 buckets by `order_number % 16`.
    #[pk(buckets(count = 16, modulo = order_number))]
    ModuloCard
);

impl From<&Card> for DerivedCard {
    fn from(c: &Card) -> Self {
        Self {
            device_id: c.device_id,
            seller_id: c.seller_id.clone(),
            card_id: c.card_id,
            order_number: c.order_number,
        }
    }
}

/// `count` seeded rows: a small linear congruential generator keeps the benches free of a rand
/// dependency. Sellers are `a` and 3 to 7 digits (4 to 8 characters), device ids below 10^6,
/// card ids below 10^10, order numbers from 200,000.
pub fn rows(count: usize) -> Vec<Card> {
    let mut state: u64 = 0x5eed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 17
    };
    (0..count)
        .map(|_| {
            let seller_len = 4 + (next() % 5) as usize;
            let seller: String = (0..seller_len)
                .map(|i| {
                    if i == 0 {
                        'a'
                    } else {
                        char::from(b'0' + (next() % 10) as u8)
                    }
                })
                .collect();
            Card {
                device_id: (next() % 1_000_000) as u32,
                seller_id: seller,
                card_id: next() % 10_000_000_000,
                order_number: 200_000 + next() % 10_000_000,
            }
        })
        .collect()
}

/// The runtime layout of the same key.
pub fn layout() -> Layout {
    "device_id: u32 width=6; seller_id: str; card_id: u64; order_number: u64"
        .parse()
        .expect("the student-card layout parses")
}

/// A row as the runtime layout's values.
pub fn values(c: &Card) -> Vec<Value> {
    vec![
        c.device_id.into(),
        c.seller_id.as_str().into(),
        c.card_id.into(),
        c.order_number.into(),
    ]
}

pub const SHAPE: KeyShape = KeyShape::new(b',');
pub const DEVICE: FieldSpec = FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6);
pub const SELLER: FieldSpec = FieldSpec::new(Kind::Str);
pub const U64: FieldSpec = FieldSpec::new(Kind::Uint { bits: IntBits::B64 });

/// What a hand-written user of the codec's primitives writes.
#[inline]
pub fn encode_by_hand(c: &Card, out: &mut String) -> Result<()> {
    SHAPE.encode_with(out, |w| {
        w.begin_field();
        w.uint64(&DEVICE, "device_id", u64::from(c.device_id))?;
        w.begin_field();
        w.str(&SELLER, "seller_id", &c.seller_id)?;
        w.begin_field();
        w.uint64(&U64, "card_id", c.card_id)?;
        w.begin_field();
        w.uint64(&U64, "order_number", c.order_number)
    })
}

/// The owned decode by hand (what the derive generates).
#[inline]
pub fn decode_by_hand(key: &str) -> Result<Card> {
    SHAPE.decode_with(key, |r| {
        r.begin_field("device_id")?;
        let device_id = r.uint64(&DEVICE, "device_id", u32::MAX.into())? as u32;
        r.begin_field("seller_id")?;
        let seller_id = r.str(&SELLER, "seller_id")?;
        r.begin_field("card_id")?;
        let card_id = r.uint64(&U64, "card_id", u64::MAX)?;
        r.begin_field("order_number")?;
        let order_number = r.uint64(&U64, "order_number", u64::MAX)?;
        Ok(Card {
            device_id,
            seller_id,
            card_id,
            order_number,
        })
    })
}

#[inline]
fn read_ref<'a>(r: &mut KeyReader<'a>) -> Result<CardRef<'a>> {
    r.begin_field("device_id")?;
    let device_id = r.uint64(&DEVICE, "device_id", u32::MAX.into())? as u32;
    r.begin_field("seller_id")?;
    let seller_id = r.str_ref(&SELLER, "seller_id")?;
    r.begin_field("card_id")?;
    let card_id = r.uint64(&U64, "card_id", u64::MAX)?;
    r.begin_field("order_number")?;
    let order_number = r.uint64(&U64, "order_number", u64::MAX)?;
    Ok(CardRef {
        device_id,
        seller_id,
        card_id,
        order_number,
    })
}

/// The borrowing decode by hand: the seller as a `&str` into the key (what a borrowing derive
/// would generate).
#[inline]
pub fn decode_borrowed(key: &str) -> Result<CardRef<'_>> {
    SHAPE.decode_with(key, read_ref)
}

/// `write!` with the widths the crate writes: device id at 6, the u64s at 20.
#[inline]
pub fn encode_write(c: &Card, out: &mut String) {
    write!(
        out,
        "{:06},{},{:020},{:020}",
        c.device_id, c.seller_id, c.card_id, c.order_number
    )
    .expect("writing to a String cannot fail");
}

static PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `v` in exactly `W` digits, the classic way (itoa's): two digits at a time from a 200-byte
/// table, right to left, into a stack buffer pre-filled with `0`s; then one copy.
#[inline(always)]
fn push_fixed<const W: usize>(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [b'0'; W];
    let mut pos = W;
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        buf[pos - 2..pos].copy_from_slice(&PAIRS[p..p + 2]);
    } else if v > 0 {
        buf[pos - 1] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf);
}

/// The tight hand-written encoder: the same bytes as the crate, with no checks at all (no width
/// check, no delimiter check, no length limit) into a `Vec<u8>` (no UTF-8 bookkeeping). The floor
/// the derive's encode is held to.
#[inline]
pub fn encode_tight(c: &Card, out: &mut Vec<u8>) {
    push_fixed::<6>(out, u64::from(c.device_id));
    out.push(b',');
    out.extend_from_slice(c.seller_id.as_bytes());
    out.push(b',');
    push_fixed::<20>(out, c.card_id);
    out.push(b',');
    push_fixed::<20>(out, c.order_number);
}

/// Eight ASCII digits of `x < 10^8` in one little-endian word, without a division chain (the
/// multiply-and-mask method the crate also uses; a hand-written copy, so the floor owes nothing to
/// the crate).
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    let halves = (x / 10_000) | ((x % 10_000) << 32);
    let hi = ((halves * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = ((halves - 100 * hi) << 16) | hi;
    let hi = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    (((pairs - 10 * hi) << 8) | hi) | 0x3030_3030_3030_3030
}

/// The tightest hand-written encoder we know: [`encode_tight`] with the digits written eight at a
/// time ([`eight_digits`]) instead of two at a time. The same bytes, no checks.
#[inline]
pub fn encode_tight_swar(c: &Card, out: &mut Vec<u8>) {
    const E8: u64 = 100_000_000;
    let device = eight_digits(u64::from(c.device_id)).to_le_bytes();
    out.extend_from_slice(&device[2..]);
    out.push(b',');
    out.extend_from_slice(c.seller_id.as_bytes());
    for v in [c.card_id, c.order_number] {
        out.push(b',');
        let top = eight_digits(v / (E8 * E8)).to_le_bytes();
        out.extend_from_slice(&top[4..]);
        out.extend_from_slice(&eight_digits((v / E8) % E8).to_le_bytes());
        out.extend_from_slice(&eight_digits(v % E8).to_le_bytes());
    }
}

/// The naive text decode: `split(',')` and `str::parse`.
#[inline]
pub fn decode_split(key: &str) -> Option<Card> {
    let mut it = key.split(',');
    let card = Card {
        device_id: it.next()?.parse().ok()?,
        seller_id: it.next()?.to_owned(),
        card_id: it.next()?.parse().ok()?,
        order_number: it.next()?.parse().ok()?,
    };
    it.next().is_none().then_some(card)
}

/// The natural key's bytes hashed by a hash prefix, for the "one hash of the hashed bytes" bound.
pub fn natural_key(c: &Card) -> String {
    DerivedCard::from(c).encode().expect("the rows encode")
}

/// Asserts, before anything is timed, that every baseline is honest: the text baselines write
/// exactly the crate's bytes, every decode returns the row, and the binary peers and the derive's
/// binary form round-trip it (the binary form also as the runtime layout writes it).
/// Returns the mean key sizes: (text, storekey, memcomparable, the derive's binary form).
pub fn check_baselines(rows: &[Card]) -> (f64, f64, f64, f64) {
    let layout = layout();
    let binary = layout.clone().with_form(Form::Binary);
    let (mut text, mut sk_len, mut mc_len, mut bin_len) = (0usize, 0usize, 0usize, 0usize);
    // One vector for every row, as the `decode_into` case passes it: overwritten, never cleared.
    let mut reused = Vec::new();
    for c in rows {
        let derived = DerivedCard::from(c);
        let key = derived.encode().expect("the rows encode");
        let mut s = String::new();
        encode_by_hand(c, &mut s).expect("by hand encodes");
        assert_eq!(s, key, "by hand");
        assert_eq!(
            layout.encode(&values(c)).expect("layout encodes"),
            key,
            "Layout"
        );
        s.clear();
        encode_write(c, &mut s);
        assert_eq!(s, key, "write! with widths");
        let mut v = Vec::new();
        encode_tight(c, &mut v);
        assert_eq!(v, key.as_bytes(), "tight encoder");
        v.clear();
        encode_tight_swar(c, &mut v);
        assert_eq!(v, key.as_bytes(), "tight encoder, eight digits at a time");
        assert_eq!(DerivedCard::decode(&key).expect("derive decodes"), derived);
        assert_eq!(decode_by_hand(&key).expect("by hand decodes"), *c);
        let r = decode_borrowed(&key).expect("borrowed decodes");
        assert_eq!(
            (r.device_id, r.seller_id, r.card_id, r.order_number),
            (c.device_id, c.seller_id.as_str(), c.card_id, c.order_number)
        );
        assert_eq!(decode_split(&key).as_ref(), Some(c), "split + parse");
        assert_eq!(layout.decode(&key).expect("layout decodes"), values(c));
        layout
            .decode_into(&key, &mut reused)
            .expect("layout decodes into a vector");
        assert_eq!(
            reused,
            values(c),
            "decode_into over the previous row's values"
        );
        let sk = storekey::encode_vec(c).expect("storekey encodes");
        assert_eq!(storekey::decode::<_, Card>(&sk[..]).expect("storekey"), *c);
        let mc = memcomparable::to_vec(c).expect("memcomparable encodes");
        assert_eq!(
            memcomparable::from_slice::<Card>(&mc).expect("memcomparable"),
            *c
        );
        let bin = derived
            .encode_binary()
            .expect("the rows encode in the binary form");
        assert_eq!(
            DerivedCard::decode_binary(&bin).expect("the binary form decodes"),
            derived
        );
        assert_eq!(
            binary.encode_bytes(&values(c)).expect("layout encodes"),
            bin,
            "binary Layout"
        );
        text += key.len();
        sk_len += sk.len();
        mc_len += mc.len();
        bin_len += bin.len();
    }
    let n = rows.len().max(1) as f64;
    (
        text as f64 / n,
        sk_len as f64 / n,
        mc_len as f64 / n,
        bin_len as f64 / n,
    )
}
