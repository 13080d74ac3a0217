//! Re-keying in the 3-node etcd cluster of `scripts/distributed-tests.sh` with one node stopped
//! (SIGSTOP: it holds its connections and answers nothing) in the middle of the backfill, while
//! live writes go on: zero acknowledged rows lost, every row readable by its new key with its
//! latest value, no old key left. The node is let go again (SIGCONT) before the test ends, also
//! when it fails, so that the tests after it have their 3 nodes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pk_codec::store::{
    Backoff, BulkOptions, KeySpace, Phase, RangeStore, Rekey, RekeyError, RekeyJob, RekeyOptions,
    Step, WriteOp,
};
use pk_codec::{Layout, Value};

/// Sends `signal` to the etcd node `pid`.
fn signal(signal: &str, pid: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, pid])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid} failed");
}

/// A node stopped with SIGSTOP, let go with SIGCONT when dropped.
struct Stopped(String);

impl Stopped {
    fn new(pid: &str) -> Self {
        signal("-STOP", pid);
        Self(pid.to_owned())
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-CONT", &self.0);
    }
}

/// `f` until it succeeds: a live write whose answer was lost (the node stopped while it
/// answered) is written again, which writes the same thing.
fn until_ok<T>(mut f: impl FnMut() -> Result<T, RekeyError>) -> T {
    for _ in 0..100 {
        match f() {
            Ok(t) => return t,
            Err(RekeyError::Store(e)) if e.is_retryable() => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{e}"),
        }
    }
    panic!("the cluster did not answer after 100 tries")
}

fn plan() -> Rekey {
    Rekey::new(
        "etcd-16-to-64",
        KeySpace::new(plan_layout(true)).under("rk1/"),
        KeySpace::new(plan_layout(false)).under("rk2/"),
    )
    .state_key("rk-state")
}

fn options() -> RekeyOptions {
    RekeyOptions {
        step_rows: 100,
        bulk: BulkOptions {
            workers: Some(4),
            backoff: Backoff::Jittered {
                base: Duration::from_millis(50),
                cap: Duration::from_secs(1),
            },
            deadline: Duration::from_secs(60),
            ..BulkOptions::default()
        },
        ..RekeyOptions::default()
    }
}

#[test]
#[ignore = "needs the etcd cluster of scripts/distributed-tests.sh"]
fn a_rekeying_with_a_node_stopped_in_the_backfill_loses_no_acknowledged_row() {
    let store = Arc::new(super::store());
    for prefix in ["rk1/", "rk2/"] {
        super::clear(&store, prefix);
    }
    store.delete(b"rk-state").unwrap();
    let pids = super::node_pids();

    let rows = 2_000u32;
    let old = KeySpace::new(plan_layout(true)).under("rk1/");
    let mut model: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let cards: Vec<u32> = (0..rows).collect();
    for chunk in cards.chunks(100) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|&card| WriteOp::Put {
                key: old.key(&[Value::from(card)]).unwrap(),
                value: b"0".to_vec(),
            })
            .collect();
        store.batch_write(&ops).unwrap();
        model.extend(chunk.iter().map(|&c| (c, b"0".to_vec())));
    }

    let mut job = RekeyJob::start(Arc::clone(&store), plan(), options()).unwrap();
    let mut stopped = None;
    let (mut steps, mut failed_steps) = (0u32, 0u32);
    loop {
        // The first node (the one requests go to first) stops after 4 backfill steps and comes
        // back 8 steps later.
        if steps == 4 {
            stopped = Some(Stopped::new(&pids[0]));
        }
        if steps == 12 {
            stopped = None;
        }
        // Live traffic between steps: updates and deletes, each written until acknowledged.
        for i in 0..10u32 {
            let card = (steps * 97 + i * 13) % rows;
            let values = [Value::from(card)];
            if i % 4 == 3 {
                until_ok(|| job.delete(&values));
                model.remove(&card);
            } else {
                let value = format!("{steps}.{i}").into_bytes();
                until_ok(|| job.put(&values, &value));
                model.insert(card, value);
            }
        }
        match job.step() {
            Ok(Step::Done) => break,
            Ok(_) => steps += 1,
            Err(RekeyError::Store(e)) => {
                // A step cut short: the job is reloaded from its state, as after a crash.
                failed_steps += 1;
                assert!(failed_steps < 50, "too many failed steps; last: {e}");
                job = until_ok(|| RekeyJob::resume(Arc::clone(&store), plan(), options()));
            }
            Err(e) => panic!("{e}"),
        }
    }
    drop(stopped);
    let state = job.state();
    assert_eq!(state.phase, Phase::Done);
    assert!(
        steps > 12,
        "the job ended before the node came back ({steps} steps)"
    );
    // Every acknowledged row under its new key with its latest value; nothing else.
    let new = KeySpace::new(plan_layout(false)).under("rk2/");
    let mut found = BTreeMap::new();
    let mut resume: Option<Vec<u8>> = None;
    loop {
        let page = store
            .range(
                &pk_codec::store::RangeQuery::new("rk1/", Some("rk3/"))
                    .limit(1000)
                    .resume(resume.as_deref()),
            )
            .unwrap();
        found.extend(page.rows);
        match page.next {
            Some(n) => resume = Some(n),
            None => break,
        }
    }
    let expected: BTreeMap<Vec<u8>, Vec<u8>> = model
        .iter()
        .map(|(&card, v)| (new.key(&[Value::from(card)]).unwrap(), v.clone()))
        .collect();
    let lost = expected.keys().filter(|k| !found.contains_key(*k)).count();
    println!(
        "re-keyed {} rows in etcd with a node stopped: {} copied, {} verified, {} steps failed \
         and resumed, {lost} lost",
        expected.len(),
        state.counts.copied,
        state.counts.verified,
        failed_steps
    );
    assert_eq!(found, expected, "{state:?}");
    assert_eq!(state.counts.repaired, 0, "{state:?}");
}

/// The old (16 buckets) or new (64 buckets) layout of [`plan`].
fn plan_layout(old: bool) -> Layout {
    let count = if old { 16 } else { 64 };
    format!("card: u32 width=6; buckets={count}:mod(card):sep")
        .parse()
        .unwrap()
}
