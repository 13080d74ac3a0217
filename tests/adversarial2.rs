//! Adversarial inputs, second pass (after `tests/adversarial.rs`): the table model at its
//! limits, `Layout` ranges and encodings at type extremes, big layout configs, the bulk writer's
//! options, the `pk analyze` readers and derived keys at the edges of their rules.
//!
//! Some tests here were real problems found by this pass (each comment says what failed and
//! what is right: a bulk writer reserving a huge batch, `pk analyze` looping on an unreadable
//! input or reading an endless line whole, a layout's duplicate-name check in quadratic time);
//! the others were suspicious and turned out fine, and stay as coverage.

#![allow(missing_docs)]

use std::io::Write;
use std::ops::Bound;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;

use support::pk_binary;

use pk_codec::store::{BulkOptions, BulkWriter, MemoryStore, StoreErrorKind};
use pk_codec::table::{
    Attribute, AttributeValue, HeatmapOptions, HotspotMeter, MAX_BATCH_ROWS, ManualClock, PkColumn,
    PkType, PkValue, PrimaryKey, RangeRequest, ReadOptions, RowWrite, Schema, Table, TableError,
    TableOptions, UpdateOp,
};
use pk_codec::{Error, Layout, Value};

fn table(options: TableOptions, now: i64) -> (Table, ManualClock) {
    let clock = ManualClock::new(now);
    let t = Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone());
    (t.unwrap(), clock)
}

// ---- Real problems ----------------------------------------------------------------------------

#[test]
fn bulk_writer_with_a_huge_max_batch_rows_does_not_panic() {
    // `BulkOptions::check` accepts any `max_batch_rows` above 0, and `RangeStore::max_batch`
    // defaults to usize::MAX (MemoryStore, RedbStore), so `batch_rows` is the user's number and
    // each lane's staging Vec reserves it up front. usize::MAX panics ("capacity overflow");
    // 1 << 28 rows x 1024 workers reserves terabytes (an abort, not a panic, once touched or
    // refused by the allocator). Correct: either `StoreErrorKind::Invalid` from `check` for a
    // `max_batch_rows` above a documented cap (as `workers` and `queue_rows` have), or no
    // up-front reservation beyond a small bound (`Vec::new()`, or `batch_rows.min(1024)`).
    let r = std::panic::catch_unwind(|| {
        BulkWriter::new(
            Arc::new(MemoryStore::default()),
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(usize::MAX),
                ..BulkOptions::default()
            },
        )
        .map(BulkWriter::close)
    });
    match r {
        Ok(Ok(stats)) => assert_eq!(stats.rows_written, 0),
        Ok(Err(e)) => assert_eq!(e.kind(), StoreErrorKind::Invalid, "{e}"),
        Err(_) => panic!("BulkWriter::new panicked on max_batch_rows = usize::MAX"),
    }
}

#[test]
fn cli_analyze_lines_of_an_unreadable_input_stops() {
    // `pk analyze --lines DIR`: File::open of a directory succeeds on Linux, every read fails
    // with EISDIR, and BufRead::lines never ends. The same holds for any persistent read error
    // (EIO on a bad disk, a closed socket). Correct: an I/O error is not a malformed row: stop
    // with exit status 1 and "cannot read DIR: Is a directory" (as the CSV reader does for the
    // header: "DIR line 1: cannot read the header: Is a directory (os error 21)").
    let dir = std::env::temp_dir().join(format!("pk-adversarial2-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(pk_binary())
        .args(["analyze", "--lines"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir(&dir);
    let status = status.expect("pk analyze --lines DIR still running after 10 s");
    assert_eq!(status.code(), Some(1));
}

#[test]
fn cli_analyze_of_a_huge_line_is_bounded() {
    // A 200 MB line without a newline, under a 300 MB address-space limit. Measured without the
    // limit: `--lines` peaks at 620 MB RSS, the CSV reader (`--key k`) the same, before the
    // table refuses the key (keys are at most 1 KB: `MAX_KEY_VALUE_BYTES`); under the limit the
    // process aborts ("memory allocation of 268435456 bytes failed", status 134). Correct: read
    // lines with a cap (e.g. `read_until` on `take(MAX_LINE + 1)`, and skip to the next newline),
    // and report an over-long line as a malformed row naming the file, line and the cap (exit
    // status 1 with --strict, a skipped row without).
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 300000 && exec '{}' analyze --lines -",
            pk_binary().display()
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..200 {
            if stdin.write_all(&chunk).is_err() {
                break; // pk stopped reading: fine
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("memory allocation") && matches!(out.status.code(), Some(0 | 1)),
        "status {:?}: {}",
        out.status,
        &stderr[..stderr.len().min(300)]
    );
}

#[test]
fn layout_config_with_many_fields_loads_in_linear_time() {
    // The duplicate-name check compared each field with every earlier one: 4,000 fields took
    // 0.18 s, 16,000 1.8 s, 40,000 10.3 s in a debug build, so 80,000 would take about 40 s.
    // With a set of names it is linear. The bound below is no speed claim, only a guard against
    // quadratic time coming back: it is many times what the linear check takes, under load too.
    let n = 80_000;
    let fields: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"f{i}","type":"u8"}}"#))
        .collect();
    let json = format!(r#"{{"fields":[{}]}}"#, fields.join(","));
    // CPU time, not wall time: a busy machine does not slow this thread's own work.
    let (layout, took) = support::cpu_timed(|| serde_json::from_str::<Layout>(&json).unwrap());
    assert_eq!(layout.fields().len(), n);
    assert!(
        took < Duration::from_secs(10),
        "{n} fields loaded in {took:?} of CPU time"
    );
    // A duplicate at the end is still found.
    let dup = format!(
        r#"{{"fields":[{},{{"name":"f7","type":"u8"}}]}}"#,
        fields.join(",")
    );
    let e = serde_json::from_str::<Layout>(&dup)
        .unwrap_err()
        .to_string();
    assert!(e.contains("f7") && e.contains("earlier field"), "{e}");
}

// ---- Checked and fine -------------------------------------------------------------------------

#[test]
fn versions_and_clocks_at_the_ends_of_time() {
    // Extreme but valid options: no overflow in the version window (saturating) or TTL.
    let options = TableOptions::default()
        .max_versions(u32::MAX)
        .ttl_seconds(i64::MAX)
        .max_version_offset_seconds(i64::MAX);
    let (t, clock) = table(options, 0);
    for v in [i64::MIN, i64::MIN + 999, -1, 0, i64::MAX] {
        t.put("a", vec![Attribute::new("x", 1).with_version(v)])
            .unwrap();
    }
    let all = ReadOptions::default().time_range(i64::MIN, i64::MAX);
    assert!(t.get("a", &all).unwrap().is_some());
    let r = t.get("a", &ReadOptions::default().max_versions(u32::MAX));
    assert!(r.unwrap().is_some());
    // Updates at the extremes, many versions of one column.
    let ops: Vec<UpdateOp> = (0..2_000)
        .map(|i| UpdateOp::Put(Attribute::new("v", i).with_version(i64::MIN + i * 1000)))
        .chain([UpdateOp::DeleteVersion {
            name: "x".into(),
            version: i64::MIN,
        }])
        .collect();
    t.update("a", ops).unwrap();
    for now in [i64::MIN, i64::MAX] {
        clock.set(now);
        t.put("b", vec![Attribute::new("x", 1)]).unwrap();
    }
    t.compact();
    let _ = t.report().capacity(u64::MAX);
    let h = t.heatmap(&HeatmapOptions::default());
    let _ = h.to_text();
    assert!(h.to_svg(300, 200).is_ok());
    // The default version window refuses i64::MAX with the window it uses.
    let (t, _) = table(TableOptions::default(), 0);
    let e = t
        .put("a", vec![Attribute::new("x", 1).with_version(i64::MAX)])
        .unwrap_err();
    assert!(matches!(e, TableError::VersionOutOfRange { .. }), "{e:?}");
}

#[test]
fn replay_of_unordered_extreme_times_with_load_splits() {
    // Times jumping between i64::MIN and i64::MAX (the clock going backwards), one-ms windows,
    // a load split on every second write.
    let options = TableOptions::default()
        .load_window_ms(1)
        .split_load_ops(1)
        .load_sample_every(1);
    let (t, clock) = table(options, 0);
    let events = (0..200i64).map(|i| {
        let ts = match i % 4 {
            0 => i64::MIN + i,
            1 => i64::MAX - i,
            2 => 0,
            _ => -i,
        };
        (
            format!("k{:03}", (i * 37) % 200),
            vec![Attribute::new("n", i)],
            ts,
        )
    });
    assert_eq!(t.replay(&clock, events).unwrap().events, 200);
    let _ = t.report();
    let h = t.heatmap(&HeatmapOptions::default());
    let _ = h.to_text();
    assert!(h.to_svg(300, 200).is_ok());
    // A hotspot meter with a window of 0, negative and i64::MAX ms, times at both ends.
    for window in [i64::MIN, 0, i64::MAX] {
        let mut m = HotspotMeter::new(window);
        for ts in [i64::MIN, i64::MAX, 0, -1, i64::MIN] {
            for k in [PkValue::InfMin, PkValue::from("k"), PkValue::InfMax] {
                m.record(&t, &k, ts);
            }
        }
        let r = m.report();
        assert_eq!(r.writes, 15);
    }
}

#[test]
fn requests_at_their_limits() {
    let (t, _) = table(TableOptions::default().split_size_bytes(100), 0);
    for i in 0..100 {
        t.put(format!("{i:03}"), vec![Attribute::new("v", i)])
            .unwrap();
    }
    let (lo, hi) = (PrimaryKey::inf_min(1), PrimaryKey::inf_max(1));
    let fwd = RangeRequest::forward(lo.clone(), hi.clone()).limit(usize::MAX);
    assert_eq!(t.get_range(&fwd).unwrap().rows.len(), 100);
    let back = RangeRequest::backward(hi.clone(), lo.clone()).limit(usize::MAX);
    assert_eq!(t.get_range(&back).unwrap().rows.len(), 100);
    for req in [
        RangeRequest::backward(lo, hi),
        RangeRequest::forward("050", "050"),
    ] {
        let e = t.get_range(&req).unwrap_err();
        assert!(matches!(e, TableError::InvalidRange { .. }), "{e:?}");
    }
    // Attribute names of 0 and 256 bytes, values one byte past the limit.
    for n in [0, 256] {
        let e = t
            .put("a", vec![Attribute::new("a".repeat(n), 1)])
            .unwrap_err();
        assert!(matches!(e, TableError::InvalidColumnName { .. }), "{e:?}");
    }
    assert!(t.put("a", vec![Attribute::new("a".repeat(255), 1)]).is_ok());
    let big = AttributeValue::Binary(vec![0; pk_codec::table::MAX_ATTRIBUTE_BYTES + 1]);
    let e = t.put("a", vec![Attribute::new("a", big)]).unwrap_err();
    assert!(matches!(e, TableError::AttributeTooLarge { .. }), "{e:?}");
    // Batches at and past the row and byte limits.
    let rows = |n: usize| -> Vec<RowWrite> {
        (0..n)
            .map(|i| RowWrite::Put {
                key: format!("{i}").into(),
                attributes: vec![Attribute::new("v", 1)],
            })
            .collect()
    };
    assert_eq!(
        t.batch_write(rows(MAX_BATCH_ROWS)).unwrap().len(),
        MAX_BATCH_ROWS
    );
    let e = t.batch_write(rows(MAX_BATCH_ROWS + 1)).unwrap_err();
    assert!(matches!(e, TableError::BatchTooManyRows { .. }), "{e:?}");
    let huge = vec![RowWrite::Put {
        key: "a".into(),
        attributes: vec![Attribute::new(
            "v",
            AttributeValue::Binary(vec![1; pk_codec::table::MAX_BATCH_BYTES]),
        )],
    }];
    let e = t.batch_write(huge).unwrap_err();
    assert!(matches!(e, TableError::BatchTooLarge { .. }), "{e:?}");
}

#[test]
fn four_column_keys_of_all_zero_and_all_ff_bytes() {
    let schema = Schema::new(vec![
        PkColumn::new("a", PkType::Binary),
        PkColumn::new("b", PkType::Binary),
        PkColumn::new("c", PkType::Integer),
        PkColumn::new("d", PkType::String),
    ])
    .unwrap();
    let options = TableOptions::default().split_size_bytes(10_000);
    let t = Table::with_clock(schema, options, ManualClock::new(0)).unwrap();
    let key = |a: Vec<u8>, b: Vec<u8>, c: i64| {
        PrimaryKey::new(vec![a.into(), b.into(), c.into(), "x".repeat(1024).into()])
    };
    for (a, b) in [
        (vec![0u8; 1024], vec![0xffu8; 1024]),
        (vec![0xff; 1024], vec![0; 1024]),
        (vec![], vec![]),
    ] {
        for c in [i64::MIN, 0, i64::MAX] {
            t.put(key(a.clone(), b.clone(), c), vec![Attribute::new("v", 1)])
                .unwrap();
        }
    }
    let e = t.put(key(vec![0; 1025], vec![], 0), vec![]).unwrap_err();
    assert!(matches!(e, TableError::KeyValueTooLarge { .. }), "{e:?}");
    let all = RangeRequest::backward(PrimaryKey::inf_max(4), PrimaryKey::inf_min(4));
    let rows = t.get_range(&all).unwrap().rows;
    assert_eq!(rows.len(), 9);
    assert!(rows.windows(2).all(|w| w[0].key > w[1].key));
}

#[test]
fn pre_split_points_that_are_refused() {
    let make = |points: Vec<PkValue>| {
        Table::with_clock(
            Schema::single_string("pk").unwrap(),
            TableOptions::default().pre_split(points),
            ManualClock::new(0),
        )
        .map(|t| t.partition_count())
    };
    for (points, index) in [
        (vec![PkValue::InfMin], 0),
        (vec![PkValue::InfMax], 0),
        (vec![PkValue::from(1)], 0),
        (vec!["b".into(), "a".into()], 1),
        (vec!["a".into(), "a".into()], 1),
    ] {
        match make(points) {
            Err(TableError::InvalidSplitPoint { index: i, .. }) => assert_eq!(i, index),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(make(vec!["".into()]).unwrap(), 2);
}

#[test]
fn layout_values_at_type_extremes() {
    // Every kind against values out of its range or of another kind: an error or a key that
    // decodes; ranges with such bounds: no panic.
    let values = [
        Value::Uint(u128::MAX),
        Value::Int(i128::MIN),
        Value::Int(i128::MAX),
        Value::Int(-1),
        Value::F32(f32::NAN),
        Value::F64(f64::NAN),
        Value::F64(-0.0),
        Value::F64(f64::NEG_INFINITY),
        Value::Timestamp(i128::MIN),
        Value::Timestamp(i128::MAX),
        Value::Timestamp(i128::from(i64::MAX) * 1000),
        Value::Null,
        Value::Char('\u{10FFFF}'),
        Value::Uuid(u128::MAX),
        Value::Bytes(vec![0xff; 100]),
    ];
    for spec in [
        "a: u8",
        "a: i8 desc",
        "a: u64 width=3",
        "a: f32",
        "a: f64 desc",
        "a: timestamp",
        "a: timestamp precision=s",
        "a: timestamp precision=ns desc",
        "a: char",
        "a: u128",
        "a: i128 desc",
        "a: uuid",
        "a: u8 optional",
        "a: bytes",
        "a: str escaped",
    ] {
        let l: Layout = spec.parse().unwrap();
        for v in &values {
            if let Ok(k) = l.encode(std::slice::from_ref(v)) {
                assert!(l.decode(&k).is_ok(), "{spec} {v:?} -> {k:?}");
            }
            let _ = l.ranges(&[], Bound::Included(v), Bound::Excluded(v));
            let _ = l.range(&[], Bound::Excluded(v), Bound::Unbounded);
        }
    }
    // Bounds of the wrong type, out of range, too many prefix values.
    let l: Layout = "a: u32; b: i64 desc; c: str optional; buckets=7:hash(a)"
        .parse()
        .unwrap();
    let p = [Value::Uint(1)];
    let r = l.ranges(
        &p,
        Bound::Included(&Value::Str("x".into())),
        Bound::Unbounded,
    );
    assert!(matches!(r, Err(Error::TypeMismatch { .. })), "{r:?}");
    let r = l.ranges(
        &p,
        Bound::Included(&Value::Int(i128::MAX)),
        Bound::Unbounded,
    );
    assert!(matches!(r, Err(Error::ValueOutOfRange { .. })), "{r:?}");
    let many = vec![Value::Uint(1); 100_000];
    assert!(matches!(
        l.prefix_ranges(&many),
        Err(Error::FieldCount { .. })
    ));
    // A huge value is refused by the key length limit (after encoding it: bounded by the input).
    let l: Layout = "a: bytes".parse().unwrap();
    assert!(l.encode(&[Value::Bytes(vec![0xff; 4 << 20])]).is_err());
}

#[test]
fn merge_buckets_of_unsorted_streams_does_not_panic() {
    // The streams must be sorted (documented); unsorted input gives some interleaving of them,
    // every item once, and no panic.
    let l: Layout = "a: u32; buckets=4:hash".parse().unwrap();
    let streams = vec![
        vec!["3z".to_owned(), "1a".into(), "0".into(), String::new()],
        vec!["2b".into(), "2a".into()],
        vec![],
    ];
    let merged: Vec<String> = l
        .shape()
        .merge_buckets(streams, |k: &String| k.as_str())
        .collect();
    assert_eq!(merged.len(), 6);
}

#[test]
fn cli_analyze_of_odd_inputs() {
    let dir = std::env::temp_dir().join(format!("pk-adversarial2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[u8], &[&str], i32); 5] = [
        ("empty.csv", b"", &["--key", "k"], 1),
        ("header.csv", b"k\n", &["--key", "k"], 0),
        (
            "quoted.csv",
            b"k,t\n\"a,b\",1\n\"un\xffterminated,2\n",
            &["--key", "k", "--time", "t"],
            0,
        ),
        ("bad.txt", b"a\n\xff\xfe\nb\n", &["--lines"], 0),
        ("empty.txt", b"", &["--lines"], 0),
    ];
    for (name, body, args, code) in cases {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        let out = Command::new(pk_binary())
            .arg("analyze")
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert_eq!(out.status.code(), Some(code), "{name}: {stderr}");
    }
}

/// `KeyShape::bucket_prefix` answered the text of bucket 16 of a 16-bucket prefix (`"16,"`), a
/// prefix no key has, so a scatter-gather read over a wrong bucket count read nothing and said
/// nothing. Now it answers only buckets that exist: at every count where the bucket width steps
/// and at the limit, with and without the separator, the prefix of every bucket starts every key
/// of that bucket, and there is none past the last bucket.
#[test]
fn bucket_prefix_answers_only_buckets_that_exist() {
    let counts = [
        1u32, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 9999, 10_000,
    ];
    for count in counts {
        for sep in ["", ":sep"] {
            let layout: Layout = format!("ts: u64; buckets={count}:mod(ts){sep}")
                .parse()
                .unwrap();
            let shape = layout.shape();
            for ts in (0..u64::from(count) * 2).step_by(usize::try_from(count / 50 + 1).unwrap()) {
                let key = layout.encode(&[ts.into()]).unwrap();
                let bucket = shape.bucket_of_key(&key).unwrap();
                assert_eq!(u64::from(bucket), ts % u64::from(count), "{layout} {ts}");
                let prefix = shape.bucket_prefix(bucket).unwrap();
                assert!(key.starts_with(&prefix), "{layout}: {key} / {prefix}");
                assert_eq!(prefix.len(), shape.prefix().len(), "{layout}");
            }
            for past in [count, count + 1, u32::MAX] {
                assert_eq!(shape.bucket_prefix(past), None, "{layout} bucket {past}");
            }
        }
    }
    let plain: Layout = "ts: u64".parse().unwrap();
    assert_eq!(plain.shape().bucket_prefix(0), None);
    let hashed: Layout = "ts: u64 width=4; hash=xxh3:4".parse().unwrap();
    assert_eq!(hashed.shape().bucket_prefix(0), None);
}
