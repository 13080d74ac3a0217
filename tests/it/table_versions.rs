//! Versions, max versions, TTL, max version offset and the injectable clock.
//!
//! The table against a versioned reference: random operations (puts with versions, updates,
//! deletes, batches, reads with version options, range reads paged both ways) with the clock
//! moving (TTL and the max version offset at their edges); the manual clock at the ends of time.

use std::collections::BTreeMap;

use pk_codec::table::{
    Attribute, AttributeValue, Cell, Clock, ManualClock, PkColumn, PkType, PkValue, PrimaryKey,
    RangeRequest, ReadOptions, Row, RowWrite, Schema, Table, TableError, TableOptions, UpdateOp,
};
use proptest::prelude::*;

use crate::support;
use crate::table_props::{Ext, Key, ModelKey, pk, pk_bound};

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

/// Cells of a row: (name, version, value), ordered by name, newest first.
type Cells = Vec<(String, i64, i64)>;

/// A read's time range: (start relative to now, length), ms.
type TimeSpan = (i64, i64);

/// Attributes to write: (name, version, value).
type Attrs = Vec<(String, Ver, i64)>;

/// A version, resolved against the clock when the operation runs.
#[derive(Debug, Clone, Copy)]
enum Ver {
    Now,
    /// `now + ms`.
    Rel(i64),
    /// An edge of the window of written versions: 0 lowest allowed, 1 one below it, 2 highest
    /// allowed, 3 one above it (by the offset), 4 the TTL's lowest live version, 5 one below.
    Edge(u8),
}

#[derive(Debug, Clone)]
enum UOp {
    Put(String, Ver, i64),
    DelCol(String),
    /// Deletes the version of the row's `n`-th stored cell of the column (or a made-up one).
    DelVer(String, usize),
}

#[derive(Debug, Clone)]
enum Op {
    Put(Key, Vec<(String, Ver, i64)>),
    PutRef(Key, Vec<(String, Ver, i64)>),
    Update(Key, Vec<UOp>),
    Delete(Key),
    Get(Key, u8, Option<u32>, Option<TimeSpan>),
    Range(ModelKey, ModelKey, bool, usize, Option<u32>),
    Batch(Vec<(u8, Key, Attrs)>),
    Tick(i64),
    Compact,
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("c".to_owned())
    ]
}

fn ver() -> impl Strategy<Value = Ver> {
    prop_oneof![
        3 => Just(Ver::Now),
        3 => (-5_000i64..5_000).prop_map(Ver::Rel),
        2 => (0u8..6).prop_map(Ver::Edge),
    ]
}

fn attrs() -> impl Strategy<Value = Vec<(String, Ver, i64)>> {
    proptest::collection::vec((name(), ver(), 0i64..100), 0..5)
}

fn key() -> impl Strategy<Value = Key> {
    (prop_oneof![Just(String::new()), "[ab\u{0}]{1,2}"], -2i64..3)
}

fn bound() -> impl Strategy<Value = ModelKey> {
    let s = prop_oneof![
        1 => Just(Ext::Min),
        6 => "[ab\u{0}]{0,2}".prop_map(Ext::Val),
        1 => Just(Ext::Max),
    ];
    let i = prop_oneof![
        1 => Just(Ext::Min),
        4 => (-3i64..4).prop_map(Ext::Val),
        1 => Just(Ext::Max),
    ];
    (s, i)
}

fn uop() -> impl Strategy<Value = UOp> {
    prop_oneof![
        3 => (name(), ver(), 0i64..100).prop_map(|(n, v, x)| UOp::Put(n, v, x)),
        1 => name().prop_map(UOp::DelCol),
        2 => (name(), 0usize..4).prop_map(|(n, i)| UOp::DelVer(n, i)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (key(), attrs()).prop_map(|(k, a)| Op::Put(k, a)),
        2 => (key(), attrs()).prop_map(|(k, a)| Op::PutRef(k, a)),
        4 => (key(), proptest::collection::vec(uop(), 0..4)).prop_map(|(k, u)| Op::Update(k, u)),
        2 => key().prop_map(Op::Delete),
        3 => (key(), 0u8..3, proptest::option::of(1u32..4), proptest::option::of((-3_000i64..3_000, 0i64..6_000)))
            .prop_map(|(k, c, m, t)| Op::Get(k, c, m, t)),
        3 => (bound(), bound(), any::<bool>(), 1usize..6, proptest::option::of(1u32..4))
            .prop_map(|(a, b, back, limit, m)| Op::Range(a, b, back, limit, m)),
        1 => proptest::collection::vec((0u8..3, key(), attrs()), 1..5).prop_map(Op::Batch),
        3 => prop_oneof![
            4 => 0i64..3_000,
            1 => 80_000_000i64..90_000_000,
            1 => -3_000i64..0,
        ]
        .prop_map(Op::Tick),
        1 => Just(Op::Compact),
    ]
}

/// The reference: rows with their stored cells, and the version rules.
struct Model {
    rows: BTreeMap<Key, Cells>,
    max_versions: usize,
    ttl: i64,
    offset: i64,
}

impl Model {
    fn live_from(&self, now: i64) -> i64 {
        if self.ttl < 0 {
            i64::MIN
        } else {
            now.div_euclid(1000) - self.ttl
        }
    }

    fn live(&self, version: i64, now: i64) -> bool {
        version.div_euclid(1000) >= self.live_from(now)
    }

    fn resolve(&self, v: Ver, now: i64) -> Option<i64> {
        let now_s = now.div_euclid(1000);
        let low = (now_s - self.offset).max(self.live_from(now)) * 1000;
        Some(match v {
            Ver::Now => return None,
            Ver::Rel(d) => now + d,
            Ver::Edge(0) => low,
            Ver::Edge(1) => low - 1,
            Ver::Edge(2) => (now_s + self.offset) * 1000 - 1,
            Ver::Edge(3) => (now_s + self.offset) * 1000,
            Ver::Edge(4) => self.live_from(now).max(-1_000_000_000_000) * 1000,
            Ver::Edge(_) => self.live_from(now).max(-1_000_000_000_000) * 1000 - 1,
        })
    }

    fn version_ok(&self, v: i64, now: i64) -> bool {
        let now_s = now.div_euclid(1000);
        let min_s = (now_s - self.offset).max(self.live_from(now));
        let max_s = now_s + self.offset;
        let s = v.div_euclid(1000);
        min_s <= s && s < max_s
    }

    /// Orders by name, newest first; the last write of a (name, version) wins; at most
    /// `max_versions` per column.
    fn normalize(&self, cells: Cells) -> Cells {
        let mut by: BTreeMap<String, BTreeMap<std::cmp::Reverse<i64>, i64>> = BTreeMap::new();
        for (n, v, x) in cells {
            by.entry(n).or_default().insert(std::cmp::Reverse(v), x);
        }
        by.into_iter()
            .flat_map(|(n, vs)| {
                vs.into_iter()
                    .take(self.max_versions)
                    .map(move |(v, x)| (n.clone(), v.0, x))
            })
            .collect()
    }

    fn visible(&self, cells: &Cells, now: i64) -> bool {
        cells.is_empty() || cells.iter().any(|c| self.live(c.1, now))
    }

    /// The cells a read returns.
    fn select(
        &self,
        cells: &Cells,
        now: i64,
        columns: Option<&[&str]>,
        max_versions: Option<u32>,
        range: Option<(i64, i64)>,
    ) -> Cells {
        let per = match (range, max_versions) {
            (Some(_), _) => usize::MAX,
            (None, Some(n)) => n as usize,
            (None, None) => 1,
        };
        let mut out: Cells = Vec::new();
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for c in cells {
            if !self.live(c.1, now)
                || columns.is_some_and(|cols| !cols.contains(&c.0.as_str()))
                || range.is_some_and(|(s, e)| c.1 < s || c.1 >= e)
            {
                continue;
            }
            let n = count.entry(c.0.as_str()).or_default();
            *n += 1;
            if *n <= per {
                out.push(c.clone());
            }
        }
        out
    }

    /// A put: `Err(())` when a version is out of range (nothing changes).
    fn put(&mut self, k: &Key, attrs: &[(String, Option<i64>, i64)], now: i64) -> Result<(), ()> {
        if attrs
            .iter()
            .any(|a| a.1.is_some_and(|v| !self.version_ok(v, now)))
        {
            return Err(());
        }
        let cells = attrs
            .iter()
            .map(|(n, v, x)| (n.clone(), v.unwrap_or(now), *x))
            .collect();
        let cells = self.normalize(cells);
        self.rows.insert(k.clone(), cells);
        Ok(())
    }

    fn update(&mut self, k: &Key, ops: &[(UOp, Option<i64>)], now: i64) -> Result<(), ()> {
        for (op, v) in ops {
            if let (UOp::Put(..), Some(v)) = (op, v)
                && !self.version_ok(*v, now)
            {
                return Err(());
            }
        }
        let (mut cells, existed) = match self.rows.get(k) {
            Some(c) if self.visible(c, now) => (
                c.iter()
                    .filter(|c| self.live(c.1, now))
                    .cloned()
                    .collect::<Cells>(),
                true,
            ),
            _ => (Vec::new(), false),
        };
        for (op, v) in ops {
            match op {
                UOp::Put(n, _, x) => cells.push((n.clone(), v.unwrap_or(now), *x)),
                UOp::DelCol(n) => cells.retain(|c| &c.0 != n),
                UOp::DelVer(n, _) => {
                    let v = v.expect("resolved");
                    cells.retain(|c| &c.0 != n || c.1 != v);
                }
            }
        }
        let cells = self.normalize(cells);
        if cells.is_empty() && !existed {
            self.rows.remove(k);
        } else {
            self.rows.insert(k.clone(), cells);
        }
        Ok(())
    }
}

fn key_of(k: &PrimaryKey) -> Key {
    match k.values() {
        [PkValue::String(s), PkValue::Integer(i)] => (s.clone(), *i),
        other => panic!("bad key {other:?}"),
    }
}

fn cells_of(cells: &[Cell]) -> Cells {
    cells
        .iter()
        .map(|c| match c.value {
            AttributeValue::Integer(x) => (c.name.clone(), c.version, x),
            ref other => panic!("unexpected value {other:?}"),
        })
        .collect()
}

fn rows_of(rows: &[Row]) -> Vec<(Key, Cells)> {
    rows.iter()
        .map(|r| (key_of(&r.key), cells_of(&r.cells)))
        .collect()
}

fn to_attrs(m: &Model, a: &[(String, Ver, i64)], now: i64) -> Vec<(String, Option<i64>, i64)> {
    a.iter()
        .map(|(n, v, x)| (n.clone(), m.resolve(*v, now), *x))
        .collect()
}

fn attributes(a: &[(String, Option<i64>, i64)]) -> Vec<Attribute> {
    a.iter()
        .map(|(n, v, x)| {
            let at = Attribute::new(n.as_str(), *x);
            match v {
                Some(v) => at.with_version(*v),
                None => at,
            }
        })
        .collect()
}

/// Resolves an update's operations against the model's row (a version to delete is one the
/// row holds when `n` picks one, else a made-up one).
fn resolve_update(m: &Model, k: &Key, ops: &[UOp], now: i64) -> Vec<(UOp, Option<i64>)> {
    ops.iter()
        .map(|op| {
            let v = match op {
                UOp::Put(_, v, _) => m.resolve(*v, now),
                UOp::DelCol(_) => None,
                UOp::DelVer(n, i) => Some(
                    m.rows
                        .get(k)
                        .and_then(|c| c.iter().filter(|c| &c.0 == n).nth(*i).map(|c| c.1))
                        .unwrap_or(now + 17),
                ),
            };
            (op.clone(), v)
        })
        .collect()
}

fn update_ops(ops: &[(UOp, Option<i64>)]) -> Vec<UpdateOp> {
    ops.iter()
        .map(|(op, v)| match op {
            UOp::Put(n, _, x) => {
                let a = Attribute::new(n.as_str(), *x);
                UpdateOp::Put(match v {
                    Some(v) => a.with_version(*v),
                    None => a,
                })
            }
            UOp::DelCol(n) => UpdateOp::DeleteColumn(n.clone()),
            UOp::DelVer(n, _) => UpdateOp::DeleteVersion {
                name: n.clone(),
                version: v.expect("resolved"),
            },
        })
        .collect()
}

fn in_range(k: &Key, start: &ModelKey, end: &ModelKey, back: bool) -> bool {
    let k = (Ext::Val(k.0.clone()), Ext::Val(k.1));
    if back {
        k <= *start && k > *end
    } else {
        k >= *start && k < *end
    }
}

fn run(ops: &[Op], max_versions: u32, ttl: i64, offset: i64, start_ms: i64) {
    let clock = ManualClock::new(start_ms);
    let schema = Schema::new(vec![
        PkColumn::new("p", PkType::String),
        PkColumn::new("n", PkType::Integer),
    ])
    .unwrap();
    let options = TableOptions::default()
        .max_versions(max_versions)
        .ttl_seconds(ttl)
        .max_version_offset_seconds(offset)
        .split_size_bytes(120)
        .split_load_ops(6)
        .merge_below(60, 1)
        .load_window_ms(700)
        .load_sample_every(1);
    let t = Table::with_clock(schema, options, clock.clone()).unwrap();
    let mut m = Model {
        rows: BTreeMap::new(),
        max_versions: max_versions as usize,
        ttl,
        offset,
    };
    for (step, op) in ops.iter().enumerate() {
        let now = clock.now_ms();
        match op {
            Op::Put(k, a) | Op::PutRef(k, a) => {
                let a = to_attrs(&m, a, now);
                let got = if matches!(op, Op::Put(..)) {
                    t.put(pk(k), attributes(&a))
                } else {
                    t.put_ref(&pk(k), &attributes(&a))
                };
                let want = m.put(k, &a, now);
                assert_eq!(got.is_ok(), want.is_ok(), "step {step} {op:?}: {got:?}");
                if let Err(e) = got {
                    assert!(matches!(e, TableError::VersionOutOfRange { .. }), "{e:?}");
                }
            }
            Op::Update(k, u) => {
                let u = resolve_update(&m, k, u, now);
                let got = t.update(pk(k), update_ops(&u));
                let want = m.update(k, &u, now);
                assert_eq!(got.is_ok(), want.is_ok(), "step {step} {op:?}: {got:?}");
            }
            Op::Delete(k) => {
                t.delete(pk(k)).unwrap();
                m.rows.remove(k);
            }
            Op::Get(k, cols, mv, tr) => {
                let columns: Option<&[&str]> = match cols {
                    0 => None,
                    1 => Some(&["a"]),
                    _ => Some(&["b", "c"]),
                };
                let mut o = ReadOptions::default();
                if let Some(c) = columns {
                    o = o.columns(c.iter().copied());
                }
                let (mv, tr) = if tr.is_some() {
                    (None, *tr)
                } else {
                    (*mv, None)
                };
                let tr = tr.map(|(s, l)| (now + s, now + s + l + 1));
                if let Some(n) = mv {
                    o = o.max_versions(n);
                }
                if let Some((s, e)) = tr {
                    o = o.time_range(s, e);
                }
                let got = t.get(pk(k), &o).unwrap();
                let want = m
                    .rows
                    .get(k)
                    .filter(|c| m.visible(c, now))
                    .map(|c| m.select(c, now, columns, mv, tr));
                assert_eq!(
                    got.as_ref().map(|r| cells_of(&r.cells)),
                    want,
                    "step {step} {op:?}"
                );
            }
            Op::Range(a, b, back, limit, mv) => {
                let mut o = ReadOptions::default();
                if let Some(n) = mv {
                    o = o.max_versions(*n);
                }
                let req = |s: PrimaryKey| {
                    let r = if *back {
                        RangeRequest::backward(s, pk_bound(b))
                    } else {
                        RangeRequest::forward(s, pk_bound(b))
                    };
                    r.limit(*limit).options(o.clone())
                };
                let valid = if *back { a > b } else { a < b };
                let first = t.get_range(&req(pk_bound(a)));
                // The lent rows are the rows the read returns, with the same resume key.
                let mut lent = Vec::new();
                let next = t.for_each_in_range(&req(pk_bound(a)), |r| lent.push(r.clone()));
                match (&first, next) {
                    (Ok(r), Ok(next)) => {
                        assert_eq!(lent, r.rows, "step {step} {op:?}");
                        assert_eq!(next, r.next_start, "step {step} {op:?}");
                    }
                    (Err(a), Err(b)) => assert_eq!(a, &b),
                    (a, b) => panic!("step {step}: {a:?} vs {b:?}"),
                }
                if !valid {
                    assert!(
                        matches!(first, Err(TableError::InvalidRange { .. })),
                        "{first:?}"
                    );
                    continue;
                }
                let mut want: Vec<(Key, Cells)> = m
                    .rows
                    .iter()
                    .filter(|(k, c)| in_range(k, a, b, *back) && m.visible(c, now))
                    .map(|(k, c)| (k.clone(), m.select(c, now, None, *mv, None)))
                    .collect();
                if *back {
                    want.reverse();
                }
                let mut got = Vec::new();
                let mut r = first.unwrap();
                let mut pages = 0;
                loop {
                    assert!(r.rows.len() <= *limit);
                    got.extend(rows_of(&r.rows));
                    pages += 1;
                    assert!(pages < 200, "paging does not end");
                    match r.next_start {
                        Some(next) => r = t.get_range(&req(next)).unwrap(),
                        None => break,
                    }
                }
                assert_eq!(got, want, "step {step} {op:?}");
            }
            Op::Batch(rows) => {
                let mut writes = Vec::new();
                let mut model_ops = Vec::new();
                for (kind, k, a) in rows {
                    let a = to_attrs(&m, a, now);
                    match kind {
                        0 => {
                            writes.push(RowWrite::Put {
                                key: pk(k),
                                attributes: attributes(&a),
                            });
                        }
                        1 => {
                            let u: Vec<UOp> = a
                                .iter()
                                .map(|(n, _, x)| UOp::Put(n.clone(), Ver::Now, *x))
                                .collect();
                            let u: Vec<(UOp, Option<i64>)> = u
                                .into_iter()
                                .zip(&a)
                                .map(|(op, (_, v, _))| (op, *v))
                                .collect();
                            writes.push(RowWrite::Update {
                                key: pk(k),
                                ops: update_ops(&u),
                            });
                        }
                        _ => writes.push(RowWrite::Delete { key: pk(k) }),
                    }
                    model_ops.push((*kind, k.clone(), a));
                }
                let mut first_of = BTreeMap::new();
                let mut dup = None;
                for (i, (_, k, _)) in model_ops.iter().enumerate() {
                    if let Some(&f) = first_of.get(k) {
                        dup.get_or_insert((i, f));
                    } else {
                        first_of.insert(k.clone(), i);
                    }
                }
                let got = t.batch_write(writes);
                if let Some((index, first)) = dup {
                    assert!(
                        matches!(got, Err(TableError::DuplicateRowInBatch { index: i, first: f }) if i == index && f == first),
                        "{got:?}"
                    );
                    continue;
                }
                let got = got.unwrap();
                for ((kind, k, a), g) in model_ops.iter().zip(got) {
                    let want = match kind {
                        0 => m.put(k, a, now),
                        1 => {
                            let u: Vec<(UOp, Option<i64>)> = a
                                .iter()
                                .map(|(n, v, x)| (UOp::Put(n.clone(), Ver::Now, *x), *v))
                                .collect();
                            m.update(k, &u, now)
                        }
                        _ => {
                            m.rows.remove(k);
                            Ok(())
                        }
                    };
                    assert_eq!(g.is_ok(), want.is_ok(), "step {step} {op:?}: {g:?}");
                }
            }
            Op::Tick(ms) => clock.advance(*ms),
            Op::Compact => {
                t.compact();
                let visible: Vec<(&Key, &Cells)> =
                    m.rows.iter().filter(|(_, c)| m.visible(c, now)).collect();
                assert_eq!(t.stored_rows(), visible.len(), "step {step}");
                let bytes: u64 = visible
                    .iter()
                    .map(|(k, c)| {
                        (k.0.len()
                            + 8
                            + c.iter()
                                .filter(|c| m.live(c.1, now))
                                .map(|c| c.0.len() + 16)
                                .sum::<usize>()) as u64
                    })
                    .sum();
                assert_eq!(t.report().bytes, bytes, "step {step}");
                // Compaction drops expired cells for good (even if the clock goes back).
                let rows = std::mem::take(&mut m.rows);
                let ttl_live = |v: i64| m.live(v, now);
                let mut kept = BTreeMap::new();
                for (k, c) in rows {
                    if c.is_empty() || c.iter().any(|c| ttl_live(c.1)) {
                        let c: Cells = c.into_iter().filter(|c| ttl_live(c.1)).collect();
                        kept.insert(k, c);
                    }
                }
                m.rows = kept;
            }
        }
    }
    // Everything, forward and backward, in one read each.
    let now = clock.now_ms();
    let all: Vec<(Key, Cells)> = m
        .rows
        .iter()
        .filter(|(_, c)| m.visible(c, now))
        .map(|(k, c)| (k.clone(), m.select(c, now, None, Some(10), None)))
        .collect();
    let o = ReadOptions::default().max_versions(10);
    let fwd = t
        .get_range(
            &RangeRequest::forward(PrimaryKey::inf_min(2), PrimaryKey::inf_max(2))
                .options(o.clone()),
        )
        .unwrap();
    assert_eq!(rows_of(&fwd.rows), all);
    let back = t
        .get_range(
            &RangeRequest::backward(PrimaryKey::inf_max(2), PrimaryKey::inf_min(2)).options(o),
        )
        .unwrap();
    let mut rev = all;
    rev.reverse();
    assert_eq!(rows_of(&back.rows), rev);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(64)))]

    #[test]
    fn table_matches_a_versioned_reference(
        ops in proptest::collection::vec(op(), 1..120),
        max_versions in prop_oneof![Just(1u32), Just(2), Just(3), Just(1000)],
        ttl in prop_oneof![Just(-1i64), Just(86_400), Just(100_000)],
        offset in prop_oneof![Just(1i64), Just(5), Just(200_000)],
        start_ms in prop_oneof![Just(1_700_000_000_000i64), Just(0), Just(-1_700_000_000_123), Just(1_234)],
    ) {
        run(&ops, max_versions, ttl, offset, start_ms);
    }
}

/// A manual clock moved past the end (or the start) of time stops there instead of wrapping
/// round to the other end.
#[test]
fn a_manual_clock_saturates_at_the_ends_of_time() {
    let clock = ManualClock::new(i64::MAX - 10);
    clock.advance(100);
    assert_eq!(clock.now_ms(), i64::MAX);
    clock.set(i64::MIN + 10);
    clock.advance(-100);
    assert_eq!(clock.now_ms(), i64::MIN);
    clock.advance(i64::MAX);
    assert_eq!(clock.now_ms(), -1);
}
