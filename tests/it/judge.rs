//! The bounded judge against the full table model: on dumps small enough that no sketch is
//! coarsened, the same figures to the write (partitions, splits, merges, window records, load
//! report, hotspot report, heatmap); past its budget, the same load-driven figures (load
//! splits, hot key values, hotspot figures) while its memory stays within the budget.

use pk_codec::table::{
    Attribute, AttributeValue, HeatmapOptions, HotspotMeter, Judge, ManualClock, PkColumn, PkType,
    PkValue, PrimaryKey, Schema, Table, TableOptions,
};
use proptest::prelude::*;

use crate::support;
use crate::support::mix;

/// How a dump's partition-key values are drawn.
#[derive(Debug, Clone, Copy)]
enum Keys {
    /// Rising, as order numbers or times.
    Sequential,
    /// Spread over a wide range.
    Spread,
    /// Mostly one value.
    Hot,
    /// A handful of values.
    Few,
}

#[derive(Debug, Clone)]
struct Dump {
    two_columns: bool,
    keys: Keys,
    rows: Vec<(u64, i64)>,
    options: TableOptions,
}

fn options() -> impl Strategy<Value = TableOptions> {
    (
        2u64..60,
        prop_oneof![Just(None), (60u64..4_000).prop_map(Some)],
        prop_oneof![Just(1i64), 2i64..50, 500i64..5_000],
        any::<bool>(),
        1u32..10,
        prop_oneof![3 => Just(Vec::new()), 1 => Just(vec!["m".to_owned()])],
    )
        .prop_map(|(ops, size, window, merge, sample, pre)| {
            let mut o = TableOptions::default()
                .split_load_ops(ops)
                .load_window_ms(window)
                .load_sample_every(sample)
                .pre_split(pre.into_iter().map(PkValue::from).collect());
            o.split_size_bytes = size;
            if merge { o } else { o.no_merge() }
        })
}

fn dump(max_rows: usize) -> impl Strategy<Value = Dump> {
    (
        any::<bool>(),
        prop_oneof![
            Just(Keys::Sequential),
            Just(Keys::Spread),
            Just(Keys::Hot),
            Just(Keys::Few)
        ],
        // Time steps: mostly forward, some ties, some jumps over many windows, some back.
        prop::collection::vec(
            (
                any::<u64>(),
                prop_oneof![
                    6 => 0i64..20,
                    2 => Just(0i64),
                    1 => 1_000i64..100_000,
                    1 => -50i64..0,
                ],
            ),
            1..max_rows,
        ),
        options(),
        -100_000i64..2_000_000_000_000,
    )
        .prop_map(|(two_columns, keys, steps, options, start)| {
            let mut t = start;
            let rows = steps
                .into_iter()
                .map(|(k, step)| {
                    t = t.saturating_add(step);
                    (k, t)
                })
                .collect();
            Dump {
                two_columns,
                keys,
                rows,
                options,
            }
        })
}

fn schema(two_columns: bool) -> Schema {
    if two_columns {
        Schema::new(vec![
            PkColumn::new("pk", PkType::String),
            PkColumn::new("n", PkType::Integer),
        ])
        .unwrap()
    } else {
        Schema::single_string("pk").unwrap()
    }
}

fn key(d: &Dump, i: usize, draw: u64) -> PrimaryKey {
    let value = match d.keys {
        Keys::Sequential => format!("{i:06}"),
        Keys::Spread => format!("{:06}", draw % 1_000_000),
        Keys::Hot if !draw.is_multiple_of(4) => "hot".to_owned(),
        Keys::Hot => format!("{:03}", draw % 997),
        Keys::Few => ["a", "k", "m", "q", "z"][(draw % 5) as usize].to_owned(),
    };
    if d.two_columns {
        // A few rows per value, some of them rewritten.
        PrimaryKey::new(vec![
            PkValue::from(value),
            PkValue::Integer((draw % 3) as i64),
        ])
    } else {
        PrimaryKey::from(value)
    }
}

/// Replays a dump into a table (with a hotspot meter, as `pk analyze` did) and into a judge.
fn replay(d: &Dump, budget: usize) -> (Table, HotspotMeter, Judge) {
    let clock = ManualClock::new(0);
    let table = Table::with_clock(schema(d.two_columns), d.options.clone(), clock.clone()).unwrap();
    let mut meter = HotspotMeter::new(d.options.load_window_ms);
    let mut judge =
        Judge::with_sketch_budget(schema(d.two_columns), d.options.clone(), budget).unwrap();
    for (i, &(draw, t)) in d.rows.iter().enumerate() {
        let k = key(d, i, draw);
        meter.record(&table, k.partition_value(), t);
        clock.set(t);
        table.put(k.clone(), vec![]).unwrap();
        judge.write(&k, 0, t).unwrap();
    }
    (table, meter, judge)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(96)))]

    /// Within its budget the judge is the table: every figure, to the write.
    #[test]
    fn an_exact_judge_gives_the_tables_figures(d in dump(1_500)) {
        let (table, meter, judge) = replay(&d, usize::MAX);
        prop_assert!(judge.exact());
        prop_assert_eq!(judge.partition_count(), table.partition_count());
        prop_assert_eq!(judge.report(), table.report());
        prop_assert_eq!(judge.hotspot(), meter.report());
        let heat = HeatmapOptions { max_bands: 64, max_columns: 16, ..HeatmapOptions::default() };
        prop_assert_eq!(judge.heatmap(&heat), table.heatmap(&heat));
    }

    /// Past its budget the judge keeps at most the budget (or 32 entries a partition), and
    /// where no size rule is in play (no size splits, no merges) its partitions, load splits,
    /// hot key values and hotspot figures are still the table's, whatever the load threshold
    /// and the sampling rate (a load split cuts at its samples only, which the judge keeps as
    /// the table does).
    #[test]
    fn a_coarse_judge_stays_within_budget_and_keeps_the_load_figures(
        d in dump(2_500),
        budget in 16usize..200,
    ) {
        let mut d = d;
        d.options = d.options.clone().no_merge();
        d.options.split_size_bytes = None;
        let (table, meter, judge) = replay(&d, budget);
        prop_assert!(
            judge.sketch_entries() <= budget.max(32 * judge.partition_count()),
            "{} entries, budget {}, {} partitions",
            judge.sketch_entries(),
            budget,
            judge.partition_count()
        );
        let (a, b) = (judge.report(), table.report());
        let bounds = |r: &pk_codec::table::LoadReport| -> Vec<(PkValue, PkValue)> {
            r.partition_stats.iter().map(|s| (s.lower.clone(), s.upper.clone())).collect()
        };
        prop_assert_eq!(bounds(&a), bounds(&b));
        prop_assert_eq!(&a.windows, &b.windows);
        prop_assert_eq!((a.splits, a.writes, a.hottest_share), (b.splits, b.writes, b.hottest_share));
        prop_assert_eq!(&a.hot_key_values, &b.hot_key_values);
        prop_assert_eq!(judge.hotspot(), meter.report());
    }
}

/// One attribute of a put: a name from a few (so that a put repeats some; one of them refused
/// by the table), a value of any type, and a version: none, or one near the put's time (inside
/// the version window, or outside it).
fn attribute() -> impl Strategy<Value = Attribute> {
    let value = prop_oneof![
        ".{0,12}".prop_map(AttributeValue::String),
        any::<i64>().prop_map(AttributeValue::Integer),
        any::<f64>().prop_map(AttributeValue::Double),
        any::<bool>().prop_map(AttributeValue::Boolean),
        prop::collection::vec(any::<u8>(), 0..12).prop_map(AttributeValue::Binary),
    ];
    (
        prop_oneof![
            8 => prop::sample::select(vec!["a", "b", "cc", "_d"]),
            1 => Just("9bad"),
        ],
        value,
        prop_oneof![
            2 => Just(None),
            // Versions a few ms apart (some equal) and, rarely, days off the clock.
            2 => (-3i64..3).prop_map(Some),
            1 => prop_oneof![Just(-200_000_000i64), Just(200_000_000)].prop_map(Some),
        ],
    )
        .prop_map(|(name, value, version)| Attribute {
            name: name.to_owned(),
            value,
            version,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(256)))]

    /// The judge counts a put's bytes as the table stores them, whatever the attributes: names
    /// repeated (one version kept per name and version: the last write), explicit versions,
    /// `max_versions` above 1, rows rewritten, and the attributes the table refuses (the same
    /// error, nothing counted).
    #[test]
    fn a_judge_counts_a_puts_bytes_as_the_table_stores_them(
        puts in prop::collection::vec(
            (0u8..6, prop::collection::vec(attribute(), 0..6), 0i64..1_500),
            1..40,
        ),
        max_versions in 1u32..4,
        ttl in prop_oneof![Just(-1i64), Just(86_400i64)],
        split in prop_oneof![Just(None), (40u64..400).prop_map(Some)],
    ) {
        let mut options = TableOptions::default().max_versions(max_versions).ttl_seconds(ttl);
        options.split_size_bytes = split;
        let clock = ManualClock::new(0);
        let table = Table::with_clock(schema(false), options.clone(), clock.clone()).unwrap();
        let mut judge = Judge::new(schema(false), options).unwrap();
        let mut t = 1_700_000_000_000i64;
        for (k, attributes, step) in puts {
            t += step;
            let key = PrimaryKey::from(format!("k{k}"));
            // Versions are offsets from the put's time.
            let attributes: Vec<Attribute> = attributes
                .into_iter()
                .map(|a| Attribute { version: a.version.map(|v| t + v), ..a })
                .collect();
            clock.set(t);
            let stored = table.put(key.clone(), attributes.clone());
            let counted = judge.put(&key, &attributes, t);
            prop_assert_eq!(&counted, &stored);
            let (a, b) = (judge.report(), table.report());
            prop_assert_eq!((a.rows, a.bytes), (b.rows, b.bytes));
            let parts = |r: &pk_codec::table::LoadReport| -> Vec<(PkValue, u64, u64)> {
                r.partition_stats.iter().map(|s| (s.lower.clone(), s.rows, s.bytes)).collect()
            };
            prop_assert_eq!(parts(&a), parts(&b));
        }
    }
}

/// `put("k", [a=1, a=2])` stores one cell of column `a` (its last value): the row is the key's
/// byte and the cell's 17 (the name, 8 of value, 8 of version), 18 in all, in the judge as in
/// the table.
#[test]
fn a_judge_counts_an_attribute_named_twice_once() {
    let attributes = vec![Attribute::new("a", 1), Attribute::new("a", 2)];
    let table =
        Table::with_clock(schema(false), TableOptions::default(), ManualClock::new(0)).unwrap();
    table.put("k", attributes.clone()).unwrap();
    let mut judge = Judge::new(schema(false), TableOptions::default()).unwrap();
    judge.put(&PrimaryKey::from("k"), &attributes, 0).unwrap();
    assert_eq!(table.report().bytes, 18);
    assert_eq!(judge.report().bytes, 18);
}

/// A load split past the judge's budget cuts where the table's does when the window has fewer
/// than two samples: 66 keys one per window fold the judge's sketch (budget 64), then one key
/// written three times in a window passes the load threshold of 2 before any write of the
/// window is sampled (every eighth is). The table cut at the byte balance of its rows
/// (`k0033`), the judge at its folded sketch's (`k0032`); a load split now waits for two
/// samples, which both keep alike.
#[test]
fn a_coarse_judge_load_splits_as_the_table_with_few_samples() {
    let mut options = TableOptions::default()
        .split_load_ops(2)
        .load_sample_every(8)
        .no_merge();
    options.split_size_bytes = None;
    // k0000..k0065 one per 1-second window, then k0000 three times in one window.
    let mut rows: Vec<(u64, i64)> = (0..66u64).map(|i| (i, i as i64 * 1_000)).collect();
    rows.extend((0..3).map(|j| (0, 66_000 + j)));
    let clock = ManualClock::new(0);
    let table = Table::with_clock(schema(false), options.clone(), clock.clone()).unwrap();
    let mut judge = Judge::with_sketch_budget(schema(false), options, 64).unwrap();
    for (i, t) in rows {
        let k = PrimaryKey::from(format!("k{i:04}"));
        clock.set(t);
        table.put(k.clone(), vec![]).unwrap();
        judge.write(&k, 0, t).unwrap();
    }
    assert!(!judge.exact());
    let bounds = |r: &pk_codec::table::LoadReport| -> Vec<(PkValue, PkValue)> {
        r.partition_stats
            .iter()
            .map(|s| (s.lower.clone(), s.upper.clone()))
            .collect()
    };
    let (a, b) = (judge.report(), table.report());
    assert_eq!(bounds(&a), bounds(&b));
    assert_eq!((a.splits, &a.hot_key_values), (b.splits, &b.hot_key_values));
}

/// A coarse judge still finds size splits: a dump of 20,000 random keys into 2 KB partitions
/// splits about as often as the table does (each cut within one folded entry of the table's),
/// with a budget of 256 entries, 32 or fewer per partition. Random inserts leave partitions
/// between half full and full either way; the counts agree within a fifth.
#[test]
fn a_coarse_judge_splits_by_size_about_as_the_table_does() {
    let mut options = TableOptions::default().split_size_bytes(2_048).no_merge();
    options.split_load_ops = None;
    let d = Dump {
        two_columns: false,
        keys: Keys::Spread,
        rows: (0..20_000u64).map(|i| (mix(i), 0)).collect(),
        options,
    };
    let (table, _, judge) = replay(&d, 256);
    assert!(!judge.exact());
    let (t, j) = (table.partition_count(), judge.partition_count());
    assert!(t > 50, "{t}");
    assert!(
        j * 5 >= t * 4 && j * 5 <= t * 6,
        "table {t} partitions, judge {j}"
    );
    assert!(judge.sketch_entries() <= 256.max(32 * j));
}
