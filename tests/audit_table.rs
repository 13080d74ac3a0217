//! Audit of `pk_codec::table`: random operation sequences (puts with versions, updates of every
//! kind, deletes, batches, reads with version options, range reads paged both ways) against a
//! reference of rows with versions, with the clock moving (TTL and the max version offset at
//! their edges) and partitions splitting and merging; and edge cases found along the way.

use std::collections::BTreeMap;

use pk_codec::table::{
    Attribute, AttributeValue, Cell, Clock, ManualClock, PkColumn, PkType, PkValue, PrimaryKey,
    RangeRequest, ReadOptions, Row, RowWrite, Schema, Table, TableError, TableOptions, UpdateOp,
};
use proptest::prelude::*;

mod support;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ext<T> {
    Min,
    Val(T),
    Max,
}

type Key = (String, i64);
type ModelKey = (Ext<String>, Ext<i64>);
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

/// A table with one String key column, `options`, on `clock`.
fn string_table(options: TableOptions, clock: &ManualClock) -> Table {
    Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone()).unwrap()
}

fn pk(k: &Key) -> PrimaryKey {
    PrimaryKey::new(vec![k.0.as_str().into(), k.1.into()])
}

fn pk_bound(k: &ModelKey) -> PrimaryKey {
    let a = match &k.0 {
        Ext::Min => PkValue::InfMin,
        Ext::Val(s) => s.as_str().into(),
        Ext::Max => PkValue::InfMax,
    };
    let b = match k.1 {
        Ext::Min => PkValue::InfMin,
        Ext::Val(i) => i.into(),
        Ext::Max => PkValue::InfMax,
    };
    PrimaryKey::new(vec![a, b])
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

/// A value of column type `ty` from a draw: edges of each type (i64::MIN/MAX, `00`/`FF`
/// bytes, empty, 1 KB) and small values that collide often.
fn value_of(ty: PkType, (pick, n): (u8, u16)) -> PkValue {
    let bytes = |pick: u8, n: u16| -> Vec<u8> {
        match pick % 6 {
            0 => Vec::new(),
            1 => vec![0u8; usize::from(n % 3) + 1],
            2 => vec![0xFF; usize::from(n % 3) + 1],
            3 => vec![b'a' + (n % 3) as u8; if n.is_multiple_of(7) { 1024 } else { 2 }],
            4 => vec![0, (n % 2) as u8 * 0xFF, 0],
            _ => vec![b'a', (n % 4) as u8],
        }
    };
    match ty {
        PkType::Integer => PkValue::Integer(match pick % 6 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => -1,
            3 => 0,
            4 => i64::MIN + 1,
            _ => i64::from(n % 5) - 2,
        }),
        PkType::Binary => PkValue::Binary(bytes(pick, n)),
        PkType::String => {
            let b = bytes(pick, n);
            PkValue::String(String::from_utf8(b).unwrap_or_else(|_| "\u{10FFFF}".to_owned()))
        }
    }
}

fn bound_of(ty: PkType, (pick, n): (u8, u16)) -> PkValue {
    match pick % 9 {
        7 => PkValue::InfMin,
        8 => PkValue::InfMax,
        _ => value_of(ty, (pick, n)),
    }
}

#[derive(Debug, Clone)]
enum KOp {
    Put(Vec<(u8, u16)>, usize),
    Delete(Vec<(u8, u16)>),
    Get(Vec<(u8, u16)>),
    Range(Vec<(u8, u16)>, Vec<(u8, u16)>, bool, usize),
}

fn kop() -> impl Strategy<Value = KOp> {
    let k = || proptest::collection::vec((any::<u8>(), any::<u16>()), 4);
    prop_oneof![
        6 => (k(), prop_oneof![3 => 0usize..64, 1 => 3_000usize..9_000]).prop_map(|(k, l)| KOp::Put(k, l)),
        2 => k().prop_map(KOp::Delete),
        2 => k().prop_map(KOp::Get),
        2 => (k(), k(), any::<bool>(), 1usize..9).prop_map(|(a, b, back, l)| KOp::Range(a, b, back, l)),
    ]
}

fn pk_type() -> impl Strategy<Value = PkType> {
    prop_oneof![
        Just(PkType::String),
        Just(PkType::Integer),
        Just(PkType::Binary)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(48)))]

    /// Keys of every type and arity, at their edges, rows larger than a leaf, small split and
    /// merge thresholds: the table holds and reads what a `BTreeMap` of `PrimaryKey`s does.
    #[test]
    fn keys_of_every_type_match_a_btreemap(
        types in proptest::collection::vec(pk_type(), 1..=4),
        ops in proptest::collection::vec(kop(), 1..80),
    ) {
        let schema = Schema::new(
            types.iter().enumerate().map(|(i, ty)| PkColumn::new(format!("c{i}"), *ty)).collect(),
        )
        .unwrap();
        let clock = ManualClock::new(1_700_000_000_000);
        let options = TableOptions::default()
            .split_size_bytes(12_000)
            .split_load_ops(5)
            .merge_below(3_000, 1)
            .load_window_ms(50)
            .load_sample_every(1);
        let t = Table::with_clock(schema, options, clock.clone()).unwrap();
        let mut m: BTreeMap<PrimaryKey, usize> = BTreeMap::new();
        let make = |k: &[(u8, u16)]| {
            PrimaryKey::new(types.iter().zip(k).map(|(ty, d)| value_of(*ty, *d)).collect())
        };
        let make_bound = |k: &[(u8, u16)]| {
            PrimaryKey::new(types.iter().zip(k).map(|(ty, d)| bound_of(*ty, *d)).collect())
        };
        let len_of = |r: &Row| match r.value("v") {
            Some(AttributeValue::Binary(b)) => b.len(),
            other => panic!("{other:?}"),
        };
        for op in &ops {
            clock.advance(20);
            match op {
                KOp::Put(k, len) => {
                    let key = make(k);
                    t.put(&key, vec![Attribute::new("v", vec![0xABu8; *len])]).unwrap();
                    m.insert(key, *len);
                }
                KOp::Delete(k) => {
                    let key = make(k);
                    t.delete(&key).unwrap();
                    m.remove(&key);
                }
                KOp::Get(k) => {
                    let key = make(k);
                    let got = t.get(&key, &ReadOptions::default()).unwrap();
                    prop_assert_eq!(got.map(|r| len_of(&r)), m.get(&key).copied());
                }
                KOp::Range(a, b, back, limit) => {
                    let (a, b) = (make_bound(a), make_bound(b));
                    let valid = if *back { a > b } else { a < b };
                    let req = |s: PrimaryKey| {
                        let r = if *back {
                            RangeRequest::backward(s, b.clone())
                        } else {
                            RangeRequest::forward(s, b.clone())
                        };
                        r.limit(*limit)
                    };
                    let first = t.get_range(&req(a.clone()));
                    if !valid {
                        prop_assert!(matches!(first, Err(TableError::InvalidRange { .. })), "{:?}", first);
                        continue;
                    }
                    let mut want: Vec<(PrimaryKey, usize)> = m
                        .iter()
                        .filter(|(k, _)| if *back { **k <= a && **k > b } else { **k >= a && **k < b })
                        .map(|(k, l)| (k.clone(), *l))
                        .collect();
                    if *back {
                        want.reverse();
                    }
                    let mut got = Vec::new();
                    let mut r = first.unwrap();
                    loop {
                        prop_assert!(r.rows.len() <= *limit);
                        got.extend(r.rows.iter().map(|row| (row.key.clone(), len_of(row))));
                        match r.next_start.take() {
                            Some(next) => r = t.get_range(&req(next)).unwrap(),
                            None => break,
                        }
                    }
                    prop_assert_eq!(got, want);
                }
            }
        }
        let all = t
            .get_range(&RangeRequest::forward(PrimaryKey::inf_min(types.len()), PrimaryKey::inf_max(types.len())))
            .unwrap();
        let keys: Vec<PrimaryKey> = all.rows.iter().map(|r| r.key.clone()).collect();
        prop_assert_eq!(keys, m.keys().cloned().collect::<Vec<_>>());
        let bytes: u64 = m.iter().map(|(k, l)| (k.size() + 1 + l + 8) as u64).sum();
        prop_assert_eq!(t.report().bytes, bytes);
    }
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
