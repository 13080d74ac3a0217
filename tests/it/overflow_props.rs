//! Properties over the whole range of the numbers these APIs accept, for the places an audit once
//! found overflowing (`tests/adversarial.rs` keeps the boundary case each fix began from): sizes
//! and counts up to `u64::MAX` / `usize::MAX`, clocks anywhere in `i64`. Each property states the
//! answer in exact (`u128`) arithmetic, so a wrapped or truncated sum fails it, not only a panic.

#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use pk_codec::store::BulkStats;
use pk_codec::table::{
    ManualClock, PkValue, ReadOptions, Schema, Table, TableOptions, split_points_by_size,
    split_points_even,
};

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
