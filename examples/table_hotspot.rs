//! A sequential key against a spread key, on the table model.
//!
//! Replays one hour of purchases (50 a second) under two primary-key designs and prints the
//! comparison table and a text heatmap of each; writes the heatmaps as SVG into the system's
//! temporary directory (`table_hotspot_*.svg`), not into the working directory.
//!
//! Run with `cargo run --release --example table_hotspot`.

use pk_codec::table::{
    Attribute, HeatmapOptions, ManualClock, Schema, Table, TableOptions, compare_designs,
};

const START_MS: i64 = 1_700_000_000_000;

fn table() -> Result<(Table, ManualClock), Box<dyn std::error::Error>> {
    let clock = ManualClock::new(START_MS);
    let options = TableOptions::default()
        .split_size_bytes(256 << 10)
        .split_load_ops(2_000)
        .load_window_ms(60_000);
    let table = Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?;
    Ok((table, clock))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // (order number, card id, timestamp): order numbers increase with time.
    let purchases: Vec<(i64, i64, i64)> = (0..180_000i64)
        .map(|i| (1_000_000 + i, (i * 7_919 + 13) % 20_000, START_MS + i * 20))
        .collect();
    let attrs = |order: i64| {
        vec![
            Attribute::new("amount_cents", 100 + order % 900),
            Attribute::new("seller", "a100"),
        ]
    };

    let (sequential, clock) = table()?;
    sequential.replay(
        &clock,
        purchases
            .iter()
            .map(|&(order, _, ts)| (format!("{order:010}"), attrs(order), ts)),
    )?;

    let (spread, clock) = table()?;
    spread.replay(
        &clock,
        purchases
            .iter()
            .map(|&(order, card, ts)| (format!("{card:06},{order:010}"), attrs(order), ts)),
    )?;

    let designs = [
        ("order number", sequential.report()),
        ("card id, order number", spread.report()),
    ];
    let rows: Vec<(&str, &_)> = designs.iter().map(|(n, r)| (*n, r)).collect();
    println!("{}", compare_designs(&rows, 2_000));

    let options = HeatmapOptions {
        max_bands: 16,
        max_columns: 60,
        ..HeatmapOptions::default()
    };
    for (name, t) in [("sequential", &sequential), ("spread", &spread)] {
        let map = t.heatmap(&options);
        println!("{name}:\n{}", map.to_text());
        let path = std::env::temp_dir().join(format!("table_hotspot_{name}.svg"));
        std::fs::write(&path, map.to_svg(900, 420)?)?;
        println!("wrote {}\n", path.display());
    }
    Ok(())
}
