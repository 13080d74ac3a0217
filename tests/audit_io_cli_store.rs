//! Audit of the key reader (`pk_codec::io`), the `pk` command line and the store bridges: each
//! test here failed before the fix it names (see the commit that added it), and pins the answer
//! the project's rules ask for: a specific error, never a panic, a hang or a silent loss.

#![allow(missing_docs)]

mod support;

use pk_codec::store::{Direction, MemoryStore, RangeQuery, RangeStore, RedbStore};
use pk_codec::table::{Table, TableOptions};
use pk_codec::{Error, FieldSpec, IntBits, KeyShape, Kind, Rule};

// ---- KeyReader --------------------------------------------------------------------------------

/// `KeyReader::int64` / `int128` with a hand-built spec of width 0 indexed one byte past the
/// field (`int_error` read `key[start + at]` for a `BadByte(0)` of the empty text): a panic,
/// "index out of bounds", at the end of any key. `uint64` / `uint128` of width 0 read the value
/// 0 out of nothing, a key the writer refuses to write. Now every integer reader refuses a
/// width outside the `width-range` rule, as the writers do, with the same error.
#[test]
fn integer_readers_refuse_a_width_the_writers_refuse() {
    let shape = KeyShape::new(b',');
    for key in ["", "0", "7", "-", "00", "abc", "é"] {
        for (kind, signed) in [
            (Kind::Uint { bits: IntBits::B64 }, false),
            (
                Kind::Uint {
                    bits: IntBits::B128,
                },
                false,
            ),
            (Kind::Int { bits: IntBits::B64 }, true),
            (
                Kind::Int {
                    bits: IntBits::B128,
                },
                true,
            ),
        ] {
            let min = if signed { 2 } else { 1 };
            for width in [0u8, 1, 41, 200, 255] {
                if (min..=40).contains(&width) {
                    continue;
                }
                let spec = FieldSpec::new(kind).with_width(width);
                let r = std::panic::catch_unwind(|| {
                    shape.decode_with(key, |r| {
                        r.begin_field("a")?;
                        match kind {
                            Kind::Uint { bits: IntBits::B64 } => {
                                r.uint64(&spec, "a", u64::MAX).map(|v| v.to_string())
                            }
                            Kind::Uint { .. } => {
                                r.uint128(&spec, "a", u128::MAX).map(|v| v.to_string())
                            }
                            Kind::Int { bits: IntBits::B64 } => r
                                .int64(&spec, "a", i64::MIN, i64::MAX)
                                .map(|v| v.to_string()),
                            _ => r
                                .int128(&spec, "a", i128::MIN, i128::MAX)
                                .map(|v| v.to_string()),
                        }
                    })
                });
                let r = r.unwrap_or_else(|_| panic!("{kind:?} width {width} on {key:?} panicked"));
                match r {
                    Err(Error::BrokenRule { field, rule, .. }) => {
                        assert_eq!(field.as_deref(), Some("a"));
                        assert_eq!(
                            rule,
                            Rule::WidthRange {
                                width,
                                min,
                                max: 40
                            }
                        );
                    }
                    other => panic!("{kind:?} width {width} on {key:?}: {other:?}"),
                }
            }
        }
    }
}

// ---- Range reads ------------------------------------------------------------------------------

/// A backward read resumed at or above its end (exclusive) returned keys outside `[start, end)`:
/// `RangeQuery::remaining` turned the resume key into an inclusive top without bounding it by
/// the end, so `[a, c)` backward resumed at `c` gave `c, b, a` and resumed at `z` gave `d, c, b,
/// a` from every store (the forward read bounds its resume key by the start). Now the range's
/// end bounds the resumed read too, in every store.
#[test]
fn a_backward_read_resumed_above_its_end_stays_in_its_range() {
    let mem = MemoryStore::default();
    let redb = RedbStore::in_memory().unwrap();
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let stores: [(&str, &dyn RangeStore); 3] =
        [("memory", &mem), ("redb", &redb), ("table", &table)];
    for (name, store) in stores {
        for k in ["a", "b", "c", "d"] {
            store.put(k, b"v").unwrap();
        }
        for (resume, want) in [
            ("z", &["b", "a"][..]),
            ("d", &["b", "a"]),
            ("c", &["b", "a"]),
            ("bb", &["b", "a"]),
            ("b", &["b", "a"]),
            ("a", &["a"]),
            ("0", &[]),
        ] {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .resume(Some(resume));
            assert!(
                query.remaining().1.is_some_and(|top| top <= "c"),
                "{resume}: {:?}",
                query.remaining()
            );
            let page = store.range(&query).unwrap();
            let keys: Vec<&str> = page.rows.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, want, "{name}: [a, c) backward, resumed at {resume:?}");
            assert_eq!(page.next, None, "{name}: {resume:?}");
        }
        // Paged backward read of the whole range, one row a page: each key of [a, c) once.
        let mut keys = Vec::new();
        let mut resume: Option<String> = None;
        loop {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .limit(1)
                .resume(resume.as_deref());
            let page = store.range(&query).unwrap();
            keys.extend(page.rows.into_iter().map(|(k, _)| k));
            match page.next {
                Some(n) => resume = Some(n),
                None => break,
            }
        }
        assert_eq!(keys, ["b", "a"], "{name}");
    }
}
