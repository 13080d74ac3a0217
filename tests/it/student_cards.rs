//! The main example's conclusions, measured on the example's own day: the key-design practices' verdicts
//! must come out of the table model, not out of the example's text.

#[allow(dead_code)]
#[path = "../../examples/student_cards.rs"]
mod example;

use example::{Outcome, designs, generate_day, run_design};

fn outcomes() -> Vec<Outcome> {
    let day = generate_day(100_000, 7);
    designs()
        .iter()
        .map(|d| run_design(d, &day).unwrap())
        .collect()
}

#[test]
fn the_practices_verdicts_come_out_of_the_measurements() {
    let all = outcomes();
    let by = |name: &str| all.iter().find(|o| o.name == name).unwrap();
    let sequential = by("OrderNumber first");
    // A tail hotspot: every current write goes to the last partition, however many splits, and
    // the hotspot measure sees it as one key range (the busiest partition's share does not).
    assert_eq!(sequential.report.partitions_with_writes, 1);
    assert!(sequential.report.partitions > 10);
    assert!(
        sequential.hotspot.hottest_share > 0.99,
        "{}",
        sequential.hotspot.hottest_share
    );
    assert!(
        sequential.hotspot.tail_share > 0.99,
        "{}",
        sequential.hotspot.tail_share
    );
    assert!(
        sequential.report.hottest_share < 0.9,
        "{}",
        sequential.report.hottest_share
    );
    for spread in [
        "CardID first",
        "MD5(OrderNumber) prefix",
        "Device+Seller+Card spliced",
        "time % 16 buckets",
    ] {
        let o = by(spread);
        assert!(
            o.hotspot.hottest_share < 0.2,
            "{spread}: {}",
            o.hotspot.hottest_share
        );
        assert!(
            o.hotspot.tail_share < 0.1,
            "{spread}: {}",
            o.hotspot.tail_share
        );
        assert!(
            o.report.max_over_mean < 3.0,
            "{spread}: max/mean {}",
            o.report.max_over_mean
        );
    }
    // Few, skewed sellers: far hotter than the spread designs, and a seller no split can help.
    let seller = &by("SellerID first").report;
    assert!(!seller.hot_key_values.is_empty());
    let seller_share = by("SellerID first").hotspot.hottest_share;
    assert!(
        seller_share > 2.5 * by("CardID first").hotspot.hottest_share,
        "{seller_share}"
    );
    assert!(seller.max_over_mean > 2.0, "{}", seller.max_over_mean);
    // 16 bucket values are at most 16 partitions.
    assert!(by("time % 16 buckets").report.partitions <= 16);
    // A DeviceID range is one exact range read only where DeviceID leads the key.
    for o in &all {
        assert!(o.device_read_exact, "{}", o.name);
        let leads = matches!(o.name, "DeviceID first" | "Device+Seller+Card spliced");
        assert_eq!(o.device_range_reads, leads.then_some(1), "{}", o.name);
    }
}
