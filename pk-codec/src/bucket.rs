//! Bucket prefixes (`value % N`, `hash % N`) and the k-way merge that reads them back in order.

use std::cmp::Ordering;

use crate::io::BucketValue;

/// The number of digits the bucket numbers of `count` buckets take: the width of `count - 1`.
#[inline]
#[must_use]
pub(crate) const fn bucket_width(count: u32) -> u8 {
    let mut n = count.saturating_sub(1);
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// The bucket of an integer: `value % count`, non-negative for negative values.
#[inline]
#[must_use]
pub(crate) fn bucket_of_value(value: BucketValue, count: u32) -> u32 {
    match value {
        BucketValue::Unsigned(v) => match u64::try_from(v) {
            Ok(v) => (v % u64::from(count)) as u32,
            Err(_) => (v % u128::from(count)) as u32,
        },
        BucketValue::Signed(v) => v.rem_euclid(i128::from(count)) as u32,
    }
}

/// The bucket of some encoded text: XXH3-64 of it, modulo `count`. XXH3 mixes every input bit into
/// the low bits, so power-of-two counts stay even (a weak hash would leave them skewed).
#[inline]
#[must_use]
pub(crate) fn bucket_of_hash(hash: u64, count: u32) -> u32 {
    (hash % u64::from(count)) as u32
}

/// Merges streams that are each sorted by `cmp` into one sorted stream: the read side of a bucketed
/// layout, whose N per-bucket range reads come back each in natural order.
///
/// A binary heap of the streams' heads: `O(n log k)` comparisons for `n` items from `k` streams.
/// Equal items come out in stream order, so the merge is stable.
///
/// # Examples
///
/// ```
/// let a = vec![1, 4, 7];
/// let b = vec![2, 5, 8];
/// let c = vec![0, 3, 6, 9];
/// let merged: Vec<i32> = pk_codec::merge_sorted_by(vec![a, b, c], |x, y| x.cmp(y)).collect();
/// assert_eq!(merged, (0..10).collect::<Vec<_>>());
/// ```
pub fn merge_sorted_by<S, T, F>(
    streams: impl IntoIterator<Item = S>,
    cmp: F,
) -> MergeSorted<S::IntoIter, F>
where
    S: IntoIterator<Item = T>,
    F: FnMut(&T, &T) -> Ordering,
{
    let mut streams: Vec<S::IntoIter> = streams.into_iter().map(IntoIterator::into_iter).collect();
    let mut heap = Vec::with_capacity(streams.len());
    for (index, stream) in streams.iter_mut().enumerate() {
        if let Some(item) = stream.next() {
            heap.push(Head {
                item,
                stream: index,
            });
        }
    }
    let mut merge = MergeSorted { streams, heap, cmp };
    for i in (0..merge.heap.len() / 2).rev() {
        merge.sift_down(i);
    }
    merge
}

struct Head<T> {
    item: T,
    stream: usize,
}

/// The iterator of [`merge_sorted_by`].
pub struct MergeSorted<I: Iterator, F> {
    streams: Vec<I>,
    heap: Vec<Head<I::Item>>,
    cmp: F,
}

impl<I: Iterator, F> std::fmt::Debug for MergeSorted<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeSorted")
            .field("streams", &self.streams.len())
            .field("pending", &self.heap.len())
            .finish()
    }
}

impl<I, F> MergeSorted<I, F>
where
    I: Iterator,
    F: FnMut(&I::Item, &I::Item) -> Ordering,
{
    /// Whether head `a` comes out before head `b`.
    #[inline]
    fn before(&mut self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.heap[a], &self.heap[b]);
        match (self.cmp)(&x.item, &y.item) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => x.stream < y.stream,
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let left = 2 * i + 1;
            if left >= self.heap.len() {
                return;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && self.before(right, left) {
                right
            } else {
                left
            };
            if !self.before(child, i) {
                return;
            }
            self.heap.swap(i, child);
            i = child;
        }
    }
}

impl<I, F> Iterator for MergeSorted<I, F>
where
    I: Iterator,
    F: FnMut(&I::Item, &I::Item) -> Ordering,
{
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let top = self.heap.first_mut()?;
        let stream = top.stream;
        let item = match self.streams[stream].next() {
            Some(next) => std::mem::replace(&mut top.item, next),
            None => self.heap.swap_remove(0).item,
        };
        self.sift_down(0);
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (mut low, mut high) = (self.heap.len(), Some(self.heap.len()));
        for stream in &self.streams {
            let (l, h) = stream.size_hint();
            low = low.saturating_add(l);
            high = high.zip(h).and_then(|(a, b)| a.checked_add(b));
        }
        (low, high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_width_is_the_width_of_the_last_bucket() {
        assert_eq!(bucket_width(1), 1);
        assert_eq!(bucket_width(10), 1);
        assert_eq!(bucket_width(11), 2);
        assert_eq!(bucket_width(16), 2);
        assert_eq!(bucket_width(101), 3);
    }

    #[test]
    fn negative_values_land_in_non_negative_buckets() {
        assert_eq!(bucket_of_value(BucketValue::Signed(-1), 16), 15);
        assert_eq!(bucket_of_value(BucketValue::Unsigned(u128::MAX), 16), 15);
        assert_eq!(bucket_of_value(BucketValue::Unsigned(33), 16), 1);
    }

    #[test]
    fn merge_is_stable_and_handles_empty_streams() {
        let streams = vec![vec![(1, 'a'), (2, 'a')], vec![], vec![(1, 'c'), (3, 'c')]];
        let merged: Vec<_> = merge_sorted_by(streams, |x, y| x.0.cmp(&y.0)).collect();
        assert_eq!(merged, vec![(1, 'a'), (1, 'c'), (2, 'a'), (3, 'c')]);
    }
}
