//! A re-keying's reads stay apart: for any pair of key spaces `RekeyJob::start` accepts (text or
//! binary, bucketed by value or hash or not, with or without a namespace, with the default or a
//! chosen state key), a full read of either key space, at every step of the job, finds only
//! keys of its own layout: never the job's state row, never the other space's rows. What
//! cannot keep that is refused naming the read.

use std::ops::Bound::Unbounded;
use std::sync::Arc;

use pk_codec::store::{
    KeySpace, MemoryStore, Phase, RangeQuery, RangeStore, Rekey, RekeyError, RekeyJob,
    RekeyOptions, Step,
};
use pk_codec::{ByteRange, Layout, Value};
use proptest::prelude::*;

use crate::support;

/// A layout of a card and a sequence number in `form`, bucketed as `buckets` says.
fn layout(binary: bool, buckets: Option<(u32, bool, bool)>) -> Layout {
    let mut spec = "card: u32 width=6; seq: u16 width=5".to_owned();
    if let Some((count, hashed, sep)) = buckets {
        let by = if hashed { "hash(card)" } else { "mod(card)" };
        let sep = if sep && !binary { ":sep" } else { "" };
        spec.push_str(&format!("; buckets={count}:{by}{sep}"));
    }
    if binary {
        spec.push_str("; form=binary");
    }
    spec.parse().unwrap()
}

fn space() -> impl Strategy<Value = KeySpace> {
    (
        any::<bool>(),
        prop::option::of((
            prop::sample::select(vec![2u32, 16, 256, 300]),
            any::<bool>(),
            any::<bool>(),
        )),
        prop::sample::select(vec!["", "", "v1/", "v2/", "v", "\u{7f}", "0"]),
    )
        .prop_map(|(binary, buckets, ns)| KeySpace::new(layout(binary, buckets)).under(ns))
}

/// The ranges a full read of `space` visits, worked out here from the layout's public ranges.
fn full_read(space: &KeySpace) -> Vec<ByteRange> {
    space
        .layout()
        .byte_ranges(&[], Unbounded, Unbounded)
        .unwrap()
        .into_iter()
        .map(|r| {
            let ns = space.namespace().as_bytes();
            let end = match r.end {
                Some(e) => Some([ns, &e].concat()),
                None => ByteRange::starting_with(ns).end,
            };
            ByteRange::new([ns, &r.start].concat(), end)
        })
        .collect()
}

/// Every key a full read of `space` finds decodes in its layout (after its namespace).
fn assert_read_is_clean(store: &MemoryStore, space: &KeySpace, side: &str, when: &str) {
    for range in full_read(space) {
        let page = store
            .range(&RangeQuery::new(
                range.start.as_slice(),
                range.end.as_deref(),
            ))
            .unwrap();
        for (key, _) in page.rows {
            let bare = key
                .strip_prefix(space.namespace().as_bytes())
                .unwrap_or_else(|| panic!("{side} read found {key:?} outside its namespace"));
            assert!(
                space.layout().decode_bytes(bare).is_ok(),
                "{when}: a read of the {side} key space ({}) found {key:x?}, not its key",
                space.layout()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(256)))]

    #[test]
    fn reads_of_either_key_space_find_only_their_own_keys(
        old in space(),
        new in space(),
        state_key in prop::option::of(prop::sample::select(vec![
            "\0pk-codec/rekey", "\u{7f}pk-codec/rekey", "000001,x", "v2/state", "zz", "\u{1}",
        ])),
        cards in prop::collection::btree_set(0u32..1_000_000, 1..12),
    ) {
        let store = Arc::new(MemoryStore::default());
        for (i, card) in cards.iter().enumerate() {
            let key = old.key(&[Value::from(*card), Value::from(i as u16)]).unwrap();
            store.put(&key, b"v").unwrap();
        }
        let mut rekey = Rekey::new("j", old.clone(), new.clone());
        if let Some(k) = state_key {
            rekey = rekey.state_key(k);
        }
        let options = RekeyOptions { step_rows: 3, ..RekeyOptions::default() };
        let job = match RekeyJob::start(Arc::clone(&store), rekey, options) {
            Ok(job) => job,
            Err(
                RekeyError::KeySpacesOverlap { .. }
                | RekeyError::StateKeyInKeySpace { .. }
                | RekeyError::SameLayout { .. },
            ) => return Ok(()),
            Err(e) => panic!("unexpected refusal: {e}"),
        };
        let mut step = 0;
        loop {
            let when = format!("step {step}");
            assert_read_is_clean(&store, &old, "old", &when);
            assert_read_is_clean(&store, &new, "new", &when);
            match job.step().unwrap() {
                Step::Done => break,
                Step::Worked { .. } | Step::Throttled { .. } => step += 1,
            }
            // A live write mid-job lands in both spaces.
            job.put(&[Value::from(7u32), Value::from(step as u16)], b"live").unwrap();
        }
        prop_assert_eq!(job.state().phase, Phase::Done);
        assert_read_is_clean(&store, &old, "old", "done");
        assert_read_is_clean(&store, &new, "new", "done");
    }
}

/// The newcomer's case: a binary table in 16 hash buckets, no namespace, re-keyed to 64
/// buckets under `v2/`. Bucket 0's keys start with byte 00, so the default state key (which
/// starts with NUL) would lie in its read: the job keeps its state at the alternate key, and a
/// full read of the old table succeeds throughout.
#[test]
fn a_binary_bucketed_table_is_rekeyed_with_its_reads_clean() {
    let old = KeySpace::new(layout(true, Some((16, true, false))));
    let new = KeySpace::new(layout(true, Some((64, true, false)))).under("v2/");
    assert!(
        old.read_ranges()
            .iter()
            .any(|r| r.contains(Rekey::DEFAULT_STATE_KEY.as_bytes()))
    );
    let store = Arc::new(MemoryStore::default());
    for card in 0..200u32 {
        let key = old.key(&[Value::from(card), Value::from(1u16)]).unwrap();
        store.put(&key, b"v").unwrap();
    }
    let job = RekeyJob::start(
        Arc::clone(&store),
        Rekey::new("grow", old.clone(), new.clone()),
        RekeyOptions {
            step_rows: 50,
            ..RekeyOptions::default()
        },
    )
    .unwrap();
    assert!(
        store
            .get(Rekey::ALTERNATE_STATE_KEY.as_bytes())
            .unwrap()
            .is_some()
    );
    assert_eq!(
        store.get(Rekey::DEFAULT_STATE_KEY.as_bytes()).unwrap(),
        None
    );
    while job.step().unwrap() != Step::Done {
        assert_read_is_clean(&store, &old, "old", "mid-job");
        assert_read_is_clean(&store, &new, "new", "mid-job");
    }
    assert_eq!(job.state().counts.verified, 200);
}

/// An old layout without a namespace or buckets is read over every key: the new rows and the
/// state would be in its reads, so the pair is refused, naming the reads; so is a state key
/// chosen inside a bucket's read.
#[test]
fn overlapping_reads_and_a_state_key_inside_a_read_are_refused() {
    let start = |r: Rekey| {
        RekeyJob::start(Arc::new(MemoryStore::default()), r, RekeyOptions::default())
            .map(|_| ())
            .unwrap_err()
    };
    let plain = KeySpace::new(layout(false, None));
    let e = start(Rekey::new(
        "j",
        plain,
        KeySpace::new(layout(false, Some((16, false, true)))).under("v2/"),
    ));
    assert!(matches!(e, RekeyError::KeySpacesOverlap { .. }), "{e}");
    assert!(e.to_string().contains("a read of the old key space"), "{e}");

    let bucketed = KeySpace::new(layout(false, Some((16, false, true))));
    let e = start(
        Rekey::new(
            "j",
            bucketed,
            KeySpace::new(layout(true, Some((4, true, false)))).under("v2/"),
        )
        .state_key("05,zzz"),
    );
    assert!(matches!(e, RekeyError::StateKeyInKeySpace { .. }), "{e}");
    assert!(e.to_string().contains("read of the old key space"), "{e}");
}
