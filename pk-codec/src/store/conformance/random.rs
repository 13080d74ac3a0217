//! A small seeded generator (SplitMix64) for the suite's random cases: no dependency, and the
//! same seed gives the same cases on every machine.

/// SplitMix64: one 64-bit state, one multiply-xorshift output per step.
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) const fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` at least 1).
    pub(super) fn below(&mut self, n: usize) -> usize {
        // The modulo bias is below 2^-40 for the small `n` used here.
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items`.
    pub(super) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub(super) fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// Bytes of length `min..=max`, each byte often `00`, `01`, `7f`, `80`, `fe` or `ff` (the
    /// bytes where orders go wrong), else any byte.
    pub(super) fn bytes(&mut self, min: usize, max: usize) -> Vec<u8> {
        const EDGES: [u8; 6] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];
        let len = min + self.below(max.saturating_sub(min) + 1);
        (0..len)
            .map(|_| {
                if self.chance(2) {
                    *self.pick(&EDGES)
                } else {
                    self.next_u64() as u8
                }
            })
            .collect()
    }

    /// A string of length `0..=max` characters, over characters that make escapes, delimiters,
    /// NUL, DEL, multi-byte UTF-8 and the highest code point.
    pub(super) fn text(&mut self, max: usize) -> String {
        const CHARS: [char; 10] = [
            'a',
            'b',
            ',',
            '\0',
            '\u{1}',
            '\u{7f}',
            '\u{e9}',
            '\u{10ffff}',
            '~',
            '0',
        ];
        let len = self.below(max + 1);
        (0..len).map(|_| *self.pick(&CHARS)).collect()
    }

    /// A signed number, often at the edges of its range.
    pub(super) fn int(&mut self) -> i64 {
        const EDGES: [i64; 7] = [i64::MIN, -1_000, -1, 0, 1, 1_000, i64::MAX];
        if self.chance(2) {
            *self.pick(&EDGES)
        } else {
            self.next_u64() as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_same_seed_gives_the_same_numbers_and_others_differ() {
        let a: Vec<u64> = (0..4)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .scan(Rng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(3) < 3));
        // Every edge byte turns up.
        let seen: std::collections::BTreeSet<u8> = (0..200).flat_map(|_| r.bytes(1, 4)).collect();
        assert!(seen.contains(&0) && seen.contains(&0xff));
    }
}
