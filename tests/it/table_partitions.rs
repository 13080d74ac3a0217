//! Splits by size and load, merges, pre-splitting (with split points from a sample or from a
//! layout's prefix), the load report, the capacity model and the heatmap.
//!
//! Also the hotspot meter's windows, a weightless row in a size split, hand-built heatmaps and
//! their SVGs, throttled partitions under range reads, refused pre-split points, and a replay
//! given a clock that is not the table's.

use pk_codec::Layout;
use pk_codec::table::{
    Attribute, Clock, Heatmap, HeatmapOptions, ManualClock, Metric, PkColumn, PkType, PkValue,
    PrimaryKey, RangeRequest, ReadOptions, Row, Schema, Table, TableError, TableOptions,
    compare_designs, split_points_by_size, split_points_even,
};
use proptest::prelude::*;

use crate::support;

const T0: i64 = 1_700_000_000_000;

fn table(options: TableOptions) -> (Table, ManualClock) {
    let clock = ManualClock::new(T0);
    let t =
        Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone()).unwrap();
    (t, clock)
}

/// A table with one String key column, `options`, on `clock`.
fn string_table(options: TableOptions, clock: &ManualClock) -> Table {
    Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone()).unwrap()
}

fn all_keys(t: &Table, columns: usize) -> Vec<PrimaryKey> {
    let mut out = Vec::new();
    let mut start = PrimaryKey::inf_min(columns);
    loop {
        let r = t
            .get_range(&RangeRequest::forward(start, PrimaryKey::inf_max(columns)))
            .unwrap();
        out.extend(r.rows.into_iter().map(|r| r.key));
        match r.next_start {
            Some(k) => start = k,
            None => return out,
        }
    }
}

#[test]
fn partitions_split_by_size_between_key_values() {
    let (t, _) = table(TableOptions::default().split_size_bytes(1_000).no_merge());
    for i in 0..200 {
        // 4 + 1 + 8 + 20 = 33 bytes a row.
        t.put(
            format!("k{i:03}"),
            vec![Attribute::new("v", "x".repeat(20))],
        )
        .unwrap();
    }
    let report = t.report();
    assert!(report.partitions >= 7, "{}", report.partitions);
    assert_eq!(report.splits as usize, report.partitions - 1);
    for p in &report.partition_stats {
        assert!(p.bytes <= 1_000, "{p:?}");
    }
    // Bounds chain from INF_MIN to INF_MAX, each an existing key value.
    let bounds = t.partition_bounds();
    assert_eq!(bounds[0].0, PkValue::InfMin);
    assert_eq!(bounds.last().unwrap().1, PkValue::InfMax);
    for w in bounds.windows(2) {
        assert_eq!(w[0].1, w[1].0);
        let PkValue::String(s) = &w[1].0 else {
            panic!()
        };
        assert!(s.starts_with('k'));
    }
    assert_eq!(all_keys(&t, 1).len(), 200);
    assert_eq!(report.rows, 200);
    assert_eq!(report.bytes, 200 * 33);
}

#[test]
fn one_key_value_is_never_split() {
    let clock = ManualClock::new(T0);
    let schema = Schema::new(vec![
        PkColumn::new("device", PkType::String),
        PkColumn::new("seq", PkType::Integer),
    ])
    .unwrap();
    let t =
        Table::with_clock(schema, TableOptions::default().split_size_bytes(500), clock).unwrap();
    for i in 0..100 {
        t.put(vec!["hot".into(), i.into()], vec![Attribute::new("v", 1)])
            .unwrap();
    }
    assert_eq!(t.partition_count(), 1);
    t.put(vec!["a".into(), 0.into()], vec![]).unwrap();
    // "a" is split off; "hot" stays whole and is reported.
    let report = t.report();
    assert_eq!(report.partitions, 2);
    assert_eq!(t.partition_bounds()[1].0, PkValue::from("hot"));
    assert_eq!(report.oversized_key_values.len(), 1);
    let o = &report.oversized_key_values[0];
    assert_eq!(
        (o.value.clone(), o.rows, o.bytes),
        ("hot".into(), 100, 100 * (3 + 8 + 1 + 8 + 8))
    );
    assert!(report.summary().contains("oversized key value \"hot\""));
    assert_eq!(all_keys(&t, 2).len(), 101);
}

#[test]
fn a_load_split_balances_the_load() {
    let (t, _) = table(
        TableOptions::default()
            .split_load_ops(100)
            .load_sample_every(1)
            .no_merge(),
    );
    // 10% on "a", 20% on "b", 30% on "c", 40% on "d": the balanced point is "d" (60/40)
    // or "c" (30/70): "d" is closer.
    let weights = [("a", 1), ("b", 2), ("c", 3), ("d", 4)];
    'outer: for _ in 0..100 {
        for (k, w) in weights {
            for _ in 0..w {
                t.put(k, vec![]).unwrap();
                if t.partition_count() > 1 {
                    break 'outer;
                }
            }
        }
    }
    assert_eq!(t.partition_count(), 2);
    assert_eq!(t.partition_bounds()[1].0, PkValue::from("d"));
    assert_eq!(t.report().splits, 1);
}

#[test]
fn reads_count_towards_load_splits() {
    let (t, _) = table(
        TableOptions::default()
            .split_load_ops(50)
            .load_sample_every(1)
            .no_merge(),
    );
    for k in ["a", "b", "c", "d"] {
        t.put(k, vec![]).unwrap();
    }
    for i in 0..60 {
        let k = ["a", "b", "c", "d"][i % 4];
        t.get(k, &ReadOptions::default()).unwrap();
    }
    assert_eq!(t.partition_count(), 2);
    assert_eq!(t.partition_bounds()[1].0, PkValue::from("c"));
}

#[test]
fn a_hot_key_value_is_reported_not_split() {
    let (t, clock) = table(
        TableOptions::default()
            .split_load_ops(100)
            .load_sample_every(1),
    );
    for i in 0..300 {
        let k = if i % 10 == 0 { "cold" } else { "hot" };
        t.put(k, vec![]).unwrap();
    }
    assert_eq!(t.partition_count(), 1);
    let report = t.report();
    assert_eq!(report.hot_key_values.len(), 1);
    let h = &report.hot_key_values[0];
    assert_eq!(h.value, PkValue::from("hot"));
    assert!(h.share > 0.85 && h.share < 0.95, "{}", h.share);
    assert_eq!(h.window, T0 / 1000);
    assert!(report.summary().contains("no split can help"));
    // The next window tries again (and reports the same value once).
    clock.advance(1000);
    for _ in 0..200 {
        t.put("hot", vec![]).unwrap();
    }
    assert_eq!(t.report().hot_key_values.len(), 1);
}

#[test]
fn small_cold_neighbours_merge_again() {
    let (t, clock) = table(
        TableOptions::default()
            .split_size_bytes(1_000)
            .merge_below(250, 0),
    );
    for i in 0..100 {
        t.put(
            format!("k{i:03}"),
            vec![Attribute::new("v", "x".repeat(20))],
        )
        .unwrap();
    }
    let split = t.partition_count();
    assert!(split > 3);
    // Still hot in this window: no merge even when emptied.
    for i in 0..100 {
        t.delete(format!("k{i:03}")).unwrap();
    }
    clock.advance(1000);
    t.put("zz", vec![]).unwrap(); // closes the busy window: partitions were not cold
    assert!(t.partition_count() > 1);
    clock.advance(1000);
    t.get("zz", &ReadOptions::default()).unwrap(); // closes a quiet window
    let report = t.report();
    assert!(report.partitions < split, "{} {}", report.partitions, split);
    assert!(report.merges > 0);
    assert_eq!(all_keys(&t, 1), vec![PrimaryKey::from("zz")]);
}

#[test]
fn merges_keep_hysteresis_below_the_split_size() {
    let (t, clock) = table(TableOptions::default().split_size_bytes(1_000));
    for i in 0..100 {
        t.put(
            format!("k{i:03}"),
            vec![Attribute::new("v", "x".repeat(20))],
        )
        .unwrap();
    }
    let n = t.partition_count();
    for _ in 0..3 {
        clock.advance(1000);
        t.get("k000", &ReadOptions::default()).unwrap();
    }
    // Halves of a split hold ~500 bytes each, over the default merge size (250).
    assert_eq!(t.partition_count(), n);
}

#[test]
fn pre_split_points_are_kept() {
    let (t, clock) = table(TableOptions::default().pre_split(vec!["g".into(), "p".into()]));
    assert_eq!(
        t.partition_bounds(),
        vec![
            (PkValue::InfMin, "g".into()),
            ("g".into(), "p".into()),
            ("p".into(), PkValue::InfMax)
        ]
    );
    clock.advance(5_000);
    t.put("a", vec![]).unwrap();
    clock.advance(5_000);
    t.put("a", vec![]).unwrap();
    assert_eq!(t.partition_count(), 3);
}

#[test]
fn split_points_for_a_sample_of_keys() {
    let sample: Vec<PkValue> = (0..1000)
        .map(|i| format!("{:04}", i * 7 % 1000).into())
        .collect();
    let points = split_points_even(sample.clone(), 4).unwrap();
    assert_eq!(points, vec!["0250".into(), "0500".into(), "0750".into()]);
    let points = split_points_by_size(sample.iter().map(|v| (v.clone(), 10)), 2_500).unwrap();
    assert_eq!(points, vec!["0250".into(), "0500".into(), "0750".into()]);
    assert_eq!(
        split_points_even(sample, 0),
        Err(TableError::InvalidSplitPoint {
            index: 0,
            reason: "the number of ranges must be above 0"
        })
    );
    assert_eq!(
        split_points_by_size(vec![], 0),
        Err(TableError::InvalidSplitPoint {
            index: 0,
            reason: "the size per range must be above 0"
        })
    );
    // A value never straddles a point, even when heavy.
    let sample = vec![
        ("a".into(), 5),
        ("b".into(), 100),
        ("b".into(), 100),
        ("c".into(), 5),
    ];
    assert_eq!(
        split_points_by_size(sample, 50).unwrap(),
        vec![PkValue::from("b"), "c".into()]
    );
    let points = split_points_even(vec!["x".into(); 10], 3).unwrap();
    assert!(points.is_empty());
}

#[test]
fn split_points_pre_split_a_table_evenly() {
    let hashed: Layout = "order_number: u64 width=8; hash=md5:4".parse().unwrap();
    let points = hashed.shape().split_points(15).unwrap();
    assert_eq!(points.len(), 15);
    assert_eq!(points[0], "1000");
    assert_eq!(points[14], "f000");
    let buckets: Layout = "ts: u64; buckets=16:mod(ts):sep".parse().unwrap();
    assert_eq!(
        buckets.shape().split_points(15).unwrap(),
        (1..16).map(|b| format!("{b:02}")).collect::<Vec<_>>()
    );
    // The points pre-split a table into 16 partitions.
    let table = Table::new(
        Schema::single_string("pk").unwrap(),
        TableOptions::default().pre_split(points.iter().map(|p| p.as_str().into()).collect()),
    )
    .unwrap();
    assert_eq!(table.partition_count(), 16);
    // More points than prefix values, or no prefix at all: an error that says what to do.
    assert!(buckets.shape().split_points(16).is_err());
    let err = "ts: u64"
        .parse::<Layout>()
        .unwrap()
        .shape()
        .split_points(4)
        .unwrap_err();
    assert!(err.to_string().contains("split from a sample"), "{err}");
}

#[test]
fn the_report_shows_skew_per_window() {
    let points = vec!["4".into(), "8".into(), "c".into()];
    // Even: 4 partitions, the same load on each.
    let (even, clock) = table(TableOptions::default().pre_split(points.clone()));
    for w in 0..3 {
        for k in ["0", "5", "9", "d"] {
            even.put(k, vec![]).unwrap();
        }
        clock.set(T0 + (w + 1) * 1000);
    }
    let r = even.report();
    assert_eq!(
        (r.partitions, r.partitions_with_writes, r.writes),
        (4, 4, 12)
    );
    assert!((r.hottest_share - 0.25).abs() < 1e-9);
    assert!((r.max_over_mean - 1.0).abs() < 1e-9);
    assert!((r.mean_partitions_written_per_window - 4.0).abs() < 1e-9);
    assert_eq!(r.windows.len(), 3);
    let cap = r.capacity(1);
    assert_eq!((cap.ticks, cap.ideal_ticks, cap.efficiency), (3, 3, 1.0));

    // Sequential: each window writes one partition.
    let (seq, clock) = table(TableOptions::default().pre_split(points));
    for (w, k) in ["0", "5", "9", "d"].iter().enumerate() {
        for i in 0..4 {
            seq.put(format!("{k}{i}"), vec![]).unwrap();
        }
        clock.set(T0 + (w as i64 + 1) * 1000);
    }
    let r = seq.report();
    assert_eq!(r.partitions_with_writes, 4);
    assert!((r.hottest_share - 1.0).abs() < 1e-9);
    assert!((r.max_over_mean - 4.0).abs() < 1e-9);
    assert!((r.mean_partitions_written_per_window - 1.0).abs() < 1e-9);
    let cap = r.capacity(1);
    assert_eq!((cap.ticks, cap.ideal_ticks), (16, 4));
    assert!((cap.efficiency - 0.25).abs() < 1e-9);
    assert_eq!(r.windows[1].hottest_lower, Some("4".into()));
    assert_eq!(r.windows[1].start_ms, T0 + 1000);

    let text = compare_designs(&[("even", &even.report()), ("sequential", &r)], 1);
    assert!(text.starts_with("design"));
    assert!(text.contains("sequential"));
    assert!(text.contains("25.0%"));
}

#[test]
fn reads_are_counted() {
    let (t, _) = table(TableOptions::default());
    t.put("a", vec![Attribute::new("v", "xyz")]).unwrap();
    t.get("a", &ReadOptions::default()).unwrap();
    t.get("b", &ReadOptions::default()).unwrap();
    t.get_range(&RangeRequest::forward(
        PrimaryKey::inf_min(1),
        PrimaryKey::inf_max(1),
    ))
    .unwrap();
    let rec = t.load_records();
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].load.reads, 3);
    assert_eq!(rec[0].load.rows_read, 2);
    assert_eq!(rec[0].load.bytes_read, 2 * (1 + 1 + 3 + 8));
    assert_eq!(rec[0].load.writes, 1);
    assert_eq!(rec[0].load.bytes_written, 1 + 1 + 3 + 8);
    let r = t.report();
    assert_eq!((r.reads, r.writes), (3, 1));
    assert_eq!(r.partition_stats[0].reads, 3);
}

#[test]
fn the_heatmap_places_load_by_key_and_time() {
    let (t, clock) = table(TableOptions::default().pre_split(vec!["m".into()]));
    for w in 0..4 {
        clock.set(T0 + w * 1000);
        let k = if w < 2 { "a" } else { "z" };
        for _ in 0..10 {
            t.put(k, vec![]).unwrap();
        }
        t.get("a", &ReadOptions::default()).unwrap();
    }
    let map = t.heatmap(&HeatmapOptions::default());
    assert_eq!(map.bands, vec![PkValue::InfMin, "m".into()]);
    assert_eq!(map.columns_ms, vec![T0, T0 + 1000, T0 + 2000, T0 + 3000]);
    assert_eq!(map.cells[0], vec![11.0, 11.0, 1.0, 1.0]);
    assert_eq!(map.cells[1], vec![0.0, 0.0, 10.0, 10.0]);
    assert!((map.max - 11.0).abs() < 1e-9);
    let writes = t.heatmap(&HeatmapOptions {
        metric: Metric::Writes,
        max_bands: 1,
        max_columns: 2,
        ..HeatmapOptions::default()
    });
    assert_eq!(writes.cells, vec![vec![20.0, 20.0]]);
    let text = map.to_text();
    // The first band is labelled with its first key, not INF_MIN; each band has its total.
    assert!(text.contains("a        |@@..| 24"), "{text}");
    assert!(text.contains("m        |  @@| 20"), "{text}");
    assert!(text.contains("from 2023-11-14 22:13:20 UTC"), "{text}");
    let svg = map.to_svg(400, 200).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.matches("<rect").count() >= 8);
}

#[test]
fn reports_serialize_to_json() {
    let (t, _) = table(TableOptions::default());
    t.put("a", vec![Attribute::new("v", 1)]).unwrap();
    let json = serde_json::to_string(&t.report()).unwrap();
    assert!(json.contains("\"hottest_share\":1.0"), "{json}");
    let json = serde_json::to_string(&t.heatmap(&HeatmapOptions::default())).unwrap();
    assert!(json.contains("\"cells\""));
    let json = serde_json::to_string(&t.report().capacity(10)).unwrap();
    assert!(json.contains("efficiency"));
    let json = serde_json::to_string(&t.load_records()).unwrap();
    assert!(json.contains("bytes_written"));
}

#[test]
fn replay_advances_the_clock_and_names_the_failing_event() {
    let (t, clock) = table(TableOptions::default().load_window_ms(10_000));
    let events = vec![
        ("a", vec![Attribute::new("n", 1)], T0 + 5_000),
        ("b", vec![Attribute::new("n", 2)], T0 + 25_000),
        ("c", vec![Attribute::new("bad name", 3)], T0 + 30_000),
        ("d", vec![Attribute::new("n", 4)], T0 + 40_000),
    ];
    assert_eq!(
        t.replay(&clock, events),
        Err(TableError::Replay {
            event: 2,
            source: Box::new(TableError::InvalidColumnName {
                name: "bad name".into(),
                reason: "only letters, digits and '_' are allowed"
            })
        })
    );
    assert_eq!(clock.now_ms(), T0 + 30_000);
    let row = t.get("b", &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(row.cells[0].version, T0 + 25_000);
    assert_eq!(t.get("d", &ReadOptions::default()), Ok(None));
    let windows: Vec<i64> = t.report().windows.iter().map(|w| w.start_ms).collect();
    // The two gets above count in the window of T0 + 30 s.
    assert_eq!(windows, vec![T0, T0 + 20_000, T0 + 30_000]);
    let stats = t
        .replay(&clock, [("e", vec![Attribute::new("n", 5)], T0 + 50_000)])
        .unwrap();
    assert_eq!((stats.events, stats.bytes), (1, 1 + 1 + 8 + 8));
}

/// Time going backwards between two writes: the meter, like the table, keeps counting in the
/// window it is in, so its windows stay in time order, each once.
#[test]
fn hotspot_meter_windows_stay_in_time_order_when_time_goes_back() {
    use pk_codec::table::HotspotMeter;
    let clock = ManualClock::new(0);
    let t = string_table(TableOptions::default(), &clock);
    let mut meter = HotspotMeter::new(1_000);
    for (i, time) in [0i64, 5_000, 100, 5_001, 200, 9_000]
        .into_iter()
        .enumerate()
    {
        clock.set(time);
        let key = PkValue::String(format!("k{i}"));
        meter.record(&t, &key, time);
        t.put(key, vec![Attribute::new("n", 1)]).unwrap();
    }
    let report = meter.report();
    let windows: Vec<i64> = report.per_window.iter().map(|w| w.window).collect();
    assert!(
        windows.windows(2).all(|w| w[0] < w[1]),
        "windows out of order or repeated: {windows:?}"
    );
    assert_eq!(report.windows, report.per_window.len());
    assert_eq!(report.writes, 6);
    // The table counted the late writes in the window it was in, as the meter does.
    let table_windows: Vec<i64> = t.report().windows.iter().map(|w| w.window).collect();
    assert_eq!(windows, table_windows);
}

/// `above_previous_high` counts writes above the *previous window's* highest key (as documented),
/// not above the highest key of every window before.
#[test]
fn hotspot_meter_compares_with_the_previous_windows_high() {
    use pk_codec::table::HotspotMeter;
    let t = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let mut meter = HotspotMeter::new(1_000);
    for (key, time) in [
        ("z", 0i64),
        ("a", 10),
        ("m", 1_000),
        ("p", 2_000),
        ("q", 2_001),
    ] {
        meter.record(&t, &key.into(), time);
    }
    let report = meter.report();
    let above: Vec<u64> = report
        .per_window
        .iter()
        .map(|w| w.above_previous_high)
        .collect();
    // Window 1's "m" is below window 0's "z"; window 2's "p" and "q" are above window 1's "m".
    assert_eq!(above, [0, 0, 2]);
    assert!(
        (report.tail_share - 2.0 / 3.0).abs() < 1e-12,
        "{}",
        report.tail_share
    );
}

/// A row that weighs nothing (a key of empty values, no attributes) before one large key
/// value: the partition splits the large value off (and reports it as oversized) rather than
/// trying, and failing, to split on every later write (each try scanned every row under the
/// map's write lock: 20,000 puts took two minutes instead of a quarter of a second).
#[test]
fn a_weightless_row_does_not_stop_a_size_split() {
    let schema = Schema::new(vec![
        PkColumn::new("p", PkType::String),
        PkColumn::new("s", PkType::String),
    ])
    .unwrap();
    let options = TableOptions::default().split_size_bytes(1_000).no_merge();
    let t = Table::with_clock(schema, options, ManualClock::new(0)).unwrap();
    t.put(PrimaryKey::new(vec!["".into(), "".into()]), vec![])
        .unwrap();
    for i in 0..300i64 {
        let key = PrimaryKey::new(vec!["a".into(), format!("{i:08}").into()]);
        t.put(key, vec![Attribute::new("n", i)]).unwrap();
    }
    assert_eq!(
        t.partition_bounds(),
        [
            (PkValue::InfMin, PkValue::from("a")),
            (PkValue::from("a"), PkValue::InfMax)
        ]
    );
    let report = t.report();
    assert_eq!(report.splits, 1);
    let oversized: Vec<&PkValue> = report
        .oversized_key_values
        .iter()
        .map(|o| &o.value)
        .collect();
    assert_eq!(oversized, [&PkValue::from("a")]);
    assert_eq!(t.stored_rows(), 301);
}

/// An SVG size past what the drawing library's coordinates hold is refused with an error
/// naming it (it panicked with an overflow inside plotters for 2^31 pixels).
#[test]
fn an_svg_too_large_to_draw_is_refused() {
    use pk_codec::table::{Heatmap, HeatmapOptions};
    let clock = ManualClock::new(0);
    let t = string_table(TableOptions::default(), &clock);
    for i in 0..10i64 {
        clock.set(i * 500);
        t.put(format!("k{i}"), vec![Attribute::new("n", i)])
            .unwrap();
    }
    let map = t.heatmap(&HeatmapOptions::default());
    for (w, h) in [(1u32 << 31, 360u32), (640, 1 << 31), (u32::MAX, u32::MAX)] {
        let got = std::panic::catch_unwind(|| map.to_svg(w, h));
        match got {
            Ok(Err(TableError::Render { reason })) => {
                assert!(reason.contains(&format!("{w} x {h}")), "{reason}");
                assert!(
                    reason.contains(&Heatmap::MAX_SVG_SIDE.to_string()),
                    "{reason}"
                );
            }
            Ok(other) => panic!("{w} x {h}: {:?}", other.map(|s| s.len())),
            Err(_) => panic!("{w} x {h}: panicked"),
        }
    }
    let side = Heatmap::MAX_SVG_SIDE;
    assert!(map.to_svg(side, side).unwrap().starts_with("<svg"));
    assert!(map.to_svg(640, 360).unwrap().starts_with("<svg"));
}

/// A heatmap built by hand (its fields are public) with the pieces of `table.heatmap`.
fn hand_heatmap() -> pk_codec::table::Heatmap {
    pk_codec::table::Heatmap {
        title: "hand".into(),
        metric: pk_codec::table::Metric::Ops,
        log_scale: false,
        bands: vec![PkValue::InfMin, "m".into()],
        first_key: None,
        band_names: vec![],
        columns_ms: vec![0, 1_000],
        column_ms: 1_000,
        cells: vec![vec![1.0, 2.0], vec![3.0, 1.0]],
        band_totals: vec![3.0, 4.0],
        column_totals: vec![4.0, 3.0],
        boundaries: vec![vec![0], vec![]],
        max: 3.0,
    }
}

/// A boundary index past every band in a hand-built heatmap is skipped, as smaller ones past
/// the last band are (`usize::MAX` overflowed `b + 1` and panicked).
#[test]
fn a_hand_built_heatmap_boundary_past_the_bands_is_skipped() {
    let mut map = hand_heatmap();
    map.boundaries = vec![vec![0, 7, usize::MAX], vec![usize::MAX - 1]];
    let got = std::panic::catch_unwind(|| map.to_svg(640, 360));
    assert!(
        matches!(got, Ok(Ok(ref svg)) if svg.starts_with("<svg")),
        "{:?}",
        got.map(|r| r.map(|s| s.len()))
    );
}

/// A hand-built heatmap holding a load that is not a finite number is refused with an error
/// naming the field (an infinite column total made `to_svg` hang).
#[test]
fn a_hand_built_heatmap_with_a_non_finite_load_is_refused() {
    for (field, v) in [
        ("column_totals", f64::INFINITY),
        ("cells", f64::NAN),
        ("band_totals", f64::NEG_INFINITY),
        ("max", f64::INFINITY),
    ] {
        let mut map = hand_heatmap();
        match field {
            "column_totals" => map.column_totals[0] = v,
            "cells" => map.cells[1][0] = v,
            "band_totals" => map.band_totals[1] = v,
            _ => map.max = v,
        }
        // Run on a thread, so that a hang fails the test instead of stopping the run.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(map.to_svg(640, 360));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{field} = {v}: to_svg did not return"));
        match got {
            Err(TableError::Render { reason }) => {
                assert!(reason.contains(&format!("`{field}`")), "{reason}");
            }
            other => panic!("{field} = {v}: {:?}", other.map(|s| s.len())),
        }
    }
    assert!(hand_heatmap().to_svg(640, 360).is_ok());
}

/// A throttled partition that served its capacity refuses reads and writes (its option's
/// docs say operations, reads and writes), but range reads went on reading it. Now a range
/// read that reaches such a partition stops before its first row in range, giving that row's
/// key to resume from, and is refused (`PartitionBusy`, counted) when it has taken no row yet;
/// once the window passes, the resumed read gets the rest. Both directions, and the lent read.
#[test]
fn range_reads_respect_a_throttled_partition() {
    let clock = ManualClock::new(1_700_000_000_000);
    let options = TableOptions::default()
        .throttle_ops_per_window(4)
        .pre_split(vec!["m".into()]);
    let table = string_table(options, &clock);
    let put = |k: &str| table.put(k, vec![Attribute::new("n", 1)]);
    // The lower partition takes one write (each read there counts one more), the upper four:
    // the upper is busy in this window.
    for k in ["a", "n", "o", "p", "q"] {
        put(k).unwrap();
    }
    assert!(matches!(put("r"), Err(TableError::PartitionBusy { .. })));
    let keys = |rows: &[Row]| rows.iter().map(|r| r.key.to_string()).collect::<Vec<_>>();
    let forward = RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1));
    let page = table.get_range(&forward).unwrap();
    assert_eq!(keys(&page.rows), ["a"]);
    assert_eq!(page.next_start, Some("n".into()));
    // The lent read stops at the same place.
    let mut lent = Vec::new();
    let next = table
        .for_each_in_range(&forward, |r| lent.push(r.key.to_string()))
        .unwrap();
    assert_eq!((lent, next), (vec!["a".to_owned()], Some("n".into())));
    // Starting in the busy partition: refused, and counted.
    let before = table.report().busy_rejections;
    let from_n = RangeRequest::forward("n", PrimaryKey::inf_max(1));
    assert!(matches!(
        table.get_range(&from_n),
        Err(TableError::PartitionBusy { capacity: 4, .. })
    ));
    let backward = RangeRequest::backward(PrimaryKey::inf_max(1), PrimaryKey::inf_min(1));
    assert!(matches!(
        table.get_range(&backward),
        Err(TableError::PartitionBusy { .. })
    ));
    assert_eq!(table.report().busy_rejections, before + 2);
    // The next window: the resumed reads get the rest.
    clock.advance(60_000);
    let rest = table.get_range(&from_n).unwrap();
    assert_eq!(
        (keys(&rest.rows), rest.next_start),
        (
            vec!["n", "o", "p", "q"]
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>(),
            None
        )
    );
    let all = table.get_range(&backward).unwrap();
    assert_eq!(keys(&all.rows), ["q", "p", "o", "n", "a"]);
    // Backward into a busy lower partition: the upper's rows, then the key to resume from.
    clock.advance(60_000);
    for k in ["b", "c", "d", "e"] {
        put(k).unwrap();
    }
    let page = table.get_range(&backward).unwrap();
    assert_eq!(keys(&page.rows), ["q", "p", "o", "n"]);
    assert_eq!(page.next_start, Some("e".into()));
}

/// `Table::replay` sets the clock it is given to each event's time before its put; given a
/// clock that is not the table's, every event was written at the table's own time, so the
/// load windows (the point of a replay) were silently wrong. Now the first event whose time
/// the table does not read back is refused with `ForeignClock`, naming the event.
#[test]
fn replay_refuses_a_clock_that_is_not_the_tables() {
    let own = ManualClock::new(0);
    let table = string_table(TableOptions::default(), &own);
    let events = |n: i64| {
        (0..n).map(|i| {
            (
                format!("k{i}"),
                vec![Attribute::new("n", i)],
                1_000 + i * 1_000,
            )
        })
    };
    let other = ManualClock::new(0);
    match table.replay(&other, events(3)) {
        Err(TableError::Replay { event: 0, source }) => assert!(
            matches!(
                *source,
                TableError::ForeignClock {
                    set_ms: 1_000,
                    table_ms: 0
                }
            ),
            "{source}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(table.stored_rows(), 0);
    // The table's own clock replays every event, one window each.
    let stats = table.replay(&own, events(3)).unwrap();
    assert_eq!(stats.events, 3);
    assert_eq!(table.report().windows.len(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    /// A throttled table paged through by range reads, either way, retried in the next window
    /// when a partition is busy: every row comes back exactly once, in order, whatever the
    /// capacity, the split points, the rows, the page size and the gets made before pages
    /// (which spend the partitions' capacity). No window serves more reads than the partitions'
    /// capacity (a busy partition serves no row), and a page stops or is refused rather than
    /// skip one.
    #[test]
    fn throttled_range_reads_page_through_every_row_once(
        capacity in 1u64..6,
        splits in proptest::collection::btree_set(0u16..200, 0..4),
        keys in proptest::collection::btree_set(0u16..200, 0..60),
        limit in 1usize..8,
        backward in any::<bool>(),
        noise in proptest::collection::vec(0u16..200, 0..4),
    ) {
        let clock = ManualClock::new(0);
        let split_points: Vec<PkValue> = splits.iter().map(|s| format!("{s:03}").into()).collect();
        let options = TableOptions::default()
            .throttle_ops_per_window(capacity)
            .pre_split(split_points);
        let table = string_table(options, &clock);
        for k in &keys {
            // A new window per write: the writes themselves are never refused.
            clock.advance(60_000);
            table.put(format!("{k:03}"), vec![Attribute::new("n", 1)]).unwrap();
        }
        let mut want: Vec<String> = keys.iter().map(|k| format!("{k:03}")).collect();
        if backward {
            want.reverse();
        }
        let (lo, hi) = (PrimaryKey::inf_min(1), PrimaryKey::inf_max(1));
        let mut start = if backward { hi.clone() } else { lo.clone() };
        let mut got = Vec::new();
        let mut windows = 0u64;
        loop {
            prop_assert!(windows < 10_000, "no progress");
            let reads_before = table.report().reads;
            // Every other window, gets spend capacity first (refused ones too), so that the
            // page may find partitions busy.
            if windows.is_multiple_of(2) {
                for k in &noise {
                    let _ = table.get(format!("{k:03}"), &ReadOptions::default());
                }
            }
            let req = if backward {
                RangeRequest::backward(start.clone(), lo.clone())
            } else {
                RangeRequest::forward(start.clone(), hi.clone())
            }
            .limit(limit);
            let page = table.get_range(&req);
            // A busy partition serves nothing: no partition serves past its capacity.
            let served = table.report().reads - reads_before;
            prop_assert!(
                served <= capacity * table.partition_count() as u64,
                "{served} reads in one window, capacity {capacity}"
            );
            match page {
                Ok(page) => {
                    got.extend(page.rows.iter().map(|r| r.key.to_string()));
                    match page.next_start {
                        Some(next) => start = next,
                        None => break,
                    }
                }
                Err(TableError::PartitionBusy { .. }) => {}
                Err(e) => prop_assert!(false, "{e}"),
            }
            clock.advance(60_000);
            windows += 1;
        }
        prop_assert_eq!(got, want);
    }
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
