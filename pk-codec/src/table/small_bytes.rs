//! Short byte strings kept inline: the keys the judge's sketches and the volume meter hold, and
//! the sampled extremes of a partition's window, most of them a few dozen bytes, without an
//! allocation (and a free) each.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Bytes a key is kept inline up to (the type takes 32 bytes).
const INLINE: usize = 30;

/// A byte string: inline up to `N` bytes (at most 255), on the heap past that. It compares,
/// hashes and borrows as the `[u8]` it holds, so it keys maps as `Box<[u8]>` does.
#[derive(Clone)]
pub(crate) enum SmallBytes<const N: usize = INLINE> {
    Inline(u8, [u8; N]),
    Heap(Box<[u8]>),
}

const _: () = assert!(std::mem::size_of::<SmallBytes>() == 32);

impl<const N: usize> SmallBytes<N> {
    /// The bytes.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Self::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }

    /// `parts` one after the other.
    #[inline]
    pub(crate) fn concat(parts: &[&[u8]]) -> Self {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        match u8::try_from(len) {
            Ok(short) if len <= N => {
                let mut bytes = [0; N];
                let mut at = 0;
                for p in parts {
                    bytes[at..at + p.len()].copy_from_slice(p);
                    at += p.len();
                }
                Self::Inline(short, bytes)
            }
            _ => Self::Heap(parts.concat().into_boxed_slice()),
        }
    }

    /// Whether the bytes are kept inline.
    #[cfg(test)]
    pub(crate) const fn is_inline(&self) -> bool {
        matches!(self, Self::Inline(..))
    }
}

impl<const N: usize> From<&[u8]> for SmallBytes<N> {
    #[inline]
    fn from(value: &[u8]) -> Self {
        Self::concat(&[value])
    }
}

impl<const N: usize> Deref for SmallBytes<N> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl<const N: usize> Borrow<[u8]> for SmallBytes<N> {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl<const N: usize> PartialEq for SmallBytes<N> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for SmallBytes<N> {}

impl<const N: usize> PartialOrd for SmallBytes<N> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<const N: usize> Ord for SmallBytes<N> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        compare(self.as_slice(), other.as_slice())
    }
}

/// `a.cmp(b)` for byte strings, eight bytes at a time inline: the keys the judge searches among
/// are short, and most differ in their first eight bytes, where a call of the C library's
/// `memcmp` costs more than the comparison.
#[inline]
pub(crate) fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let mut a_words = a.chunks_exact(8);
    let mut b_words = b.chunks_exact(8);
    for (x, y) in a_words.by_ref().zip(b_words.by_ref()) {
        let (x, y) = (word(x), word(y));
        if x != y {
            return x.cmp(&y);
        }
    }
    // Past the last whole word of the shorter one: byte by byte, then the shorter first.
    let at = a.len().min(b.len()) / 8 * 8;
    for (x, y) in a[at..].iter().zip(&b[at..]) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Eight bytes as a big-endian word: words order as their bytes do.
#[inline]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(bytes);
    u64::from_be_bytes(w)
}

impl<const N: usize> Hash for SmallBytes<N> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<const N: usize> std::fmt::Debug for SmallBytes<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    /// Every length round the inline limit keeps its bytes, and orders, compares and hashes as
    /// the slice does (a map keyed by it finds a slice).
    #[test]
    fn acts_as_its_slice() {
        let values: Vec<Vec<u8>> = (0..=2 * INLINE)
            .flat_map(|n| [vec![0xff; n], (0..n as u8).collect(), vec![0; n]])
            // One byte apart, at every place of a word and past it.
            .chain((0..20).map(|k| {
                let mut v = vec![5; 20];
                v[k] = 6;
                v
            }))
            .collect();
        let mut btree = BTreeMap::new();
        let mut hash = HashMap::new();
        for (i, v) in values.iter().enumerate() {
            let small: SmallBytes = SmallBytes::from(v.as_slice());
            assert_eq!(small.as_slice(), v.as_slice());
            assert_eq!(small.is_inline(), v.len() <= INLINE);
            btree.insert(small.clone(), i);
            hash.insert(small, i);
        }
        for (i, v) in values.iter().enumerate() {
            let first = values.iter().position(|w| w == v).unwrap();
            assert!(first <= i);
            assert_eq!(hash.get(v.as_slice()), btree.get(v.as_slice()));
            assert!(hash.contains_key(v.as_slice()));
        }
        for a in &values {
            for b in &values {
                assert_eq!(compare(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
        let mut sorted = values.clone();
        sorted.sort();
        sorted.dedup();
        let keys: Vec<&[u8]> = btree.keys().map(SmallBytes::as_slice).collect();
        assert_eq!(keys, sorted.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }
}
