//! A bucket-prefixed layout has a tail in each bucket: a time-ordered key whose rows collapse
//! into a few buckets, unevenly, is judged by its busiest bucket's tail (the load no split
//! cures), not by the top bucket's; verdict and headroom match a computation from the rows.

use pk_codec::table::analysis::{
    Analysis, AnalysisOptions, DesignSpec, StoreProfile, Verdict, Where,
};
use proptest::prelude::*;

use crate::support;

/// Bucketed by `dev % n`, time next: rows of one bucket are written in time order, each above
/// every key of its bucket before it.
fn bucketed(n: u32) -> String {
    format!("buckets={n}:mod(dev); dev: u32 width=2; ts: u64 width=13")
}

/// `(dev, time)`: a day in bursts, three rows of four with `dev` 0 (bucket 0), one with 3
/// (bucket 3, the top bucket): the rows collapse into two of the four buckets, unevenly.
fn rows(n: u64) -> Vec<(u32, i64)> {
    let mut t = 1_700_000_000_000i64;
    (0..n)
        .map(|i| {
            t += if (i / 400) % 4 == 0 { 500 } else { 9_000 };
            (if i % 4 == 3 { 3 } else { 0 }, t)
        })
        .collect()
}

fn report(rows: &[(u32, i64)], n: u32, scale: f64) -> pk_codec::table::analysis::DesignReport {
    let mut options = AnalysisOptions::default();
    options.store = StoreProfile::named("generic").unwrap();
    options.load_scale = scale;
    options.time = Some("ts".to_owned());
    options.fail_above = Some(0.5);
    let mut a = Analysis::new(vec![DesignSpec::layout(&bucketed(n)).unwrap()], options).unwrap();
    a.header(&["dev".to_owned(), "ts".to_owned()], "dev.csv")
        .unwrap();
    for (i, (d, t)) in rows.iter().enumerate() {
        let fields = [d.to_string(), t.to_string()];
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        let at = Where {
            file: "dev.csv",
            line: i as u64 + 2,
        };
        a.row(&fields, *t, &at).unwrap();
    }
    a.seal().unwrap();
    a.finish().unwrap().0.designs.remove(0)
}

/// The busiest window of one bucket's tail with the rows (in time order) replayed `scale` times
/// faster (`only`: that bucket alone), computed from the rows apart from the library: a row is
/// a tail write when its key, `(dev, time)` within its bucket, is above every key of its bucket
/// before it.
fn bucket_peak(rows: &[(u32, i64)], n: u32, scale: f64, window_ms: i64, only: Option<u32>) -> u64 {
    let t0 = rows.iter().map(|r| r.1).min().unwrap();
    let mut highest = std::collections::HashMap::<u32, (u32, i64)>::new();
    let mut counts = std::collections::BTreeMap::<(u32, i64), u64>::new();
    for &(d, t) in rows {
        let bucket = d % n;
        if highest.get(&bucket).is_some_and(|&h| (d, t) <= h) {
            continue;
        }
        highest.insert(bucket, (d, t));
        if only.is_some_and(|b| b != bucket) {
            continue;
        }
        let scaled = t0 + ((t - t0) as f64 / scale).floor() as i64;
        *counts
            .entry((bucket, scaled.div_euclid(window_ms)))
            .or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

#[test]
fn the_busiest_bucket_tail_decides_the_verdict() {
    let rows = rows(6_000);
    let capacity = StoreProfile::named("generic").unwrap().capacity().unwrap();
    let c = capacity.writes_per_window;
    let mut told_apart = false;
    for scale in [1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0] {
        let busiest = bucket_peak(&rows, 4, scale, capacity.window_ms, None);
        let top = bucket_peak(&rows, 4, scale, capacity.window_ms, Some(3));
        told_apart |= top <= c && busiest > c;
        let d = report(&rows, 4, scale);
        let what = format!("at {scale}x: busiest bucket tail {busiest}, top bucket's {top}: {d:?}");
        assert_eq!(d.verdict == Verdict::Concentrated, busiest > c, "{what}");
        assert_eq!(d.fails, busiest > c, "{what}");
        if busiest > c {
            assert!(d.throttling.uncured_writes >= busiest - c, "{what}");
            assert!(
                d.throttling
                    .cause
                    .as_deref()
                    .unwrap()
                    .contains("bucket's tail"),
                "{what}"
            );
        }
    }
    assert!(
        told_apart,
        "no scale puts the busiest bucket past the capacity and the top one within it"
    );
}

#[test]
fn the_headroom_is_the_busiest_bucket_tails() {
    let rows = rows(6_000);
    let capacity = StoreProfile::named("generic").unwrap().capacity().unwrap();
    let d = report(&rows, 4, 1.0);
    let reported = d
        .headroom
        .multiple
        .expect("a bucket's tail throttles within 1000x");
    // Brute force: the largest multiple on a 1% grid whose busiest bucket tail fits.
    let mut m = 0.01f64;
    let mut best = 0.0;
    while m <= d.headroom.searched_up_to {
        if bucket_peak(&rows, 4, m, capacity.window_ms, None) <= capacity.writes_per_window {
            best = m;
        }
        m *= 1.01;
    }
    assert!(
        (reported - best).abs() <= 0.10 * best,
        "reported {reported}, brute force {best}"
    );
    assert!(
        d.headroom
            .first_throttled_by
            .as_deref()
            .unwrap()
            .contains("bucket's tail")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(16)))]

    /// Any bucket count, any uneven spread of the rows over the buckets (some left empty, some
    /// holding several `dev` values), any spacing and load scale: the design is
    /// `HOT` (and fails the gate, past its share) exactly when one bucket's tail passes a
    /// partition's capacity in some window.
    #[test]
    fn hot_exactly_when_a_bucket_tail_passes_the_capacity(
        n in 2u32..=16,
        devs in proptest::collection::vec(0u32..100, 1..6),
        picks in proptest::collection::vec((any::<prop::sample::Index>(), 1i64..4_000), 200..1_200),
        scale in 1.0f64..60.0,
    ) {
        let mut t = 1_700_000_000_000i64;
        let rows: Vec<(u32, i64)> = picks
            .iter()
            .map(|(i, gap)| {
                t += gap;
                (*i.get(&devs), t)
            })
            .collect();
        let capacity = StoreProfile::named("generic").unwrap().capacity().unwrap();
        let busiest = bucket_peak(&rows, n, scale, capacity.window_ms, None);
        let d = report(&rows, n, scale);
        let past = busiest > capacity.writes_per_window;
        prop_assert_eq!(d.verdict == Verdict::Concentrated, past, "busiest bucket tail {}: {:?}", busiest, d);
        // `--fail-above 0.5` fails a HOT design whose hottest share is above it.
        prop_assert_eq!(d.fails, past && d.hottest_share > 0.5);
        if past {
            prop_assert!(d.throttling.uncured_writes >= busiest - capacity.writes_per_window);
        }
    }
}
