//! `pk_codec::table::analysis`: the report `pk analyze --json` prints is the library's report,
//! field for field; verdicts come from a partition's capacity (a time-first design fails the
//! gate wherever its tail's busiest window passes it, entity-first and hashed designs pass, on
//! several stores and load scales); the headroom matches a brute-force search.

use std::fmt::Write as _;

use pk_codec::table::analysis::{
    Analysis, AnalysisOptions, AnalysisReport, DesignSpec, StoreProfile, Verdict, Where,
};

use crate::support::{pk, stderr, stdout, temp_dir};

const TIME_FIRST: &str = "ts: u64 width=13";
const CARD_FIRST: &str = "card_id: u32 width=6; order_no: u64 width=8";
const HASHED: &str = "order_no: u64 width=8; hash=md5:4";

/// `(order number, card, time)`: a day of orders in bursts (busy hours ten times the quiet
/// ones), order numbers rising with time.
fn orders(n: u64) -> Vec<(u64, u32, i64)> {
    let mut next = 7u64;
    let mut t = 1_700_000_000_000i64;
    (0..n)
        .map(|i| {
            next = next
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let busy = (i / 500) % 4 == 0;
            t += if busy { 1_000 } else { 10_000 };
            (10_000_000 + i, (next >> 40) as u32 % 100_000, t)
        })
        .collect()
}

fn csv(rows: &[(u64, u32, i64)]) -> String {
    let mut s = String::from("order_no,card_id,ts\n");
    for (o, c, t) in rows {
        let _ = writeln!(s, "{o},{c},{t}");
    }
    s
}

/// The library's report of `rows` under the three designs.
fn report(rows: &[(u64, u32, i64)], store: StoreProfile, scale: f64) -> AnalysisReport {
    let mut options = AnalysisOptions::default();
    options.store = store;
    options.load_scale = scale;
    options.time = Some("ts".to_owned());
    options.fail_above = Some(0.5);
    let designs = [TIME_FIRST, CARD_FIRST, HASHED]
        .iter()
        .map(|d| DesignSpec::layout(d).unwrap())
        .collect();
    let mut a = Analysis::new(designs, options).unwrap();
    let header: Vec<String> = ["order_no", "card_id", "ts"].map(String::from).to_vec();
    a.header(&header, "orders.csv").unwrap();
    for (i, (o, c, t)) in rows.iter().enumerate() {
        let fields = [o.to_string(), c.to_string(), t.to_string()];
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        let at = Where {
            file: "orders.csv",
            line: i as u64 + 2,
        };
        a.row(&fields, *t, &at).unwrap();
    }
    a.seal().unwrap();
    a.finish().unwrap().0
}

/// The writes of the busiest window of `window_ms` with the rows replayed `scale` times
/// faster, counting only rows above every key before them (a time-first key: all of them):
/// computed here from the rows, apart from the library.
fn tail_peak(rows: &[(u64, u32, i64)], scale: f64, window_ms: i64) -> u64 {
    let mut sorted: Vec<i64> = rows.iter().map(|r| r.2).collect();
    sorted.sort_unstable();
    let t0 = sorted[0];
    let mut counts = std::collections::BTreeMap::<i64, u64>::new();
    for t in sorted {
        let scaled = t0 + ((t - t0) as f64 / scale).floor() as i64;
        *counts.entry(scaled.div_euclid(window_ms)).or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

/// `pk analyze --json` prints the library's report: every field, the same value.
#[test]
fn pk_analyze_json_is_the_library_report() {
    let rows = orders(3_000);
    let dir = temp_dir("analysis-report");
    let file = dir.join("orders.csv");
    std::fs::write(&file, csv(&rows)).unwrap();
    let file = file.display().to_string();
    let o = pk(&[
        "analyze",
        &file,
        "--time",
        "ts",
        "--design",
        TIME_FIRST,
        "--design",
        CARD_FIRST,
        "--design",
        HASHED,
        "--fail-above",
        "0.5",
        "--load-scale",
        "100",
        "--json",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    let built = report(&rows, StoreProfile::named("generic").unwrap(), 100.0);
    // The very text: every field, every digit.
    assert_eq!(
        stdout(&o).trim_end(),
        serde_json::to_string(&built).unwrap()
    );
    assert_eq!(built.designs.len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// On every store and load scale, the time-first design is HOT and fails the gate exactly
/// where its tail's busiest window passes one partition's capacity; the entity-first and
/// hashed designs never fail.
#[test]
fn the_gate_fails_a_tail_past_one_partitions_capacity_on_every_store() {
    let rows = orders(4_000);
    let stores = [
        StoreProfile::named("generic").unwrap(),
        StoreProfile::named("dynamodb")
            .unwrap()
            .with_split_ops(1_000),
        StoreProfile::named("tikv")
            .unwrap()
            .with_write_capacity(2_000),
        StoreProfile::named("hbase")
            .unwrap()
            .with_write_capacity(500),
    ];
    for store in stores {
        let capacity = store.capacity().unwrap();
        for scale in [1.0, 50.0, 100.0, 150.0, 1_000.0, 5_000.0] {
            let r = report(&rows, store.clone(), scale);
            let by = |name: &str| r.designs.iter().find(|d| d.design == name).unwrap();
            let peak = tail_peak(&rows, scale, capacity.window_ms);
            let tail = by(TIME_FIRST);
            let past = peak > capacity.writes_per_window;
            let what = format!("{} at {scale}x: peak {peak}, {tail:?}", store.name);
            assert_eq!(tail.fails, past, "{what}");
            assert_eq!(tail.verdict == Verdict::Concentrated, past, "{what}");
            if past {
                assert_eq!(
                    tail.throttling.uncured_writes,
                    // At least the busiest window's excess.
                    tail.throttling
                        .uncured_writes
                        .max(peak - capacity.writes_per_window),
                    "{what}"
                );
            }
            for spread in [by(CARD_FIRST), by(HASHED)] {
                assert!(!spread.fails, "{} at {scale}x: {spread:?}", store.name);
                assert_ne!(spread.verdict, Verdict::Concentrated, "{spread:?}");
            }
        }
    }
}

/// A store without a published per-partition capacity asks for the option, naming it.
#[test]
fn a_store_without_a_published_capacity_asks_for_the_option() {
    let mut options = AnalysisOptions::default();
    options.store = StoreProfile::named("hbase").unwrap();
    let err = Analysis::new(vec![DesignSpec::line()], options)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("--write-capacity") && err.contains("hbase"),
        "{err}"
    );
}

/// The headroom is the largest multiple at which the tail's busiest window stays within one
/// partition's capacity: a brute-force search over candidate multiples (1% apart), from the
/// rows alone, lands within the report's tolerance of it.
#[test]
fn headroom_matches_a_brute_force_search() {
    let rows = orders(4_000);
    for store in [
        StoreProfile::named("generic").unwrap(),
        StoreProfile::named("dynamodb")
            .unwrap()
            .with_split_ops(200)
            .with_write_capacity(200),
    ] {
        let capacity = store.capacity().unwrap();
        let r = report(&rows, store.clone(), 1.0);
        let by = |name: &str| r.designs.iter().find(|d| d.design == name).unwrap();
        let h = &by(TIME_FIRST).headroom;
        let reported = h.multiple.expect("the tail throttles within 1000x");
        // Brute force: the largest multiple on a 1% grid whose tail fits.
        let mut m = 0.01f64;
        let mut best = 0.0;
        while m <= h.searched_up_to {
            if tail_peak(&rows, m, capacity.window_ms) <= capacity.writes_per_window {
                best = m;
            }
            m *= 1.01;
        }
        assert!(
            (reported - best).abs() <= 0.10 * best,
            "{}: reported {reported}, brute force {best}",
            store.name
        );
        assert!(h.first_throttled_by.as_deref().unwrap().contains("tail"));
        // The spread designs' tails stay small: beyond the largest multiple tried, or far above
        // the time-first design's.
        for d in [by(CARD_FIRST), by(HASHED)] {
            assert!(
                d.headroom.multiple.is_none_or(|x| x > 10.0 * reported),
                "{}: {:?}",
                store.name,
                d.headroom
            );
        }
    }
}
