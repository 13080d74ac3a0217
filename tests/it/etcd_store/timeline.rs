//! A read across periods in the 3-node etcd cluster of `scripts/distributed-tests.sh`: three
//! monthly tables (each a key prefix of the cluster, through `PrefixedStore`) and a bucket count
//! raised from 16 to 64 in the third, read with `scan_timeline` at several page sizes and
//! stop-and-resume points: exactly the rows one table holding them all would answer, in order.

use std::collections::BTreeSet;
use std::ops::Bound::Included;

use pk_codec::store::{MemoryStore, PrefixedStore, RangeQuery, RangeStore, scan_timeline};
use pk_codec::timeline::{Period, Timeline};
use pk_codec::{Layout, Value};

use crate::support;

#[test]
#[ignore = "needs the etcd cluster of scripts/distributed-tests.sh"]
fn a_read_across_periods_in_etcd_is_a_read_of_one_table() {
    let etcd = super::store();
    super::clear(&etcd, "timeline/");
    let sixteen: Layout = "card: u16 width=5; ts: u64 width=6; buckets=16:hash(card):sep"
        .parse()
        .unwrap();
    let sixty_four: Layout = "card: u16 width=5; ts: u64 width=6; buckets=64:hash(card):sep"
        .parse()
        .unwrap();
    let timeline = Timeline::new(vec![
        Period::new(0, "m1", sixteen.clone()),
        Period::new(1000, "m2", sixteen.clone()),
        Period::new(2000, "m3", sixty_four),
    ])
    .unwrap();
    let tables: Vec<(&str, PrefixedStore<'_, _>)> = [
        ("m1", "timeline/m1/"),
        ("m2", "timeline/m2/"),
        ("m3", "timeline/m3/"),
    ]
    .into_iter()
    .map(|(name, prefix)| (name, PrefixedStore::new(&etcd, prefix)))
    .collect();
    let table = |t: &str| tables.iter().find(|(n, _)| *n == t).map(|(_, s)| s);

    // The reference: one table holding every row under one plain layout.
    let plain: Layout = "card: u16 width=5; ts: u64 width=6".parse().unwrap();
    let one = MemoryStore::default();
    let rows: BTreeSet<(u16, u64)> = (0..1500u64)
        .map(|i| ((support::mix(i) % 40) as u16, support::mix(i + 7) % 3000))
        .collect();
    for &(card, ts) in &rows {
        let values = [Value::from(card), Value::from(ts)];
        let placed = timeline.encode(ts as i64, &values).unwrap();
        table(placed.table)
            .unwrap()
            .put(&placed.key, &ts.to_be_bytes())
            .unwrap();
        one.put(&plain.encode_bytes(&values).unwrap(), b"").unwrap();
    }
    let (lo, hi) = (Value::from(3u16), Value::from(17u16));
    let range = plain.range(&[], Included(&lo), Included(&hi)).unwrap();
    let want: Vec<Vec<Value>> = one
        .range(&RangeQuery::new(range.start.as_str(), range.end.as_deref()).limit(usize::MAX))
        .unwrap()
        .rows
        .iter()
        .map(|(k, _)| plain.decode_bytes(k).unwrap())
        .collect();
    assert!(want.len() > 100, "{} rows", want.len());

    let visits = timeline
        .ranges(0..3000, &[], Included(&lo), Included(&hi))
        .unwrap();
    assert_eq!(visits.len(), 3);
    for (page, stop) in [(1, 7), (50, 97), (1000, usize::MAX)] {
        let mut got = Vec::new();
        let mut cursor = None;
        loop {
            let mut n = 0;
            cursor = scan_timeline(&timeline, &visits, table, page, cursor.as_ref(), |row| {
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
        assert_eq!(got, want, "page {page}, stop every {stop}");
    }
    super::clear(&etcd, "timeline/");
}
