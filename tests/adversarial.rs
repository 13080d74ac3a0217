//! Adversarial inputs through public APIs, from an audit for panics, hangs and unbounded
//! allocation: every case here once panicked, hung or allocated without bound (the comments say
//! where, and what the right answer is), or was suspicious and turned out fine. Each asserts the
//! specific error or bounded result the API now gives.

#![allow(missing_docs)]

use std::ops::{Bound, ControlFlow};
use std::process::Command;
use std::time::Duration;

mod support;

use support::pk_binary;

use pk_codec::store::{
    BulkOptions, BulkStats, MemoryStore, RangePage, RangeQuery, RangeStore, StoreError,
    StoreErrorKind, scan_ranges, simulate_import,
};
use pk_codec::table::{
    Heatmap, HeatmapOptions, ManualClock, Metric, PkValue, PrimaryKey, Schema, Table, TableError,
    TableOptions, split_points_by_size, split_points_even,
};
use pk_codec::{
    BucketBy, Error, FieldSpec, HashAlg, HashOver, IntBits, KeyRange, KeyShape, Kind, Layout,
    Order, Prefix, RangeBuilder, Rule, Separator, Value,
};

fn str_spec() -> FieldSpec {
    FieldSpec::new(Kind::Str)
}

fn hash_shape(len: u8) -> KeyShape {
    KeyShape::new(b',').with_prefix(Prefix::Hash {
        alg: HashAlg::Md5,
        len,
        separator: Separator::None,
        over: HashOver::Key,
    })
}

fn bucket_shape(count: u32) -> KeyShape {
    KeyShape::new(b',').with_prefix(Prefix::Bucket {
        count,
        by: BucketBy::Hash,
        separator: Separator::None,
    })
}

/// The rule a `BrokenRule` error names, and the field it names.
fn broken_rule<T: std::fmt::Debug>(r: &pk_codec::Result<T>) -> (Option<&str>, Rule) {
    match r {
        Err(Error::BrokenRule { field, rule }) => (field.as_deref(), *rule),
        other => panic!("expected a broken rule, got {other:?}"),
    }
}

fn encode_one(
    shape: &KeyShape,
    body: impl FnOnce(&mut pk_codec::KeyWriter<'_>) -> pk_codec::Result<()>,
) -> pk_codec::Result<String> {
    let mut out = String::new();
    shape.encode_with(&mut out, body).map(|()| out)
}

// ---- KeyShape built with its public const constructors, used without `check` ------------------
// `KeyShape::new(..).with_prefix(..)` is unchecked; `RangeBuilder::new` validates it, but
// `encode_with`, `decode_with` and `split_points` do not. Correct: `Error::BrokenRule` naming the
// rule (`shape.validate()?` first, or checked constructors).

#[test]
fn encode_with_a_hash_prefix_longer_than_its_digest_is_refused() {
    let r = encode_one(&hash_shape(200), |w| {
        w.begin_field();
        w.str(&str_spec(), "a", "x")
    });
    assert_eq!(broken_rule(&r), (None, Rule::HashLen { len: 200, max: 32 }));
}

#[test]
fn encode_with_zero_buckets_is_refused() {
    let r = encode_one(&bucket_shape(0), |w| {
        w.begin_field();
        w.str(&str_spec(), "a", "x")
    });
    assert_eq!(broken_rule(&r), (None, Rule::BucketCount { count: 0 }));
}

#[test]
fn decode_with_zero_buckets_is_refused() {
    let r = bucket_shape(0).decode_with("0x", |r| {
        r.begin_field("a")?;
        r.str(&str_spec(), "a")
    });
    assert_eq!(broken_rule(&r), (None, Rule::BucketCount { count: 0 }));
}

#[test]
fn split_points_of_zero_buckets_are_refused() {
    let r = bucket_shape(0).split_points(0);
    assert_eq!(broken_rule(&r), (None, Rule::BucketCount { count: 0 }));
}

/// A bucket prefix of a shape that breaks a rule is no key's prefix (such a shape encodes no
/// key): `bucket_prefix` answered a text for it anyway, e.g. with a non-ASCII delimiter as its
/// separator (half a character) or with more buckets than the rule allows.
#[test]
fn bucket_prefix_of_a_shape_that_breaks_a_rule_is_none() {
    let sep = |delimiter: u8, count: u32| {
        KeyShape::new(delimiter).with_prefix(Prefix::Bucket {
            count,
            by: BucketBy::Hash,
            separator: Separator::After,
        })
    };
    for (shape, bucket) in [(sep(0xC3, 2), 1), (sep(b',', pk_codec::MAX_BUCKETS + 1), 0)] {
        assert!(shape.check().is_err());
        let text = shape.bucket_prefix(bucket);
        assert_eq!(text, None, "{shape:?}");
        let r = encode_one(&shape, |w| {
            w.begin_field();
            w.str(&str_spec(), "a", "x")
        });
        assert!(matches!(r, Err(Error::BrokenRule { .. })), "{r:?}");
    }
    assert_eq!(sep(b',', 2).bucket_prefix(1).as_deref(), Some("1,"));
}

#[test]
fn decode_with_a_non_ascii_delimiter_is_refused() {
    // 0xA9 is the second byte of 'é'. Correct: BrokenRule { DelimiterNotAscii } before reading.
    let r = KeyShape::new(0xA9).decode_with("é", |r| {
        r.begin_field("a")?;
        r.bytes(&FieldSpec::new(Kind::Bytes), "a")
    });
    assert_eq!(
        broken_rule(&r),
        (
            None,
            Rule::DelimiterNotAscii {
                delimiter: '\u{a9}'
            }
        )
    );
}

// ---- KeyWriter / KeyReader with a FieldSpec that breaks the width rule -------------------------
// `FieldSpec::with_width` is unchecked and the writer methods take any spec. Correct:
// `Error::BrokenRule { rule: Rule::WidthRange { .. } }` (or `FieldSpec::validate` inside).

#[test]
fn writers_refuse_widths_outside_the_width_range_rule() {
    // Every width a spec can carry (0 to 255), for each writer: refused, naming the rule,
    // exactly outside the rule's range (1 to 40 digits; 2 to 40 characters signed), and the
    // value 1 written at every width inside it.
    let kinds = [
        (Kind::Int { bits: IntBits::B64 }, 2),
        (
            Kind::Int {
                bits: IntBits::B128,
            },
            2,
        ),
        (Kind::Uint { bits: IntBits::B64 }, 1),
        (
            Kind::Uint {
                bits: IntBits::B128,
            },
            1,
        ),
    ];
    for (kind, min) in kinds {
        for width in 0..=u8::MAX {
            let spec = FieldSpec::new(kind).with_width(width);
            let r = encode_one(&KeyShape::new(b','), |w| {
                w.begin_field();
                match kind {
                    Kind::Int {
                        bits: IntBits::B128,
                    } => w.int128(&spec, "a", 1),
                    Kind::Int { .. } => w.int64(&spec, "a", 1),
                    Kind::Uint {
                        bits: IntBits::B128,
                    } => w.uint128(&spec, "a", 1),
                    _ => w.uint64(&spec, "a", 1),
                }
            });
            if (min..=40).contains(&width) {
                let key = r.unwrap_or_else(|e| panic!("{kind:?} width {width}: {e}"));
                assert_eq!(key.len(), usize::from(width), "{kind:?} width {width}");
            } else {
                let rule = Rule::WidthRange {
                    width,
                    min,
                    max: 40,
                };
                assert_eq!(broken_rule(&r), (Some("a"), rule), "{kind:?} width {width}");
            }
        }
    }
}

// ---- bucket_span with a position the key does not have -----------------------------------------
// Correct: the span is refused (an `Error::InvalidLayout` from encode_with / decode_with).

#[test]
fn writer_bucket_spans_before_or_past_the_key_are_refused() {
    // The natural key starts at 1 (after the one-digit bucket) and ends at 2: a span may start
    // anywhere from 1 to 2, and every other start is refused.
    for start in (0..64).chain([usize::MAX]) {
        let r = encode_one(&bucket_shape(4), |w| {
            w.begin_field();
            w.str(&str_spec(), "a", "x")?;
            w.bucket_span(start);
            Ok(())
        });
        if (1..=2).contains(&start) {
            assert!(r.is_ok(), "{start}: {r:?}");
        } else {
            let refused = matches!(r, Err(Error::InvalidLayout { .. }));
            assert!(refused, "{start}: {r:?}");
        }
    }
}

/// A key past [`pk_codec::rules::MAX_KEY_LEN`] (4 GiB) whose bucket hashes a span ending past it: the
/// span's positions are 32 bits, so the span read back wrapped (end below start) and hashing it
/// sliced out of order, a panic, before the length was checked. Now the length is checked
/// first: `KeyTooLong`. Ignored by default: it writes a 4 GiB key (run with `--ignored`,
/// about 13 GB of memory, in release).
#[test]
#[ignore = "writes a key over 4 GiB"]
fn a_bucket_span_past_four_gib_is_a_key_too_long() {
    let shape = bucket_shape(4).with_max_len(pk_codec::rules::MAX_KEY_LEN);
    // Its end, 32-bit, wraps below its start (10): 10 + 2^32 - 5 = 2^32 + 5.
    let huge = "x".repeat(pk_codec::rules::MAX_KEY_LEN - 4);
    let r = encode_one(&shape, |w| {
        w.begin_field();
        w.str(&str_spec(), "a", "abcdefghi")?;
        w.begin_field();
        let start = w.position();
        w.str(&str_spec(), "b", &huge)?;
        w.bucket_span(start);
        Ok(())
    });
    assert!(
        matches!(r, Err(Error::KeyTooLong { .. })),
        "{:?}",
        r.map(|k| k.len())
    );
}

#[test]
fn reader_bucket_spans_before_or_past_the_key_are_refused() {
    // As for the writer: the natural key of "0x" is bytes 1 to 2. A span inside it is no
    // layout error (the bucket may then not match: a prefix mismatch); every other is.
    for start in (0..64).chain([usize::MAX]) {
        let r = bucket_shape(4).decode_with("0x", |r| {
            r.begin_field("a")?;
            let s = r.str(&str_spec(), "a")?;
            r.bucket_span(start);
            Ok(s)
        });
        let refused = matches!(r, Err(Error::InvalidLayout { .. }));
        assert_eq!(refused, !(1..=2).contains(&start), "{start}: {r:?}");
    }
}

// ---- Table model ------------------------------------------------------------------------------

/// A one-string-key table with one-millisecond load windows, on a clock at `now`.
fn one_ms_table(now: i64) -> (Result<Table, TableError>, ManualClock) {
    let clock = ManualClock::new(now);
    let t = Table::with_clock(
        Schema::single_string("pk").unwrap(),
        TableOptions::default().load_window_ms(1),
        clock.clone(),
    );
    (t, clock)
}

#[test]
fn table_with_a_clock_at_i64_max_is_created() {
    // Correct: the next window boundary saturates (as it does in `rotate`'s multiplication).
    let (t, _) = one_ms_table(i64::MAX);
    let t = t.unwrap();
    t.put("a", vec![]).unwrap();
    assert_eq!(t.stored_rows(), 1);
}

#[test]
fn table_put_at_i64_max_ms_works() {
    // Also reachable from the CLI: `pk analyze --window-ms 1 --time ts` with a ts of i64::MAX.
    let (t, clock) = one_ms_table(0);
    let t = t.unwrap();
    t.put("a", vec![]).unwrap();
    clock.set(i64::MAX);
    assert!(t.put("b", vec![]).is_ok());
}

#[test]
fn split_points_by_size_with_huge_sizes_works() {
    // Correct: saturating sums; a split before "b".
    let r = split_points_by_size(
        vec![("a".into(), u64::MAX), ("b".into(), u64::MAX)],
        u64::MAX,
    );
    assert_eq!(r.unwrap(), vec![PkValue::from("b")]);
}

#[test]
fn split_points_by_size_with_huge_sizes_of_one_value_works() {
    let r = split_points_by_size(vec![("a".into(), u64::MAX), ("a".into(), 1)], 10);
    assert_eq!(r.unwrap(), Vec::<PkValue>::new());
}

#[test]
fn split_points_even_with_a_huge_range_count_returns() {
    // Correct: at most `sample.len() - 1` points are possible, so loop over `ranges.min(n)`
    // (and compute `i * n / ranges` in u128, which overflows usize for large `ranges` too).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = split_points_even(vec!["a".into(), "b".into()], usize::MAX);
        let _ = tx.send(r.map(|v| v.len()));
    });
    let r = rx.recv_timeout(Duration::from_secs(5));
    assert_eq!(
        r.expect("returns at once").unwrap(),
        1,
        "the one point between a and b"
    );
}

#[test]
fn heatmap_columns_are_bounded_by_a_huge_max_columns() {
    // Two writes ~i64::MAX windows apart and `max_columns: usize::MAX`: the columns are capped at
    // `HeatmapOptions::MAX_COLUMNS` (each column then spans many windows), as are the bands.
    let (t, clock) = one_ms_table(0);
    let t = t.unwrap();
    t.put("a", vec![]).unwrap();
    clock.set(i64::MAX - 10);
    t.put("b", vec![]).unwrap();
    let h = t.heatmap(&HeatmapOptions {
        max_columns: usize::MAX,
        max_bands: usize::MAX,
        ..HeatmapOptions::default()
    });
    assert_eq!(h.columns_ms.len(), HeatmapOptions::MAX_COLUMNS);
    assert!(
        h.cells
            .iter()
            .all(|row| row.len() == HeatmapOptions::MAX_COLUMNS)
    );
    assert!(h.bands.len() <= HeatmapOptions::MAX_BANDS);
    // Both writes are counted: the first column holds the first, the last the second.
    assert_eq!(h.column_totals.iter().sum::<f64>(), 2.0);
    assert_eq!(h.column_totals[0], 1.0);
    assert_eq!(h.column_totals[HeatmapOptions::MAX_COLUMNS - 1], 1.0);
}

#[test]
fn heatmap_svg_of_a_hand_built_heatmap_does_not_panic() {
    // `Heatmap`'s fields are public: `to_svg` refuses inconsistent shapes with
    // `TableError::Render` naming them; `to_text` draws the rows that have a band.
    let h = Heatmap {
        title: "x".into(),
        metric: Metric::Ops,
        log_scale: false,
        bands: vec![],
        first_key: None,
        band_names: vec![],
        columns_ms: vec![],
        column_ms: 0,
        cells: vec![vec![1.0], vec![2.0]],
        band_totals: vec![],
        column_totals: vec![],
        boundaries: vec![],
        max: 2.0,
    };
    let text = h.to_text();
    assert!(text.starts_with("x\n"), "{text}");
    match h.to_svg(1100, 600) {
        Err(TableError::Render { reason }) => {
            assert!(reason.contains("2 rows of cells for 0 bands"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // One row per band, but a row longer than the time columns.
    let h = Heatmap {
        bands: vec![PkValue::InfMin, PkValue::from("m")],
        columns_ms: vec![0],
        cells: vec![vec![1.0], vec![1.0, 2.0]],
        ..h
    };
    match h.to_svg(1100, 600) {
        Err(TableError::Render { reason }) => assert!(
            reason.contains("row 1 of the heatmap's cells has 2 cells for 1 time columns"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn capacity_of_a_report_with_huge_loads_saturates() {
    let t = Table::single_string_key("pk", TableOptions::default()).unwrap();
    t.put("a", vec![]).unwrap();
    let mut r = t.report();
    let w = r.windows[0].clone();
    r.windows = vec![w.clone(), w];
    for w in &mut r.windows {
        w.max_ops = u64::MAX;
        w.ops = u64::MAX;
    }
    let c = r.capacity(1);
    assert_eq!(c.ticks, u64::MAX);
    assert_eq!(c.ideal_ticks, u64::MAX);
}

#[test]
fn inf_min_with_a_huge_column_count_does_not_allocate_it() {
    // A key has at most MAX_KEY_COLUMNS (4) columns: inf_min and inf_max cap the count there.
    let k = PrimaryKey::inf_min(usize::MAX);
    assert_eq!(
        k.values().to_vec(),
        vec![PkValue::InfMin; pk_codec::table::MAX_KEY_COLUMNS]
    );
    let k = PrimaryKey::inf_max(usize::MAX);
    assert_eq!(
        k.values().to_vec(),
        vec![PkValue::InfMax; pk_codec::table::MAX_KEY_COLUMNS]
    );
}

// ---- store ------------------------------------------------------------------------------------

struct ZeroPage(MemoryStore);

impl RangeStore for ZeroPage {
    fn max_page(&self) -> usize {
        0
    }
    fn reads_wait_on_io(&self) -> bool {
        false
    }
    fn put(&self, k: &str, v: &[u8]) -> Result<(), StoreError> {
        self.0.put(k, v)
    }
    fn get(&self, k: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(k)
    }
    fn delete(&self, k: &str) -> Result<bool, StoreError> {
        self.0.delete(k)
    }
    fn range(&self, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.0.range(q)
    }
}

#[test]
fn scan_ranges_on_a_store_with_max_page_zero_is_an_error() {
    // A `StoreError` of kind `Invalid` naming the store's max_page of 0.
    let s = ZeroPage(MemoryStore::default());
    let r = scan_ranges(
        &s,
        Prefix::None,
        &[KeyRange {
            start: String::new(),
            end: None,
        }],
        10,
        None,
        |_, _| ControlFlow::Continue(()),
    );
    let e = r.unwrap_err();
    assert_eq!(e.kind(), StoreErrorKind::Invalid);
    assert!(e.to_string().contains("max_page() is 0"), "{e}");
}

#[test]
fn simulate_import_with_a_huge_service_time_does_not_panic() {
    // The second request would start at Duration::MAX and end past it: `StoreError` Invalid.
    let s = MemoryStore::default();
    let opts = BulkOptions {
        workers: Some(1),
        max_batch_rows: Some(1),
        ..BulkOptions::default()
    };
    let rows = vec![("a".to_owned(), vec![]), ("b".to_owned(), vec![])];
    let e = simulate_import(&s, rows, &opts, Duration::MAX, |_| {}).unwrap_err();
    assert_eq!(e.kind(), StoreErrorKind::Invalid);
    assert!(
        e.to_string()
            .contains("the virtual time passes Duration::MAX"),
        "{e}"
    );
    // One request of Duration::MAX fits.
    let rows = vec![("a".to_owned(), vec![])];
    let sim = simulate_import(&s, rows, &opts, Duration::MAX, |_| {}).unwrap();
    assert_eq!(sim.elapsed, Duration::MAX);
}

#[test]
fn rows_lost_of_inconsistent_stats_saturates() {
    // The fields are public; a snapshot taken while workers run loads `added` before `written`,
    // so even the writer's own stats may have written > added (not reproduced here).
    let s = BulkStats {
        rows_written: 1,
        ..BulkStats::default()
    };
    assert_eq!(s.rows_lost(), 0);
}

// ---- the `pk` command line --------------------------------------------------------------------

#[test]
fn cli_encode_of_a_huge_timestamp_is_an_error() {
    // Exit status 1 with "field t: ... is not a timestamp (...)" (checked_mul).
    let out = Command::new(pk_binary())
        .args([
            "encode",
            "--spec",
            "t: timestamp",
            "170141183460469231731687303715884105727",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(
            "field t: \"170141183460469231731687303715884105727\" is not a timestamp \
             (milliseconds since 1970-01-01 UTC: too far from 1970"
        ),
        "{stderr}"
    );
}

#[test]
fn cli_analyze_with_a_time_of_i64_max_does_not_panic() {
    let dir = std::env::temp_dir().join(format!("pk-adversarial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("max_time.csv");
    std::fs::write(&csv, "k,ts\na,0\nb,9223372036854775807\n").unwrap();
    let out = Command::new(pk_binary())
        .args(["analyze"])
        .arg(&csv)
        .args(["--key", "k", "--time", "ts", "--window-ms", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

// ---- Checked and fine -------------------------------------------------------------------------

#[test]
fn unchecked_shapes_that_do_not_panic() {
    // A zero-bucket shape reads a bucket number as an error, not a division.
    assert!(bucket_shape(0).bucket_of_key("0").is_err());
    // A non-ASCII delimiter with an escaped string: an error, not a cut inside 'é'.
    let r = KeyShape::new(0xC3).decode_with("é,é", |r| {
        r.begin_field("a")?;
        r.str(&str_spec().escaped(), "a")
    });
    assert!(r.is_err());
    // A merge that skips a prefix length inside a multi-byte character falls back to the key.
    let merged: Vec<String> = bucket_shape(100)
        .merge_buckets(
            vec![vec!["é".to_owned()], vec!["aé".to_owned()]],
            |k: &String| k.as_str(),
        )
        .collect();
    assert_eq!(merged.len(), 2);
    // RangeBuilder validates its shape.
    assert!(RangeBuilder::new(&bucket_shape(0)).is_err());
    assert!(RangeBuilder::new(&hash_shape(200)).is_err());
    let shape = KeyShape::new(b',');
    let b = RangeBuilder::new(&shape).unwrap();
    assert!(
        b.finish(Bound::Included("é"), Bound::Excluded(""), Order::Asc)
            .is_ok()
    );
}

#[test]
fn layout_configs_with_extreme_numbers_are_refused() {
    for json in [
        r#"{"fields":[{"name":"a","type":"u64","width":255}]}"#,
        r#"{"fields":[{"name":"a","type":"u64","width":0}]}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"max_len":18446744073709551615}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"max_len":0}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"buckets","count":4294967295,"by":"hash"}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"buckets","count":0,"by":"hash"}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"hash","algorithm":"md5","len":255}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"delimiter":"é"}"#,
        r#"{"fields":[]}"#,
    ] {
        assert!(serde_json::from_str::<Layout>(json).is_err(), "{json}");
    }
    // `splits -n` at and above the cap are errors, not allocations.
    let l: Layout = "a: u64; buckets=10000:hash".parse().unwrap();
    assert!(l.shape().split_points(usize::MAX).is_err());
    let l: Layout = "a: u64; hash=md5:32".parse().unwrap();
    assert!(l.shape().split_points(usize::MAX).is_err());
    assert!(
        l.shape()
            .split_points(pk_codec::MAX_SPLIT_POINTS + 1)
            .is_err()
    );
}

#[test]
fn heatmap_svg_of_tiny_sizes_and_zero_options_renders() {
    let t = Table::single_string_key("pk", TableOptions::default()).unwrap();
    t.put("a", vec![]).unwrap();
    let h = t.heatmap(&HeatmapOptions {
        max_bands: 0,
        max_columns: 0,
        ..HeatmapOptions::default()
    });
    let _ = h.to_text();
    for (w, hh) in [(0, 0), (1, 1), (50, 50)] {
        assert!(h.to_svg(w, hh).is_ok());
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
