//! Properties over the whole range of the numbers these APIs accept, for the places an audit once
//! found overflowing (the boundary case each fix began from is below the properties): sizes
//! and counts up to `u64::MAX` / `usize::MAX`, clocks anywhere in `i64`. Each property states the
//! answer in exact (`u128`) arithmetic, so a wrapped or truncated sum fails it, not only a panic.
//!
//! Below the properties, those boundary cases: the table, its split points, heatmap, capacity
//! report and bulk import simulation at `i64::MAX` clocks, huge sizes and counts.

#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::time::Duration;

use pk_codec::store::{BulkOptions, BulkStats, MemoryStore, StoreErrorKind, simulate_import};
use pk_codec::table::{
    Attribute, AttributeValue, HeatmapOptions, HotspotMeter, MAX_BATCH_ROWS, ManualClock, PkValue,
    PrimaryKey, RangeRequest, ReadOptions, RowWrite, Schema, Table, TableError, TableOptions,
    UpdateOp, split_points_by_size, split_points_even,
};
use proptest::prelude::*;

/// A `u64` drawn from the whole range, with its ends and their neighbours often.
fn any_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => any::<u64>(),
        2 => 0u64..64,
        2 => (0u64..64).prop_map(|d| u64::MAX - d),
        1 => (0u32..64).prop_map(|s| 1u64 << s),
    ]
}

/// A `usize` drawn from the whole range, with small counts and the top often.
fn any_usize() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 1usize..40,
        2 => any::<usize>(),
        2 => (0usize..64).prop_map(|d| usize::MAX - d),
    ]
}

/// An `i64` drawn from the whole range, with both ends often.
fn any_i64() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => any::<i64>(),
        2 => (0i64..1000).prop_map(|d| i64::MAX - d),
        2 => (0i64..1000).prop_map(|d| i64::MIN + d),
        2 => -1000i64..1000,
    ]
}

/// Few distinct values, so a sample repeats them (a value is never cut).
fn sample_value() -> impl Strategy<Value = PkValue> {
    (0u8..24).prop_map(|i| PkValue::from(format!("k{i:02}")))
}

/// The sample's distinct values in order, each with its exact total size.
fn groups(sample: &[(PkValue, u64)]) -> Vec<(PkValue, u128)> {
    let mut m: BTreeMap<PkValue, u128> = BTreeMap::new();
    for (v, s) in sample {
        *m.entry(v.clone()).or_default() += u128::from(*s);
    }
    m.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Greedy cuts in exact arithmetic: a range grows by a value while it holds no bytes or the
    /// value still fits `max_bytes`, and each cut was needed (the next value would not fit).
    #[test]
    fn split_points_by_size_cut_where_exact_sums_say(
        sample in prop::collection::vec((sample_value(), any_u64()), 0..40),
        max_bytes in any_u64(),
    ) {
        let r = split_points_by_size(sample.clone(), max_bytes);
        if max_bytes == 0 {
            prop_assert!(r.is_err());
            return Ok(());
        }
        let points = r.unwrap();
        let groups = groups(&sample);
        // Walk the groups with the points as range starts. A range that holds no bytes yet
        // takes the next value whatever its size (a value of 0 bytes does not make a range).
        let mut next_point = points.iter().peekable();
        let mut acc: u128 = 0;
        for (v, size) in &groups {
            if next_point.peek() == Some(&v) {
                next_point.next();
                prop_assert!(acc > 0, "a cut at {v:?} after a range of 0 bytes");
                prop_assert!(
                    acc + size > u128::from(max_bytes),
                    "a cut at {v:?} that was not needed: {acc} + {size} <= {max_bytes}"
                );
                acc = 0;
            } else {
                prop_assert!(
                    acc == 0 || acc + size <= u128::from(max_bytes),
                    "no cut at {v:?}: {acc} + {size} > {max_bytes}"
                );
            }
            acc += size;
        }
        prop_assert!(next_point.next().is_none(), "a point that is not a sample value: {points:?}");
    }

    /// The capacity model's tick counts are the exact sums, saturated at `u64::MAX`.
    #[test]
    fn capacity_sums_saturate_exactly(
        windows in prop::collection::vec(
            (any_u64(), any_u64(), prop_oneof![0usize..4, any_usize()]),
            1..6,
        ),
        ops_per_tick in prop_oneof![0u64..4, any_u64()],
    ) {
        let t = Table::single_string_key("pk", TableOptions::default()).unwrap();
        t.put("a", vec![]).unwrap();
        let mut report = t.report();
        let template = report.windows[0].clone();
        report.windows = windows
            .iter()
            .map(|&(ops, max_ops, partitions)| {
                let mut w = template.clone();
                w.ops = ops;
                w.max_ops = max_ops;
                w.partitions = partitions;
                w
            })
            .collect();
        let c = u128::from(ops_per_tick.max(1));
        let (mut ticks, mut ideal) = (0u128, 0u128);
        for &(ops, max_ops, partitions) in &windows {
            if ops == 0 {
                continue;
            }
            ticks += u128::from(max_ops).div_ceil(c).max(1);
            let per_tick = (c * partitions.max(1) as u128).min(u128::from(u64::MAX));
            ideal += u128::from(ops).div_ceil(per_tick).max(1);
        }
        let est = report.capacity(ops_per_tick);
        prop_assert_eq!(u128::from(est.ticks), ticks.min(u128::from(u64::MAX)));
        prop_assert_eq!(u128::from(est.ideal_ticks), ideal.min(u128::from(u64::MAX)));
        prop_assert!((0.0..=f64::MAX).contains(&est.efficiency));
    }

    /// Rows lost is added minus written minus failed when that is positive, else 0.
    #[test]
    fn rows_lost_is_the_exact_difference_or_zero(
        added in any_u64(), written in any_u64(), failed in any_u64(),
    ) {
        let s = BulkStats { rows_added: added, rows_written: written, rows_failed: failed, ..BulkStats::default() };
        let exact = i128::from(added) - i128::from(written) - i128::from(failed);
        prop_assert_eq!(i128::from(s.rows_lost()), exact.max(0));
    }

    /// A table on a clock that jumps anywhere in `i64` (backwards too) with windows of any length
    /// keeps every row and reports every write.
    #[test]
    fn a_table_on_any_clock_keeps_every_row(
        window_ms in prop_oneof![Just(1i64), 1i64..100_000, Just(i64::MAX)],
        times in prop::collection::vec(any_i64(), 1..12),
    ) {
        let clock = ManualClock::new(times[0]);
        let t = Table::with_clock(
            Schema::single_string("pk").unwrap(),
            TableOptions::default().load_window_ms(window_ms),
            clock.clone(),
        )
        .unwrap();
        for (i, &now) in times.iter().enumerate() {
            clock.set(now);
            t.put(format!("k{i:02}").as_str(), vec![]).unwrap();
        }
        let all = ReadOptions::default().time_range(i64::MIN, i64::MAX);
        for i in 0..times.len() {
            let row = t.get(format!("k{i:02}").as_str(), &all).unwrap();
            prop_assert!(row.is_some(), "row {i} lost");
        }
        let report = t.report();
        let ops: u64 = report.windows.iter().map(|w| w.ops).sum();
        prop_assert!(ops >= times.len() as u64, "{ops} ops for {} writes", times.len());
    }
}

proptest! {
    // A case that hangs is a failure at once: shrinking would start another hung thread per step.
    #![proptest_config(ProptestConfig { cases: 512, max_shrink_iters: 0, ..ProptestConfig::default() })]

    /// Cuts at the values found at `i * n / ranges` (moved back to a value's first row), for any
    /// `ranges` up to `usize::MAX`, answered at once.
    #[test]
    fn split_points_even_cut_at_exact_positions(
        sample in prop::collection::vec(sample_value(), 0..60),
        ranges in any_usize(),
    ) {
        // On its own thread: a loop over `1..ranges` would not come back.
        let (tx, rx) = std::sync::mpsc::channel();
        let owned = sample.clone();
        std::thread::spawn(move || {
            let _ = tx.send(split_points_even(owned, ranges));
        });
        let points = rx
            .recv_timeout(Duration::from_secs(5))
            .map_err(|_| TestCaseError::fail(format!("no answer in 5 s for ranges = {ranges}")))?
            .unwrap();
        let mut sorted = sample;
        sorted.sort();
        let n = sorted.len();
        let mut expected: Vec<PkValue> = Vec::new();
        for at in 1..n {
            // Is `at` one of the positions `i * n / ranges`, i in 1..ranges (exact)?
            let (n, r, at) = (n as u128, ranges as u128, at as u128);
            // The smallest i with i * n / r >= at is ceil(at * r / n).
            let i = (at * r).div_ceil(n);
            let hit = i >= 1 && i < r && i * n / r == at;
            if !hit {
                continue;
            }
            let v = &sorted[at as usize];
            if sorted[0] != *v && expected.last() != Some(v) {
                expected.push(v.clone());
            }
        }
        prop_assert_eq!(points, expected);
    }
}

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

fn table(options: TableOptions, now: i64) -> (Table, ManualClock) {
    let clock = ManualClock::new(now);
    let t = Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone());
    (t.unwrap(), clock)
}

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
