//! A live bucket-count change from 16 to 64 on a seeded table of student-card purchases in a
//! redb file, while purchases, top-ups and refunds keep being written: every row ends under its
//! new key with its latest value, and the counts say so (rows copied, verified, updated during
//! the backfill, lost: 0).
//!
//! The purchases are keyed by card and order number, spread over 16 buckets by a hash of the
//! card (`buckets=16:hash(card_id)`), as the key-design practices suggest for a card's
//! purchases; the new layout spreads them over 64, under the namespace `v2/`. The job
//! (`pk_codec::store::RekeyJob`) writes both layouts from its start, copies the older rows
//! through a `BulkWriter` in throttled steps, reads every row back by its new key, switches
//! reads and drops the old keys.

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pk_codec::store::{
    KeySpace, Phase, RangeQuery, RangeStore, RedbStore, Rekey, RekeyJob, RekeyOptions, Step,
    WriteOp,
};
use pk_codec::{Layout, Value};

/// Purchases in the table when the job starts.
const PURCHASES: u64 = 20_000;
/// Cards the purchases are made with.
const CARDS: u64 = 2_000;
/// Live writes while the job runs (at most; they stop when it is done).
const LIVE_WRITES: u64 = 6_000;

/// SplitMix64, for seeded purchases.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn layout(buckets: u32) -> Result<Layout, pk_codec::Error> {
    format!("card_id: u32 width=6; order_number: u64 width=8; buckets={buckets}:hash(card_id):sep")
        .parse()
}

/// The row of purchase `order`: its card, and its amount in cents as the value.
fn purchase(order: u64) -> ([Value; 2], Vec<u8>) {
    let card = u32::try_from(mix(order) % CARDS).unwrap_or(0);
    let cents = 100 + mix(order ^ 0xca5d) % 2_000;
    (
        [Value::from(card), Value::from(order)],
        cents.to_string().into_bytes(),
    )
}

/// Each row the live writer changed: its latest value, `None` once refunded.
type Changes = BTreeMap<(u32, u64), Option<Vec<u8>>>;

/// What the live writer did: its acknowledged writes, by kind.
#[derive(Debug, Default)]
struct Live {
    new: u64,
    updated: u64,
    refunded: u64,
    during_backfill: u64,
}

/// Runs the re-keying and prints its counts; an error if a row was lost or an old key left.
#[allow(unreachable_pub)] // The module's interface: the example's `main.rs` calls it.
pub fn run() -> Result<(), Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("pk-codec-hot-cold-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let store = Arc::new(RedbStore::create(dir.join("purchases.redb"))?);
    let old = KeySpace::new(layout(16)?);
    let new = KeySpace::new(layout(64)?).under("v2/");

    // The table before the change: every purchase under the 16-bucket layout.
    let mut model: BTreeMap<(u32, u64), Vec<u8>> = BTreeMap::new();
    let mut ops = Vec::new();
    for order in 0..PURCHASES {
        let (values, cents) = purchase(order);
        ops.push(WriteOp::Put {
            key: old.key(&values)?,
            value: cents.clone(),
        });
        model.insert(row_id(&values), cents);
    }
    store.batch_write(&ops)?;

    let plan = Rekey::new("purchases-16-to-64", old.clone(), new.clone());
    let options = RekeyOptions {
        step_rows: 500,
        ..RekeyOptions::default()
    };
    let job = RekeyJob::start(Arc::clone(&store), plan, options)?;
    let done = AtomicBool::new(false);
    let mut steps = 0u32;
    let live = std::thread::scope(|s| -> Result<Live, Box<dyn Error + Send + Sync>> {
        // The live traffic: new purchases, top-ups of earlier ones (a new amount), refunds.
        let writer = s.spawn(|| -> Result<(Live, Changes), String> {
            let mut live = Live::default();
            let mut changes = BTreeMap::new();
            for i in 0..LIVE_WRITES {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let in_backfill = job.state().phase == Phase::Backfill;
                let r = mix(i ^ 0x11fe);
                let (values, change) = match r % 10 {
                    0..=3 => {
                        let (values, cents) = purchase(PURCHASES + i);
                        live.new += 1;
                        (values, Some(cents))
                    }
                    4..=7 => {
                        let (values, _) = purchase(r % PURCHASES);
                        live.updated += 1;
                        (values, Some(format!("{}", 50 + r % 999).into_bytes()))
                    }
                    _ => {
                        let (values, _) = purchase(r % PURCHASES);
                        live.refunded += 1;
                        (values, None)
                    }
                };
                match &change {
                    Some(cents) => job.put(&values, cents),
                    None => job.delete(&values),
                }
                .map_err(|e| e.to_string())?;
                live.during_backfill += u64::from(in_backfill);
                changes.insert(row_id(&values), change);
            }
            Ok((live, changes))
        });
        loop {
            match job.step()? {
                Step::Done => break,
                Step::Throttled { wait } => std::thread::sleep(wait),
                Step::Worked { .. } => steps += 1,
            }
        }
        done.store(true, Ordering::Relaxed);
        let (live, changes) = writer.join().map_err(|_| "the live writer panicked")??;
        for (id, change) in changes {
            match change {
                Some(cents) => model.insert(id, cents),
                None => model.remove(&id),
            };
        }
        Ok(live)
    });
    let live = live.map_err(|e| e.to_string())?;

    // Every row under its new key with its latest value; no old key left.
    let state = job.state();
    let mut lost = 0u64;
    for (&(card, order), cents) in &model {
        let key = new.key(&[Value::from(card), Value::from(order)])?;
        if store.get(&key)?.as_ref() != Some(cents) {
            lost += 1;
        }
    }
    let all = store
        .range(&RangeQuery::new("", None).limit(usize::MAX))?
        .rows;
    let old_left = all
        .iter()
        .filter(|(k, _)| !k.starts_with(b"v2/") && k != Rekey::DEFAULT_STATE_KEY.as_bytes())
        .count();
    let extra = all.iter().filter(|(k, _)| k.starts_with(b"v2/")).count() as u64
        - (model.len() as u64 - lost);

    let c = state.counts;
    println!(
        "Re-keying {PURCHASES} student-card purchases from 16 to 64 buckets (redb), live writes going on"
    );
    println!("  rows copied by the backfill       {:>7}", c.copied);
    println!("  rows a live write got to first    {:>7}", c.skipped);
    println!("  rows verified under their new key {:>7}", c.verified);
    println!("  old keys dropped                  {:>7}", c.dropped);
    println!(
        "  live writes                       {:>7}  ({} new, {} updates, {} refunds; {} during the backfill)",
        live.new + live.updated + live.refunded,
        live.new,
        live.updated,
        live.refunded,
        live.during_backfill
    );
    println!("  steps                             {steps:>7}");
    println!("  rows at the end                   {:>7}", model.len());
    println!("  old keys left                     {old_left:>7}");
    println!("  rows not in the model             {extra:>7}");
    println!("  lost                              {lost:>7}");
    drop((job, store));
    std::fs::remove_dir_all(&dir)?;
    if lost > 0 || old_left > 0 || extra > 0 || state.phase != Phase::Done {
        return Err(format!("the re-keying lost {lost} rows, left {old_left} old keys").into());
    }
    Ok(())
}

/// A purchase's identity: its card and order number.
fn row_id(values: &[Value; 2]) -> (u32, u64) {
    let card = values[0]
        .as_u64()
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(0);
    (card, values[1].as_u64().unwrap_or(0))
}
