//! Online re-keying (`RekeyJob`): any interleaving of live writes, updates and deletes, backfill
//! steps, failed requests, crashes (the job dropped and reloaded from its persisted state) and
//! resumes ends with every row under its new key with its latest value and the old keys gone,
//! against the memory store, the table model and redb; the classic race of a backfill (a stale
//! copy over a live write) cannot happen; the throttle holds a step back on a manual clock;
//! every refusal names what is wrong; and a process killed (SIGKILL) in the middle of a bulk
//! import or a backfill into redb loses no row it reported written, and the job resumes.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pk_codec::store::{
    Backoff, BulkOptions, BulkWriter, CondWrite, KeySpace, MemoryStore, Phase, RangePage,
    RangeQuery, RangeStore, RedbStore, Rekey, RekeyError, RekeyJob, RekeyOptions, Step, StoreError,
    StoreErrorKind, Throttle, WriteOp, WriteProfile,
};
use pk_codec::table::{Table, TableOptions};
use pk_codec::{Layout, Value};
use proptest::prelude::*;

use crate::support;

/// The old layout: a card and a sequence number, in 4 buckets by the card.
fn old_layout() -> Layout {
    "card: u32 width=4; seq: u16 width=3; buckets=4:mod(card):sep"
        .parse()
        .unwrap()
}

/// The new layouts the issue names: more buckets, a hash prefix, a field added at the end.
fn new_layout(which: usize) -> (Layout, Option<(&'static str, Value)>) {
    match which {
        0 => (
            "card: u32 width=4; seq: u16 width=3; buckets=16:mod(card):sep"
                .parse()
                .unwrap(),
            None,
        ),
        1 => (
            "card: u32 width=6; seq: u32 width=5; hash=md5:4:sep"
                .parse()
                .unwrap(),
            None,
        ),
        _ => (
            "card: u32 width=4; seq: u16 width=3; region: str; buckets=8:hash(card):sep"
                .parse()
                .unwrap(),
            Some(("region", Value::from("eu"))),
        ),
    }
}

fn rekey(id: &str, which: usize, namespace: &str) -> Rekey {
    let (layout, fill) = new_layout(which);
    let r = Rekey::new(
        id,
        KeySpace::new(old_layout()),
        KeySpace::new(layout).under(namespace),
    );
    match fill {
        Some((field, value)) => r.fill(field, value),
        None => r,
    }
}

fn values(card: u32, seq: u16) -> [Value; 2] {
    [Value::from(card), Value::from(seq)]
}

/// The options of a test job: `step_rows` a step, retries at once (nothing sleeps).
fn options(step_rows: usize) -> RekeyOptions {
    RekeyOptions {
        step_rows,
        bulk: BulkOptions {
            backoff: Backoff::None,
            ..BulkOptions::default()
        },
        ..RekeyOptions::default()
    }
}

fn everything(store: &dyn RangeStore) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut rows = BTreeMap::new();
    let mut next: Option<Vec<u8>> = None;
    loop {
        let page = store
            .range(&RangeQuery::new("", None).resume(next.as_deref()))
            .unwrap();
        rows.extend(page.rows);
        match page.next {
            Some(n) => next = Some(n),
            None => return rows,
        }
    }
}

/// What a finished job must leave: exactly the model's rows under their new keys (and the
/// job's state), no old key.
fn assert_moved(store: &dyn RangeStore, r: &Rekey, which: usize, model: &BTreeMap<(u32, u16), u8>) {
    let (layout, fill) = new_layout(which);
    let new = KeySpace::new(layout).under("v2/");
    let expected: BTreeMap<Vec<u8>, Vec<u8>> = model
        .iter()
        .map(|(&(card, seq), &v)| {
            let mut vals = values(card, seq).to_vec();
            vals.extend(fill.clone().map(|f| f.1));
            (new.key(&vals).unwrap(), vec![v])
        })
        .collect();
    let mut found = everything(store);
    let state = found.remove(Rekey::DEFAULT_STATE_KEY.as_bytes());
    assert!(state.is_some(), "the job's state is kept");
    assert_eq!(found, expected, "job {}", r.job_id());
}

/// A store that refuses one request on purpose (the `fail_at`-th), as a node that drops a
/// request would: what a crash in the middle of a step looks like to the job.
struct Flaky {
    inner: Arc<dyn RangeStore>,
    calls: AtomicU64,
    fail_at: AtomicU64,
    /// While set, requests are neither counted nor failed (the test's own reads).
    paused: std::sync::atomic::AtomicBool,
    /// Run once after the next range read answers: live writes landing inside a step, between
    /// its read of a page and what it does with it.
    after_read: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Flaky {
    fn new(inner: Arc<dyn RangeStore>) -> Self {
        Self {
            inner,
            calls: AtomicU64::new(0),
            fail_at: AtomicU64::new(u64::MAX),
            paused: std::sync::atomic::AtomicBool::new(false),
            after_read: Mutex::new(None),
        }
    }

    fn tick(&self) -> Result<(), StoreError> {
        if self.paused.load(Ordering::SeqCst) {
            return Ok(());
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if n == self.fail_at.load(Ordering::SeqCst) {
            return Err(StoreError::new(
                StoreErrorKind::Unavailable,
                "dropped on purpose",
            ));
        }
        Ok(())
    }

    /// Fails the `n`-th request from now.
    fn fail_in(&self, n: u64) {
        let now = self.calls.load(Ordering::SeqCst);
        self.fail_at.store(now + n, Ordering::SeqCst);
    }
}

impl RangeStore for Flaky {
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }

    fn write_profile(&self) -> WriteProfile {
        self.inner.write_profile()
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.tick()?;
        self.inner.put(key, value)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.tick()?;
        self.inner.get(key)
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.tick()?;
        self.inner.delete(key)
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.tick()?;
        self.inner.batch_write(ops)
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.tick()?;
        let page = self.inner.range(query)?;
        let hook = self.after_read.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        Ok(page)
    }

    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        self.tick()?;
        self.inner.write_if(write)
    }

    fn batch_write_if(
        &self,
        writes: &[CondWrite],
    ) -> Result<Vec<Result<bool, StoreError>>, StoreError> {
        self.tick()?;
        self.inner.batch_write_if(writes)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(u32, u16, u8),
    Delete(u32, u16),
    Step,
    /// A step with a live write (a put, or a delete for `None`) landing inside it, right after
    /// its range read: the race of a backfill (or a verify) with live traffic.
    StepRacing(u32, u16, Option<u8>),
    /// The job dropped and reloaded from the store.
    Crash,
    /// The `n`-th request from now fails; the job is reloaded after a step that fails.
    Fail(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..24u32, 0..3u16, any::<u8>()).prop_map(|(c, s, v)| Op::Put(c, s, v)),
        2 => (0..24u32, 0..3u16).prop_map(|(c, s)| Op::Delete(c, s)),
        4 => Just(Op::Step),
        3 => (0..24u32, 0..3u16, prop::option::of(any::<u8>()))
            .prop_map(|(c, s, v)| Op::StepRacing(c, s, v)),
        1 => Just(Op::Crash),
        1 => (0..6u64).prop_map(Op::Fail),
    ]
}

/// Runs `ops` against a job re-keying `rows` (written before it starts) in `store`, checking
/// every read through the job against the model as it goes, then finishes the job and checks
/// what it left.
fn run_case(
    store: Arc<dyn RangeStore>,
    which: usize,
    step_rows: usize,
    rows: &BTreeMap<(u32, u16), u8>,
    ops: &[Op],
) {
    let old = KeySpace::new(old_layout());
    for (&(card, seq), &v) in rows {
        store
            .put(&old.key(&values(card, seq)).unwrap(), &[v])
            .unwrap();
    }
    let mut model = rows.clone();
    let flaky = Arc::new(Flaky::new(Arc::clone(&store)));
    let plan = || rekey("prop", which, "v2/");
    let mut job =
        Arc::new(RekeyJob::start(Arc::clone(&flaky), plan(), options(step_rows)).unwrap());
    // The live write of a racing step, once acknowledged.
    type Acked = Option<((u32, u16), Option<u8>)>;
    let racing: Arc<Mutex<Acked>> = Arc::default();
    let reload = |flaky: &Arc<Flaky>| loop {
        // The reload itself may meet the failing request: a process restarts again.
        match RekeyJob::resume(Arc::clone(flaky), plan(), options(step_rows)) {
            Ok(job) => return Arc::new(job),
            Err(RekeyError::Store(_)) => {}
            Err(e) => panic!("resume: {e}"),
        }
    };
    for op in ops {
        match *op {
            Op::Put(card, seq, v) => match job.put(&values(card, seq), &[v]) {
                Ok(()) => {
                    model.insert((card, seq), v);
                }
                // Refused: nothing written (the write is atomic).
                Err(RekeyError::Store(_)) => {}
                Err(e) => panic!("put: {e}"),
            },
            Op::Delete(card, seq) => match job.delete(&values(card, seq)) {
                Ok(()) => {
                    model.remove(&(card, seq));
                }
                Err(RekeyError::Store(_)) => {}
                Err(e) => panic!("delete: {e}"),
            },
            Op::Step => {
                if let Err(e) = job.step() {
                    assert!(matches!(e, RekeyError::Store(_)), "step: {e}");
                    job = reload(&flaky);
                }
            }
            Op::StepRacing(card, seq, v) => {
                let (live, acked) = (Arc::clone(&job), Arc::clone(&racing));
                *flaky.after_read.lock().unwrap() = Some(Box::new(move || {
                    let vals = values(card, seq);
                    let written = match v {
                        Some(v) => live.put(&vals, &[v]),
                        None => live.delete(&vals),
                    };
                    match written {
                        Ok(()) => *acked.lock().unwrap() = Some(((card, seq), v)),
                        Err(RekeyError::Store(_)) => {}
                        Err(e) => panic!("live write: {e}"),
                    }
                }));
                let stepped = job.step();
                flaky.after_read.lock().unwrap().take();
                if let Some((id, v)) = racing.lock().unwrap().take() {
                    match v {
                        Some(v) => model.insert(id, v),
                        None => model.remove(&id),
                    };
                }
                if let Err(e) = stepped {
                    assert!(matches!(e, RekeyError::Store(_)), "step: {e}");
                    job = reload(&flaky);
                }
            }
            Op::Crash => {
                drop(job);
                job = reload(&flaky);
            }
            Op::Fail(n) => flaky.fail_in(n),
        }
        // Reads through the job answer the latest value, before and after they switch (read
        // without counting toward, or meeting, the failure to come).
        flaky.paused.store(true, Ordering::SeqCst);
        for card in 0..24u32 {
            for seq in 0..3u16 {
                assert_eq!(
                    job.get(&values(card, seq)).unwrap(),
                    model.get(&(card, seq)).map(|v| vec![*v]),
                    "row ({card}, {seq}) in phase {:?} after {op:?}",
                    job.state().phase
                );
            }
        }
        flaky.paused.store(false, Ordering::SeqCst);
    }
    flaky.fail_in(u64::MAX / 2);
    let state = job.run().unwrap();
    assert_eq!(state.phase, Phase::Done);
    assert_eq!(state.counts.repaired, 0, "{state:?}");
    assert_moved(&*store, &plan(), which, &model);
}

fn rows() -> impl Strategy<Value = BTreeMap<(u32, u16), u8>> {
    prop::collection::btree_map((0..24u32, 0..3u16), any::<u8>(), 0..40)
}

fn table() -> Arc<dyn RangeStore> {
    Arc::new(Table::single_string_key("pk", TableOptions::default()).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn every_row_ends_under_its_new_key_with_its_latest_value_in_memory(
        which in 0..3usize, step_rows in 1..12usize, rows in rows(),
        ops in prop::collection::vec(op(), 0..60),
    ) {
        run_case(Arc::new(MemoryStore::default()), which, step_rows, &rows, &ops);
    }

    #[test]
    fn every_row_ends_under_its_new_key_with_its_latest_value_in_the_table_model(
        which in 0..3usize, step_rows in 1..12usize, rows in rows(),
        ops in prop::collection::vec(op(), 0..60),
    ) {
        run_case(table(), which, step_rows, &rows, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(12), ..ProptestConfig::default() })]

    #[test]
    fn every_row_ends_under_its_new_key_with_its_latest_value_in_redb(
        which in 0..3usize, step_rows in 1..12usize, rows in rows(),
        ops in prop::collection::vec(op(), 0..40),
    ) {
        run_case(Arc::new(RedbStore::in_memory().unwrap()), which, step_rows, &rows, &ops);
    }
}

/// A store that runs a hook once, right after a range read answers: a live write landing
/// between the backfill's read of a row and its copy, the classic race.
struct AfterRead {
    inner: MemoryStore,
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl RangeStore for AfterRead {
    support::forward_to!(inner);

    fn reads_wait_on_io(&self) -> bool {
        false
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        let page = self.inner.range(query)?;
        let hook = self.hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        Ok(page)
    }

    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        self.inner.write_if(write)
    }
}

/// Cards 0 to 2 holding "old" in the old layout, and a job whose next range read (the
/// backfill's) is followed by a live update of card 1 and a live delete of card 2.
fn race() -> (Arc<AfterRead>, Arc<RekeyJob<AfterRead>>) {
    let store = Arc::new(AfterRead {
        inner: MemoryStore::default(),
        hook: Mutex::new(None),
    });
    let old = KeySpace::new(old_layout());
    for card in 0..3u32 {
        store
            .put(&old.key(&values(card, 0)).unwrap(), b"old")
            .unwrap();
    }
    let job = Arc::new(
        RekeyJob::start(Arc::clone(&store), rekey("race", 0, "v2/"), options(10)).unwrap(),
    );
    let live = Arc::clone(&job);
    *store.hook.lock().unwrap() = Some(Box::new(move || {
        live.put(&values(1, 0), b"new").unwrap();
        live.delete(&values(2, 0)).unwrap();
    }));
    (store, job)
}

#[test]
fn a_live_write_between_the_backfills_read_and_its_copy_keeps_its_value() {
    let (_store, job) = race();
    assert_eq!(
        job.step().unwrap(),
        Step::Worked {
            phase: Phase::Backfill,
            rows: 3
        }
    );
    let counts = job.state().counts;
    assert_eq!((counts.copied, counts.skipped), (1, 2));
    job.run().unwrap();
    assert_eq!(job.get(&values(0, 0)).unwrap(), Some(b"old".to_vec()));
    assert_eq!(job.get(&values(1, 0)).unwrap(), Some(b"new".to_vec()));
    assert_eq!(job.get(&values(2, 0)).unwrap(), None);
    assert_eq!(job.state().counts.repaired, 0);
}

/// The harness catches the race: a backfill that copies what it read with plain puts (no
/// condition) writes the stale value over the live update and brings the deleted row back.
#[test]
fn a_plain_copy_in_the_same_race_loses_the_update() {
    let (store, _job) = race();
    let (new_layout, _) = new_layout(0);
    let new = KeySpace::new(new_layout).under("v2/");
    let page = store.range(&RangeQuery::new("", Some("\u{7f}"))).unwrap();
    for (key, value) in page.rows {
        if let Ok(vals) = old_layout().decode_bytes(&key) {
            store.put(&new.key(&vals).unwrap(), &value).unwrap();
        }
    }
    assert_eq!(
        store.get(&new.key(&values(1, 0)).unwrap()).unwrap(),
        Some(b"old".to_vec())
    );
    assert_eq!(
        store.get(&new.key(&values(2, 0)).unwrap()).unwrap(),
        Some(b"old".to_vec())
    );
}

#[test]
fn live_writers_on_threads_during_the_backfill_keep_their_latest_values() {
    let store = Arc::new(MemoryStore::default());
    let old = KeySpace::new(old_layout());
    for card in 0..400u32 {
        store
            .put(&old.key(&values(card, 0)).unwrap(), b"0")
            .unwrap();
    }
    let job = RekeyJob::start(Arc::clone(&store), rekey("threads", 0, "v2/"), options(7)).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    // The writers and the job start together.
    let start = std::sync::Barrier::new(3);
    let last_rounds: Vec<u32> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..2u32)
            .map(|w| {
                let (job, done, start) = (&job, &done, &start);
                s.spawn(move || {
                    start.wait();
                    // Each writer owns the cards of its parity and writes them round after
                    // round until the job is done, then once more.
                    let mut round = 1u32;
                    loop {
                        let finished = done.load(Ordering::SeqCst);
                        for card in (w..400).step_by(2) {
                            if (card + round).is_multiple_of(5) {
                                job.delete(&values(card, 0)).unwrap();
                            } else {
                                job.put(&values(card, 0), round.to_string().as_bytes())
                                    .unwrap();
                            }
                        }
                        if finished {
                            return round;
                        }
                        round += 1;
                    }
                })
            })
            .collect();
        start.wait();
        job.run().unwrap();
        done.store(true, Ordering::SeqCst);
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // Every card holds its writer's last round under its new key; no old key is left.
    let (layout, _) = new_layout(0);
    let new = KeySpace::new(layout).under("v2/");
    let mut expected = BTreeMap::new();
    for card in 0..400u32 {
        let round = last_rounds[(card % 2) as usize];
        if !(card + round).is_multiple_of(5) {
            expected.insert(
                new.key(&values(card, 0)).unwrap(),
                round.to_string().into_bytes(),
            );
        }
    }
    let mut all = everything(&*store);
    all.remove(Rekey::DEFAULT_STATE_KEY.as_bytes());
    assert_eq!(all, expected);
    assert_eq!(job.state().counts.repaired, 0);
}

#[test]
fn the_throttle_holds_a_step_back_on_its_clock() {
    let store = Arc::new(MemoryStore::default());
    // The old keys under a namespace of their own: each step reads rows only.
    let old = KeySpace::new(old_layout()).under("v1/");
    for card in 0..50u32 {
        store
            .put(&old.key(&values(card, 0)).unwrap(), b"v")
            .unwrap();
    }
    let now = Arc::new(AtomicU64::new(0));
    let clock = Arc::clone(&now);
    let throttled = RekeyOptions {
        throttle: Some(
            Throttle::new(20, 10)
                .clock(move || Duration::from_millis(clock.load(Ordering::SeqCst))),
        ),
        ..options(100)
    };
    let plan = Rekey::new("slow", old, KeySpace::new(new_layout(0).0).under("v2/"));
    let job = RekeyJob::start(Arc::clone(&store), plan, throttled).unwrap();
    // A burst of 10 rows, then nothing until the clock moves: 1 row each 50 ms.
    assert_eq!(
        job.step().unwrap(),
        Step::Worked {
            phase: Phase::Backfill,
            rows: 10
        }
    );
    assert_eq!(
        job.step().unwrap(),
        Step::Throttled {
            wait: Duration::from_millis(50)
        }
    );
    now.store(200, Ordering::SeqCst);
    assert_eq!(
        job.step().unwrap(),
        Step::Worked {
            phase: Phase::Backfill,
            rows: 4
        }
    );
    assert_eq!(
        job.step().unwrap(),
        Step::Throttled {
            wait: Duration::from_millis(50)
        }
    );
    assert_eq!(job.state().counts.copied, 14);
    // Live writes are never held back.
    job.put(&values(7, 1), b"live").unwrap();
    assert_eq!(job.get(&values(7, 1)).unwrap(), Some(b"live".to_vec()));
}

fn refusal(r: Rekey) -> RekeyError {
    RekeyJob::start(Arc::new(MemoryStore::default()), r, RekeyOptions::default()).unwrap_err()
}

#[test]
fn a_rekeying_that_cannot_work_is_refused_with_what_is_wrong() {
    let old = || KeySpace::new(old_layout());
    let e = refusal(Rekey::new("j", old(), old().under("v2/")));
    assert!(matches!(e, RekeyError::SameLayout { .. }), "{e}");
    assert!(e.to_string().contains("same layout"), "{e}");

    let dropped: Layout = "card: u32 width=4; buckets=16:mod(card):sep"
        .parse()
        .unwrap();
    let e = refusal(Rekey::new("j", old(), KeySpace::new(dropped).under("v2/")));
    assert_eq!(
        e,
        RekeyError::FieldLost {
            field: "seq".into()
        }
    );
    assert!(e.to_string().contains("\"seq\""), "{e}");

    let e = refusal(Rekey::new(
        "j",
        old(),
        KeySpace::new(new_layout(2).0).under("v2/"),
    ));
    assert_eq!(
        e,
        RekeyError::FieldWithoutValue {
            field: "region".into()
        }
    );
    assert!(e.to_string().contains("Rekey::fill"), "{e}");

    let narrow: Layout = "card: u32 width=4; seq: u8 width=3; buckets=16:mod(card):sep"
        .parse()
        .unwrap();
    let e = refusal(Rekey::new("j", old(), KeySpace::new(narrow).under("v2/")));
    assert!(
        matches!(&e, RekeyError::FieldCannotCarry { field, .. } if field == "seq"),
        "{e}"
    );
    assert!(e.to_string().contains("field \"seq\" cannot carry"), "{e}");

    let short: Layout = "card: u32 width=3; seq: u16 width=3; buckets=16:mod(card):sep"
        .parse()
        .unwrap();
    let e = refusal(Rekey::new("j", old(), KeySpace::new(short).under("v2/")));
    assert!(
        matches!(&e, RekeyError::FieldCannotCarry { field, why } if field == "card" && why.contains("3 characters")),
        "{e}"
    );

    let text: Layout = "card: str; seq: u16 width=3".parse().unwrap();
    let e = refusal(Rekey::new("j", old(), KeySpace::new(text).under("v2/")));
    assert!(
        matches!(&e, RekeyError::FieldCannotCarry { field, .. } if field == "card"),
        "{e}"
    );

    // Without a namespace the new keys would land among the old ones.
    let e = refusal(Rekey::new("j", old(), KeySpace::new(new_layout(0).0)));
    assert!(matches!(e, RekeyError::KeySpacesOverlap { .. }), "{e}");
    let e = refusal(Rekey::new(
        "j",
        old().under("v1/"),
        KeySpace::new(new_layout(0).0).under("v1/x"),
    ));
    assert!(matches!(e, RekeyError::KeySpacesOverlap { .. }), "{e}");
    let e = refusal(Rekey::new(
        "j",
        old(),
        KeySpace::new(new_layout(0).0).under("v2/\u{e9}"),
    ));
    assert!(matches!(e, RekeyError::KeySpacesOverlap { .. }), "{e}");

    let e = refusal(rekey("j", 0, "v2/").state_key("1,0001,000"));
    assert!(matches!(e, RekeyError::StateKeyInKeySpace { .. }), "{e}");
    let e = refusal(rekey("j", 0, "v2/").fill("seq", Value::from(1u16)));
    assert!(matches!(e, RekeyError::BadOption { .. }), "{e}");
    let e = refusal(rekey("", 0, "v2/"));
    assert!(matches!(e, RekeyError::BadOption { .. }), "{e}");
    let e = RekeyJob::start(
        Arc::new(MemoryStore::default()),
        rekey("j", 0, "v2/"),
        RekeyOptions {
            step_rows: 0,
            ..RekeyOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("step_rows is 0"), "{e}");
    let e = RekeyJob::start(
        Arc::new(MemoryStore::default()),
        rekey("j", 0, "v2/"),
        RekeyOptions {
            throttle: Some(Throttle::new(0, 1)),
            ..RekeyOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, RekeyError::BadOption { .. }), "{e}");
}

#[test]
fn a_resume_of_another_job_or_with_other_layouts_is_refused() {
    let store = Arc::new(MemoryStore::default());
    let job = RekeyJob::start(
        Arc::clone(&store),
        rekey("cards-16-64", 0, "v2/"),
        options(1),
    )
    .unwrap();
    drop(job);
    let e = RekeyJob::resume(Arc::clone(&store), rekey("other", 0, "v2/"), options(1)).unwrap_err();
    assert_eq!(
        e,
        RekeyError::JobMismatch {
            expected: "other".into(),
            found: "cards-16-64".into()
        }
    );
    assert!(e.to_string().contains("\"cards-16-64\""), "{e}");
    let e = RekeyJob::resume(
        Arc::clone(&store),
        rekey("cards-16-64", 1, "v2/"),
        options(1),
    )
    .unwrap_err();
    assert!(
        matches!(e, RekeyError::PlanMismatch { side: "to", .. }),
        "{e}"
    );
    // Another job cannot start while this one is under way; this one resumes.
    let e = RekeyJob::start(Arc::clone(&store), rekey("other", 0, "v3/"), options(1)).unwrap_err();
    assert!(
        matches!(
            e,
            RekeyError::JobUnderWay {
                phase: Phase::Backfill,
                ..
            }
        ),
        "{e}"
    );
    let job = RekeyJob::resume(
        Arc::clone(&store),
        rekey("cards-16-64", 0, "v2/"),
        options(1),
    )
    .unwrap();
    job.run().unwrap();
    // Done: the next job may start.
    let next = Rekey::new(
        "next",
        KeySpace::new(new_layout(0).0).under("v2/"),
        KeySpace::new(new_layout(1).0).under("v3/"),
    );
    RekeyJob::start(Arc::clone(&store), next, options(1)).unwrap();

    let empty = Arc::new(MemoryStore::default());
    let e = RekeyJob::resume(Arc::clone(&empty), rekey("j", 0, "v2/"), options(1)).unwrap_err();
    assert!(matches!(e, RekeyError::NoJob { .. }), "{e}");
    empty
        .put(Rekey::DEFAULT_STATE_KEY.as_bytes(), b"not a state")
        .unwrap();
    let e = RekeyJob::resume(empty, rekey("j", 0, "v2/"), options(1)).unwrap_err();
    assert!(matches!(e, RekeyError::BadState { .. }), "{e}");
}

#[test]
fn a_store_without_conditional_writes_is_refused_at_the_first_write() {
    struct Plain(MemoryStore);
    impl RangeStore for Plain {
        support::forward_to!(0, range);
    }
    let job = RekeyJob::start(
        Arc::new(Plain(MemoryStore::default())),
        rekey("j", 0, "v2/"),
        options(1),
    )
    .unwrap();
    let e = job.put(&values(1, 1), b"v").unwrap_err();
    assert!(e.to_string().contains("no conditional writes"), "{e}");
}

// ---- Durability of what was acknowledged: a child process killed with SIGKILL. ------------------

/// The environment variable that turns the child tests on, holding the redb file's path.
const CHILD_FILE: &str = "PK_REKEY_CHILD_FILE";

/// Rows the backfill's child re-keys.
const CHILD_ROWS: u32 = 6_000;

/// Prints `line` to stdout at once: the parent reads it as acknowledged.
fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// The child of the SIGKILL test's import: imports rows into redb through a `BulkWriter` in
/// batches of 100 until it is killed, printing each row the writer reports written. Does
/// nothing unless the parent set [`CHILD_FILE`].
#[test]
#[ignore = "a child process of bulk_import_killed_with_sigkill_loses_no_reported_row"]
fn child_bulk_import() {
    let Ok(path) = std::env::var(CHILD_FILE) else {
        return;
    };
    let store = Arc::new(RedbStore::create(path).unwrap());
    let writer = BulkWriter::with_callback(
        Arc::clone(&store),
        BulkOptions {
            max_batch_rows: Some(100),
            ..BulkOptions::default()
        },
        |row| {
            if row.result.is_ok() {
                report(&format!("written {}", String::from_utf8_lossy(&row.key)));
            }
        },
    )
    .unwrap();
    // Until killed (the bound only keeps a child whose parent died from running for ever).
    for n in 0..100_000_000u64 {
        writer
            .add(format!("import/{n:09}"), n.to_string().into_bytes())
            .unwrap();
    }
}

/// The child of the SIGKILL test's backfill: starts (or resumes) the job in the redb file and
/// runs a step each time the parent writes a line, printing the counts after each. Does
/// nothing unless [`CHILD_FILE`] is set.
#[test]
#[ignore = "a child process of backfill_killed_with_sigkill_resumes_from_its_cursor"]
fn child_backfill() {
    let Ok(path) = std::env::var(CHILD_FILE) else {
        return;
    };
    let store = Arc::new(RedbStore::create(path).unwrap());
    let job = RekeyJob::start(Arc::clone(&store), rekey("killed", 0, "v2/"), options(100)).unwrap();
    let mut go = String::new();
    while std::io::stdin().read_line(&mut go).unwrap() > 0 {
        let step = job.step().unwrap();
        let state = job.state();
        report(&format!(
            "step {:?} copied {}",
            state.phase, state.counts.copied
        ));
        if step == Step::Done {
            return;
        }
    }
}

/// Runs the child test `name` on the redb file at `path` and kills it with SIGKILL once it
/// has printed `kill_after` lines that start with `counted`, writing a line to its stdin before
/// each of those and once more before the kill (so that it is killed in the middle of the
/// work the last line started); returns the lines read.
fn run_child_and_kill(
    name: &str,
    path: &std::path::Path,
    counted: &str,
    kill_after: usize,
) -> Vec<String> {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_FILE, path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut go = || {
        // A child that does not read its input (the import) leaves it in the pipe.
        let _ = writeln!(stdin, "go").and_then(|()| stdin.flush());
    };
    go();
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    let mut seen = 0;
    for line in std::io::BufReader::new(stdout).lines() {
        let mut line = line.unwrap();
        // The harness prints the test's name without a line end before the test's own output.
        if let Some(at) = line.find(counted) {
            line.drain(..at);
        }
        if line.starts_with(counted) {
            seen += 1;
            go();
        }
        lines.push(line);
        if seen == kill_after {
            break;
        }
    }
    // SIGKILL on Unix: no destructor, no flush, no commit of what is under way.
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        seen, kill_after,
        "the child stopped before it was killed: {lines:?}"
    );
    lines
}

/// A temporary redb file path of this test process, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        let dir = support::temp_dir("rekey");
        let path = dir.join(format!("{name}.redb"));
        let _ = std::fs::remove_file(&path);
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A seeded kill point in `[lo, hi)`.
fn kill_point(seed: u64, lo: usize, hi: usize) -> usize {
    lo + (support::mix(seed) % (hi - lo) as u64) as usize
}

#[test]
fn bulk_import_killed_with_sigkill_loses_no_reported_row() {
    let file = TempFile::new("import");
    let kill_after = kill_point(29, 300, 5_000);
    let lines = run_child_and_kill("rekey::child_bulk_import", &file.0, "written ", kill_after);
    let store = RedbStore::create(&file.0).unwrap();
    let reported: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("written "))
        .collect();
    assert_eq!(reported.len(), kill_after);
    for key in &reported {
        assert!(
            store.get(key.as_bytes()).unwrap().is_some(),
            "row {key} was reported written and is lost"
        );
    }
}

#[test]
fn backfill_killed_with_sigkill_resumes_from_its_cursor() {
    let file = TempFile::new("backfill");
    let old = KeySpace::new(old_layout());
    {
        let store = RedbStore::create(&file.0).unwrap();
        let ops: Vec<WriteOp> = (0..CHILD_ROWS)
            .map(|card| WriteOp::Put {
                key: old.key(&values(card, 0)).unwrap(),
                value: card.to_string().into_bytes(),
            })
            .collect();
        store.batch_write(&ops).unwrap();
    }
    // Killed in the middle of a backfill step (100 rows each).
    let kill_after = kill_point(2029, 1, CHILD_ROWS as usize / 100 - 1);
    let lines = run_child_and_kill("rekey::child_backfill", &file.0, "step ", kill_after);
    let last = lines.iter().rev().find(|l| l.starts_with("step ")).unwrap();
    let reported: u64 = last.rsplit(' ').next().unwrap().parse().unwrap();
    // 100 keys a step, the job's state among the first step's.
    assert_eq!(reported, kill_after as u64 * 100 - 1);
    let store = Arc::new(RedbStore::create(&file.0).unwrap());
    let job =
        RekeyJob::resume(Arc::clone(&store), rekey("killed", 0, "v2/"), options(500)).unwrap();
    let state = job.state();
    // The state holds what the child reported, and the step it was killed in if it landed.
    assert_eq!(state.phase, Phase::Backfill, "{state:?}");
    assert!(
        [reported, reported + 100].contains(&state.counts.copied),
        "{state:?} after {reported} reported"
    );
    // Every row the state counts copied is under its new key (and perhaps some of the step
    // the kill cut short).
    let copied = everything(&*store)
        .keys()
        .filter(|k| k.starts_with(b"v2/"))
        .count() as u64;
    assert!(
        copied >= state.counts.copied,
        "{copied} rows under new keys, {state:?}"
    );
    let state = job.run().unwrap();
    assert_eq!(state.counts.verified, u64::from(CHILD_ROWS));
    assert_eq!(state.counts.repaired, 0);
    let (layout, _) = new_layout(0);
    let new = KeySpace::new(layout).under("v2/");
    for card in 0..CHILD_ROWS {
        assert_eq!(
            store.get(&new.key(&values(card, 0)).unwrap()).unwrap(),
            Some(card.to_string().into_bytes())
        );
    }
    let all = everything(&*store);
    assert_eq!(
        all.len(),
        CHILD_ROWS as usize + 1,
        "the new rows and the state, no old key"
    );
}
