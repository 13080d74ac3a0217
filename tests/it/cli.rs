//! The `pk` binary, run on fixture files: key-design vectors through `encode`/`decode`, the
//! hotspot gate of `analyze`, and every bad-input case with its exit status and message.
//!
//! Also each bug `pk` once had, with the answer it now gives: a closed output pipe, the values
//! `decode` prints (non-finite floats, NaN payloads, sub-millisecond timestamps, non-UTF-8
//! bytes) and `encode` reads back, values led by a minus, and `analyze` on odd, malformed,
//! huge or unreadable input.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::support;
use crate::support::{pk, pk_binary, stderr, stdout, temp_dir};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli")
        .join(name)
        .display()
        .to_string()
}

const SPLICED: &str = "device_id: u32 width=6; seller_id: str; card_id: u64 width=6";

#[test]
fn encode_and_decode_the_key_design_vectors() {
    let o = pk(&["encode", "--spec", SPLICED, "54", "a100", "6777"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "000054,a100,006777\n");
    let o = pk(&["decode", "--spec", SPLICED, "000054,a100,006777"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"device_id": 54, "seller_id": "a100", "card_id": 6777})
    );
    // The facts' MD5 prefixes, through encode, hash and decode.
    for (order, prefix) in [("200001", "ee8f"), ("200002", "7db8"), ("200005", "a210")] {
        let spec = "order_number: u64 width=6; hash=md5:4";
        let o = pk(&["encode", "--spec", spec, order]);
        assert_eq!(stdout(&o), format!("{prefix}{order}\n"));
        let o = pk(&["hash", "--alg", "md5", "--len", "4", order]);
        assert_eq!(stdout(&o), format!("{prefix}\n"));
        let o = pk(&["decode", "--spec", spec, &format!("{prefix}{order}")]);
        assert_eq!(stdout(&o).trim(), format!("{{\"order_number\":{order}}}"));
    }
}

#[test]
fn ranges_and_splits() {
    let spec = "device_id: u32 width=4; card_id: u32 width=6";
    let o = pk(&["ranges", "--spec", spec, "--from", "15", "--to", "99"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "0015 0099-\n");
    let o = pk(&["splits", "--spec", "n: u64 width=8; hash=md5:4", "-n", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let points: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert!(points.len() >= 3, "{points:?}");
    assert!(points.windows(2).all(|w| w[0] < w[1]), "{points:?}");
}

#[test]
fn analyze_flags_a_sequential_key_and_clears_its_md5_twin() {
    let orders = fixture("orders.csv");
    let o = pk(&[
        "analyze",
        &orders,
        "--key",
        "order_no",
        "--time",
        "ts",
        "--fail-above",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).contains("sequential key"), "{}", stdout(&o));
    assert!(stderr(&o).contains("hotter than --fail-above 50.0%"));
    let o = pk(&[
        "analyze",
        &orders,
        "--design",
        "order_no: u64 width=8; hash=md5:4",
        "--time",
        "ts",
        "--fail-above",
        "0.5",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let share = json["hottest_share"].as_f64().unwrap();
    assert!(share < 0.3, "{share}");
    assert!(stderr(&o).contains("pk: 30000 rows from 1 file(s)"));
}

#[test]
fn analyze_compares_designs_side_by_side_and_explains_collapsed_buckets() {
    let o = pk(&[
        "analyze",
        &fixture("flights.csv"),
        "--time",
        "dep_ms",
        "--window-ms",
        "3600000",
        "--design",
        "dep_ms: u64 width=14; flight: u32 width=4; buckets=16:mod(dep_ms)",
        "--design",
        "dep_ms: u64 width=14; flight: u32 width=4; buckets=16:hash(flight)",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let designs = json["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 2);
    let modulo = designs[0]["hottest_share"].as_f64().unwrap();
    let hashed = designs[1]["hottest_share"].as_f64().unwrap();
    assert!(modulo > 0.9 && hashed < 0.5, "{modulo} {hashed}");
    assert!((json["hottest_share"].as_f64().unwrap() - modulo).abs() < 1e-12);
    let why = designs[0]["diagnostics"].to_string();
    assert!(why.contains("1 of 16 used"), "{why}");
    assert!(why.contains("multiple of 60000"), "{why}");
    assert!(why.contains("(dep_ms / 60000) % 16"), "{why}");
    assert!(
        designs[1]["diagnostics"]
            .to_string()
            .contains("16 of 16 used")
    );
}

#[test]
fn malformed_rows_are_reported_with_their_line_and_counted() {
    let file = fixture("malformed.csv");
    let o = pk(&["analyze", &file, "--key", "order_no", "--time", "ts"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("malformed.csv line 3: malformed row: expected 2 fields"),
        "{err}"
    );
    assert!(
        err.contains("malformed.csv line 5: malformed row: column ts: \"abc\""),
        "{err}"
    );
    assert!(
        err.contains("pk: 3 rows from 1 file(s) under 1 design(s)"),
        "{err}"
    );
    assert!(err.contains("2 malformed row(s) skipped"), "{err}");
    let o = pk(&[
        "analyze", &file, "--key", "order_no", "--time", "ts", "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("line 3: malformed row"),
        "{}",
        stderr(&o)
    );
    // Key lists: an empty line is malformed too.
    let o = pk(&["analyze", "--lines", &fixture("keys.txt")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("keys.txt line 3: malformed row: empty line"));
}

#[test]
fn bad_designs_and_values_are_errors_naming_line_column_and_rule() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--design",
                "order_no: u64 width=8",
                &fixture("bad_value.csv"),
            ],
            "bad_value.csv line 3, column order_no: field order_no: \"12x\" is not a u64",
        ),
        (
            &[
                "--design",
                "order_no: u64 width=8",
                &fixture("too_wide.csv"),
            ],
            "too_wide.csv line 4, columns order_no: cannot encode under design 'order_no: u64 width=8'",
        ),
        (
            &["--design", "nope: u32 width=4", &fixture("orders.csv")],
            "orders.csv line 1: no column \"nope\" in the header (field of design 'nope: u32 width=4')",
        ),
        (
            &[
                "--key",
                "order_no",
                "--time",
                "when",
                &fixture("orders.csv"),
            ],
            "no column \"when\" in the header (named by --time)",
        ),
        (
            &["--design", "x: nope", &fixture("orders.csv")],
            "bad design spec",
        ),
        (&[&fixture("orders.csv")], "give --key COLUMN"),
        (
            &[
                "--key",
                "order_no",
                "--fail-above",
                "2",
                &fixture("orders.csv"),
            ],
            "--fail-above takes a share from 0 to 1",
        ),
        (
            &["--key", "k", "/no/such/file.csv"],
            "cannot read /no/such/file.csv",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["analyze"];
        all.extend_from_slice(args);
        let o = pk(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    // Arguments clap refuses are bad input too: status 1, never the gate's 2.
    for flag in [
        "--window-ms",
        "--row-ms",
        "--split-ops",
        "--split-bytes",
        "--write-capacity",
    ] {
        let o = pk(&[
            "analyze",
            "--key",
            "order_no",
            flag,
            "0",
            &fixture("orders.csv"),
        ]);
        assert_eq!(o.status.code(), Some(1), "{flag} 0: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{flag} 0: {}", stderr(&o));
    }
    let o = pk(&["analyze", "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = pk(&["--help"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = pk(&["encode", "--spec", SPLICED, "54", "a100"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the spec has 3 fields, 2 values were given"));
    let o = pk(&["encode", "--spec", SPLICED, "x54", "a100", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("field device_id: \"x54\" is not a u32"));
    let o = pk(&["decode", "--spec", SPLICED, "zz"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot decode \"zz\""));
    let o = pk(&["hash", "--alg", "sha1", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown hash \"sha1\""));
}

/// A timestamp in ms too far from 1970 to count in nanoseconds (i128) is an error naming the
/// field and the value, from `encode` and from an `analyze` design, not an overflow panic.
#[test]
fn a_timestamp_too_far_from_1970_is_an_error_naming_field_and_value() {
    let huge = "170141183460469231731687303715884105727";
    let message = format!(
        "field t: \"{huge}\" is not a timestamp (milliseconds since 1970-01-01 UTC: too far from \
         1970 to count in nanoseconds)"
    );
    for value in [huge, "-170141183460469231731687303715885"] {
        let o = pk(&["encode", "--spec", "t: timestamp", "--", value]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("field t: \"{value}\" is not a timestamp")),
            "{}",
            stderr(&o)
        );
    }
    let dir = std::env::temp_dir().join(format!("pk-cli-timestamp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("huge_time.csv");
    std::fs::write(&csv, format!("t\n1\n{huge}\n")).unwrap();
    let o = pk(&[
        "analyze",
        "--design",
        "t: timestamp",
        &csv.display().to_string(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("huge_time.csv line 3, column t: {message}")),
        "{}",
        stderr(&o)
    );
}

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
    let diagnostics = json["designs"][0]["diagnostics"].to_string();
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

/// The CSV reader ends a record at `\r`, `\n` or `\r\n`, but the cap on a line's length
/// (16 MiB, README) counted bytes since the last `\n` only: a dump with classic Mac line ends
/// (`\r` alone) larger than 16 MiB was refused as "a line is longer than 16777216 bytes" though
/// its every line was short. Now `\r` ends a line too for the cap of a CSV dump (with
/// `--lines`, where a line ends at `\n`, it does not).
#[test]
fn pk_analyze_reads_a_large_dump_whose_lines_end_with_cr() {
    let dir = temp_dir("cr");
    let filler = "x".repeat(1_000);
    let rows = 17_500;
    let mut body = String::with_capacity(rows * 1_020);
    body.push_str("k,pad\r");
    for i in 0..rows {
        body.push_str(&format!("{i:08},{filler}\r"));
    }
    assert!(body.len() > 16 << 20);
    let file = dir.join("cr.csv");
    std::fs::write(&file, &body).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["rows"], serde_json::json!(rows));
    assert_eq!(json["malformed_rows"], serde_json::json!(0));
    // A CR-only file of keys under --lines is still one line (lines end at `\n`), refused by
    // the cap rather than read whole.
    let o = pk(&["analyze", "--lines", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `pk encode` (and `pk analyze --design`) read an `f32` or `f64` field with Rust's float
/// parser, which rounds a finite number beyond the type's range to infinity: `1e40` for an
/// `f32` was encoded as the key of `inf`, without a word. A number too large for the field
/// is refused, naming the field; infinities written as such (`inf`, `-infinity`) still
/// encode.
#[test]
fn pk_encode_refuses_a_float_too_large_for_its_field() {
    for (spec, text) in [
        ("x: f32", "1e40"),
        ("x: f32", "-3.5e38"),
        ("x: f64", "1e309"),
        ("x: f64", "-1.8e308"),
    ] {
        let o = pk(&["encode", "--spec", spec, "--", text]);
        assert_eq!(o.status.code(), Some(1), "{spec} {text}: {}", stdout(&o));
        assert!(stderr(&o).contains("field x"), "{}", stderr(&o));
    }
    for (spec, text, inf) in [
        ("x: f32", "inf", "inf"),
        ("x: f32", "Infinity", "inf"),
        ("x: f64", "+inf", "inf"),
        ("x: f32", "3.4028235e38", "3.4028235e38"),
    ] {
        let o = pk(&["encode", "--spec", spec, text]);
        assert_eq!(o.status.code(), Some(0), "{spec} {text}: {}", stderr(&o));
        let back = pk(&["encode", "--spec", spec, inf]);
        assert_eq!(stdout(&o), stdout(&back));
    }
}

/// `pk analyze` found a design's bucket prefix by reading its spec text for `buckets=`, where
/// the spec parser takes spaces around the `=` (and inside `mod( ts )`): a design written
/// `buckets = 16:mod(ts)` was analyzed under its 16 buckets, but its report lost the bucket
/// occupancy and the "rows collapsed" diagnosis the README promises a bucketed design. The
/// prefix is now read from the parsed layout, so every spelling reports the same.
#[test]
fn pk_analyze_diagnoses_buckets_however_the_spec_is_spaced() {
    let dir = temp_dir("spaced");
    let mut body = String::from("ts,x\n");
    for i in 1..=200 {
        body.push_str(&format!("{},a\n", i * 60_000));
    }
    let file = dir.join("minutes.csv");
    std::fs::write(&file, body).unwrap();
    let diagnostics = |design: &str| {
        let o = pk(&[
            "analyze",
            file.to_str().unwrap(),
            "--time",
            "ts",
            "--design",
            design,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{design}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        json["designs"][0]["diagnostics"].clone()
    };
    let canonical = diagnostics("ts: u64 width=13; buckets=16:mod(ts)");
    let text = canonical.to_string();
    assert!(text.contains("buckets: 1 of 16 used"), "{text}");
    assert!(text.contains("rows collapsed"), "{text}");
    for spaced in [
        "ts: u64 width=13; buckets = 16:mod(ts)",
        "ts: u64 width=13; buckets =16:mod( ts )",
        " ts : u64 width=13 ;  buckets  =  16:mod(ts)  ",
    ] {
        assert_eq!(diagnostics(spaced), canonical, "{spaced}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The text `pk encode` reads back for a value `pk decode` printed: a JSON string as it is,
/// anything else as JSON.
fn as_argument(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(24), ..ProptestConfig::default() })]

    /// `pk decode` prints a float as `pk encode` reads it back (its rustdoc: "what [`parse`]
    /// reads back"), but a value that starts with `-` and is not what clap takes for a negative
    /// number (`-inf`, `-NaN`, `-1e-5`, `-1e+300`, a string `-abc`) was refused as an unknown
    /// flag unless written after `--`: `pk encode --spec 'x: f64' -inf` failed with status 1.
    /// Now every argument that is not an option of the command is a value, wherever it stands,
    /// and `--from`/`--to` of `pk ranges` take such values too. The property: any `f64` (every
    /// bit pattern, so NaNs, infinities, subnormals and exponents of both signs) and a string
    /// led by `-` go through encode, decode and encode again, values before or after `--spec`.
    #[test]
    fn pk_encode_reads_back_every_value_pk_decode_prints(
        bits in any::<u64>(),
        // `-h` stays the help flag: the string `-h` is written after `--`.
        text in "-[a-z]{1,4}".prop_filter("-h is the help flag", |t| t != "-h"),
        spec_first in any::<bool>(),
    ) {
        let spec = "x: f64; s: str";
        let o = pk(&["encode", "--spec", spec, "--", &format!("NaN:{bits:#018x}"), &text]);
        let f = f64::from_bits(bits);
        let key = if f.is_nan() {
            prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o).trim().to_owned()
        } else {
            let o = pk(&["encode", "--spec", spec, "--", &format!("{f:e}"), &text]);
            prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o).trim().to_owned()
        };
        let o = pk(&["decode", "--spec", spec, &key]);
        prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        // The number as printed: serde_json (without `float_roundtrip`) may read it a bit off.
        let rest = &out[out.find("\"x\":").unwrap() + 4..];
        let x = rest[..rest.find([',', '}']).unwrap()].trim_matches('"').to_owned();
        let s = as_argument(&json["s"]);
        let o = if spec_first {
            pk(&["encode", "--spec", spec, &x, &s])
        } else {
            pk(&["encode", &x, &s, "--spec", spec])
        };
        prop_assert_eq!(o.status.code(), Some(0), "{} {}: {}", x, s, stderr(&o));
        let again = stdout(&o);
        prop_assert_eq!(again.trim(), key.as_str());
    }
}

/// `pk ranges` takes a leading value and `--from`/`--to` that start with `-` in any order.
#[test]
fn pk_ranges_takes_values_led_by_a_minus_anywhere() {
    let spec = "a: str; b: f64";
    let want = pk(&[
        "ranges", "--spec", spec, "--from", "-1e-5", "--to", "1", "--", "-x",
    ]);
    assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
    for args in [
        &[
            "ranges", "--spec", spec, "-x", "--from", "-1e-5", "--to", "1",
        ][..],
        &["ranges", "-x", "--spec", spec, "--from=-1e-5", "--to", "1"][..],
        &[
            "ranges", "--from", "-1e-5", "-x", "--to", "1", "--spec", spec,
        ][..],
    ] {
        let o = pk(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&want), "{args:?}");
    }
    let o = pk(&["ranges", "--spec", spec, "--from", "-inf", "-x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An unknown option is still one, not a value.
    let o = pk(&["encode", "--spec", "x: str", "--frm", "a"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--frm"), "{}", stderr(&o));
}

/// The 16 MiB cap of `pk analyze` bounded a line, but the CSV reader holds a whole record, and
/// a quoted field spans lines: a quote left open in a column the command does not read took
/// every line after it into one field, held in memory whole (a 60 MB dump: 72 MB), and the
/// rows it swallowed vanished without a message (1 row read, 0 malformed). A record past
/// 16 MiB is now refused as a line is, naming the line it starts on, while quoted fields that
/// span a few lines, and quotes inside unquoted fields (`5" screen`), read as before.
#[test]
fn pk_analyze_bounds_a_record_that_a_quoted_field_runs_on() {
    let dir = temp_dir("record");
    let filler = "x".repeat(1_000);
    let rows = 17_500;
    // A quote left open in the unused column `v` on line 3.
    let mut open = String::from("k,v\na,fine\nb,\"open\n");
    for i in 0..rows {
        open.push_str(&format!("{i:08},{filler}\n"));
    }
    assert!(open.len() > 16 << 20);
    let file = dir.join("open.csv");
    std::fs::write(&file, &open).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than"), "{}", stderr(&o));
    // Stray quotes inside unquoted fields, and short quoted fields over lines, in a large dump.
    let mut fine = String::from("k,v\n");
    for i in 0..rows {
        if i % 100 == 0 {
            fine.push_str(&format!("{i:08},\"two\nlines, \"\"quoted\"\"\"\n"));
        } else {
            fine.push_str(&format!("{i:08},a 5\" screen {filler}\n"));
        }
    }
    assert!(fine.len() > 16 << 20);
    let file = dir.join("fine.csv");
    std::fs::write(&file, &fine).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["rows"], serde_json::json!(rows));
    assert_eq!(json["malformed_rows"], serde_json::json!(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `pk hash` hashed any text but one that starts with `-` (a negative order number, `-abc`),
/// which clap took for a flag: `pk hash -5` failed with status 1. Its text is a value as those
/// of `encode`, `decode` and `ranges` are.
#[test]
fn pk_hash_takes_a_text_led_by_a_minus() {
    for text in ["-5", "-abc", "-inf"] {
        let want = pk(&["hash", "--alg", "md5", "--len", "8", "--", text]);
        assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
        for args in [
            &["hash", text][..],
            &["hash", text, "--alg", "md5", "--len", "8"][..],
            &["hash", "--len", "8", text, "--alg=md5"][..],
        ] {
            let o = pk(args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            if args.len() > 2 {
                assert_eq!(stdout(&o), stdout(&want), "{args:?}");
            }
        }
    }
}

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

#[test]
fn binary_keys_are_printed_and_read_as_hex() {
    let spec = "device_id: u32 width=6; seller_id: str";
    let o = pk(&["encode", "--spec", spec, "--form", "binary", "54", "a100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "000036613130300001\n");
    // The spec's own form, and a key decoded back.
    let o = pk(&[
        "decode",
        "--spec",
        &format!("{spec}; form=binary"),
        "000036613130300001",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"device_id":54,"seller_id":"a100"}"#);
    // --form text overrides the spec's form.
    let o = pk(&[
        "encode",
        "--spec",
        &format!("{spec}; form=binary"),
        "--form",
        "text",
        "54",
        "a100",
    ]);
    assert_eq!(stdout(&o), "000054,a100\n");
    // Bad hex, a damaged key and an unknown form are errors naming what is wrong.
    let o = pk(&["decode", "--spec", spec, "--form", "binary", "0000003"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("two digits a byte"), "{}", stderr(&o));
    let o = pk(&[
        "decode",
        "--spec",
        spec,
        "--form",
        "binary",
        "0000366131303000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot decode"), "{}", stderr(&o));
    let o = pk(&["encode", "--spec", spec, "--form", "bogus", "54", "a100"]);
    assert!(stderr(&o).contains("unknown --form"), "{}", stderr(&o));
    // Ranges in hex: a bucketed binary layout, the device fixing the bucket.
    let o = pk(&[
        "ranges",
        "--spec",
        "device_id: u32 width=6; ts: u64; buckets=4:hash(device_id)",
        "--form",
        "binary",
        "54",
        "--from",
        "10",
        "--to",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (start, end) = lines[0].split_once(' ').unwrap();
    assert!(start.ends_with("000036000000000000000a"), "{start}");
    assert!(end.ends_with("0000360000000000000015"), "{end}");
}

/// `pk decode --form binary` reads a key as the crate's messages print it (`0x...`, either
/// case) as well as the plain hex `pk encode` prints.
#[test]
fn pk_decode_reads_the_0x_hex_messages_print() {
    let spec = "device_id: u32 width=6; seller_id: str; form=binary";
    for key in [
        "0x000036613130300001",
        "0X000036613130300001",
        "000036613130300001",
    ] {
        let o = pk(&["decode", "--spec", spec, key]);
        assert_eq!(o.status.code(), Some(0), "{key}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), r#"{"device_id":54,"seller_id":"a100"}"#);
    }
    // A bad digit after the `0x` is named at its byte.
    let o = pk(&["decode", "--spec", spec, "0x0000z6"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("byte 6"), "{}", stderr(&o));
}

/// `pk splits` of a binary layout prints binary points as `0x` hex, inside the binary key
/// space (a bucket number's byte, a hash prefix's bytes), not the text points that sort above
/// every binary key.
#[test]
fn pk_splits_of_a_binary_layout_prints_hex_points_inside_its_key_space() {
    let spec = "device_id: u32; ts: u64; buckets=16:hash(device_id)";
    let o = pk(&[
        "splits",
        "--spec",
        &format!("{spec}; form=binary"),
        "-n",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "0x04\n0x08\n0x0c\n");
    let o = pk(&["splits", "--spec", spec, "--form", "binary", "-n", "1"]);
    assert_eq!(stdout(&o), "0x08\n");
    let o = pk(&["splits", "--spec", spec, "-n", "3"]);
    assert_eq!(stdout(&o), "04\n08\n12\n");
    let o = pk(&[
        "splits",
        "--spec",
        "n: u64; hash=md5:4; form=binary",
        "-n",
        "3",
    ]);
    assert_eq!(stdout(&o), "0x4000\n0x8000\n0xc000\n");
    // Every binary key of the layout lies below the last point's successor space: its first
    // byte is a bucket number, below 16.
    let o = pk(&["encode", "--spec", spec, "--form", "binary", "54", "1"]);
    let key = stdout(&o);
    assert!(key.as_str() < "10", "{key}");
}

#[test]
fn analyze_judges_binary_designs_as_it_judges_text_ones() {
    let orders = fixture("orders.csv");
    let share = |design: &str| {
        let o = pk(&[
            "analyze", &orders, "--design", design, "--time", "ts", "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{design}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        json["hottest_share"].as_f64().unwrap()
    };
    // A sequential key runs one partition hot in either form; a hash prefix spreads it in
    // either form.
    assert!(share("order_no: u64 width=8; form=binary") > 0.9);
    assert!(share("order_no: u64 width=8") > 0.9);
    assert!(share("order_no: u64 width=8; hash=md5:4; form=binary") < 0.3);
    assert!(share("order_no: u64 width=8; buckets=16:hash(order_no); form=binary") < 0.3);
}
