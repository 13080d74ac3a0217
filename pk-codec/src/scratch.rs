//! The one allocation of a new key: [`encode_new`] writes it into a per-thread scratch buffer,
//! then copies it out at exactly its length. Shared by
//! [`PartitionKey::encode`](crate::PartitionKey::encode) and [`Layout::encode`](crate::Layout::encode),
//! so it sits below both.

use crate::error::Result;

/// A scratch buffer kept above this many bytes is dropped after use, so that one long key does
/// not hold its memory for the thread's life.
const SCRATCH_KEEP: usize = 4096;

thread_local! {
    /// Where [`encode_new`] writes a key before copying it out.
    static SCRATCH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The key that `write` appends to an empty string, as a new `String` of exactly its length:
/// written into a per-thread scratch buffer first, then copied out in one allocation. Written
/// into a new `String` directly, a key's fields would grow it field by field (a student-card
/// key: allocated at 8 bytes, then reallocated three times), and leave it up to twice its length.
///
/// When the scratch buffer is in use (a `write` that encodes another key by this function) or
/// gone (a thread's destructors), `write` writes into a new `String` as before.
pub(crate) fn encode_new(write: impl FnOnce(&mut String) -> Result<()>) -> Result<String> {
    let mut write = Some(write);
    let scratched = SCRATCH.try_with(|cell| {
        let mut scratch = cell.try_borrow_mut().ok()?;
        let write = write.take()?;
        scratch.clear();
        let key = write(&mut scratch).map(|()| String::from(scratch.as_str()));
        if scratch.capacity() > SCRATCH_KEEP {
            *scratch = String::new();
        }
        Some(key)
    });
    if let Ok(Some(key)) = scratched {
        return key;
    }
    // `write` is still here: the closure above takes it only on the way to answering `Some`.
    let mut out = String::new();
    if let Some(write) = write {
        write(&mut out)?;
    }
    Ok(out)
}
