//! Rebalancing: splitting a partition that grew too large or too busy, and merging cold
//! neighbours.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use super::load::HotKeyValue;
use super::partition::{PartData, Partition};
use super::row::key_bytes;
use super::schema::PkValue;
use super::splits::{SplitKind, load_split_needed, merge_cold_enough, merge_fits, split_point};
use super::store::{Table, bound_key, index_of, lock, write};
use super::window::take_window;

/// Splits and merges.
impl Table {
    #[inline]
    pub(super) fn load_split_due(&self, p: &Partition, window_ops: u64) -> bool {
        load_split_needed(
            &self.options,
            window_ops,
            p.load_split_tried.load(Relaxed),
            || lock(&p.samples).len(),
        ) && !p.load_split_tried.swap(true, Relaxed)
    }

    /// Splits partition `id` (starting at `lower`) if it still needs it.
    #[cold]
    pub(super) fn split(&self, id: u64, lower: &PkValue, kind: SplitKind) {
        let mut map = self.map.write();
        let i = index_of(map.parts(), lower);
        let part = Arc::clone(&map.parts()[i]);
        if part.id != id {
            return; // already split or merged by someone else
        }
        let mut data = write(&part.data);
        let (point, hot) = split_point(
            kind,
            &self.options,
            data.bytes,
            &lock(&part.samples),
            || data.size_split_point(),
        );
        let window = self.current_window.load(Relaxed);
        let Some(point) = point else {
            drop(data);
            drop(map);
            if let Some((value, share)) = hot {
                lock(&self.log).hot.push(HotKeyValue {
                    value,
                    share,
                    window,
                });
            }
            return;
        };
        debug_assert!(part.lower < point && point < part.upper);
        let (_, rec) = take_window(&part, &mut data, window);
        let right_rows = data
            .rows
            .split_off(&key_bytes(&bound_key(&point, self.schema.columns().len())));
        let right_bytes: u64 = right_rows.iter().map(|r| r.size()).sum();
        let left = PartData {
            rows: std::mem::take(&mut data.rows),
            bytes: data.bytes - right_bytes,
            ..PartData::default()
        };
        let right = PartData {
            rows: right_rows,
            bytes: right_bytes,
            ..PartData::default()
        };
        data.retired = true;
        data.bytes = 0;
        let id = self.next_id.fetch_add(2, Relaxed);
        let left = Arc::new(Partition::new(id, part.lower.clone(), point.clone(), left));
        let right = Arc::new(Partition::new(id + 1, point, part.upper.clone(), right));
        map.splice(i..i + 1, &[left, right]);
        drop(data);
        drop(map);
        self.splits.fetch_add(1, Relaxed);
        if let Some(rec) = rec {
            lock(&self.log).records.push(rec);
        }
    }

    /// Merges neighbours that are small and were cold in the last window, never across a
    /// pre-split point.
    pub(super) fn merge_cold(&self) {
        let Some(max_bytes) = self.options.effective_merge_size() else {
            return;
        };
        let max_ops = self.options.effective_merge_ops();
        let window = self.current_window.load(Relaxed);
        let mut records = Vec::new();
        let mut map = self.map.write();
        let mut i = 0;
        while i + 1 < map.parts().len() {
            let (a, b) = (Arc::clone(&map.parts()[i]), Arc::clone(&map.parts()[i + 1]));
            let ops = (
                a.last_window_ops.load(Relaxed),
                b.last_window_ops.load(Relaxed),
            );
            let pinned = self.pinned.binary_search(&b.lower).is_ok();
            if !merge_cold_enough(max_ops, ops, pinned) {
                i += 1;
                continue;
            }
            let mut da = write(&a.data);
            let mut db = write(&b.data);
            if !merge_fits(max_bytes, da.bytes + db.bytes) {
                i += 1;
                continue;
            }
            for (p, d) in [(&a, &mut da), (&b, &mut db)] {
                records.extend(take_window(p, d, window).1);
            }
            let mut rows = std::mem::take(&mut da.rows);
            rows.append(&mut db.rows);
            let merged = PartData {
                rows,
                bytes: da.bytes + db.bytes,
                ..PartData::default()
            };
            da.retired = true;
            db.retired = true;
            let id = self.next_id.fetch_add(1, Relaxed);
            let m = Partition::new(id, a.lower.clone(), b.upper.clone(), merged);
            m.last_window_ops.store(
                a.last_window_ops.load(Relaxed) + b.last_window_ops.load(Relaxed),
                Relaxed,
            );
            drop(da);
            drop(db);
            map.splice(i..i + 2, &[Arc::new(m)]);
            self.merges.fetch_add(1, Relaxed);
        }
        drop(map);
        if !records.is_empty() {
            lock(&self.log).records.extend(records);
        }
    }
}
