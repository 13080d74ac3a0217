//! Codec benchmarks: the student-card key encoded and decoded by pk-codec (hand-written codec
//! calls, the runtime `Layout`, and the derive), against `write!`, `format!` and the binary peers
//! `storekey` and `memcomparable`; hash and bucket prefixes; the bucket merge against a sort.
//!
//! Every case runs over the same 1,000 seeded rows per iteration: divide a median by 1,000 for the
//! cost of one key (`cargo run --example bench_report` does this and writes BENCHMARKS.md).

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pk_codec::{
    DecodeKey, FieldSpec, HashAlg, KeyShape, Kind, Layout, PartitionKey, Result, Value,
    merge_sorted_by,
};
use serde::{Deserialize, Serialize};

const ROWS: usize = 1_000;

/// The student-card key, for the peers (serde for memcomparable, storekey's own derive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, storekey::Encode, storekey::Decode)]
struct Card {
    device_id: u32,
    seller_id: String,
    card_id: u64,
    order_number: u64,
}

/// The same key through our derive.
#[derive(Debug, Clone, PartialEq, PartitionKey)]
struct DerivedCard {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    card_id: u64,
    order_number: u64,
}

/// And with prefixes.
#[derive(Debug, Clone, PartialEq, PartitionKey)]
#[pk(hash(xxh3, len = 4))]
struct Xxh3Card {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    card_id: u64,
    order_number: u64,
}

#[derive(Debug, Clone, PartialEq, PartitionKey)]
#[pk(hash(md5, len = 4))]
struct Md5Card {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    card_id: u64,
    order_number: u64,
}

#[derive(Debug, Clone, PartialEq, PartitionKey)]
#[pk(buckets(count = 16, hash))]
struct BucketCard {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    card_id: u64,
    order_number: u64,
}

/// Seeded rows: a small linear congruential generator keeps the bench free of a rand dependency.
fn rows() -> Vec<Card> {
    let mut state: u64 = 0x5eed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 17
    };
    (0..ROWS)
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

const SHAPE: KeyShape = KeyShape::new(b',');
const DEVICE: FieldSpec = FieldSpec::new(Kind::Uint { bits: 32 }).with_width(6);
const SELLER: FieldSpec = FieldSpec::new(Kind::Str);
const U64: FieldSpec = FieldSpec::new(Kind::Uint { bits: 64 });

/// What a hand-written user of the codec's primitives writes.
fn encode_by_hand(shape: &KeyShape, c: &Card, out: &mut String) -> Result<()> {
    shape.encode_with(out, |w| {
        w.begin_field();
        w.uint(&DEVICE, "device_id", u64::from(c.device_id))?;
        w.begin_field();
        w.str(&SELLER, "seller_id", &c.seller_id)?;
        w.begin_field();
        w.uint(&U64, "card_id", c.card_id)?;
        w.begin_field();
        w.uint(&U64, "order_number", c.order_number)
    })
}

fn decode_by_hand(key: &str) -> Result<Card> {
    SHAPE.decode_with(key, |r| {
        r.begin_field("device_id")?;
        let device_id = r.uint(&DEVICE, "device_id", u32::MAX.into())? as u32;
        r.begin_field("seller_id")?;
        let seller_id = r.str(&SELLER, "seller_id")?;
        r.begin_field("card_id")?;
        let card_id = r.uint(&U64, "card_id", u64::MAX.into())? as u64;
        r.begin_field("order_number")?;
        let order_number = r.uint(&U64, "order_number", u64::MAX.into())? as u64;
        Ok(Card {
            device_id,
            seller_id,
            card_id,
            order_number,
        })
    })
}

fn derived(c: &Card) -> DerivedCard {
    DerivedCard {
        device_id: c.device_id,
        seller_id: c.seller_id.clone(),
        card_id: c.card_id,
        order_number: c.order_number,
    }
}

fn encode(c: &mut Criterion) {
    let rows = rows();
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64; order_number: u64"
        .parse()
        .unwrap();
    let values: Vec<Vec<Value>> = rows
        .iter()
        .map(|r| {
            vec![
                r.device_id.into(),
                r.seller_id.as_str().into(),
                r.card_id.into(),
                r.order_number.into(),
            ]
        })
        .collect();
    let derived_rows: Vec<DerivedCard> = rows.iter().map(derived).collect();
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(ROWS as u64));
    let mut s = String::with_capacity(128);
    let mut v: Vec<u8> = Vec::with_capacity(128);
    g.bench_function("pk_codec derive", |b| {
        b.iter(|| {
            for r in &derived_rows {
                s.clear();
                black_box(r).encode_into(&mut s).unwrap();
                black_box(&s);
            }
        });
    });
    g.bench_function("pk_codec by hand", |b| {
        b.iter(|| {
            for r in &rows {
                s.clear();
                encode_by_hand(&SHAPE, black_box(r), &mut s).unwrap();
                black_box(&s);
            }
        });
    });
    g.bench_function("pk_codec Layout", |b| {
        b.iter(|| {
            for r in &values {
                s.clear();
                layout.encode_into(black_box(r), &mut s).unwrap();
                black_box(&s);
            }
        });
    });
    g.bench_function("write! splice", |b| {
        b.iter(|| {
            for r in &rows {
                s.clear();
                let r = black_box(r);
                write!(
                    s,
                    "{:06},{},{},{}",
                    r.device_id, r.seller_id, r.card_id, r.order_number
                )
                .unwrap();
                black_box(&s);
            }
        });
    });
    g.bench_function("format! splice", |b| {
        b.iter(|| {
            for r in &rows {
                let r = black_box(r);
                black_box(format!(
                    "{:06},{},{},{}",
                    r.device_id, r.seller_id, r.card_id, r.order_number
                ));
            }
        });
    });
    g.bench_function("storekey (binary)", |b| {
        b.iter(|| {
            for r in &rows {
                v.clear();
                storekey::encode(&mut v, black_box(r)).unwrap();
                black_box(&v);
            }
        });
    });
    g.bench_function("memcomparable (binary)", |b| {
        b.iter(|| {
            for r in &rows {
                v.clear();
                let mut ser = memcomparable::Serializer::new(&mut v);
                black_box(r).serialize(&mut ser).unwrap();
                black_box(&v);
            }
        });
    });
    g.finish();
}

fn decode(c: &mut Criterion) {
    let rows = rows();
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64; order_number: u64"
        .parse()
        .unwrap();
    let keys: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut s = String::new();
            encode_by_hand(&SHAPE, r, &mut s).unwrap();
            s
        })
        .collect();
    let sk: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| storekey::encode_vec(r).unwrap())
        .collect();
    let mc: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| memcomparable::to_vec(r).unwrap())
        .collect();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("pk_codec derive", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(DerivedCard::decode(black_box(k)).unwrap());
            }
        });
    });
    g.bench_function("pk_codec by hand", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(decode_by_hand(black_box(k)).unwrap());
            }
        });
    });
    g.bench_function("pk_codec Layout", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(layout.decode(black_box(k)).unwrap());
            }
        });
    });
    g.bench_function("storekey (binary)", |b| {
        b.iter(|| {
            for k in &sk {
                black_box(storekey::decode::<_, Card>(black_box(&k[..])).unwrap());
            }
        });
    });
    g.bench_function("memcomparable (binary)", |b| {
        b.iter(|| {
            for k in &mc {
                black_box(memcomparable::from_slice::<Card>(black_box(k)).unwrap());
            }
        });
    });
    g.finish();
}

fn prefixes(c: &mut Criterion) {
    let rows = rows();
    let mut g = c.benchmark_group("prefix");
    g.throughput(Throughput::Elements(ROWS as u64));
    let mut s = String::with_capacity(128);
    macro_rules! case {
        ($name:literal, $ty:ident) => {
            let typed: Vec<$ty> = rows
                .iter()
                .map(|c| $ty {
                    device_id: c.device_id,
                    seller_id: c.seller_id.clone(),
                    card_id: c.card_id,
                    order_number: c.order_number,
                })
                .collect();
            g.bench_function($name, |b| {
                b.iter(|| {
                    for r in &typed {
                        s.clear();
                        black_box(r).encode_into(&mut s).unwrap();
                        black_box(&s);
                    }
                });
            });
        };
    }
    case!("none (derive)", DerivedCard);
    case!("xxh3 4 hex", Xxh3Card);
    case!("md5 4 hex", Md5Card);
    case!("16 buckets (xxh3)", BucketCard);
    // One MD5 of a key-sized input alone, the bound the MD5 prefix is held to.
    let keys: Vec<String> = rows.iter().map(|r| derived(r).encode().unwrap()).collect();
    g.bench_function("md5 of the key alone", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(HashAlg::Md5.hex_prefix(black_box(k.as_bytes()), 4));
            }
        });
    });
    g.finish();
}

fn merge(c: &mut Criterion) {
    const STREAMS: usize = 16;
    const PER: usize = 10_000;
    let layout: Layout = "ts: u64 width=13; buckets=16:mod(ts):sep".parse().unwrap();
    let mut streams: Vec<Vec<String>> = (0..STREAMS).map(|_| Vec::with_capacity(PER)).collect();
    for ts in 1_700_000_000_000u64..1_700_000_000_000 + (STREAMS * PER) as u64 {
        let key = layout.encode(&[ts.into()]).unwrap();
        streams[(ts % STREAMS as u64) as usize].push(key);
    }
    let mut g = c.benchmark_group("merge 16 x 10,000");
    g.throughput(Throughput::Elements((STREAMS * PER) as u64));
    g.bench_function("merge_buckets", |b| {
        b.iter_batched(
            || streams.clone(),
            |streams| {
                black_box(
                    layout
                        .shape()
                        .merge_buckets(streams, |k: &String| k.as_str())
                        .collect::<Vec<_>>(),
                )
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("collect and sort", |b| {
        b.iter_batched(
            || streams.clone(),
            |streams| {
                let mut all: Vec<String> = streams.into_iter().flatten().collect();
                all.sort_unstable_by(|a, b| a[3..].cmp(&b[3..]));
                black_box(all)
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("merge_sorted_by (integers)", |b| {
        let ints: Vec<Vec<u64>> = (0..STREAMS as u64)
            .map(|s| (0..PER as u64).map(|i| i * STREAMS as u64 + s).collect())
            .collect();
        b.iter_batched(
            || ints.clone(),
            |ints| black_box(merge_sorted_by(ints, u64::cmp).collect::<Vec<_>>()),
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group!(benches, encode, decode, prefixes, merge);
criterion_main!(benches);
