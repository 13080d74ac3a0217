//! Key designs over time (`pk_codec::timeline`, `store::scan_timeline`): a read across periods
//! and layouts, in the text form, the binary form or both, returns exactly the rows one table
//! under one layout would, in typed order, at every page size and stop-and-resume point,
//! visiting only the key spaces the span touches; the collision rule against a model of it;
//! every refusal of a schedule, a row, a key and a read.

use std::collections::BTreeSet;
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::ops::ControlFlow;

use pk_codec::store::{
    MemoryStore, PrefixedStore, RangeQuery, RangeStore, RedbDatabase, StoreErrorKind,
    TimelineCursor, scan_timeline,
};
use pk_codec::timeline::{Period, Timeline, TimelineError, Visit};
use pk_codec::{Error, Form, Layout, Value};
use proptest::prelude::*;

use crate::support;

/// The layouts a period may have: the same fields (a card, then a time), written in every way
/// that changes the bytes but not the typed order: widths, delimiters, bucket prefixes by modulo
/// and by hash of some or all fields.
const LAYOUTS: [&str; 6] = [
    "card: u16 width=5; ts: u64 width=6",
    "card: u16 width=5; ts: u64 width=8; buckets=4:mod(ts):sep",
    "card: u16 width=5; ts: u64 width=6; buckets=16:hash(card):sep",
    "card: u16; ts: u64 width=7; delimiter='#'",
    "card: u16 width=5; ts: u64 width=6; buckets=7:hash",
    "card: u16 width=6; ts: u64; buckets=64:mod(ts)",
];

/// The key prefixes a period's space may have: none, two apart, and one behind another.
const PREFIXES: [&str; 4] = ["", "v1/", "v2/", "v1/x"];

fn layout(i: usize) -> Layout {
    LAYOUTS[i].parse().unwrap()
}

/// A raw period: start step, layout, table, key prefix, whether the layout is binary.
type RawPeriod = (i64, usize, usize, usize, bool);

fn raw_periods() -> impl Strategy<Value = Vec<RawPeriod>> {
    prop::collection::vec(
        (
            1i64..300,
            0..LAYOUTS.len(),
            0usize..3,
            0..PREFIXES.len(),
            any::<bool>(),
        ),
        1..6,
    )
}

/// The periods of `raw`: starts 0, then each after the last by its step; each layout in the
/// binary form where `raw` says so.
fn periods(raw: &[RawPeriod]) -> Vec<Period> {
    let mut start = 0;
    raw.iter()
        .enumerate()
        .map(|(i, &(step, l, t, p, binary))| {
            if i > 0 {
                start += step;
            }
            let form = if binary { Form::Binary } else { Form::Text };
            Period::new(start, format!("t{t}"), layout(l).with_form(form)).key_prefix(PREFIXES[p])
        })
        .collect()
}

/// The collision rule, as a model: two periods in one table collide unless they share key
/// prefix and layout, or neither key prefix starts with the other.
fn model_collision(periods: &[Period]) -> Option<(usize, usize)> {
    for j in 0..periods.len() {
        for i in 0..j {
            let (a, b) = (&periods[i], &periods[j]);
            if a.table() != b.table() {
                continue;
            }
            let same_space = a.prefix() == b.prefix() && a.layout() == b.layout();
            let nested = a.prefix().starts_with(b.prefix()) || b.prefix().starts_with(a.prefix());
            if !same_space && nested {
                return Some((i, j));
            }
        }
    }
    None
}

/// `periods` with each that collides with an earlier one moved to a table of its own.
fn without_collisions(mut periods: Vec<Period>) -> Vec<Period> {
    while let Some((_, j)) = model_collision(&periods) {
        let p = periods[j].clone();
        periods[j] =
            Period::new(p.start_ms(), format!("own{j}"), p.layout().clone()).key_prefix(p.prefix());
    }
    periods
}

/// Every row's values `(card, ts)`: distinct pairs, times within `0..1200`.
fn rows() -> impl Strategy<Value = Vec<(u16, u64)>> {
    prop::collection::btree_set((0u16..6, 0u64..1200), 0..80).prop_map(|s| s.into_iter().collect())
}

fn values((card, ts): (u16, u64)) -> Vec<Value> {
    vec![Value::from(card), Value::from(ts)]
}

/// The tables of a timeline, each a memory store.
struct Tables(Vec<(String, MemoryStore)>);

impl Tables {
    fn of(timeline: &Timeline) -> Self {
        let names: BTreeSet<&str> = timeline.periods().iter().map(Period::table).collect();
        Self(
            names
                .into_iter()
                .map(|n| (n.to_owned(), MemoryStore::default()))
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<&MemoryStore> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

/// Reads `visits` through `scan_timeline` in pages of `page`, stopping every `stop` rows and
/// resuming from the cursor, until it says it is done: the values in the order visited.
fn read_all<'s>(
    timeline: &Timeline,
    visits: &[Visit],
    stores: impl Fn(&str) -> Option<&'s MemoryStore> + Copy,
    page: usize,
    stop: usize,
) -> Vec<Vec<Value>> {
    let mut got = Vec::new();
    let mut cursor: Option<TimelineCursor> = None;
    let mut reads = 0;
    loop {
        let mut n = 0;
        cursor = scan_timeline(timeline, visits, stores, page, cursor.as_ref(), |row| {
            got.push(row.values.to_vec());
            n += 1;
            support::stop_after(n, stop)
        })
        .unwrap();
        reads += 1;
        assert!(reads <= got.len() + 1, "a read made no progress");
        if cursor.is_none() {
            return got;
        }
    }
}

/// The read of one table holding every row under one plain layout: the reference.
fn single_table(
    rows: &[(u16, u64)],
    prefix: &[Value],
    lower: Bound<&Value>,
    upper: Bound<&Value>,
) -> Vec<Vec<Value>> {
    let one = layout(0);
    let store = MemoryStore::default();
    for &r in rows {
        store
            .put(&one.encode_bytes(&values(r)).unwrap(), b"")
            .unwrap();
    }
    let range = one.range(prefix, lower, upper).unwrap();
    let page = store
        .range(&RangeQuery::new(range.start.as_str(), range.end.as_deref()).limit(usize::MAX))
        .unwrap();
    page.rows
        .iter()
        .map(|(k, _)| one.decode_bytes(k).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(96), ..ProptestConfig::default() })]

    /// Any schedule: refused with a collision exactly when the model says two periods collide
    /// (and then naming those two), accepted otherwise.
    #[test]
    fn the_collision_rule_is_the_model(raw in raw_periods()) {
        let periods = periods(&raw);
        match (Timeline::new(periods.clone()), model_collision(&periods)) {
            (Ok(_), None) => {}
            (Err(TimelineError::Collision { first, second, .. }), Some((i, j))) => {
                prop_assert_eq!((first, second), (i, j));
            }
            (other, model) => prop_assert!(false, "{other:?} against the model's {model:?}"),
        }
    }

    /// A read across periods and layouts returns exactly the rows one table would, in typed
    /// order, for the key spaces of the periods the span touches, at every page size and every
    /// stop-and-resume point: every period binary in half the cases, forms mixed in the others.
    #[test]
    fn a_read_across_periods_is_a_read_of_one_table(
        raw in raw_periods(),
        all_binary in any::<bool>(),
        rows in rows(),
        fix_card in any::<bool>(),
        card in 0u16..6,
        lo in 0u64..1200,
        len in 0u64..1200,
        span in (-100i64..1400, 0i64..1500),
        page in 1usize..7,
        stop in 1usize..9,
    ) {
        let raw: Vec<RawPeriod> = raw.into_iter().map(|(s, l, t, p, b)| (s, l, t, p, b || all_binary)).collect();
        let timeline = Timeline::new(without_collisions(periods(&raw))).unwrap();
        let tables = Tables::of(&timeline);
        let mut period_of = Vec::new();
        for &r in &rows {
            let placed = timeline.encode(r.1 as i64, &values(r)).unwrap();
            tables.get(placed.table).unwrap().put(&placed.key, b"").unwrap();
            period_of.push(placed.period);
        }
        // The card fixed and a time window, or cards within bounds.
        let (prefix, lower, upper) = if fix_card {
            (vec![Value::from(card)], Value::from(lo), Value::from(lo + len))
        } else {
            (vec![], Value::from(card), Value::from(card + (len % 6) as u16))
        };
        let (lower, upper) = (Included(&lower), Excluded(&upper));
        let span = span.0..span.0 + span.1;
        let visits = timeline.ranges(span.clone(), &prefix, lower, upper).unwrap();

        // The model of the periods a span touches, and so of the spaces to read.
        let ps = timeline.periods();
        let touched: Vec<usize> = (0..ps.len())
            .filter(|&i| {
                let end = ps.get(i + 1).map_or(i64::MAX, Period::start_ms);
                !span.is_empty() && ps[i].start_ms() < span.end && span.start < end
            })
            .collect();
        let space = |i: usize| (ps[i].table().to_owned(), ps[i].prefix().to_owned());
        let spaces: BTreeSet<_> = touched.iter().map(|&i| space(i)).collect();
        let visited: BTreeSet<_> = visits.iter().map(|v| (v.table().to_owned(), v.prefix().to_owned())).collect();
        prop_assert_eq!(&visited, &spaces);
        prop_assert_eq!(visits.iter().map(|v| v.periods().len()).sum::<usize>(), touched.len());

        let kept: Vec<(u16, u64)> = rows
            .iter()
            .zip(&period_of)
            .filter(|(_, p)| spaces.contains(&space(**p)))
            .map(|(r, _)| *r)
            .collect();
        let want = single_table(&kept, &prefix, lower, upper);
        let got = read_all(&timeline, &visits, |t| tables.get(t), page, stop);
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_read_across_periods_in_redb_tables_is_a_read_of_one_table() {
    for form in [Form::Text, Form::Binary] {
        read_across_redb_tables(form);
    }
}

fn read_across_redb_tables(form: Form) {
    // Three monthly tables and a bucket count raised from 16 to 64 in the third.
    let sixteen: Layout = "card: u16 width=5; ts: u64 width=6; buckets=16:hash(card):sep"
        .parse::<Layout>()
        .unwrap()
        .with_form(form);
    let sixty_four: Layout = "card: u16 width=5; ts: u64 width=6; buckets=64:hash(card):sep"
        .parse::<Layout>()
        .unwrap()
        .with_form(form);
    let timeline = Timeline::new(vec![
        Period::new(0, "m1", sixteen.clone()),
        Period::new(1000, "m2", sixteen),
        Period::new(2000, "m3", sixty_four),
    ])
    .unwrap();
    let db = RedbDatabase::in_memory().unwrap();
    let stores: Vec<_> = ["m1", "m2", "m3"]
        .iter()
        .map(|n| (*n, db.table(n).unwrap()))
        .collect();
    let store = |t: &str| stores.iter().find(|(n, _)| *n == t).map(|(_, s)| s);
    let rows: Vec<(u16, u64)> = (0..3000u64)
        .map(|i| ((support::mix(i) % 40) as u16, (support::mix(i + 7) % 3000)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for &r in &rows {
        let placed = timeline.encode(r.1 as i64, &values(r)).unwrap();
        store(placed.table)
            .unwrap()
            .put(&placed.key, &r.1.to_be_bytes())
            .unwrap();
    }
    let (lo, hi) = (Value::from(3u16), Value::from(17u16));
    let visits = timeline
        .ranges(0..3000, &[], Included(&lo), Included(&hi))
        .unwrap();
    assert_eq!(visits.len(), 3);
    let want = single_table(&rows, &[], Included(&lo), Included(&hi));
    assert!(want.len() > 100);
    for (page, stop) in [(1, 1), (7, 13), (1000, usize::MAX)] {
        let mut got = Vec::new();
        let mut cursor = None;
        loop {
            let mut n = 0;
            cursor = scan_timeline(&timeline, &visits, store, page, cursor.as_ref(), |row| {
                assert_eq!(row.value, row.values[1].as_u64().unwrap().to_be_bytes());
                got.push(row.values.to_vec());
                n += 1;
                support::stop_after(n, stop)
            })
            .unwrap();
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(got, want, "{form:?}: page {page}, stop every {stop}");
    }
}

// ---- Refusals of a schedule. -------------------------------------------------------------------

fn plain() -> Layout {
    layout(0)
}

#[test]
fn an_empty_schedule_is_refused() {
    let err = Timeline::new(vec![]).unwrap_err();
    assert_eq!(err, TimelineError::Empty);
    assert!(err.to_string().contains("at least one period"));
}

#[test]
fn starts_out_of_order_or_repeated_are_refused() {
    for second in [100, 50] {
        let err = Timeline::new(vec![
            Period::new(0, "a", plain()),
            Period::new(100, "b", plain()),
            Period::new(second, "c", plain()),
        ])
        .unwrap_err();
        assert_eq!(
            err,
            TimelineError::Unordered {
                index: 2,
                start_ms: second,
                previous_ms: 100
            }
        );
        assert!(err.to_string().contains("increasing start order"), "{err}");
    }
}

#[test]
fn ends_must_meet_the_next_start_and_follow_their_own() {
    let at = |end| {
        Timeline::new(vec![
            Period::new(0, "a", plain()).until(end),
            Period::new(100, "b", plain()),
        ])
    };
    assert_eq!(
        at(60).unwrap_err(),
        TimelineError::Gap {
            index: 0,
            end_ms: 60,
            next_start_ms: 100
        }
    );
    assert!(at(60).unwrap_err().to_string().contains("no layout"));
    assert_eq!(
        at(160).unwrap_err(),
        TimelineError::Overlap {
            index: 0,
            end_ms: 160,
            next_start_ms: 100
        }
    );
    assert!(at(160).unwrap_err().to_string().contains("two layouts"));
    assert!(at(100).is_ok());
    let err = Timeline::new(vec![Period::new(10, "a", plain()).until(10)]).unwrap_err();
    assert_eq!(
        err,
        TimelineError::EmptyPeriod {
            index: 0,
            start_ms: 10,
            end_ms: 10
        }
    );
}

#[test]
fn a_space_needs_a_table_name_and_a_printable_prefix() {
    let err = Timeline::new(vec![Period::new(0, "", plain())]).unwrap_err();
    assert!(
        matches!(err, TimelineError::BadSpace { index: 0, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("table name is empty"));
    let err = Timeline::new(vec![
        Period::new(0, "a", plain()),
        Period::new(5, "a", plain()).key_prefix("é/"),
    ])
    .unwrap_err();
    assert!(
        matches!(err, TimelineError::BadSpace { index: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("printable ASCII"), "{err}");
}

#[test]
fn a_binary_period_writes_and_reads_binary_keys() {
    let t = Timeline::new(vec![
        Period::new(0, "a", plain()),
        Period::new(5, "b", plain().with_form(Form::Binary)).key_prefix("v2/"),
    ])
    .unwrap();
    let placed = t.encode(7, &values((3, 7))).unwrap();
    let binary = plain().with_form(Form::Binary);
    let want = [
        b"v2/".as_slice(),
        &binary.encode_bytes(&values((3, 7))).unwrap(),
    ]
    .concat();
    assert_eq!(placed.key, want);
    assert_eq!(t.decode(1, &placed.key).unwrap(), values((3, 7)));
    // The text key of the same row is not this period's.
    let text = [
        b"v2/".as_slice(),
        plain().encode(&values((3, 7))).unwrap().as_bytes(),
    ]
    .concat();
    assert!(t.decode(1, &text).is_err());
    let visits = t
        .ranges(0..10, &[Value::from(3u16)], Unbounded, Unbounded)
        .unwrap();
    assert!(visits[1].ranges()[0].contains(&placed.key));
    assert!(!visits[0].ranges()[0].contains(&placed.key));
}

#[test]
fn layouts_with_other_fields_are_refused() {
    for (other, says) in [
        ("card: u16 width=5", "1 fields against 2"),
        ("card: u16 width=5; time: u64", "named \"time\""),
        ("card: u16 width=5; ts: u32", "ts"),
        ("card: u16 width=5; ts: u64 desc", "order or optionality"),
        (
            "card: u16 width=5; ts: u64 optional",
            "order or optionality",
        ),
    ] {
        let err = Timeline::new(vec![
            Period::new(0, "a", plain()),
            Period::new(5, "b", other.parse().unwrap()),
        ])
        .unwrap_err();
        assert!(
            matches!(err, TimelineError::FieldsDiffer { index: 1, .. }),
            "{other}: {err:?}"
        );
        assert!(err.to_string().contains(says), "{other}: {err}");
    }
}

#[test]
fn colliding_spaces_are_refused_and_shared_ones_accepted() {
    let other = layout(2);
    let err = Timeline::new(vec![
        Period::new(0, "t", plain()),
        Period::new(5, "t", other.clone()),
    ])
    .unwrap_err();
    assert!(
        matches!(&err, TimelineError::Collision { first: 0, second: 1, table, .. } if table == "t")
    );
    assert!(err.to_string().contains("different layouts"), "{err}");
    let err = Timeline::new(vec![
        Period::new(0, "t", plain()).key_prefix("v1/"),
        Period::new(5, "t", plain()).key_prefix("v1/x"),
    ])
    .unwrap_err();
    assert!(
        err.to_string().contains("starts with key prefix \"v1/\""),
        "{err}"
    );
    // One space shared by periods of one layout; prefixes apart; other tables.
    let ok = Timeline::new(vec![
        Period::new(0, "t", plain()),
        Period::new(5, "u", other.clone()),
        Period::new(9, "t", plain()),
        Period::new(12, "u2", other.clone()).key_prefix("a/"),
        Period::new(15, "u2", plain()).key_prefix("b/"),
    ])
    .unwrap();
    let visits = ok.ranges(0..100, &[], Unbounded, Unbounded).unwrap();
    let shared: Vec<&[usize]> = visits.iter().map(Visit::periods).collect();
    assert_eq!(shared, [&[0, 2][..], &[1], &[3], &[4]]);
}

// ---- Refusals of a row, a key and a read. ------------------------------------------------------

#[test]
fn rows_outside_the_schedule_and_bad_values_are_refused() {
    let t = Timeline::new(vec![
        Period::new(100, "a", plain()),
        Period::new(200, "b", plain()).until(300),
    ])
    .unwrap();
    let row = values((1, 1));
    let err = t.encode(99, &row).unwrap_err();
    assert!(matches!(err, TimelineError::NoPeriod { time_ms: 99, .. }));
    assert!(
        err.to_string().contains("first period starts at 100 ms"),
        "{err}"
    );
    let err = t.encode(300, &row).unwrap_err();
    assert!(
        err.to_string().contains("last period ends at 300 ms"),
        "{err}"
    );
    let err = t.encode(150, &[Value::from(1u16)]).unwrap_err();
    assert!(
        matches!(
            err,
            TimelineError::Key {
                period: 0,
                error: Error::FieldCount { .. }
            }
        ),
        "{err:?}"
    );
    let err = t
        .encode(250, &[Value::from(1u16), Value::from(10_000_000u64)])
        .unwrap_err();
    assert!(
        matches!(err, TimelineError::Key { period: 1, .. }),
        "{err:?}"
    );
}

#[test]
fn keys_decode_with_their_period_and_no_other() {
    let t = Timeline::new(vec![
        Period::new(0, "t", plain()).key_prefix("a/"),
        Period::new(10, "t", layout(1)).key_prefix("b/"),
    ])
    .unwrap();
    let placed = t.encode(12, &values((3, 12))).unwrap();
    assert_eq!(t.decode(1, &placed.key).unwrap(), values((3, 12)));
    let err = t.decode(0, &placed.key).unwrap_err();
    assert!(
        matches!(
            err,
            TimelineError::Key {
                period: 0,
                error: Error::PrefixMismatch { position: 0, .. }
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        t.decode(2, &placed.key).unwrap_err(),
        TimelineError::NoSuchPeriod {
            index: 2,
            periods: 2
        }
    );
    assert!(matches!(
        t.decode(1, "b/xyz").unwrap_err(),
        TimelineError::Key { period: 1, .. }
    ));
}

#[test]
fn a_read_a_layout_cannot_answer_names_its_period() {
    let hashed: Layout = "card: u16 width=5; ts: u64 width=6; hash=md5:4"
        .parse()
        .unwrap();
    let t = Timeline::new(vec![
        Period::new(0, "a", plain()),
        Period::new(10, "b", hashed),
    ])
    .unwrap();
    // A span of the first period alone does not ask the second.
    assert_eq!(t.ranges(0..10, &[], Unbounded, Unbounded).unwrap().len(), 1);
    let err = t.ranges(0..11, &[], Unbounded, Unbounded).unwrap_err();
    assert!(
        matches!(
            err,
            TimelineError::Key {
                period: 1,
                error: Error::RangeUnsupported { .. }
            }
        ),
        "{err:?}"
    );
    // An empty span visits nothing.
    assert!(
        t.ranges(5..5, &[], Unbounded, Unbounded)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_read_refuses_an_unknown_table_a_foreign_cursor_and_an_undecodable_key() {
    let t = Timeline::new(vec![
        Period::new(0, "a", plain()),
        Period::new(10, "b", layout(1)),
    ])
    .unwrap();
    let (a, b) = (MemoryStore::default(), MemoryStore::default());
    let visits = t.ranges(0..20, &[], Unbounded, Unbounded).unwrap();
    let only_a = |n: &str| (n == "a").then_some(&a);
    let err =
        scan_timeline(&t, &visits, only_a, 10, None, |_| ControlFlow::Continue(())).unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Invalid);
    assert!(err.message().contains("no store for table \"b\""), "{err}");

    let both = |n: &str| match n {
        "a" => Some(&a),
        "b" => Some(&b),
        _ => None,
    };
    let foreign = TimelineCursor { visits: vec![None] };
    let err = scan_timeline(&t, &visits, both, 10, Some(&foreign), |_| {
        ControlFlow::Continue(())
    })
    .unwrap_err();
    assert!(err.message().contains("1 visits for 2 visits"), "{err}");

    a.put(b"not a key", b"").unwrap();
    let err =
        scan_timeline(&t, &visits, both, 10, None, |_| ControlFlow::Continue(())).unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Other);
    assert!(
        err.message().contains("\"not a key\" in table \"a\""),
        "{err}"
    );
}

#[test]
fn a_key_space_reads_and_writes_behind_its_prefix_only() {
    let store = MemoryStore::default();
    store.put(b"v1", b"outside").unwrap();
    store.put(b"v1/", b"empty key").unwrap();
    store.put(b"v10", b"outside").unwrap();
    let space = PrefixedStore::new(&store, "v1/");
    space.put(b"k", b"1").unwrap();
    assert_eq!(space.get(b"k").unwrap(), Some(b"1".to_vec()));
    let page = space.range(&RangeQuery::new("", None).limit(1)).unwrap();
    assert_eq!(page.rows, [(Vec::new(), b"empty key".to_vec())]);
    let rest = space
        .range(&RangeQuery::new("", None).resume(page.next.as_deref()))
        .unwrap();
    assert_eq!(rest.rows, [(b"k".to_vec(), b"1".to_vec())]);
    assert!(rest.next.is_none());
    assert!(space.delete(b"k").unwrap());
    assert_eq!(store.get(b"v1/k").unwrap(), None);
}

#[test]
fn a_timeline_loads_with_serde_and_is_checked() {
    let json = r#"{"periods": [
        {"start_ms": 0, "table": "m1", "layout": {"fields": [{"name": "card", "type": "u16", "width": 5}, {"name": "ts", "type": "u64", "width": 6}]}},
        {"start_ms": 100, "table": "m2", "key_prefix": "v2/", "layout": {"fields": [{"name": "card", "type": "u16", "width": 5}, {"name": "ts", "type": "u64", "width": 6}],
            "prefix": {"kind": "buckets", "count": 4, "by": "hash", "separator": true}}}
    ]}"#;
    let t: Timeline = serde_json::from_str(json).unwrap();
    assert_eq!(t.periods()[1].prefix(), "v2/");
    let back: Timeline = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(back, t);
    let gap = json.replace(r#""table": "m1","#, r#""table": "m1", "end_ms": 90,"#);
    let err = serde_json::from_str::<Timeline>(&gap).unwrap_err();
    assert!(
        err.to_string().contains("gap between periods 0 and 1"),
        "{err}"
    );
}

// ---- The row's own time field. -----------------------------------------------------------------

fn by_ts() -> Timeline {
    Timeline::new(vec![
        Period::new(0, "a", plain()),
        Period::new(100, "b", plain().with_form(Form::Binary)),
    ])
    .unwrap()
    .with_time_field("ts")
    .unwrap()
}

#[test]
fn a_row_goes_to_the_period_of_its_own_time_field() {
    let t = by_ts();
    for ts in [0u64, 99, 100, 500] {
        let placed = t.place(&values((1, ts))).unwrap();
        assert_eq!(placed.period, usize::from(ts >= 100), "ts {ts}");
        // A time in the same period agrees; one in another period is refused, naming both.
        assert_eq!(t.encode(ts as i64, &values((1, ts))).unwrap(), placed);
        let other = if ts >= 100 { 50 } else { 150 };
        let err = t.encode(other, &values((1, ts))).unwrap_err();
        assert!(
            matches!(err, TimelineError::TimeDisagrees { field_ms, .. } if field_ms == ts as i64),
            "{err:?}"
        );
        assert!(err.to_string().contains("time field \"ts\""), "{err}");
    }
    // A timestamp field: its instant, rounded down to the ms.
    let stamped: Layout = "card: u16; at: timestamp precision=ns".parse().unwrap();
    let t = Timeline::new(vec![
        Period::new(0, "a", stamped.clone()),
        Period::new(100, "b", stamped),
    ])
    .unwrap()
    .with_time_field("at")
    .unwrap();
    let row = |ns: i128| vec![Value::from(1u16), Value::Timestamp(ns)];
    assert_eq!(t.place(&row(99_999_999)).unwrap().period, 0);
    assert_eq!(t.place(&row(100_000_000)).unwrap().period, 1);
}

#[test]
fn a_time_field_must_be_a_time_of_every_layout() {
    let t = Timeline::new(vec![Period::new(0, "a", plain())]).unwrap();
    let err = t.clone().with_time_field("when").unwrap_err();
    assert!(
        matches!(&err, TimelineError::TimeField { field, .. } if field == "when"),
        "{err:?}"
    );
    assert!(err.to_string().contains("card, ts"), "{err}");
    let named: Layout = "name: str; ts: u64".parse().unwrap();
    let err = Timeline::new(vec![Period::new(0, "a", named)])
        .unwrap()
        .with_time_field("name")
        .unwrap_err();
    assert!(
        err.to_string().contains("a str field holds no time"),
        "{err}"
    );
    // Without a time field, place has nothing to go by; encode takes the time given.
    assert_eq!(
        t.place(&values((1, 5))).unwrap_err(),
        TimelineError::NoTimeField
    );
    assert_eq!(t.encode(7, &values((1, 5))).unwrap().period, 0);
    // An optional time field that is null gives no time.
    let optional: Layout = "card: u16; ts: u64 optional".parse().unwrap();
    let t = Timeline::new(vec![Period::new(0, "a", optional)])
        .unwrap()
        .with_time_field("ts")
        .unwrap();
    let err = t.place(&[Value::from(1u16), Value::Null]).unwrap_err();
    assert!(matches!(err, TimelineError::NoRowTime { .. }), "{err:?}");
}

// ---- Typed rows of a timeline. -----------------------------------------------------------------

#[test]
fn typed_rows_of_a_timeline_read_back_exactly_across_periods_and_forms() {
    use pk_codec::store::{TypedError, TypedTimeline};
    let t = by_ts();
    let tables = Tables::of(&t);
    let rows = TypedTimeline::new(&t, |name: &str| tables.get(name));
    // Floats by their bits (JSON would change some by one bit), in both periods.
    let reading = |ts: u64| f64::from_bits(0x4000_0000_0000_0000 ^ support::mix(ts) >> 12);
    for ts in (0..200u64).rev() {
        rows.put(&values((2, ts)), &reading(ts)).unwrap();
    }
    rows.put_at(150, &values((3, 150)), "another type").unwrap();
    for ts in [0u64, 99, 100, 199] {
        let got: f64 = rows.get(&values((2, ts))).unwrap().unwrap();
        assert_eq!(got.to_bits(), reading(ts).to_bits());
        assert_eq!(
            rows.get_at::<f64>(ts as i64, &values((2, ts)))
                .unwrap()
                .map(f64::to_bits),
            Some(reading(ts).to_bits())
        );
    }
    assert_eq!(rows.get::<f64>(&values((2, 300))).unwrap(), None);
    // The binary period's row is stored under its binary key, its value in the value format.
    let placed = t.place(&values((2, 150))).unwrap();
    assert_eq!(
        tables.get("b").unwrap().get(&placed.key).unwrap(),
        Some(pk_codec::store::value::to_bytes(&reading(150)).unwrap())
    );
    // Card 2 across both periods, in typed order, at every page size and resume point.
    let card = [Value::from(2u16)];
    let visits = t.ranges(0..200, &card, Unbounded, Unbounded).unwrap();
    for (page, stop) in [(1, 1), (3, 7), (64, 50), (500, usize::MAX)] {
        let mut got = Vec::new();
        let mut cursor = None;
        loop {
            let mut n = 0;
            cursor = rows
                .scan::<f64>(&visits, page, cursor.as_ref(), |values, v| {
                    got.push((values[1].as_u64().unwrap(), v.to_bits()));
                    n += 1;
                    support::stop_after(n, stop)
                })
                .unwrap();
            if cursor.is_none() {
                break;
            }
        }
        let want: Vec<(u64, u64)> = (0..200).map(|ts| (ts, reading(ts).to_bits())).collect();
        assert_eq!(got, want, "page {page}, stop every {stop}");
    }
    // A value of another type is named by its key; a time that disagrees is refused unwritten.
    let visits = t
        .ranges(100..200, &[Value::from(3u16)], Unbounded, Unbounded)
        .unwrap();
    let err = rows
        .scan::<f64>(&visits, 10, None, |_, _| ControlFlow::Continue(()))
        .unwrap_err();
    assert!(matches!(err, TypedError::StoredValue { .. }), "{err:?}");
    let err = rows.put_at(50, &values((4, 150)), &1.0).unwrap_err();
    assert!(
        matches!(
            err,
            TypedError::Timeline(TimelineError::TimeDisagrees { .. })
        ),
        "{err:?}"
    );
    assert_eq!(rows.get::<f64>(&values((4, 150))).unwrap(), None);
}
