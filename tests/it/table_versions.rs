//! Versions, max versions, TTL, max version offset and the injectable clock.

use pk_codec::table::{
    Attribute, AttributeValue, Cell, Clock, ManualClock, PrimaryKey, RangeRequest, ReadOptions,
    Schema, Table, TableError, TableOptions, UpdateOp,
};

const NOW: i64 = 1_700_000_000_000; // ms, a whole second
const NOW_S: i64 = NOW / 1000;
const DAY: i64 = 86_400;

fn table(options: TableOptions) -> (Table, ManualClock) {
    let clock = ManualClock::new(NOW);
    let t =
        Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone()).unwrap();
    (t, clock)
}

fn versions(t: &Table, key: &str, opts: &ReadOptions) -> Vec<(i64, AttributeValue)> {
    t.get(key, opts)
        .unwrap()
        .map(|r| r.cells.into_iter().map(|c| (c.version, c.value)).collect())
        .unwrap_or_default()
}

#[test]
fn a_version_defaults_to_the_clock() {
    let (t, clock) = table(TableOptions::default());
    t.put("k", vec![Attribute::new("a", 1)]).unwrap();
    clock.advance(1_234);
    t.update("k", vec![UpdateOp::Put(Attribute::new("b", 2))])
        .unwrap();
    let row = t.get("k", &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(
        row.cells,
        vec![
            Cell {
                name: "a".into(),
                version: NOW,
                value: 1.into()
            },
            Cell {
                name: "b".into(),
                version: NOW + 1_234,
                value: 2.into()
            },
        ]
    );
}

#[test]
fn max_versions_keeps_the_newest() {
    let (t, _) = table(TableOptions::default().max_versions(3));
    let v = |ms: i64, x: i64| UpdateOp::Put(Attribute::new("a", x).with_version(NOW + ms));
    t.update("k", vec![v(1, 1), v(2, 2), v(3, 3), v(4, 4)])
        .unwrap();
    let all = ReadOptions::default().max_versions(10);
    assert_eq!(
        versions(&t, "k", &all),
        vec![
            (NOW + 4, 4.into()),
            (NOW + 3, 3.into()),
            (NOW + 2, 2.into())
        ]
    );
    // An older version than the kept ones is unreadable at once.
    t.update("k", vec![v(0, 0)]).unwrap();
    assert_eq!(versions(&t, "k", &all).len(), 3);
    // Default reads return the newest only; max_versions(2) the two newest.
    assert_eq!(
        versions(&t, "k", &ReadOptions::default()),
        vec![(NOW + 4, 4.into())]
    );
    assert_eq!(
        versions(&t, "k", &ReadOptions::default().max_versions(2)).len(),
        2
    );
    // Rewriting a version replaces its value.
    t.update("k", vec![v(4, 40)]).unwrap();
    assert_eq!(
        versions(&t, "k", &ReadOptions::default()),
        vec![(NOW + 4, 40.into())]
    );
    // Delete one version, then the column.
    t.update(
        "k",
        vec![UpdateOp::DeleteVersion {
            name: "a".into(),
            version: NOW + 4,
        }],
    )
    .unwrap();
    assert_eq!(
        versions(&t, "k", &ReadOptions::default()),
        vec![(NOW + 3, 3.into())]
    );
    t.update("k", vec![UpdateOp::DeleteColumn("a".into())])
        .unwrap();
    assert_eq!(versions(&t, "k", &all), vec![]);
}

#[test]
fn default_max_versions_is_one() {
    let (t, clock) = table(TableOptions::default());
    t.put("k", vec![Attribute::new("a", 1)]).unwrap();
    clock.advance(10);
    t.update("k", vec![UpdateOp::Put(Attribute::new("a", 2))])
        .unwrap();
    assert_eq!(
        versions(&t, "k", &ReadOptions::default().max_versions(5)),
        vec![(NOW + 10, 2.into())]
    );
}

#[test]
fn time_range_reads_versions_in_start_end() {
    let (t, _) = table(TableOptions::default().max_versions(5));
    let ops = (0..5)
        .map(|i| UpdateOp::Put(Attribute::new("a", i).with_version(NOW - 1000 * i)))
        .collect();
    t.update("k", ops).unwrap();
    let got = versions(
        &t,
        "k",
        &ReadOptions::default().time_range(NOW - 3000, NOW - 1000),
    );
    assert_eq!(got, vec![(NOW - 2000, 2.into()), (NOW - 3000, 3.into())]);
}

#[test]
fn read_options_are_checked() {
    let (t, _) = table(TableOptions::default());
    let k: PrimaryKey = "k".into();
    assert_eq!(
        t.get(&k, &ReadOptions::default().max_versions(1).time_range(0, 1)),
        Err(TableError::ConflictingReadOptions)
    );
    assert_eq!(
        t.get(&k, &ReadOptions::default().max_versions(0)),
        Err(TableError::InvalidMaxVersions { max_versions: 0 })
    );
    assert_eq!(
        t.get(&k, &ReadOptions::default().time_range(5, 5)),
        Err(TableError::InvalidTimeRange { start: 5, end: 5 })
    );
    let req = RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1))
        .options(ReadOptions::default().time_range(9, 1));
    assert_eq!(
        t.get_range(&req),
        Err(TableError::InvalidTimeRange { start: 9, end: 1 })
    );
}

#[test]
fn written_versions_lie_within_the_offset() {
    let (t, _) = table(TableOptions::default());
    let put = |v: i64| t.put("k", vec![Attribute::new("a", 1).with_version(v)]);
    let refused = |v: i64| TableError::VersionOutOfRange {
        column: "a".into(),
        version: v,
        min_seconds: NOW_S - DAY,
        max_seconds: NOW_S + DAY,
    };
    assert_eq!(put((NOW_S - DAY) * 1000), Ok(()));
    assert_eq!(
        put((NOW_S - DAY) * 1000 - 1),
        Err(refused((NOW_S - DAY) * 1000 - 1))
    );
    assert_eq!(put((NOW_S + DAY) * 1000 - 1), Ok(()));
    assert_eq!(
        put((NOW_S + DAY) * 1000),
        Err(refused((NOW_S + DAY) * 1000))
    );
}

#[test]
fn written_versions_must_not_be_expired() {
    // TTL 2 days, offset 5 days: the TTL bounds the past.
    let (t, _) = table(
        TableOptions::default()
            .ttl_seconds(2 * DAY)
            .max_version_offset_seconds(5 * DAY),
    );
    let put = |v: i64| t.put("k", vec![Attribute::new("a", 1).with_version(v)]);
    assert_eq!(put((NOW_S - 2 * DAY) * 1000), Ok(()));
    assert_eq!(
        put((NOW_S - 2 * DAY) * 1000 - 1),
        Err(TableError::VersionOutOfRange {
            column: "a".into(),
            version: (NOW_S - 2 * DAY) * 1000 - 1,
            min_seconds: NOW_S - 2 * DAY,
            max_seconds: NOW_S + 5 * DAY,
        })
    );
}

#[test]
fn expired_data_is_invisible_and_dropped() {
    let (t, clock) = table(TableOptions::default().ttl_seconds(DAY));
    t.put("old", vec![Attribute::new("a", 1)]).unwrap();
    t.put("keyonly", vec![]).unwrap();
    clock.advance(DAY * 1000);
    // Exactly TTL seconds old: still live.
    assert!(t.get("old", &ReadOptions::default()).unwrap().is_some());
    clock.advance(1000);
    t.put("new", vec![Attribute::new("a", 2)]).unwrap();
    assert_eq!(t.get("old", &ReadOptions::default()), Ok(None));
    let all = t
        .get_range(&RangeRequest::forward(
            PrimaryKey::inf_min(1),
            PrimaryKey::inf_max(1),
        ))
        .unwrap();
    let keys: Vec<String> = all.rows.iter().map(|r| r.key.to_string()).collect();
    assert_eq!(keys, ["keyonly", "new"]);
    assert_eq!(t.stored_rows(), 3);
    t.compact();
    assert_eq!(t.stored_rows(), 2);
    // An update of an expired row starts from nothing.
    t.put("gone", vec![Attribute::new("a", 1), Attribute::new("b", 1)])
        .unwrap();
    clock.advance((DAY + 1) * 1000);
    t.update("gone", vec![UpdateOp::Put(Attribute::new("c", 3))])
        .unwrap();
    let row = t.get("gone", &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(row.cells.len(), 1);
    assert_eq!(row.value("c"), Some(&AttributeValue::Integer(3)));
}

#[test]
fn expired_versions_leave_newer_ones() {
    let (t, clock) = table(TableOptions::default().ttl_seconds(DAY).max_versions(2));
    t.update(
        "k",
        vec![
            UpdateOp::Put(Attribute::new("a", 1).with_version(NOW - 1000 * (DAY - 10))),
            UpdateOp::Put(Attribute::new("a", 2).with_version(NOW)),
        ],
    )
    .unwrap();
    clock.advance(20_000);
    assert_eq!(
        versions(&t, "k", &ReadOptions::default().max_versions(2)),
        vec![(NOW, 2.into())]
    );
}

#[test]
fn any_clock_can_be_injected() {
    let t = Table::with_clock(
        Schema::single_string("pk").unwrap(),
        TableOptions::default(),
        || 42_000_i64,
    )
    .unwrap();
    assert_eq!(t.now_ms(), 42_000);
    t.put("k", vec![Attribute::new("a", 1)]).unwrap();
    assert_eq!(
        versions(&t, "k", &ReadOptions::default()),
        vec![(42_000, 1.into())]
    );
    let system = Table::single_string_key("pk", TableOptions::default()).unwrap();
    assert!(system.now_ms() > NOW);
    let manual = ManualClock::new(5);
    manual.set(7);
    assert_eq!(manual.now_ms(), 7);
}
