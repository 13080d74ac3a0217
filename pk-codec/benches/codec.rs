//! Codec benchmarks: the student-card key encoded and decoded by pk-codec (hand-written codec
//! calls, the runtime `Layout`, and the derive), against a tight hand-written encoder, `write!`,
//! `format!`, `split` + `parse` and the binary peers `storekey` and `memcomparable`; hash and bucket
//! prefixes; the bucket merge against a sort. Every baseline is checked to write the crate's bytes
//! (the binary peers: to round-trip the rows) before anything is timed.
//!
//! Criterion runs the cases one after another; the ratios in BENCHMARKS.md come from the
//! interleaved harness `benches/ratios.rs`.
//!
//! Every case runs over the same 1,000 seeded rows per iteration: divide a median by 1,000 for the
//! cost of one key (`cargo run --example bench_report` does this and writes BENCHMARKS.md).

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

mod cards;

use std::hint::black_box;

use cards::{
    BucketCard, Card, DerivedCard, Md5Card, ModuloCard, Xxh3Card, decode_borrowed, decode_by_hand,
    decode_split, encode_by_hand, encode_tight, encode_write,
};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pk_codec::{DecodeKey, HashAlg, Layout, PartitionKey, Value, merge_sorted_by};
use serde::Serialize;

const ROWS: usize = 1_000;

fn rows() -> Vec<Card> {
    let rows = cards::rows(ROWS);
    // Before timing anything: the baselines write the crate's bytes and the peers round-trip.
    cards::check_baselines(&rows);
    rows
}

fn encode(c: &mut Criterion) {
    let rows = rows();
    let layout = cards::layout();
    let values: Vec<Vec<Value>> = rows.iter().map(cards::values).collect();
    let derived_rows: Vec<DerivedCard> = rows.iter().map(DerivedCard::from).collect();
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
                encode_by_hand(black_box(r), &mut s).unwrap();
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
    g.bench_function("tight hand-written (same bytes, no checks)", |b| {
        b.iter(|| {
            for r in &rows {
                v.clear();
                encode_tight(black_box(r), &mut v);
                black_box(&v);
            }
        });
    });
    g.bench_function("write! (same widths)", |b| {
        b.iter(|| {
            for r in &rows {
                s.clear();
                encode_write(black_box(r), &mut s);
                black_box(&s);
            }
        });
    });
    g.bench_function("format! (same widths)", |b| {
        b.iter(|| {
            for r in &rows {
                let r = black_box(r);
                black_box(format!(
                    "{:06},{},{:020},{:020}",
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
    let layout = cards::layout();
    let keys: Vec<String> = rows.iter().map(cards::natural_key).collect();
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
    g.bench_function("pk_codec borrowed (&str seller)", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(decode_borrowed(black_box(k)).unwrap());
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
    g.bench_function(
        "pk_codec Layout decode_into (one Vec overwritten in place)",
        |b| {
            let mut values = Vec::new();
            b.iter(|| {
                for k in &keys {
                    layout.decode_into(black_box(k), &mut values).unwrap();
                    black_box(&values);
                }
            });
        },
    );
    g.bench_function("split + parse", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(decode_split(black_box(k)).unwrap());
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
            let typed: Vec<$ty> = rows.iter().map($ty::from).collect();
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
    case!("16 buckets (order_number % 16)", ModuloCard);
    // One hash of the natural key alone: the bound a hash prefix is held to (plus 5 ns).
    let keys: Vec<String> = rows.iter().map(cards::natural_key).collect();
    g.bench_function("xxh3 of the key alone", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(xxhash_rust::xxh3::xxh3_64(black_box(k.as_bytes())));
            }
        });
    });
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
