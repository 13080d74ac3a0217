//! Audit of the key reader (`pk_codec::io`), the `pk` command line and the store bridges: each
//! test here failed before the fix it names (see the commit that added it), and pins the answer
//! the project's rules ask for: a specific error, never a panic, a hang or a silent loss.

#![allow(missing_docs)]

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use pk_codec::store::{
    BulkOptions, BulkWriter, Direction, Dispatch, MemoryStore, RangePage, RangeQuery, RangeStore,
    RedbStore, StoreError, WriteOp,
};
use pk_codec::table::{Table, TableOptions};
use pk_codec::{Error, FieldSpec, IntBits, KeyShape, Kind, Rule};
use support::{batches_writing_keys_twice, pk, pk_binary, stderr, stdout, temp_dir};

// ---- KeyReader --------------------------------------------------------------------------------

/// `KeyReader::int64` / `int128` with a hand-built spec of width 0 indexed one byte past the
/// field (`int_error` read `key[start + at]` for a `BadByte(0)` of the empty text): a panic,
/// "index out of bounds", at the end of any key. `uint64` / `uint128` of width 0 read the value
/// 0 out of nothing, a key the writer refuses to write. Now every integer reader refuses a
/// width outside the `width-range` rule, as the writers do, with the same error.
#[test]
fn integer_readers_refuse_a_width_the_writers_refuse() {
    let shape = KeyShape::new(b',');
    for key in ["", "0", "7", "-", "00", "abc", "é"] {
        for (kind, signed) in [
            (Kind::Uint { bits: IntBits::B64 }, false),
            (
                Kind::Uint {
                    bits: IntBits::B128,
                },
                false,
            ),
            (Kind::Int { bits: IntBits::B64 }, true),
            (
                Kind::Int {
                    bits: IntBits::B128,
                },
                true,
            ),
        ] {
            let min = if signed { 2 } else { 1 };
            for width in [0u8, 1, 41, 200, 255] {
                if (min..=40).contains(&width) {
                    continue;
                }
                let spec = FieldSpec::new(kind).with_width(width);
                let r = std::panic::catch_unwind(|| {
                    shape.decode_with(key, |r| {
                        r.begin_field("a")?;
                        match kind {
                            Kind::Uint { bits: IntBits::B64 } => {
                                r.uint64(&spec, "a", u64::MAX).map(|v| v.to_string())
                            }
                            Kind::Uint { .. } => {
                                r.uint128(&spec, "a", u128::MAX).map(|v| v.to_string())
                            }
                            Kind::Int { bits: IntBits::B64 } => r
                                .int64(&spec, "a", i64::MIN, i64::MAX)
                                .map(|v| v.to_string()),
                            _ => r
                                .int128(&spec, "a", i128::MIN, i128::MAX)
                                .map(|v| v.to_string()),
                        }
                    })
                });
                let r = r.unwrap_or_else(|_| panic!("{kind:?} width {width} on {key:?} panicked"));
                match r {
                    Err(Error::BrokenRule { field, rule, .. }) => {
                        assert_eq!(field.as_deref(), Some("a"));
                        assert_eq!(
                            rule,
                            Rule::WidthRange {
                                width,
                                min,
                                max: 40
                            }
                        );
                    }
                    other => panic!("{kind:?} width {width} on {key:?}: {other:?}"),
                }
            }
        }
    }
}

// ---- Range reads ------------------------------------------------------------------------------

/// A backward read resumed at or above its end (exclusive) returned keys outside `[start, end)`:
/// `RangeQuery::remaining` turned the resume key into an inclusive top without bounding it by
/// the end, so `[a, c)` backward resumed at `c` gave `c, b, a` and resumed at `z` gave `d, c, b,
/// a` from every store (the forward read bounds its resume key by the start). Now the range's
/// end bounds the resumed read too, in every store.
#[test]
fn a_backward_read_resumed_above_its_end_stays_in_its_range() {
    let mem = MemoryStore::default();
    let redb = RedbStore::in_memory().unwrap();
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let stores: [(&str, &dyn RangeStore); 3] =
        [("memory", &mem), ("redb", &redb), ("table", &table)];
    for (name, store) in stores {
        for k in ["a", "b", "c", "d"] {
            store.put(k, b"v").unwrap();
        }
        for (resume, want) in [
            ("z", &["b", "a"][..]),
            ("d", &["b", "a"]),
            ("c", &["b", "a"]),
            ("bb", &["b", "a"]),
            ("b", &["b", "a"]),
            ("a", &["a"]),
            ("0", &[]),
        ] {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .resume(Some(resume));
            assert!(
                query.remaining().1.is_some_and(|top| top <= "c"),
                "{resume}: {:?}",
                query.remaining()
            );
            let page = store.range(&query).unwrap();
            let keys: Vec<&str> = page.rows.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, want, "{name}: [a, c) backward, resumed at {resume:?}");
            assert_eq!(page.next, None, "{name}: {resume:?}");
        }
        // Paged backward read of the whole range, one row a page: each key of [a, c) once.
        let mut keys = Vec::new();
        let mut resume: Option<String> = None;
        loop {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .limit(1)
                .resume(resume.as_deref());
            let page = store.range(&query).unwrap();
            keys.extend(page.rows.into_iter().map(|(k, _)| k));
            match page.next {
                Some(n) => resume = Some(n),
                None => break,
            }
        }
        assert_eq!(keys, ["b", "a"], "{name}");
    }
}

// ---- BulkWriter -------------------------------------------------------------------------------

/// A memory store that runs `hook` on each batch before writing it: it may panic, as a buggy
/// adapter or store client might, or take its time.
struct Hooked<H>(MemoryStore, H);

impl<H: Fn(&[WriteOp]) + Send + Sync> RangeStore for Hooked<H> {
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.put(key, value)
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.0.delete(key)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        (self.1)(ops);
        self.0.batch_write(ops)
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.0.range(query)
    }
}

/// A store that panics on the key `boom`.
fn panics_on_boom() -> Hooked<impl Fn(&[WriteOp]) + Send + Sync> {
    Hooked(MemoryStore::default(), |ops: &[WriteOp]| {
        assert!(
            !ops.iter().any(|op| op.key() == "boom"),
            "the store panicked (on purpose, in a test)"
        );
    })
}

/// Runs `f` on a thread and waits at most `secs` for its answer: `None` when it hangs.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

/// A worker whose store (or callback) panicked left its rows counted as outstanding, and
/// `flush` waited for them forever: `BulkWriter::flush`, `close` and the writer's drop hung,
/// although `close` documents that a worker that panicked is reported by the rows it left
/// unreported (`rows_lost`). Now `flush` stops waiting for a lane whose worker has stopped: the
/// other lanes' rows are written, the dead lane's counted lost.
#[test]
fn a_bulk_writer_whose_worker_panicked_still_flushes_and_closes() {
    let outcome = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            Arc::clone(&store),
            BulkOptions {
                workers: Some(2),
                dispatch: Dispatch::RoundRobin,
                max_batch_rows: Some(1),
                flush_interval: Duration::from_millis(5),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        // Lane 0 takes the even rows (its worker dies on `boom`), lane 1 the odd ones.
        let mut added = 0u64;
        for i in 0..40 {
            let key = if i == 0 {
                "boom".to_owned()
            } else {
                format!("k{i:02}")
            };
            if writer.add(key, b"v".to_vec()).is_ok() {
                added += 1;
            }
        }
        writer.flush();
        let stats = writer.close();
        (added, stats, store.0.len())
    });
    let (added, stats, stored) = outcome.expect("the bulk writer hung after its worker panicked");
    assert_eq!(stats.rows_added, added);
    assert_eq!(stats.rows_written, 20, "{stats:?}");
    assert_eq!(stored, 20);
    assert_eq!(stats.rows_failed, 0, "{stats:?}");
    assert_eq!(stats.rows_lost(), added - 20, "{stats:?}");
    assert!(stats.rows_lost() >= 1, "{stats:?}");

    // Dropped without close: the drop flushes, and returns too.
    let dropped = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            store,
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(1),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        let _ = writer.add("boom".to_owned(), Vec::new());
        let _ = writer.add("a".to_owned(), Vec::new());
        drop(writer);
    });
    assert!(dropped.is_some(), "dropping the bulk writer hung");
}

// ---- The `pk` command line --------------------------------------------------------------------

/// `pk` printed with `println!`, which panics when standard output is a closed pipe (`pk splits
/// ... | head -1`): "failed printing to stdout: Broken pipe", a Rust panic and backtrace with
/// status 101. Now a reader that stops reading ends the output quietly, with status 0.
#[test]
fn pk_output_into_a_closed_pipe_is_no_panic() {
    let commands: [&[&str]; 2] = [
        &[
            "splits",
            "--spec",
            "n: u64 width=8; hash=md5:4",
            "-n",
            "65535",
        ],
        &["ranges", "--spec", "n: u64 width=8; buckets=10000:mod(n)"],
    ];
    for args in commands {
        let mut child = Command::new(pk_binary())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 4];
        out.read_exact(&mut first).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// `pk decode` printed `null` for an infinite or NaN float (serde_json's number for a
/// non-finite f64): the key's value was lost, and `pk encode` could not take it back. Now they
/// print as the strings `inf`, `-inf`, `NaN` and `-NaN`, which `pk encode` reads back to the
/// same key.
#[test]
fn pk_decode_of_non_finite_floats_is_not_null() {
    for (spec, value) in [
        ("x: f64", "inf"),
        ("x: f64", "-inf"),
        ("x: f64", "NaN"),
        ("x: f64", "-NaN"),
        ("x: f32", "inf"),
        ("x: f32", "-inf"),
        ("x: f32", "NaN"),
        ("x: f64 desc", "-inf"),
    ] {
        let o = pk(&["encode", "--spec", spec, "--", value]);
        assert_eq!(o.status.code(), Some(0), "{spec} {value}: {}", stderr(&o));
        let key = stdout(&o).trim().to_owned();
        let o = pk(&["decode", "--spec", spec, "--", &key]);
        assert_eq!(o.status.code(), Some(0), "{spec} {key}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(json["x"], serde_json::json!(value), "{spec} {key}");
    }
    // Finite values stay numbers.
    let o = pk(&["decode", "--spec", "x: f64", "bff8000000000000"]);
    assert_eq!(stdout(&o).trim(), r#"{"x":1.5}"#);
}

/// `pk decode` printed a timestamp as whole milliseconds (`div_euclid(1_000_000)`), silently
/// dropping the microseconds and nanoseconds of a `precision=us` or `precision=ns` field. Now a
/// timestamp with digits below the millisecond prints as a decimal string of milliseconds, and
/// `pk encode` reads such a string back to the same key.
#[test]
fn pk_decode_keeps_the_digits_of_a_timestamp_below_the_millisecond() {
    for (spec, key, ms) in [
        (
            "t: timestamp precision=us",
            "2026-11-22T10:26:00.123456Z",
            serde_json::json!("1795343160123.456"),
        ),
        (
            "t: timestamp precision=ns",
            "2026-11-22T10:26:00.123456789Z",
            serde_json::json!("1795343160123.456789"),
        ),
        (
            "t: timestamp precision=ns",
            "1969-12-31T23:59:59.999999999Z",
            serde_json::json!("-0.000001"),
        ),
        (
            "t: timestamp precision=us",
            "2026-11-22T10:26:00.123000Z",
            serde_json::json!(1_795_343_160_123_i64),
        ),
    ] {
        let o = pk(&["decode", "--spec", spec, key]);
        assert_eq!(o.status.code(), Some(0), "{key}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(json["t"], ms, "{spec} {key}");
        let text = match &ms {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let o = pk(&["encode", "--spec", spec, "--", &text]);
        assert_eq!(o.status.code(), Some(0), "{text}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), key, "{spec} {text}");
    }
    // Digits below the nanosecond, or not digits, are refused.
    for bad in ["1.0000001", "1.", "1.x", ".5", "1.-5"] {
        let o = pk(&["encode", "--spec", "t: timestamp precision=ns", "--", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("is not a timestamp"),
            "{bad}: {}",
            stderr(&o)
        );
    }
}

/// `pk decode` printed a byte string that is not UTF-8 with `from_utf8_lossy`: `ff00` became
/// `"\u{fffd}\u0000"`, the byte 0xff silently replaced. Now such bytes print as an array of
/// their values; UTF-8 bytes still print as text.
#[test]
fn pk_decode_of_bytes_that_are_not_utf8_keeps_them() {
    let o = pk(&["decode", "--spec", "b: bytes", "ff00"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["b"], serde_json::json!([255, 0]));
    let o = pk(&["decode", "--spec", "b: bytes", "c3a9"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["b"], serde_json::json!("\u{e9}"));
}

/// Writes `body` to the file `name` in `dir`; its path.
fn dump(dir: &std::path::Path, name: &str, body: impl AsRef<[u8]>) -> String {
    let file = dir.join(name);
    std::fs::write(&file, body).unwrap();
    file.display().to_string()
}

/// `pk analyze` took the first of two header columns with the same name, silently ignoring the
/// other, whether the name was the `--key`, a `--design` field or the `--time` column. Now a
/// column the command names that the header holds twice is an error (status 1) naming the file,
/// the column and both positions; a duplicate the command does not use is no error.
#[test]
fn pk_analyze_refuses_a_named_column_the_header_holds_twice() {
    let dir = temp_dir("dup");
    let f = dump(&dir, "dup.csv", "k,t,k,t2,t2\na,1,b,5,6\nc,2,d,7,8\n");
    for args in [
        &["--key", "k"][..],
        &["--design", "k: str"],
        &["--key", "t", "--time", "t2"],
    ] {
        let mut all = vec!["analyze", f.as_str()];
        all.extend_from_slice(args);
        let o = pk(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("dup.csv line 1"), "{args:?}: {err}");
        assert!(
            err.contains("twice") || err.contains("more than once"),
            "{args:?}: {err}"
        );
    }
    // Duplicates the command does not name are no error.
    let o = pk(&["analyze", &f, "--key", "t", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pk analyze --lines` kept a UTF-8 byte order mark as the first three bytes of the first key
/// (the CSV reader strips it): a file saved by an editor that writes one replayed `\u{feff}k00`,
/// a key above every other, so a sequential key list was not seen as sequential. Now the mark is
/// stripped from the start of each file, as in CSV.
#[test]
fn pk_analyze_lines_strips_a_byte_order_mark() {
    let dir = temp_dir("bom");
    let mut body = b"\xef\xbb\xbf".to_vec();
    for i in 0..40 {
        body.extend_from_slice(format!("k{i:02}\r\n").as_bytes());
    }
    let file = dump(&dir, "keys.txt", &body);
    let o = pk(&["analyze", "--lines", &file, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let diagnostics = json["diagnostics"].to_string();
    assert!(
        diagnostics.contains("sequential key: 100% of rows"),
        "{diagnostics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pk encode`, `decode` and `ranges` refused a negative number as a value (`pk encode --spec
/// 'x: i32' -5`: clap's "unexpected argument '-5' found", status 1), so a signed field's
/// negative values, and the keys of negative values (`-9999999994`), needed a `--` the help does
/// not mention. Now a negative number is a value.
#[test]
fn pk_takes_negative_numbers_as_values() {
    let o = pk(&["encode", "--spec", "x: i32", "-5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let key = stdout(&o).trim().to_owned();
    assert!(key.starts_with('-'), "{key}");
    let o = pk(&["decode", "--spec", "x: i32", &key]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"x":-5}"#);
    let o = pk(&[
        "ranges",
        "--spec",
        "a: i8; b: i16",
        "-3",
        "--from",
        "-128",
        "--to",
        "-1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o2 = pk(&[
        "ranges",
        "--spec",
        "a: i8; b: i16",
        "--from",
        "-128",
        "--",
        "-3",
    ]);
    assert_eq!(o2.status.code(), Some(0), "{}", stderr(&o2));
    assert!(stdout(&o).starts_with("-"), "{}", stdout(&o));
    let o = pk(&["encode", "--spec", "x: f64", "-1.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `pk encode` of a `uuid` field took any text whose characters other than `-` were 32 and
/// that `u128::from_str_radix` read: `+` followed by 31 hex digits (`from_str_radix` takes a
/// leading `+`) encoded as the UUID of those 31 digits. Now only hex digits and hyphens are a
/// UUID's text.
#[test]
fn pk_encode_of_a_uuid_takes_only_hex_digits_and_hyphens() {
    let o = pk(&[
        "encode",
        "--spec",
        "u: uuid",
        "+0000000000000000000000000000001",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("is not a uuid"), "{}", stderr(&o));
    let o = pk(&[
        "encode",
        "--spec",
        "u: uuid",
        "0000000A-0000-0000-0000-00000000000f",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "0000000a00000000000000000000000f");
}

/// `pk splits -n N` prints N split points (`KeyShape::split_points(N)`, as the subcommand's help
/// says), which cut the key space into N + 1 parts, but the help of `-n` said "How many parts":
/// `-n 4` over 4 buckets, four parts by that help, was refused ("4 split points cannot be evenly
/// spaced over 4 prefix values"). The help of `-n` now says split points.
#[test]
fn pk_splits_help_says_what_n_counts() {
    let o = pk(&["splits", "--spec", "n: u64; buckets=4:mod(n)", "-n", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3);
    let o = pk(&["splits", "--help"]);
    let help = stdout(&o);
    assert!(!help.contains("How many parts"), "{help}");
    assert!(help.contains("How many split points"), "{help}");
}

/// A descending string whose bytes are not UTF-8 was reported at the byte after its field (the
/// reader's position once the field was read), not where the bad byte is: `joaaz,001` (the bytes
/// `61 ff`) under `s: str desc; n: u8` said "at byte 5", the delimiter. Now the error is at the
/// first key byte of the bad sequence: 2.
#[test]
fn a_descending_string_that_is_not_utf8_is_reported_where_the_bad_byte_is() {
    for (spec, key, at) in [
        ("s: str desc; n: u8", "joaaz,001", 2),
        ("n: u8; s: str desc", "001,joaaz", 6),
        ("n: u8; s: str desc", "001,aaz", 4),
    ] {
        let layout: pk_codec::Layout = spec.parse().unwrap();
        match layout.decode(key) {
            Err(Error::Malformed { position, .. }) => assert_eq!(position, at, "{spec} {key}"),
            other => panic!("{spec} {key}: {other:?}"),
        }
    }
}

/// `BulkWriter::add` documents an error when the row's worker has stopped (it panicked), but it
/// staged the row and answered `Ok` unless the row filled a batch: rows added to a dead lane
/// were accepted, then lost. Now `add` answers the error for every row of a stopped worker, and
/// the row is not counted as added.
#[test]
fn bulk_writer_add_refuses_rows_for_a_worker_that_stopped() {
    let outcome = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            store,
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(10),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        writer.add("boom".to_owned(), Vec::new()).unwrap();
        writer.flush();
        let after = writer.add("a".to_owned(), Vec::new());
        (after, writer.close())
    });
    let (after, stats) = outcome.expect("the bulk writer hung");
    let e = after.expect_err("a row for a stopped worker was accepted");
    assert_eq!(e.kind(), pk_codec::store::StoreErrorKind::Other, "{e}");
    assert_eq!(stats.rows_added, 1, "{stats:?}");
    assert_eq!(stats.rows_lost(), 1, "{stats:?}");
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Each worker's queue is a channel allocated up front with room for `queue_rows / batch_rows`
/// batches: with one-row batches and `queue_rows` at its documented maximum, 2^20 slots of 32
/// bytes, 32 MiB a worker, committed at once; 64 workers took 2 GiB before a row was added, and
/// `MAX_WORKERS` (1024) workers, options every limit accepts, 32 GiB: an abort. Now a queue holds
/// at most 4,096 batches (with batches of 256 rows or more, still every row of `queue_rows`).
#[test]
fn bulk_writer_queues_are_bounded_whatever_the_batch_size() {
    let before = rss_kib();
    let writer = BulkWriter::new(
        Arc::new(MemoryStore::default()),
        BulkOptions {
            workers: Some(64),
            queue_rows: pk_codec::store::MAX_QUEUE_ROWS,
            max_batch_rows: Some(1),
            ..BulkOptions::default()
        },
    )
    .unwrap();
    let grown = rss_kib().saturating_sub(before);
    for i in 0..1_000u32 {
        writer.add(format!("{i:04}"), Vec::new()).unwrap();
    }
    let stats = writer.close();
    assert_eq!((stats.rows_written, stats.rows_lost()), (1_000, 0));
    if cfg!(target_os = "linux") {
        assert!(grown < 256 * 1024, "starting 64 workers took {grown} KiB");
    }
}

/// A row another thread adds while `flush` waits is staged for its worker, which takes staged
/// rows when its flush interval passes: with an interval of an hour, `flush` waited an hour
/// for it. Now `flush` hands staged rows over each time it wakes, and returns once both rows are
/// written, counted in `stats()` as soon as it returns (a row used to be reported done before it
/// was counted, so `flush(); stats()` could see 1 row written of 2).
///
/// Deterministic: the store holds the write of `slow` at a gate until the second row has been
/// added, so `late` is always added while `flush` waits, whatever the machine's load.
#[test]
fn a_flush_returns_when_rows_are_added_while_it_waits() {
    use std::sync::mpsc::{channel, sync_channel};
    let done = within(60, || {
        let (entered_tx, entered) = sync_channel::<()>(1);
        let (release, gate) = channel::<()>();
        let gate = std::sync::Mutex::new(gate);
        let entered_tx = std::sync::Mutex::new(entered_tx);
        let store = Arc::new(Hooked(MemoryStore::default(), move |ops: &[WriteOp]| {
            if ops.iter().any(|op| op.key() == "slow") {
                let _ = entered_tx.lock().unwrap().send(());
                let _ = gate.lock().unwrap().recv();
            }
        }));
        let writer = Arc::new(
            BulkWriter::new(
                Arc::clone(&store),
                BulkOptions {
                    workers: Some(1),
                    max_batch_rows: Some(1000),
                    flush_interval: Duration::from_secs(3600),
                    ..BulkOptions::default()
                },
            )
            .unwrap(),
        );
        writer.add("slow".to_owned(), b"v".to_vec()).unwrap();
        // With an hour's interval and a batch of 1,000, the worker writes `slow` only for a
        // flush: once its write has begun, `flush` has been called and is waiting.
        let flusher = {
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || {
                writer.flush();
                writer.stats()
            })
        };
        entered.recv().unwrap();
        writer.add("late".to_owned(), b"v".to_vec()).unwrap();
        release.send(()).unwrap();
        let stats = flusher.join().unwrap();
        (stats, store.0.len())
    });
    let (stats, stored) = done.expect("flush waited for a row added meanwhile");
    assert_eq!(
        (stats.rows_added, stats.rows_written, stored),
        (2, 2, 2),
        "{stats:?}"
    );
}

/// A zero flush interval made every idle worker poll its queue without waiting: a core each,
/// spinning for as long as the writer lived. It is refused, as the other options that cannot
/// work are.
#[test]
fn a_zero_flush_interval_is_refused() {
    let options = BulkOptions {
        flush_interval: Duration::ZERO,
        ..BulkOptions::default()
    };
    let err = BulkWriter::new(Arc::new(MemoryStore::default()), options).unwrap_err();
    assert_eq!(
        err.kind(),
        pk_codec::store::StoreErrorKind::Invalid,
        "{err}"
    );
    assert!(err.to_string().contains("flush interval"), "{err}");
    let ok = BulkOptions {
        flush_interval: Duration::from_nanos(1),
        ..BulkOptions::default()
    };
    assert!(BulkWriter::new(Arc::new(MemoryStore::default()), ok).is_ok());
}

/// A quote left open in a CSV dump: the CSV reader takes every line up to the next quote, or to
/// the end of the file, into one field. With a one-column header the swallowed lines became
/// one key holding line breaks, replayed as a single row with no message: three rows lost
/// silently. Now a key (or time) field holding a line break is a malformed row, and every
/// malformed record that spans lines names them, so the swallowed rows are accounted for. A
/// quoted line break in a column the command does not read is no error.
#[test]
fn pk_analyze_names_the_lines_a_quote_left_open_swallowed() {
    let dir = temp_dir("quote");
    let cases = [
        (
            "one.csv",
            "k\n\"a\nb\nc\nd\n",
            "line 2",
            "from line 2 to line 5",
        ),
        (
            "two.csv",
            "k,t\na,1\n\"b,2\nc,3\nd,4\n",
            "line 3",
            "from line 3 to line 5",
        ),
        // In a column the command does not read, running on to the end of the file (whose last
        // line break it holds): rows 3 and 4 are in the note, not read.
        (
            "unused.csv",
            "k,note\na,x\nb,\"oops\nc,z\nd,w\n",
            "line 3",
            "from line 3 to line 5",
        ),
    ];
    for (name, body, at, span) in cases {
        let f = dump(&dir, name, body);
        let o = pk(&["analyze", &f, "--key", "k", "--strict"]);
        let err = stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{name}: {err}");
        assert!(err.contains(&format!("{name} {at}")), "{name}: {err}");
        assert!(err.contains(span), "{name}: {err}");
    }
    // The same with CRLF line breaks. (Not the line numbers: the csv crate counts a record
    // ended by CRLF on the line before, rust-csv issue 395.)
    let file = dump(
        &dir,
        "unused-crlf.csv",
        "k,note\r\na,x\r\nb,\"oops\r\nc,z\r\n",
    );
    let o = pk(&["analyze", &file, "--key", "k", "--strict"]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("runs on in quotes"), "{}", stderr(&o));
    // A quoted line break in a column not read is data, last record or not (with or without
    // the file's last line break).
    for (name, body, rows) in [
        ("note.csv", "k,note\na,\"two\nlines\"\nb,x\n", "2 rows"),
        ("last.csv", "k,note\na,x\nb,\"two\nlines\"\n", "2 rows"),
        ("bare.csv", "k,note\na,x\nb,\"two\nlines\"", "2 rows"),
        ("ends.csv", "k,note\na,x\nb,\"two\nlines\n\"\n", "2 rows"),
    ] {
        let file = dump(&dir, name, body);
        let o = pk(&["analyze", &file, "--key", "k", "--strict"]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(rows), "{name}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A malformed row is named by its line in the file, whatever ends the lines: the CSV reader's
/// own count put a record ended by CRLF on the line before it, the first record after a blank
/// line on the blank one, and every record of a file of lone CRs on line 1 (rust-csv issues
/// 395 and 208).
#[test]
fn pk_analyze_names_malformed_rows_by_their_line_whatever_ends_the_lines() {
    let dir = temp_dir("lines");
    for (name, body, at) in [
        ("lf.csv", "k,t\na,1\nb\nc,3\n", "line 3"),
        ("crlf.csv", "k,t\r\na,1\r\nb\r\nc,3\r\n", "line 3"),
        ("cr.csv", "k,t\ra,1\rb\rc,3\r", "line 3"),
        ("blank.csv", "k,t\na,1\n\n\nb\nc,3\n", "line 5"),
        ("blank-crlf.csv", "k,t\r\na,1\r\n\r\nb\r\nc,3\r\n", "line 4"),
        // A quoted line break in the row before: lines, not records.
        (
            "quoted.csv",
            "k,t,note\na,1,\"x\r\ny\"\nb,2\nc,3,z\n",
            "line 4",
        ),
    ] {
        let f = dump(&dir, name, body);
        let o = pk(&["analyze", &f, "--key", "k"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        assert!(
            err.contains(&format!("{name} {at}: malformed row")),
            "{name}: {err}"
        );
        assert!(err.contains("2 rows"), "{name}: {err}");
    }
    // The lines a record spans, in a CRLF file.
    let f = dump(&dir, "span.csv", "k\r\na\r\n\"b\r\nc\r\nd\r\n");
    let o = pk(&["analyze", &f, "--key", "k"]);
    assert!(stderr(&o).contains("span.csv line 3"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("from line 3 to line 5"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rows without `--time` are spaced `--row-ms` apart. Past `i64::MAX` ms the time saturated, so
/// every later row landed on one instant with no word, and the report judged a load that never
/// happened. Now the row that would pass it is an error naming the line and the option.
#[test]
fn pk_analyze_refuses_a_row_spacing_past_the_last_time() {
    let dir = temp_dir("rowms");
    let f = dump(&dir, "keys.csv", "k\na\nb\nc\n");
    // Row 3 (index 2) at 2 * 2^62 ms passes i64::MAX.
    let o = pk(&[
        "analyze",
        &f,
        "--key",
        "k",
        "--row-ms",
        "4611686018427387904",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("keys.csv line 4") && err.contains("--row-ms"),
        "{err}"
    );
    // The largest spacing that fits three rows is fine.
    let o = pk(&[
        "analyze",
        &f,
        "--key",
        "k",
        "--row-ms",
        "3074457345618258602",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bucket diagnostic printed the mean rows per bucket with no decimals: 3 rows in 16
/// buckets read "5.33x the mean of 0". A mean below 10 keeps two decimals.
#[test]
fn pk_analyze_prints_a_small_bucket_mean_with_its_fraction() {
    let dir = temp_dir("mean");
    let file = dump(&dir, "ts.csv", "ts\n1\n2\n3\n");
    let spec = "ts: u64 width=4; buckets=16:mod(ts)";
    let o = pk(&["analyze", &file, "--design", spec]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = format!("the mean of {:.2}", 3.0 / 16.0);
    assert!(stdout(&o).contains(&want), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A store's batch applies its writes in order, so a key written twice ends as its last write
/// left it. The table model refuses a batch naming a row twice (as Tablestore does), so through
/// its `RangeStore` bridge such a batch failed as a whole, for good (`Invalid`): a bulk import
/// updating a key twice within one batch lost the batch. Now the runs without a repeated key go
/// one after another: the same results and end state as the in-memory store.
#[test]
fn a_table_batch_that_writes_a_key_twice_ends_as_in_memory() {
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let memory = MemoryStore::default();
    let mut batches = batches_writing_keys_twice("");
    // And a batch without a repeated key, the usual one.
    batches.push(vec![
        WriteOp::Put {
            key: "f".into(),
            value: b"1".to_vec(),
        },
        WriteOp::Put {
            key: "g".into(),
            value: b"1".to_vec(),
        },
    ]);
    for batch in &batches {
        let t = RangeStore::batch_write(&table, batch).expect("a batch writing a key twice");
        let m = memory.batch_write(batch).unwrap();
        assert_eq!(t.len(), batch.len());
        assert_eq!(
            t.iter().map(Result::is_ok).collect::<Vec<_>>(),
            m.iter().map(Result::is_ok).collect::<Vec<_>>()
        );
    }
    let all = RangeQuery::new("", None);
    assert_eq!(
        table.range(&all).unwrap().rows,
        memory.range(&all).unwrap().rows
    );
    let keys: Vec<String> = memory
        .range(&all)
        .unwrap()
        .rows
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["c", "d", "e", "f", "g"]);
}

/// `pk decode` printed every NaN as `NaN` or `-NaN`, so a NaN with a payload of its own (which
/// the key keeps, bit for bit) read back through `pk encode` as the plain NaN: another key. Such
/// a NaN now prints as its bits, `NaN:0x...`, which `pk encode` reads back to the same key; the
/// plain NaNs still print as `NaN` and `-NaN`; bits that are not a NaN's are refused.
#[test]
fn pk_decode_keeps_a_nan_payload() {
    let cases = [
        ("x: f64", 0x7ff8_0000_0000_0001_u64, true),
        ("x: f64", 0xfff0_0000_0000_0001, true),
        ("x: f64 desc", 0x7ff4_0000_0000_0000, true),
        ("x: f64", f64::NAN.to_bits(), false),
        ("x: f32", u64::from(0x7fc0_0001_u32), true),
        ("x: f32", u64::from(0xff80_0001_u32), true),
        ("x: f32", u64::from((-f32::NAN).to_bits()), false),
    ];
    for (spec, bits, payload) in cases {
        let text = if spec.contains("f32") {
            let f = f32::from_bits(u32::try_from(bits).unwrap());
            format!("NaN:{:#010x}", f.to_bits())
        } else {
            format!("NaN:{bits:#018x}")
        };
        let o = pk(&["encode", "--spec", spec, "--", &text]);
        assert_eq!(o.status.code(), Some(0), "{spec} {text}: {}", stderr(&o));
        let key = stdout(&o).trim().to_owned();
        let o = pk(&["decode", "--spec", spec, "--", &key]);
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let printed = json["x"].as_str().unwrap().to_owned();
        if payload {
            assert_eq!(printed, text, "{spec} {key}");
        } else {
            assert!(
                printed == "NaN" || printed == "-NaN",
                "{spec} {key}: {printed}"
            );
        }
        let o = pk(&["encode", "--spec", spec, "--", &printed]);
        assert_eq!(stdout(&o).trim(), key, "{spec} {printed}");
    }
    for bad in [
        "NaN:0x",
        "NaN:0x7ff0000000000000",
        "NaN:0x+7ff8000000000001",
        "NaN:0xzz",
    ] {
        let o = pk(&["encode", "--spec", "x: f64", "--", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(stderr(&o).contains("a NaN's bits"), "{bad}: {}", stderr(&o));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: support::cases(128),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any batches of puts and deletes over a few keys (so that keys repeat within a batch, or
    /// not), up to the table's batch size: through the table model's `RangeStore` bridge, each
    /// batch answers as the in-memory store does and leaves the same rows.
    #[test]
    fn table_batches_apply_in_order_as_in_memory(
        batches in proptest::collection::vec(
            proptest::collection::vec((0u8..6, proptest::option::of(0u8..4)), 1..=200),
            1..6,
        ),
    ) {
        let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
        let memory = MemoryStore::default();
        for batch in &batches {
            let ops: Vec<WriteOp> = batch
                .iter()
                .map(|&(k, v)| match v {
                    Some(v) => WriteOp::Put { key: format!("k{k}"), value: vec![v] },
                    None => WriteOp::Delete { key: format!("k{k}") },
                })
                .collect();
            let t = RangeStore::batch_write(&table, &ops);
            let m = memory.batch_write(&ops).unwrap();
            proptest::prop_assert!(t.is_ok(), "{ops:?}: {t:?}");
            let t = t.unwrap();
            proptest::prop_assert_eq!(
                t.iter().map(Result::is_ok).collect::<Vec<_>>(),
                m.iter().map(Result::is_ok).collect::<Vec<_>>()
            );
        }
        let all = RangeQuery::new("", None);
        proptest::prop_assert_eq!(table.range(&all).unwrap().rows, memory.range(&all).unwrap().rows);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: support::cases(32),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any dump of rows, with blank lines anywhere and its lines ended by `\n`, `\r\n` or a lone
    /// `\r`, and some of its rows malformed (one field where the header has two): `pk analyze`
    /// names each malformed row by its line in the file.
    #[test]
    fn pk_analyze_names_every_malformed_row_by_its_line(
        ending in 0usize..3,
        lines in proptest::collection::vec((0u8..4, proptest::bool::ANY), 1..40),
    ) {
        let end = ["\n", "\r\n", "\r"][ending];
        let mut body = format!("k,t{end}");
        let mut line = 1;
        let mut bad = Vec::new();
        for (i, (kind, blank_before)) in lines.iter().enumerate() {
            if *blank_before {
                body.push_str(end);
                line += 1;
            }
            line += 1;
            if *kind == 0 {
                body.push_str(&format!("bad{i}{end}"));
                bad.push(line);
            } else {
                body.push_str(&format!("k{i},{i}{end}"));
            }
        }
        let dir = temp_dir(&format!("anylines-{ending}"));
        let f = dump(&dir, "rows.csv", &body);
        let o = pk(&["analyze", &f, "--key", "k"]);
        let err = stderr(&o);
        proptest::prop_assert_eq!(o.status.code(), Some(0), "{}", err);
        // The first malformed rows are shown one by one, in file order.
        let shown: Vec<u64> = err
            .lines()
            .filter_map(|l| l.split_once("rows.csv line ")?.1.split_once(':')?.0.parse().ok())
            .collect();
        proptest::prop_assert!(!shown.is_empty() || bad.is_empty(), "{}", err);
        proptest::prop_assert_eq!(&shown[..], &bad[..shown.len()], "{:?}\n{}", body, err);
    }
}
