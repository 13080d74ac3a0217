//! Hash prefixes: the first hex characters of a digest of the natural key.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// A hash function for key prefixes.
///
/// The prefix is the first N characters of the digest in lower-case hex: MD5's usual hex digest,
/// and for the xxHash family the big-endian hex of the hash value, as `xxhsum` prints it.
///
/// # Examples
///
/// ```
/// use pk_codec::HashAlg;
///
/// assert_eq!(HashAlg::Md5.hex_prefix(b"200001", 4), "ee8f");
/// assert_eq!(HashAlg::Md5.max_len(), 32);
/// assert_eq!(HashAlg::Xxh32.max_len(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum HashAlg {
    /// MD5 (128 bits, 32 hex characters), as in the stores' published examples.
    Md5,
    /// xxHash32 (seed 0; 8 hex characters).
    Xxh32,
    /// xxHash64 (seed 0; 16 hex characters).
    Xxh64,
    /// XXH3, 64-bit (seed 0; 16 hex characters): the fastest.
    Xxh3,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `a == b`, in constants.
#[cfg_attr(debug_assertions, inline)]
const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl HashAlg {
    /// The name as written in a spec: `md5`, `xxh32`, `xxh64`, `xxh3`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Md5 => "md5",
            Self::Xxh32 => "xxh32",
            Self::Xxh64 => "xxh64",
            Self::Xxh3 => "xxh3",
        }
    }

    /// Every algorithm, in the order of their names in messages.
    pub const ALL: [Self; 4] = [Self::Md5, Self::Xxh32, Self::Xxh64, Self::Xxh3];

    /// The algorithm named `name`, if any (usable in constants, as derived keys do).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn from_name(name: &str) -> Option<Self> {
        let mut i = 0;
        while i < Self::ALL.len() {
            if bytes_eq(name.as_bytes(), Self::ALL[i].name().as_bytes()) {
                return Some(Self::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// The length of the full digest in hex characters: the longest prefix.
    #[must_use]
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn max_len(self) -> u8 {
        match self {
            Self::Md5 => 32,
            Self::Xxh32 => 8,
            Self::Xxh64 | Self::Xxh3 => 16,
        }
    }

    /// Writes the first `len` hex characters of the digest of `data` into `buf`, returning them.
    /// `len` is clamped to [`HashAlg::max_len`].
    ///
    /// Inlined, so that a constant algorithm and length leave one hash and `len` table lookups.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn write_hex_prefix<'b>(
        self,
        data: &[u8],
        len: u8,
        buf: &'b mut [u8; 32],
    ) -> &'b [u8] {
        let len = usize::from(len.min(self.max_len()));
        // The xxHash values, left-aligned in a u64 so that hex digit `i` is bits `60 - 4i..64 - 4i`.
        let value: u64 = match self {
            Self::Md5 => return md5_hex_prefix(data, len, buf),
            Self::Xxh32 => u64::from(xxh32(data)) << 32,
            Self::Xxh64 => xxh64(data),
            Self::Xxh3 => xxh3_64(data),
        };
        let len = len.min(16);
        for (i, out) in buf[..len].iter_mut().enumerate() {
            *out = HEX[((value >> (60 - 4 * i)) & 15) as usize];
        }
        &buf[..len]
    }

    /// Writes the first `n` bytes of the digest of `data` into `buf`, returning them (`n`
    /// clamped to the digest's size): a binary key's hash prefix, the bytes whose hex
    /// [`HashAlg::write_hex_prefix`] writes (the xxHash values big-endian, as their hex is).
    ///
    /// Inlined, so that a constant algorithm and length leave one hash and one store.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn write_digest_prefix<'b>(
        self,
        data: &[u8],
        n: usize,
        buf: &'b mut [u8; 32],
    ) -> &'b [u8] {
        let n = n.min(usize::from(self.max_len()) / 2);
        match self {
            Self::Md5 => buf[..16].copy_from_slice(&md5_digest(data)),
            Self::Xxh32 => buf[..4].copy_from_slice(&xxh32(data).to_be_bytes()),
            Self::Xxh64 => buf[..8].copy_from_slice(&xxh64(data).to_be_bytes()),
            Self::Xxh3 => buf[..8].copy_from_slice(&xxh3_64(data).to_be_bytes()),
        }
        &buf[..n]
    }

    /// The first `len` hex characters of the digest of `data` (`len` clamped to
    /// [`HashAlg::max_len`]).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn hex_prefix(self, data: &[u8], len: u8) -> String {
        let mut buf = [0u8; 32];
        let hex = self.write_hex_prefix(data, len, &mut buf);
        hex.iter().map(|&b| char::from(b)).collect()
    }
}

// The digests, each called from here only. Out of line in a debug build: the hash crates' code
// (generic or `#[inline]`, most of it) is then compiled once, in pk-codec, and not again in every
// crate that encodes a key (ARCHITECTURE.md, the hot paths). A release build inlines them as before.

/// XXH3-64 of `data` (xxhash-rust), seed 0.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn xxh3_64(data: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(data)
}

/// XXH64 of `data` (xxhash-rust), seed 0.
#[cfg_attr(not(debug_assertions), inline(always))]
fn xxh64(data: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(data, 0)
}

/// XXH32 of `data` (xxhash-rust), seed 0.
#[cfg_attr(not(debug_assertions), inline(always))]
fn xxh32(data: &[u8]) -> u32 {
    xxhash_rust::xxh32::xxh32(data, 0)
}

/// The MD5 digest of `data` (md-5).
#[cfg_attr(not(debug_assertions), inline)]
fn md5_digest(data: &[u8]) -> [u8; 16] {
    use md5::Digest as _;
    md5::Md5::digest(data).into()
}

/// The first `len` (at most 32) hex characters of the MD5 digest of `data`, into `buf`.
#[inline]
fn md5_hex_prefix<'b>(data: &[u8], len: usize, buf: &'b mut [u8; 32]) -> &'b [u8] {
    let digest = md5_digest(data);
    let len = len.min(32);
    for (i, out) in buf[..len].iter_mut().enumerate() {
        let byte = digest[i / 2];
        let nibble = if i % 2 == 0 { byte >> 4 } else { byte & 15 };
        *out = HEX[usize::from(nibble)];
    }
    &buf[..len]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_prefixes_match_the_published_digests() {
        // From the key-design facts: real MD5 values, not the illustrative ones.
        for (input, want) in [
            ("200001", "ee8f"),
            ("200002", "7db8"),
            ("200003", "5c74"),
            ("200004", "797e"),
            ("200005", "a210"),
            ("10.10.0.1", "7e4a"),
            ("000001", "04fc"),
        ] {
            assert_eq!(
                HashAlg::Md5.hex_prefix(input.as_bytes(), 4),
                want,
                "md5({input})"
            );
        }
        assert_eq!(
            HashAlg::Md5.hex_prefix(b"", 32),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
    }

    #[test]
    fn xxhash_prefixes_are_the_big_endian_hex_of_the_value() {
        let v = xxhash_rust::xxh3::xxh3_64(b"200001");
        assert_eq!(HashAlg::Xxh3.hex_prefix(b"200001", 16), format!("{v:016x}"));
        let v = xxhash_rust::xxh64::xxh64(b"200001", 0);
        assert_eq!(
            HashAlg::Xxh64.hex_prefix(b"200001", 5),
            format!("{v:016x}")[..5]
        );
        let v = xxhash_rust::xxh32::xxh32(b"200001", 0);
        assert_eq!(HashAlg::Xxh32.hex_prefix(b"200001", 8), format!("{v:08x}"));
        // Known value of the reference implementation: XXH32("", 0) = 02cc5d05.
        assert_eq!(HashAlg::Xxh32.hex_prefix(b"", 8), "02cc5d05");
    }
}
