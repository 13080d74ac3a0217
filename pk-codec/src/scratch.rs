//! The one allocation of a new key: [`encode_new`] writes it into a per-thread scratch buffer,
//! then copies it out at exactly its length. Shared by
//! [`PartitionKey::encode`](crate::PartitionKey::encode),
//! [`PartitionKey::encode_binary`](crate::PartitionKey::encode_binary) and
//! [`Layout::encode`](crate::Layout::encode), so it sits below them.

use crate::error::Result;

/// A scratch buffer kept above this many bytes is dropped after use, so that one long key does
/// not hold its memory for the thread's life.
const SCRATCH_KEEP: usize = 4096;

thread_local! {
    /// Where [`encode_new`] writes a text key before copying it out.
    static SCRATCH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    /// Where [`encode_new`] writes a binary key before copying it out.
    static SCRATCH_BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A key's buffer: a `String` (text keys) or a `Vec<u8>` (binary keys), each with its per-thread
/// scratch buffer.
pub(crate) trait KeyBuf: Default + 'static {
    /// This type's scratch buffer.
    const SCRATCH: &'static std::thread::LocalKey<std::cell::RefCell<Self>>;
    /// Empties the buffer, keeping its memory.
    fn clear(&mut self);
    /// The bytes it holds, in a new buffer of exactly their length.
    fn copied(&self) -> Self;
    /// How many bytes it holds room for.
    fn room(&self) -> usize;
}

impl KeyBuf for String {
    const SCRATCH: &'static std::thread::LocalKey<std::cell::RefCell<Self>> = &SCRATCH;
    #[inline]
    fn clear(&mut self) {
        Self::clear(self);
    }
    #[inline]
    fn copied(&self) -> Self {
        Self::from(self.as_str())
    }
    #[inline]
    fn room(&self) -> usize {
        self.capacity()
    }
}

impl KeyBuf for Vec<u8> {
    const SCRATCH: &'static std::thread::LocalKey<std::cell::RefCell<Self>> = &SCRATCH_BYTES;
    #[inline]
    fn clear(&mut self) {
        Self::clear(self);
    }
    #[inline]
    fn copied(&self) -> Self {
        self.as_slice().to_vec()
    }
    #[inline]
    fn room(&self) -> usize {
        self.capacity()
    }
}

/// The key that `write` appends to an empty buffer, as a new `String` (or `Vec<u8>`) of exactly
/// its length: written into a per-thread scratch buffer first, then copied out in one allocation.
/// Written into a new `String` directly, a key's fields would grow it field by field (a
/// student-card key: allocated at 8 bytes, then reallocated three times), and leave it up to
/// twice its length.
///
/// When the scratch buffer is in use (a `write` that encodes another key by this function) or
/// gone (a thread's destructors), `write` writes into a new buffer as before.
pub(crate) fn encode_new<B: KeyBuf>(write: impl FnOnce(&mut B) -> Result<()>) -> Result<B> {
    let mut write = Some(write);
    let scratched = B::SCRATCH.try_with(|cell| {
        let mut scratch = cell.try_borrow_mut().ok()?;
        let write = write.take()?;
        scratch.clear();
        let key = write(&mut scratch).map(|()| scratch.copied());
        if scratch.room() > SCRATCH_KEEP {
            *scratch = B::default();
        }
        Some(key)
    });
    if let Ok(Some(key)) = scratched {
        return key;
    }
    // `write` is still here: the closure above takes it only on the way to answering `Some`.
    let mut out = B::default();
    if let Some(write) = write {
        write(&mut out)?;
    }
    Ok(out)
}
