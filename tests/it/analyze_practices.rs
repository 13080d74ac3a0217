//! `pk analyze` checks the table-design practices beyond the key: each finding names what, where
//! (column, design, an example line) and the practices' fix, the JSON carries every finding, and
//! `--fail-on` gates on chosen ones.

use std::fmt::Write as _;
use std::path::Path;

use crate::support::{pk, stderr, stdout, temp_dir};

fn write(dir: &Path, name: &str, body: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, body).unwrap();
    file.display().to_string()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// `pk analyze FILE --time ts --design 'id: u32 width=4'`: the arguments most tests share.
fn base(file: &str) -> Vec<&str> {
    vec![
        "analyze",
        file,
        "--time",
        "ts",
        "--design",
        "id: u32 width=4",
    ]
}

/// [`base`] with `extra` and `--json`: the JSON report.
fn analyze_json(file: &str, extra: &[&str]) -> serde_json::Value {
    json(&pk(&[&base(file)[..], extra, &["--json"]].concat()))
}

fn findings<'a>(v: &'a serde_json::Value, code: &str) -> Vec<&'a serde_json::Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// A 3 MB value is over the store's 2 MB limit: named with its column and line, and
/// `--fail-on over-2mb` fails the run on it (without it, the report only says so).
#[test]
fn a_value_over_2mb_is_named_with_its_line_and_column() {
    let dir = temp_dir("practices-2mb");
    let mut body = String::from("id,ts,photo,note\n");
    for i in 0..50u64 {
        let photo = if i == 17 {
            "p".repeat(3 << 20)
        } else {
            "small".into()
        };
        let _ = writeln!(body, "{i},{},{photo},n", 1_700_000_000_000 + i * 1_000);
    }
    let file = write(&dir, "photos.csv", &body);
    let base = base(&file);
    let out = pk(&[&base[..], &["--json"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let over = findings(&v, "over-2mb");
    assert_eq!(over.len(), 1, "{v}");
    // Line 19: the header is line 1, row i is line i + 2.
    assert_eq!(
        (
            &over[0]["column"],
            &over[0]["example_line"],
            &over[0]["rows"]
        ),
        (&"photo".into(), &19.into(), &1.into())
    );
    assert!(over[0]["fix"].as_str().unwrap().contains("object storage"));
    let gated = pk(&[&base[..], &["--fail-on", "over-2mb"]].concat());
    assert_eq!(gated.status.code(), Some(2), "{}", stderr(&gated));
    assert!(stderr(&gated).contains("over-2mb"), "{}", stderr(&gated));
    assert!(
        stdout(&gated).contains("column \"photo\", e.g. line 19"),
        "{}",
        stdout(&gated)
    );
    let unknown = pk(&[&base[..], &["--fail-on", "over-3mb"]].concat());
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("partition-volume"),
        "{}",
        stderr(&unknown)
    );
}

/// Decimals that look like money are named with the signal that fired and the fix (a Long of
/// the smallest unit): two fractional digits, a money word in the name, or both; integers and
/// text are not money.
#[test]
fn money_held_as_floating_point_is_named_with_the_signal() {
    let dir = temp_dir("practices-money");
    let mut body = String::from("id,ts,total,fee,weight,qty,label\n");
    for i in 0..200u64 {
        let _ = writeln!(
            body,
            "{i},{},{}.{:02},{}.{:03},{}.{},{},x{i}",
            1_700_000_000_000 + i * 1_000,
            i * 3,
            i % 100,
            i,
            i % 1000,
            i,
            i % 10,
            i
        );
    }
    let file = write(&dir, "orders.csv", &body);
    let v = analyze_json(&file, &[]);
    let money = findings(&v, "money-as-float");
    let columns: Vec<&str> = money
        .iter()
        .map(|f| f["column"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["total", "fee"], "{v}");
    let total = money[0]["message"].as_str().unwrap();
    assert!(
        total.contains("two fractional digits") && !total.contains("name says"),
        "{total}"
    );
    let fee = money[1]["message"].as_str().unwrap();
    assert!(
        fee.contains("name says \"fee\"") && !fee.contains("two fractional"),
        "{fee}"
    );
    assert!(money[0]["fix"].as_str().unwrap().contains("532 cents"));
}

/// The data under one partition-key value grows toward the line: named with the date it crosses
/// at the dump's own rate, under the design whose key it is; splicing another column into the
/// partition key spreads that value's rows and clears the finding.
#[test]
fn a_partition_value_crossing_the_line_is_named_and_splicing_clears_it() {
    let dir = temp_dir("practices-volume");
    let mut body = String::from("card_id,device_id,ts,amount_cents\n");
    for i in 0..4_000u64 {
        // Every other purchase is card 7's, over 60 devices.
        let card = if i % 2 == 0 { 7 } else { 1_000 + i };
        let _ = writeln!(
            body,
            "{card},{},{},{}",
            i % 60,
            1_700_000_000_000 + i * 60_000,
            100 + i
        );
    }
    let file = write(&dir, "cards.csv", &body);
    let card = "card_id: u32 width=6";
    let spliced = "card_id: u32 width=6; device_id: u32 width=2";
    // Card 7 holds about 2,000 rows of some 30 bytes: 60 KB over the dump's 2.8 days, so a
    // 1 MB line is crossed in about a month and a half.
    let args = |design: &str| {
        pk(&[
            "analyze",
            &file,
            "--time",
            "ts",
            "--design",
            design,
            "--partition-limit",
            "1000000",
            "--json",
        ])
    };
    let v = json(&args(card));
    let volume = findings(&v, "partition-volume");
    assert_eq!(volume.len(), 1, "{v}");
    let message = volume[0]["message"].as_str().unwrap();
    assert!(
        message.contains("\"000007\"") && message.contains("days after"),
        "{message}"
    );
    assert_eq!(volume[0]["design"], card);
    let top = &v["designs"][0]["top_values"][0];
    assert_eq!(
        (&top["value"], &top["rows"]),
        (&"000007".into(), &2_000.into())
    );
    let after = top["crossing_ms_after_end"].as_i64().unwrap();
    assert!(
        (20 * 86_400_000..100 * 86_400_000).contains(&after),
        "{after}"
    );
    let text = stdout(&pk(&[
        "analyze",
        &file,
        "--time",
        "ts",
        "--design",
        card,
        "--partition-limit",
        "1000000",
    ]));
    assert!(text.contains("crosses the line 2023-"), "{text}");
    let v = json(&args(spliced));
    assert!(findings(&v, "partition-volume").is_empty(), "{v}");
}

/// Large text is named with a compression estimate, a column far larger than the rest with
/// the second-table fix, rows past ten thousand attribute columns as too wide, and a table
/// growing past 20 billion rows in five years as the table's size.
#[test]
fn large_text_wide_rows_and_table_size_are_named() {
    let dir = temp_dir("practices-text");
    let mut body = String::from("id,ts,body,tag\n");
    let mut next = 7u64;
    for i in 0..300u64 {
        let text: String = (0..2_000)
            .map(|_| {
                next = next.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                char::from(b'a' + ((next >> 59) as u8 % 16))
            })
            .collect();
        let _ = writeln!(body, "{i},{},{text},t", 1_700_000_000_000 + i);
    }
    let file = write(&dir, "posts.csv", &body);
    let v = analyze_json(&file, &[]);
    let text = findings(&v, "large-text");
    assert_eq!(text.len(), 1, "{v}");
    // Sixteen letters drawn evenly: 4 bits of 8, about half the size.
    let message = text[0]["message"].as_str().unwrap();
    assert!(message.contains("about 50%"), "{message}");
    assert_eq!(findings(&v, "split-columns")[0]["column"], "body");
    // 300 rows in 0.3 s: billions of rows a year at this rate.
    let size = findings(&v, "table-size");
    assert_eq!(size.len(), 1, "{v}");
    assert!(v["table"]["projected"][2]["rows"].as_u64().unwrap() > 20_000_000_000);

    let columns: Vec<String> = (0..10_001).map(|c| format!("c{c}")).collect();
    let mut wide = format!("id,ts,{}\n", columns.join(","));
    for i in 0..3u64 {
        let _ = writeln!(
            wide,
            "{i},{},{}",
            i * 3_600_000,
            vec!["1"; 10_001].join(",")
        );
    }
    let file = write(&dir, "wide.csv", &wide);
    let v = analyze_json(&file, &[]);
    let wide = findings(&v, "wide-row");
    assert_eq!(wide.len(), 1, "{v}");
    assert_eq!(wide[0]["example_line"], 2);
    assert!(findings(&v, "table-size").is_empty(), "{v}");
}

/// `--columns` chooses the attribute columns: a column left out is not checked.
#[test]
fn columns_chooses_what_is_checked() {
    let dir = temp_dir("practices-columns");
    let mut body = String::from("id,ts,price,note\n");
    for i in 0..100u64 {
        let _ = writeln!(body, "{i},{},{}.99,n", 1_700_000_000_000 + i * 1_000, i);
    }
    let file = write(&dir, "prices.csv", &body);
    let run = |columns: &str| analyze_json(&file, &["--columns", columns]);
    assert_eq!(findings(&run("price,note"), "money-as-float").len(), 1);
    assert!(findings(&run("note"), "money-as-float").is_empty());
    let missing = pk(&[&base(&file)[..], &["--columns", "cost"]].concat());
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no column \"cost\""),
        "{}",
        stderr(&missing)
    );
}
