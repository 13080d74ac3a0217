//! The checks, one per [`Promise`], each on a fresh store.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::Unbounded;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use super::random::Rng;
use super::{Promise, Violation};
use crate::Layout;
use crate::kinds::Value;
use crate::store::{
    BulkOptions, BulkWriter, CondWrite, Direction, Expect, KeySpace, MAX_WORKERS, Phase, PrefixLen,
    RangeQuery, RangeStore, Rekey, RekeyJob, RekeyOptions, StoreError, StoreErrorKind, WriteOp,
    scan_ranges, show_key,
};

/// The suite's settings a check reads.
pub(super) struct Ctx {
    pub(super) cases: usize,
    pub(super) seed: u64,
    pub(super) threads: usize,
}

type Check = Result<(), Violation>;
type Rows = Vec<(Vec<u8>, Vec<u8>)>;
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Keys where byte orders go wrong: `00` and `ff` alone, leading, trailing and repeated, a key
/// and its extensions, the `7f`/`80` boundary (signed bytes), text and a UTF-8 sequence.
const EDGE_KEYS: [&[u8]; 16] = [
    &[0x00],
    &[0x00, 0x00],
    &[0x00, 0x01],
    &[0x01],
    &[0x7f],
    &[0x80],
    &[0xfe, 0xff],
    &[0xff],
    &[0xff, 0x00],
    &[0xff, 0xff],
    &[0xff, 0xff, 0xff],
    b"a",
    b"a\x00",
    b"a\xff",
    b"ab",
    "\u{e9}".as_bytes(),
];

/// Runs the check of `promise` on `store`.
pub(super) fn check<S: RangeStore + 'static>(promise: Promise, store: S, ctx: &Ctx) -> Check {
    match promise {
        // Checked by the suite on every store it makes.
        Promise::FreshStoreIsEmpty => Ok(()),
        Promise::PointWrites => point_writes(&store),
        Promise::DeleteReports => delete_reports(&store),
        Promise::EmptyKey => empty_key(&store),
        Promise::ByteOrder => byte_order(&store),
        Promise::RangeBounds => range_bounds(&store),
        Promise::LimitZero => limit_zero(&store),
        Promise::PageLimit => page_limit(&store),
        Promise::ForwardPaging => paging(&store, Direction::Forward),
        Promise::BackwardPaging => paging(&store, Direction::Backward),
        Promise::ResumeClamped => resume_clamped(&store),
        Promise::BatchResults => batch_results(&store),
        Promise::BatchOverLimit => batch_over_limit(&store),
        Promise::WriteIfApplies => write_if_applies(&store),
        Promise::WriteIfRefuses => write_if_refuses(&store),
        Promise::BatchWriteIf => batch_write_if(&store),
        Promise::WriteIfAtomic => write_if_atomic(&store, ctx),
        Promise::ConcurrentWriters => concurrent_writers(&store, ctx),
        Promise::WriteProfile => write_profile(store),
        Promise::ScanRanges => scan(&store),
        Promise::BulkWriter => bulk_writer(store),
        Promise::Rekey => rekey(store),
        Promise::RandomTextKeys => random_keys(&store, ctx, Forms::Text),
        Promise::RandomBinaryKeys => random_keys(&store, ctx, Forms::Binary),
    }
}

/// Whether the store offers conditional writes: an empty one is refused as `Invalid` by a store
/// without them (the trait's default).
pub(super) fn offers_write_if<S: RangeStore>(store: &S) -> bool {
    !matches!(store.write_if(&CondWrite::default()), Err(e) if e.kind() == StoreErrorKind::Invalid)
}

/// The store's answer, or a violation of `promise` saying it refused `what`.
fn ok<T>(
    promise: Promise,
    keys: &[&[u8]],
    what: &str,
    result: Result<T, StoreError>,
) -> Result<T, Violation> {
    result.map_err(|e| Violation::new(promise, keys, what.to_owned(), format!("refused: {e}")))
}

fn shown(value: Option<&[u8]>) -> String {
    value.map_or_else(
        || "nothing".to_owned(),
        |v| format!("value {}", show_key(v)),
    )
}

/// `key` holds `want` (`None`: absent), else a violation of `promise`.
fn expect_value<S: RangeStore + ?Sized>(
    store: &S,
    promise: Promise,
    key: &[u8],
    want: Option<&[u8]>,
    after: &str,
) -> Check {
    let got = ok(promise, &[key], "a get to succeed", store.get(key))?;
    if got.as_deref() == want {
        return Ok(());
    }
    Err(Violation::new(
        promise,
        &[key],
        format!("{} after {after}", shown(want)),
        shown(got.as_deref()),
    ))
}

fn put<S: RangeStore + ?Sized>(store: &S, promise: Promise, key: &[u8], value: &[u8]) -> Check {
    ok(promise, &[key], "a put to succeed", store.put(key, value))
}

/// The value the checks write at `key`, with a `tag` to tell writes apart.
fn value_of(key: &[u8], tag: u8) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(key);
    v
}

/// The rows of `model` that `query` (its resume key included) should answer, in its direction.
fn expected(model: &Model, query: &RangeQuery<'_>) -> Rows {
    let (from, to, to_inclusive) = query.remaining();
    let mut rows: Rows = model
        .iter()
        .filter(|(k, _)| {
            k.as_slice() >= from
                && to.is_none_or(|t| k.as_slice() < t || (to_inclusive && k.as_slice() == t))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if query.direction == Direction::Backward {
        rows.reverse();
    }
    rows
}

/// Every row of `query`, page by page through the resume keys: each page at most the limit,
/// and the whole read ending within one page per row (plus one).
fn read_all<S: RangeStore + ?Sized>(
    store: &S,
    promise: Promise,
    query: &RangeQuery<'_>,
    most_rows: usize,
) -> Result<Rows, Violation> {
    let mut rows: Rows = Vec::new();
    let mut resume: Option<Vec<u8>> = query.resume.map(<[u8]>::to_vec);
    for _ in 0..=most_rows + 1 {
        let q = query.clone().resume(resume.as_deref());
        let page = ok(
            promise,
            &[q.start],
            "a range read to succeed",
            store.range(&q),
        )?;
        let cap = query.limit.min(store.max_page());
        if page.rows.len() > cap {
            return Err(Violation::new(
                Promise::PageLimit,
                &[q.start],
                format!("at most {cap} rows a page (limit {})", query.limit),
                format!("{} rows", page.rows.len()),
            ));
        }
        rows.extend(page.rows);
        match page.next {
            Some(next) => resume = Some(next),
            None => return Ok(rows),
        }
    }
    Err(Violation::new(
        promise,
        &[query.start],
        format!("a read of at most {most_rows} rows to end"),
        format!("resume keys after {} rows and still no end", rows.len()),
    ))
}

/// `got` equals `want`, else a violation naming the first row that differs.
fn same_rows(promise: Promise, what: &str, want: &Rows, got: &Rows) -> Check {
    let at = want
        .iter()
        .zip(got)
        .position(|(w, g)| w != g)
        .unwrap_or_else(|| want.len().min(got.len()));
    if want.len() == got.len() && at == want.len() {
        return Ok(());
    }
    let keys: Vec<&[u8]> = [want.get(at), got.get(at)]
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_slice())
        .collect();
    let expected = match want.get(at) {
        Some((k, v)) => format!(
            "{what}: {} rows, row {at} key {} ({})",
            want.len(),
            show_key(k),
            shown(Some(v))
        ),
        None => format!("{what}: {} rows, none after row {}", want.len(), at),
    };
    let found = match got.get(at) {
        Some((k, v)) => format!(
            "{} rows, row {at} key {} ({})",
            got.len(),
            show_key(k),
            shown(Some(v))
        ),
        None => format!("{} rows: the read ended before row {at}", got.len()),
    };
    Err(Violation::new(promise, &keys, expected, found))
}

/// Writes `keys` (values from [`value_of`]) in the order given, into the store and a model.
fn fill<S: RangeStore + ?Sized>(
    store: &S,
    promise: Promise,
    keys: &[&[u8]],
) -> Result<Model, Violation> {
    let mut model = Model::new();
    for k in keys {
        let v = value_of(k, 1);
        put(store, promise, k, &v)?;
        model.insert(k.to_vec(), v);
    }
    Ok(model)
}

/// The edge keys in a scrambled order (so a store that keeps insertion order shows it).
fn scrambled_edges() -> Vec<&'static [u8]> {
    let mut keys: Vec<&[u8]> = EDGE_KEYS.to_vec();
    keys.reverse();
    keys.rotate_left(5);
    keys
}

fn point_writes<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::PointWrites;
    for k in scrambled_edges() {
        expect_value(store, p, k, None, "no write")?;
        put(store, p, k, &value_of(k, 1))?;
        expect_value(store, p, k, Some(&value_of(k, 1)), "a put")?;
        put(store, p, k, &value_of(k, 2))?;
        expect_value(store, p, k, Some(&value_of(k, 2)), "a second put")?;
    }
    // A key's neighbours are other keys.
    expect_value(store, p, &[0x00, 0x00, 0x00], None, "puts of its prefixes")?;
    expect_value(
        store,
        p,
        &[0xff, 0xff, 0xff, 0xff],
        None,
        "puts of its prefixes",
    )
}

fn delete_reports<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::DeleteReports;
    for k in scrambled_edges() {
        put(store, p, k, &value_of(k, 1))?;
        let existed = ok(p, &[k], "a delete to succeed", store.delete(k))?;
        if !existed {
            return Err(Violation::new(
                p,
                &[k],
                "delete of a present key to answer true",
                "false",
            ));
        }
        expect_value(store, p, k, None, "a delete")?;
        let again = ok(p, &[k], "a delete to succeed", store.delete(k))?;
        if again {
            return Err(Violation::new(
                p,
                &[k],
                "delete of an absent key to answer false",
                "true",
            ));
        }
    }
    Ok(())
}

fn empty_key<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::EmptyKey;
    let empty: &[u8] = b"";
    match store.put(empty, b"e") {
        Ok(()) => {
            expect_value(store, p, empty, Some(b"e"), "a put")?;
            put(store, p, &[0x00], b"nul")?;
            let rows = read_all(store, p, &RangeQuery::new("", None), 3)?;
            let want: Rows = vec![(vec![], b"e".to_vec()), (vec![0], b"nul".to_vec())];
            same_rows(p, "the empty key read first", &want, &rows)?;
            let existed = ok(p, &[empty], "a delete to succeed", store.delete(empty))?;
            if !existed {
                return Err(Violation::new(
                    p,
                    &[empty],
                    "delete to answer true",
                    "false",
                ));
            }
            expect_value(store, p, empty, None, "a delete")
        }
        Err(e) if e.kind() == StoreErrorKind::Invalid => {
            let rows = read_all(store, p, &RangeQuery::new("", None), 1)?;
            match rows.first() {
                None => Ok(()),
                Some((k, _)) => Err(Violation::new(
                    p,
                    &[k],
                    "nothing written by a refused put of the empty key",
                    "a key in the store",
                )),
            }
        }
        Err(e) => Err(Violation::new(
            p,
            &[empty],
            "the empty key stored, or refused as invalid",
            format!("refused as {e}"),
        )),
    }
}

fn byte_order<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::ByteOrder;
    let model = fill(store, p, &scrambled_edges())?;
    for direction in [Direction::Forward, Direction::Backward] {
        let query = RangeQuery::new("", None).direction(direction);
        let rows = read_all(store, p, &query, model.len())?;
        let back = direction == Direction::Backward;
        if let Some(w) = rows
            .windows(2)
            .find(|w| (w[0].0 < w[1].0) == back || w[0].0 == w[1].0)
        {
            let (first, then) = if back {
                (&w[1].0, &w[0].0)
            } else {
                (&w[0].0, &w[1].0)
            };
            let way = if back { "backward" } else { "forward" };
            return Err(Violation::new(
                p,
                &[&w[0].0, &w[1].0],
                format!(
                    "a read {way} in bytewise order: {} {} {}",
                    show_key(first),
                    if first == then { "once, not" } else { "before" },
                    show_key(then)
                ),
                format!(
                    "{} answered before {}",
                    show_key(&w[0].0),
                    show_key(&w[1].0)
                ),
            ));
        }
        same_rows(p, "every key", &expected(&model, &query), &rows)?;
    }
    Ok(())
}

/// Bounds to read between: keys present, keys between them, the lowest and highest there are.
fn bounds() -> Vec<Vec<u8>> {
    let mut b: Vec<Vec<u8>> = EDGE_KEYS.iter().map(|k| k.to_vec()).collect();
    b.extend([
        vec![],
        vec![0x00, 0x00, 0x00],
        vec![0x02],
        vec![0xff, 0x00, 0x00],
        vec![0xff, 0xff, 0xff, 0xff],
        b"a\x00\x00".to_vec(),
    ]);
    b
}

fn range_bounds<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::RangeBounds;
    let model = fill(store, p, &EDGE_KEYS)?;
    let bounds = bounds();
    for start in &bounds {
        let ends = bounds.iter().map(|e| Some(e.as_slice())).chain([None]);
        for end in ends {
            for direction in [Direction::Forward, Direction::Backward] {
                let query = RangeQuery::new(start.as_slice(), end).direction(direction);
                let rows = read_all(store, p, &query, model.len())?;
                let what = format!(
                    "the keys in [{}, {}) {}",
                    show_key(start),
                    end.map_or_else(|| "no end".to_owned(), show_key),
                    if direction == Direction::Forward {
                        "forward"
                    } else {
                        "backward"
                    }
                );
                same_rows(p, &what, &expected(&model, &query), &rows)?;
            }
        }
    }
    Ok(())
}

fn limit_zero<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::LimitZero;
    put(store, p, b"a", b"1")?;
    match store.range(&RangeQuery::new("", None).limit(0)) {
        Err(e) if e.kind() == StoreErrorKind::Invalid => Ok(()),
        Err(e) => Err(Violation::new(
            p,
            &[],
            "refused as invalid",
            format!("refused as {e}"),
        )),
        Ok(page) => Err(Violation::new(
            p,
            &[],
            "a read with limit 0 refused as invalid",
            format!("a page of {} rows", page.rows.len()),
        )),
    }
}

fn page_limit<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::PageLimit;
    if store.max_page() == 0 || store.max_batch() == 0 {
        return Err(Violation::new(
            p,
            &[],
            "max_page and max_batch at least 1",
            format!(
                "max_page {}, max_batch {}",
                store.max_page(),
                store.max_batch()
            ),
        ));
    }
    let keys: Vec<Vec<u8>> = (0u8..10).map(|i| vec![b'k', i]).collect();
    for k in &keys {
        put(store, p, k, b"v")?;
    }
    for limit in [1, 2, 3, 9, 10, 11, usize::MAX] {
        for direction in [Direction::Forward, Direction::Backward] {
            let q = RangeQuery::new("", None).limit(limit).direction(direction);
            let page = ok(p, &[], "a range read to succeed", store.range(&q))?;
            let cap = limit.min(store.max_page());
            if page.rows.len() > cap {
                return Err(Violation::new(
                    p,
                    &[],
                    format!("at most {cap} rows a page (limit {limit})"),
                    format!("{} rows", page.rows.len()),
                ));
            }
        }
    }
    Ok(())
}

/// The keys of the paging checks: the edge keys and runs of text keys between them.
fn paging_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = EDGE_KEYS.iter().map(|k| k.to_vec()).collect();
    keys.extend((0..12).map(|i| format!("p{i:02}").into_bytes()));
    keys
}

fn paging<S: RangeStore + ?Sized>(store: &S, direction: Direction) -> Check {
    let p = match direction {
        Direction::Forward => Promise::ForwardPaging,
        Direction::Backward => Promise::BackwardPaging,
    };
    let keys = paging_keys();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let model = fill(store, p, &refs)?;
    let ranges: [(&[u8], Option<&[u8]>); 4] = [
        (b"", None),
        (&[0x00, 0x01], Some(b"p07")),
        (b"a", Some(&[0xff, 0xff])),
        (b"p03", Some(b"p04")),
    ];
    for (start, end) in ranges {
        for limit in [1, 2, 3, 5, 7, 1000] {
            let query = RangeQuery::new(start, end)
                .direction(direction)
                .limit(limit);
            let rows = read_all(store, p, &query, model.len())?;
            let what = format!(
                "every row of [{}, {}) once, in order, {} a page",
                show_key(start),
                end.map_or_else(|| "no end".to_owned(), show_key),
                limit
            );
            same_rows(p, &what, &expected(&model, &query), &rows)?;
        }
    }
    Ok(())
}

fn resume_clamped<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::ResumeClamped;
    let model = fill(store, p, &[b"a", b"b", b"c", b"d", b"e"])?;
    for direction in [Direction::Forward, Direction::Backward] {
        for resume in [&b""[..], b"a", b"b", b"c\x00", b"d", b"e", b"z", &[0xff]] {
            let query = RangeQuery::new("b", Some("d"))
                .direction(direction)
                .resume(Some(resume));
            let rows = read_all(store, p, &query, model.len())?;
            let what = format!(
                "the rows of [\"b\", \"d\") {} resumed at {}",
                if direction == Direction::Forward {
                    "forward"
                } else {
                    "backward"
                },
                show_key(resume)
            );
            same_rows(p, &what, &expected(&model, &query), &rows)?;
        }
    }
    Ok(())
}

/// Applies `ops` to `model`, in order.
fn apply(model: &mut Model, ops: &[WriteOp]) {
    for op in ops {
        match op {
            WriteOp::Put { key, value } => {
                model.insert(key.clone(), value.clone());
            }
            WriteOp::Delete { key } => {
                model.remove(key);
            }
        }
    }
}

/// Writes `ops` as one batch and checks one `Ok` per op.
fn batch<S: RangeStore + ?Sized>(store: &S, promise: Promise, ops: &[WriteOp]) -> Check {
    let first: Vec<&[u8]> = ops.iter().take(1).map(WriteOp::key).collect();
    let results = ok(
        promise,
        &first,
        "a batch to succeed",
        store.batch_write(ops),
    )?;
    if results.len() != ops.len() {
        return Err(Violation::new(
            promise,
            &first,
            format!("one result per op: {}", ops.len()),
            format!("{} results", results.len()),
        ));
    }
    for (op, r) in ops.iter().zip(results) {
        if let Err(e) = r {
            return Err(Violation::new(
                promise,
                &[op.key()],
                "every row of a batch a calm store takes written",
                format!("refused: {e}"),
            ));
        }
    }
    Ok(())
}

/// Every key of `keys` holds what `model` holds.
fn matches_model<S: RangeStore + ?Sized>(
    store: &S,
    promise: Promise,
    model: &Model,
    keys: impl IntoIterator<Item = Vec<u8>>,
    after: &str,
) -> Check {
    for k in keys {
        expect_value(store, promise, &k, model.get(&k).map(Vec::as_slice), after)?;
    }
    Ok(())
}

fn batch_results<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::BatchResults;
    let mut model = fill(store, p, &[b"c", &[0x00]])?;
    let ops = vec![
        WriteOp::put("a", b"1"),
        WriteOp::put(vec![0xff], b"ff"),
        WriteOp::put("b", b"1"),
        WriteOp::put("a", b"2"),
        WriteOp::delete("c"),
        WriteOp::delete("d"),
        WriteOp::put(vec![0x00], b"00 again"),
        WriteOp::put("e", b"1"),
        WriteOp::delete("e"),
    ];
    let ops = &ops[..ops.len().min(store.max_batch())];
    batch(store, p, ops)?;
    apply(&mut model, ops);
    let touched: BTreeSet<Vec<u8>> = ops.iter().map(|o| o.key().to_vec()).collect();
    matches_model(store, p, &model, touched, "a batch reported written")?;
    // A larger batch of distinct keys, in the store's batch limit.
    let ops: Vec<WriteOp> = (0u8..60)
        .map(|i| WriteOp::put(vec![b'r', i, 0xff - i], value_of(&[i], 3)))
        .collect();
    for chunk in ops.chunks(store.max_batch().max(1)) {
        batch(store, p, chunk)?;
        apply(&mut model, chunk);
    }
    matches_model(
        store,
        p,
        &model,
        ops.iter().map(|o| o.key().to_vec()),
        "a batch reported written",
    )?;
    let rows = read_all(store, p, &RangeQuery::new("", None), model.len())?;
    same_rows(
        p,
        "every row written",
        &expected(&model, &RangeQuery::new("", None)),
        &rows,
    )
}

fn batch_over_limit<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::BatchOverLimit;
    let most = store.max_batch();
    // A store without a limit of its own (or one too large to test) has nothing to refuse.
    if most >= 100_000 {
        return Ok(());
    }
    let ops: Vec<WriteOp> = (0..=most)
        .map(|i| WriteOp::put(format!("over{i:06}"), b"v"))
        .collect();
    match store.batch_write(&ops) {
        Err(_) => Ok(()),
        Ok(results) => Err(Violation::new(
            p,
            &[ops[most].key()],
            format!("a batch of {} rows refused (max_batch {most})", most + 1),
            format!(
                "{} results, {} written",
                results.len(),
                results.iter().filter(|r| r.is_ok()).count()
            ),
        )),
    }
}

fn write_if_once<S: RangeStore + ?Sized>(
    store: &S,
    promise: Promise,
    write: &CondWrite,
) -> Result<bool, Violation> {
    let keys: Vec<&[u8]> = write
        .expect
        .iter()
        .map(|e| e.key.as_slice())
        .chain(write.ops.iter().map(WriteOp::key))
        .collect();
    ok(
        promise,
        &keys,
        "a conditional write to be answered",
        store.write_if(write),
    )
}

fn write_if_applies<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::WriteIfApplies;
    let mut model = fill(store, p, &[b"x", &[0xff]])?;
    let writes = [
        CondWrite {
            expect: vec![Expect::value("x", value_of(b"x", 1)), Expect::absent("y")],
            ops: vec![
                WriteOp::put("y", b"2"),
                WriteOp::put(vec![0x00], b"3"),
                WriteOp::delete("x"),
            ],
        },
        // No expectation: an atomic batch, its ops in order.
        CondWrite {
            expect: vec![],
            ops: vec![WriteOp::put("w", b"1"), WriteOp::put("w", b"2")],
        },
        // No op: a check of several keys.
        CondWrite {
            expect: vec![
                Expect::value(vec![0xff], value_of(&[0xff], 1)),
                Expect::absent("x"),
            ],
            ops: vec![],
        },
    ];
    for write in &writes {
        if !write_if_once(store, p, write)? {
            let keys: Vec<&[u8]> = write.expect.iter().map(|e| e.key.as_slice()).collect();
            return Err(Violation::new(
                p,
                &keys,
                "true: every expectation holds",
                "false",
            ));
        }
        apply(&mut model, &write.ops);
        let keys = write.ops.iter().map(|o| o.key().to_vec());
        matches_model(store, p, &model, keys, "a conditional write that applied")?;
    }
    Ok(())
}

fn write_if_refuses<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::WriteIfRefuses;
    let model = fill(store, p, &[b"x", &[0x00]])?;
    let x1 = value_of(b"x", 1);
    let failing = [
        (Expect::value("x", b"other"), "a different value"),
        (Expect::absent("x"), "absent, and it is present"),
        (Expect::value("y", b"1"), "a value, and it is absent"),
        (Expect::value(vec![0x00], Vec::new()), "an empty value"),
    ];
    for (fails, why) in failing {
        let write = CondWrite {
            expect: vec![Expect::value("x", x1.clone()), fails.clone()],
            ops: vec![
                WriteOp::put("q", b"9"),
                WriteOp::delete("x"),
                WriteOp::put(vec![0x00], b"changed"),
            ],
        };
        if write_if_once(store, p, &write)? {
            return Err(Violation::new(
                p,
                &[&fails.key],
                format!("false: the key was expected to hold {why}"),
                "true",
            ));
        }
        matches_model(
            store,
            p,
            &model,
            [b"q".to_vec(), b"x".to_vec(), vec![0x00]],
            "a conditional write whose compare failed",
        )?;
    }
    Ok(())
}

fn batch_write_if<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::BatchWriteIf;
    let create = |key: &str, value: &[u8]| CondWrite {
        expect: vec![Expect::absent(key)],
        ops: vec![WriteOp::put(key, value)],
    };
    let writes = [
        create("a", b"1"),
        create("a", b"2"),
        CondWrite {
            expect: vec![Expect::value("a", b"1")],
            ops: vec![WriteOp::put("a", b"3")],
        },
        create("b", b"1"),
    ];
    let results = ok(
        p,
        &[b"a", b"b"],
        "a batch of conditional writes to be answered",
        store.batch_write_if(&writes),
    )?;
    let got: Vec<Option<bool>> = results.iter().map(|r| r.as_ref().ok().copied()).collect();
    let want = vec![Some(true), Some(false), Some(true), Some(true)];
    if got != want {
        return Err(Violation::new(
            p,
            &[b"a", b"b"],
            format!("results {want:?}, each write as write_if alone, in order"),
            format!("{got:?}"),
        ));
    }
    expect_value(store, p, b"a", Some(b"3"), "the batch")?;
    expect_value(store, p, b"b", Some(b"1"), "the batch")
}

fn counter_value(v: Option<&[u8]>) -> u64 {
    v.and_then(|v| v.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

fn write_if_atomic<S: RangeStore + ?Sized>(store: &S, ctx: &Ctx) -> Check {
    let p = Promise::WriteIfAtomic;
    const EACH: u64 = 20;
    let counter: &[u8] = b"counter";
    let barrier = Barrier::new(ctx.threads);
    let failure: Mutex<Option<Violation>> = Mutex::new(None);
    std::thread::scope(|s| {
        for t in 0..ctx.threads {
            let (barrier, failure) = (&barrier, &failure);
            s.spawn(move || {
                barrier.wait();
                let mut done = 0;
                // A bound on attempts, so a store that never applies cannot hang the suite.
                for _ in 0..EACH * 1000 {
                    if done == EACH {
                        return;
                    }
                    let step = || -> Result<bool, Violation> {
                        let now = ok(p, &[counter], "a get to succeed", store.get(counter))?;
                        let n = counter_value(now.as_deref());
                        let expect = match now {
                            Some(v) => Expect::value(counter, v),
                            None => Expect::absent(counter),
                        };
                        let log = format!("log/{:020}", n + 1);
                        let write = CondWrite {
                            expect: vec![expect],
                            ops: vec![
                                WriteOp::put(counter, (n + 1).to_be_bytes()),
                                WriteOp::put(log, format!("{t}").into_bytes()),
                            ],
                        };
                        match store.write_if(&write) {
                            Ok(applied) => Ok(applied),
                            // A store may refuse a write that lost a race as busy: try again.
                            Err(e) if e.is_retryable() => Ok(false),
                            Err(e) => Err(Violation::new(
                                p,
                                &[counter],
                                "a conditional write to be answered",
                                format!("refused: {e}"),
                            )),
                        }
                    };
                    match step() {
                        Ok(true) => done += 1,
                        Ok(false) => {}
                        Err(v) => {
                            failure.lock().unwrap_or_else(|e| e.into_inner()).replace(v);
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(v) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(v);
    }
    let total = EACH * ctx.threads as u64;
    let n = counter_value(ok(p, &[counter], "a get", store.get(counter))?.as_deref());
    let logs = read_all(
        store,
        p,
        &RangeQuery::new("log/", Some("log0")),
        total as usize + 1,
    )?;
    if n != total || logs.len() as u64 != total {
        return Err(Violation::new(
            p,
            &[counter],
            format!(
                "{total} compare-and-set increments from {} threads: counter {total}, {total} log rows",
                ctx.threads
            ),
            format!(
                "counter {n}, {} log rows (updates lost or applied in part)",
                logs.len()
            ),
        ));
    }
    Ok(())
}

fn concurrent_writers<S: RangeStore + ?Sized>(store: &S, ctx: &Ctx) -> Check {
    let p = Promise::ConcurrentWriters;
    const EACH: u8 = 40;
    let barrier = Barrier::new(ctx.threads + 1);
    let writing = AtomicBool::new(true);
    let failure: Mutex<Option<Violation>> = Mutex::new(None);
    let fail = |v: Violation| {
        failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(v);
    };
    std::thread::scope(|s| {
        let mut writers = Vec::new();
        for t in 0..ctx.threads {
            let (barrier, fail) = (&barrier, &fail);
            writers.push(s.spawn(move || {
                barrier.wait();
                let tag = t as u8;
                let mut pending = Vec::new();
                for i in 0..EACH {
                    let key = vec![tag, 0xff, i];
                    let r = if i % 2 == 0 {
                        put(store, p, &key, &value_of(&key, tag))
                    } else {
                        pending.push(WriteOp::put(key.clone(), value_of(&key, tag)));
                        if pending.len() == 4 || i + 1 == EACH {
                            let r = batch(store, p, &pending);
                            pending.clear();
                            r
                        } else {
                            Ok(())
                        }
                    };
                    if let Err(v) = r.and_then(|()| put(store, p, b"shared", &[tag])) {
                        fail(v);
                        return;
                    }
                }
            }));
        }
        let (barrier, writing, fail) = (&barrier, &writing, &fail);
        s.spawn(move || {
            barrier.wait();
            // Reads while the writers write, then one more after: each in strict key order.
            let mut last = false;
            loop {
                if !writing.load(Ordering::Acquire) {
                    last = true;
                }
                match read_all(store, p, &RangeQuery::new("", None).limit(7), 100_000) {
                    Ok(rows) => {
                        if let Some(w) = rows.windows(2).find(|w| w[0].0 >= w[1].0) {
                            fail(Violation::new(
                                p,
                                &[&w[0].0, &w[1].0],
                                "a paged read during writes in strict key order",
                                format!("{} then {}", show_key(&w[0].0), show_key(&w[1].0)),
                            ));
                            return;
                        }
                    }
                    Err(v) => {
                        fail(v);
                        return;
                    }
                }
                if last {
                    return;
                }
            }
        });
        for w in writers {
            let _ = w.join();
        }
        writing.store(false, Ordering::Release);
    });
    if let Some(v) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(v);
    }
    for t in 0..ctx.threads {
        let tag = t as u8;
        for i in 0..EACH {
            let key = vec![tag, 0xff, i];
            expect_value(
                store,
                p,
                &key,
                Some(&value_of(&key, tag)),
                "writers at once",
            )?;
        }
    }
    let shared = ok(p, &[b"shared"], "a get", store.get(b"shared"))?;
    if !shared
        .as_deref()
        .is_some_and(|v| v.len() == 1 && usize::from(v[0]) < ctx.threads)
    {
        return Err(Violation::new(
            p,
            &[b"shared"],
            "the value of one of the writers",
            shown(shared.as_deref()),
        ));
    }
    Ok(())
}

fn write_profile<S: RangeStore + 'static>(store: S) -> Check {
    let p = Promise::WriteProfile;
    let most = store.max_batch();
    // What a writer with the defaults uses: the store's profile, its batches capped at
    // `max_batch` (a network store may keep the default 200 rows with a lower limit).
    let profile = BulkOptions::default().profile_for(&store);
    if !(1..=MAX_WORKERS).contains(&profile.workers)
        || !(1..=most).contains(&profile.max_batch_rows)
        || profile.max_batch_bytes == 0
    {
        return Err(Violation::new(
            p,
            &[],
            format!("1 to {MAX_WORKERS} workers, 1 to {most} (max_batch) rows, at least 1 byte"),
            format!("{:?}, a writer's {profile:?}", store.write_profile()),
        ));
    }
    let writer = ok(
        p,
        &[],
        "a BulkWriter with the store's profile",
        BulkWriter::new(Arc::new(store), BulkOptions::default()),
    )?;
    let _ = writer.close();
    Ok(())
}

/// A text and a binary layout with a bucket prefix, and rows of them.
fn bucketed() -> Vec<(Layout, Vec<Vec<Value>>)> {
    [
        "n: u32 width=6; s: str; buckets=8:mod(n):sep",
        "n: u32; s: str; buckets=8:mod(n); form=binary",
    ]
    .into_iter()
    .filter_map(|spec| spec.parse::<Layout>().ok())
    .map(|layout| {
        let rows = (0u32..90)
            .map(|i| {
                vec![
                    Value::Uint(u128::from(i * 7 % 61)),
                    Value::Str(format!("s{}", i % 3)),
                ]
            })
            .collect();
        (layout, rows)
    })
    .collect()
}

fn scan<S: RangeStore + ?Sized>(store: &S) -> Check {
    let p = Promise::ScanRanges;
    let layouts = bucketed();
    if layouts.len() != 2 {
        return Err(Violation::new(
            p,
            &[],
            "the suite's two bucketed layouts",
            "a layout refused",
        ));
    }
    for (layout, rows) in layouts {
        let prefix = PrefixLen::from(&layout);
        let mut want: Rows = Vec::new();
        let mut ops = Vec::new();
        for values in &rows {
            let key = layout
                .encode_bytes(values)
                .map_err(|e| Violation::new(p, &[], "the suite's rows to encode", e.to_string()))?;
            ops.push(WriteOp::put(key.clone(), value_of(&key, 5)));
        }
        // Rows repeat (i * 7 % 61 over 90 rows): the last write wins.
        let mut model = Model::new();
        apply(&mut model, &ops);
        for chunk in ops.chunks(store.max_batch().max(1)) {
            batch(store, p, chunk)?;
        }
        want.extend(model);
        want.sort_by(|a, b| a.0[prefix.0..].cmp(&b.0[prefix.0..]));
        let ranges = layout
            .byte_ranges(&[], Unbounded, Unbounded)
            .map_err(|e| Violation::new(p, &[], "the layout's ranges", e.to_string()))?;
        let mut got: Rows = Vec::new();
        let mut cursor = None;
        for _ in 0..=want.len() {
            let mut n = 0;
            cursor = ok(
                p,
                &[],
                "scan_ranges to succeed",
                scan_ranges(store, prefix, &ranges, 3, cursor.as_ref(), |k, v| {
                    got.push((k.to_vec(), v.to_vec()));
                    n += 1;
                    if n == 7 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }),
            )?;
            if cursor.is_none() {
                break;
            }
        }
        let what = format!(
            "every row of {} buckets once, merged in key order after the prefix, 7 rows a call",
            ranges.len()
        );
        same_rows(p, &what, &want, &got)?;
    }
    Ok(())
}

fn bulk_writer<S: RangeStore + 'static>(store: S) -> Check {
    let p = Promise::BulkWriter;
    let store = Arc::new(store);
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&outcomes);
    let writer = ok(
        p,
        &[],
        "a BulkWriter with the store's profile",
        BulkWriter::with_callback(Arc::clone(&store), BulkOptions::default(), move |o| {
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(o);
        }),
    )?;
    let mut rng = Rng::new(0xb01c);
    let mut model = Model::new();
    while model.len() < 500 {
        let key = rng.bytes(1, 6);
        model.insert(key.clone(), value_of(&key, 6));
    }
    for (k, v) in &model {
        ok(
            p,
            &[k],
            "the writer to take a row",
            writer.add(k.clone(), v.clone()),
        )?;
    }
    let stats = writer.close();
    if stats.rows_written != model.len() as u64 || stats.rows_failed != 0 || stats.rows_lost() != 0
    {
        return Err(Violation::new(
            p,
            &[],
            format!("{} rows written, none failed or lost", model.len()),
            format!("{stats:?}"),
        ));
    }
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap_or_else(|e| e.into_inner()));
    let mut reported = BTreeSet::new();
    for o in &outcomes {
        if let Err(e) = &o.result {
            return Err(Violation::new(
                p,
                &[&o.key],
                "the row written",
                format!("failed: {e}"),
            ));
        }
        if !reported.insert(o.key.clone()) {
            return Err(Violation::new(p, &[&o.key], "one outcome per row", "two"));
        }
    }
    if let Some(k) = model.keys().find(|k| !reported.contains(*k)) {
        return Err(Violation::new(
            p,
            &[k],
            "an outcome for every row",
            "none for this row",
        ));
    }
    let rows = read_all(&*store, p, &RangeQuery::new("", None), model.len())?;
    let everything = RangeQuery::new("", None);
    same_rows(
        p,
        "every row the writer reported written",
        &expected(&model, &everything),
        &rows,
    )
}

fn rekey<S: RangeStore + 'static>(store: S) -> Check {
    let p = Promise::Rekey;
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        Violation::new(p, &[], what.to_owned(), e.to_string())
    };
    let old: Layout = "card_id: u64 width=8; buckets=16:mod(card_id):sep"
        .parse()
        .map_err(|e| fail("the suite's old layout", &e))?;
    let new: Layout = "card_id: u64 width=8; buckets=64:mod(card_id):sep"
        .parse()
        .map_err(|e| fail("the suite's new layout", &e))?;
    let store = Arc::new(store);
    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for id in 0..60u64 {
        let key = old
            .encode_bytes(&[id.into()])
            .map_err(|e| fail("a key", &e))?;
        let value = format!("card {id}").into_bytes();
        put(&*store, p, &key, &value)?;
        model.insert(id, value);
    }
    let rekey = Rekey::new(
        "conformance",
        KeySpace::new(old.clone()),
        KeySpace::new(new.clone()).under("v2/"),
    );
    let options = RekeyOptions {
        step_rows: 8,
        ..RekeyOptions::default()
    };
    let job = RekeyJob::start(Arc::clone(&store), rekey, options)
        .map_err(|e| fail("the job to start", &e))?;
    // Live writes while the backfill runs: one before any copy, one after a step.
    job.put(&[Value::Uint(7)], b"live 7")
        .map_err(|e| fail("a live write", &e))?;
    model.insert(7, b"live 7".to_vec());
    job.step().map_err(|e| fail("a step", &e))?;
    job.put(&[Value::Uint(59)], b"live 59")
        .map_err(|e| fail("a live write", &e))?;
    model.insert(59, b"live 59".to_vec());
    let state = job
        .run()
        .map_err(|e| fail("the job to run to its end", &e))?;
    if state.phase != Phase::Done {
        return Err(fail(
            "the job done",
            &format_args!("phase {:?}", state.phase),
        ));
    }
    let space = KeySpace::new(new).under("v2/");
    for (id, value) in &model {
        let key = space.key(&[(*id).into()]).map_err(|e| fail("a key", &e))?;
        expect_value(&*store, p, &key, Some(value), "the re-keying")?;
        let old_key = old
            .encode_bytes(&[(*id).into()])
            .map_err(|e| fail("a key", &e))?;
        expect_value(
            &*store,
            p,
            &old_key,
            None,
            "the re-keying dropped the old keys",
        )?;
    }
    Ok(())
}

/// Which keys a random check makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Forms {
    Text,
    Binary,
}

/// Layouts of the random checks, with the values of one random row.
/// The values of one random row of a layout.
type RowGen = fn(&mut Rng) -> Vec<Value>;

fn random_layouts(forms: Forms) -> Vec<(Layout, RowGen)> {
    let str_int: RowGen = |r| vec![Value::Str(r.text(3)), Value::Int(i128::from(r.int()))];
    let int_str: RowGen = |r| vec![Value::Uint(r.below(1000) as u128), Value::Str(r.text(3))];
    let bytes_int: RowGen = |r| vec![Value::Bytes(r.bytes(0, 4)), Value::Int(i128::from(r.int()))];
    let specs: [(&str, RowGen); 3] = match forms {
        Forms::Text => [
            ("s: str; n: i64", str_int),
            ("n: u32 width=4; s: str desc", int_str),
            ("n: u32 width=4; s: str; buckets=4:mod(n):sep", int_str),
        ],
        Forms::Binary => [
            ("s: str; n: i64; form=binary", str_int),
            ("b: bytes; n: i64; form=binary", bytes_int),
            (
                "n: u32; s: str desc; buckets=4:mod(n); form=binary",
                int_str,
            ),
        ],
    };
    specs
        .into_iter()
        .filter_map(|(spec, gen_row)| Some((spec.parse().ok()?, gen_row)))
        .collect()
}

fn random_keys<S: RangeStore + ?Sized>(store: &S, ctx: &Ctx, forms: Forms) -> Check {
    let p = match forms {
        Forms::Text => Promise::RandomTextKeys,
        Forms::Binary => Promise::RandomBinaryKeys,
    };
    let layouts = random_layouts(forms);
    if layouts.len() != 3 {
        return Err(Violation::new(
            p,
            &[],
            "the suite's three layouts",
            "a layout refused",
        ));
    }
    let mut model = Model::new();
    // Key -> the layout and values it was made of (raw byte keys: none).
    let mut made: BTreeMap<Vec<u8>, (usize, Vec<Value>)> = BTreeMap::new();
    for case in 0..ctx.cases {
        let seed = ctx.seed ^ (case as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ p as u64;
        let mut rng = Rng::new(seed);
        let note = |what: String| format!("case {case} of seed {} ({what})", ctx.seed);
        // Each case reads what earlier cases left, and deletes some of it.
        let mut pool: Vec<Vec<u8>> = model.keys().cloned().collect();
        for _ in 0..8 {
            let which = rng.below(layouts.len() + usize::from(forms == Forms::Binary));
            if which == layouts.len() {
                // Not empty: a store may refuse the empty key (Promise::EmptyKey).
                pool.push(rng.bytes(1, 5));
                continue;
            }
            let (layout, gen_row) = &layouts[which];
            let values = gen_row(&mut rng);
            // A value a layout refuses (a character its form cannot hold) makes no key.
            if let Ok(key) = layout.encode_bytes(&values) {
                made.insert(key.clone(), (which, values));
                pool.push(key);
            }
        }
        if pool.is_empty() {
            continue;
        }
        let mut ops = Vec::new();
        for i in 0..rng.below(12) {
            let key = rng.pick(&pool).clone();
            ops.push(if rng.chance(4) {
                WriteOp::delete(key)
            } else {
                let value = value_of(&key, (case * 16 + i) as u8);
                WriteOp::put(key, value)
            });
        }
        if rng.chance(2) {
            for chunk in ops.chunks(store.max_batch().max(1)) {
                batch(store, p, chunk)?;
            }
            apply(&mut model, &ops);
        } else {
            for op in &ops {
                match op {
                    WriteOp::Put { key, value } => put(store, p, key, value)?,
                    WriteOp::Delete { key } => {
                        let existed = ok(p, &[key], "a delete", store.delete(key))?;
                        if existed != model.contains_key(key) {
                            return Err(Violation::new(
                                p,
                                &[key],
                                note(format!("delete to answer {}", !existed)),
                                format!("{existed}"),
                            ));
                        }
                    }
                }
                apply(&mut model, std::slice::from_ref(op));
            }
        }
        for _ in 0..3 {
            let bound = |rng: &mut Rng| match rng.below(3) {
                0 => rng.bytes(0, 3),
                _ => rng.pick(&pool).clone(),
            };
            let start = bound(&mut rng);
            let end = if rng.chance(3) {
                None
            } else {
                Some(bound(&mut rng))
            };
            let direction = if rng.chance(2) {
                Direction::Forward
            } else {
                Direction::Backward
            };
            let query = RangeQuery::new(start.as_slice(), end.as_deref())
                .direction(direction)
                .limit(1 + rng.below(5));
            let rows = read_all(store, p, &query, model.len())?;
            let what = note(format!(
                "the rows of [{}, {}) {:?}, {} a page",
                show_key(&start),
                end.as_deref().map_or_else(|| "no end".to_owned(), show_key),
                direction,
                query.limit
            ));
            same_rows(p, &what, &expected(&model, &query), &rows)?;
            for (k, _) in &rows {
                if let Some((which, values)) = made.get(k) {
                    let decoded = layouts[*which].0.decode_bytes(k);
                    if decoded.as_ref().ok() != Some(values) {
                        return Err(Violation::new(
                            p,
                            &[k],
                            note(format!("the key read back to decode to {values:?}")),
                            format!("{decoded:?}"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Forms, Rng, bucketed, random_layouts};

    /// The random checks are not vacuous: every layout parses, and most random rows encode
    /// (the rest hold a character a text form refuses), in both forms.
    #[test]
    fn the_random_layouts_parse_and_most_rows_make_keys() {
        for forms in [Forms::Text, Forms::Binary] {
            let layouts = random_layouts(forms);
            assert_eq!(layouts.len(), 3);
            let mut rng = Rng::new(3);
            for (layout, gen_row) in &layouts {
                let made = (0..200)
                    .filter(|_| layout.encode_bytes(&gen_row(&mut rng)).is_ok())
                    .count();
                assert!(made > 100, "{layout}: {made} of 200 rows made keys");
            }
        }
        assert_eq!(bucketed().len(), 2);
    }
}
