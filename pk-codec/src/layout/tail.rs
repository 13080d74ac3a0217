//! Appending a short string straight into a `String`'s spare capacity ([`push_lead_str`]):
//! `push_str` copies with a `memcpy` call, costly next to the few bytes of a key's string.

use std::mem::MaybeUninit;

/// Appends `lead` (ASCII) when `LEAD`, then `s`, answering whether it did (it does, unless the
/// capacity cannot be reserved; then nothing is appended).
#[cfg_attr(not(debug_assertions), inline(always))]
#[allow(unsafe_code)]
pub(super) fn push_lead_str<const LEAD: bool>(out: &mut String, lead: u8, s: &str) -> bool {
    debug_assert!(lead.is_ascii());
    let n = usize::from(LEAD) + s.len();
    out.reserve(n);
    // SAFETY: `as_mut_vec` lets us break the UTF-8 invariant; we keep it. Nothing below changes
    // the vector's initialized bytes, and the bytes the length takes in at the end are `lead`,
    // ASCII, followed by all of `s`: UTF-8.
    let vec = unsafe { out.as_mut_vec() };
    let len = vec.len();
    let Some(to) = vec.spare_capacity_mut().get_mut(..n) else {
        return false;
    };
    let to = if LEAD {
        let Some((first, rest)) = to.split_first_mut() else {
            return false;
        };
        first.write(lead);
        rest
    } else {
        to
    };
    copy(to, s.as_bytes());
    // SAFETY: the `n` bytes past the end are initialized (the lead, then `copy` writes every byte
    // of the rest) and lie within the capacity (they are part of the spare capacity's slice).
    unsafe { vec.set_len(len + n) };
    true
}

/// Writes every byte of `to` from `from`, of the same length: up to 16 bytes as two overlapping
/// chunks (or up to three single bytes), not a `memcpy` call.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn copy(to: &mut [MaybeUninit<u8>], from: &[u8]) {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn chunk<const N: usize>(to: &mut [MaybeUninit<u8>], from: &[u8]) {
        if let (Some(t), Some(f)) = (to.first_chunk_mut::<N>(), from.first_chunk::<N>()) {
            *t = f.map(MaybeUninit::new);
        }
        if let (Some(t), Some(f)) = (to.last_chunk_mut::<N>(), from.last_chunk::<N>()) {
            *t = f.map(MaybeUninit::new);
        }
    }
    debug_assert_eq!(to.len(), from.len());
    match from.len().min(to.len()) {
        0 => {}
        // Bytes 0, n / 2 and n - 1: every byte of 1 to 3.
        n @ 1..=3 => {
            for i in [0, n / 2, n - 1] {
                to[i].write(from[i]);
            }
        }
        // The first and the last 4 (8) bytes: every byte of 4 to 8 (9 to 16).
        4..=8 => chunk::<4>(to, from),
        9..=16 => chunk::<8>(to, from),
        _ => {
            for (t, &f) in to.iter_mut().zip(from) {
                t.write(f);
            }
        }
    }
}
