//! Splits by size and load, merges, pre-splitting (with split points from a sample or from a
//! layout's prefix), the load report, the capacity model and the heatmap.

use pk_codec::Layout;
use pk_codec::table::{
    Attribute, Clock, HeatmapOptions, ManualClock, Metric, PkColumn, PkType, PkValue, PrimaryKey,
    RangeRequest, ReadOptions, Schema, Table, TableError, TableOptions, compare_designs,
    split_points_by_size, split_points_even,
};

const T0: i64 = 1_700_000_000_000;

fn table(options: TableOptions) -> (Table, ManualClock) {
    let clock = ManualClock::new(T0);
    let t =
        Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone()).unwrap();
    (t, clock)
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
