//! The `pk` binary, run on fixture files: key-design vectors through `encode`/`decode`, the
//! hotspot gate of `analyze`, and every bad-input case with its exit status and message.

use std::path::Path;

use crate::support::{pk, stderr, stdout};

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
        "--ops-per-tick",
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
