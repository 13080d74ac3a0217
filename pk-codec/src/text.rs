//! String, byte-string, boolean and character forms.
//!
//! - Plain strings are written as they are; every byte must sort above the delimiter.
//! - Escaped strings write every byte `<= b'-'` (control characters, space, `!"#$%&'()*+,-`) as
//!   `-` followed by two lower-case hex digits, and every other byte as it is. Since `-` sorts below
//!   every byte written as it is, and the hex digits keep the escaped bytes in order, the form keeps
//!   byte order; since it holds no byte below `-`, a delimiter below `-` ends it.
//! - Byte strings are lower-case hex.
//! - Descending strings and byte strings write each byte as two inverted hex digits (nibble `n` as
//!   `b'p' - n`, so `a`..`p`) and end with `z`, which sorts above them: a shorter value, a prefix of
//!   a longer one, then sorts after it, as descending order wants.

/// The escape character of the escaped string form, and the highest byte it escapes.
pub(crate) const ESCAPE: u8 = b'-';
/// The terminator of descending strings and byte strings.
pub(crate) const DESC_END: u8 = b'z';
/// The key text of `None` in a descending optional field: above every descending form.
pub(crate) const DESC_NONE: u8 = b'~';
/// The marker before `Some` in an ascending optional field whose value may be empty.
pub(crate) const SOME_MARKER: u8 = b'=';

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The length of the plain text at the start of `bytes`: the offset of the first byte at or below
/// `delimiter`, or the whole length.
///
/// One pass, eight bytes a step: a word has a byte below `n = delimiter + 1` exactly when
/// `(w - n * 0x01..01) & !w & 0x80..80` is not zero (for `n <= 128`), and its lowest set bit marks
/// the first such byte (a borrow only travels upward, from a byte that is below `n`). Reading a
/// key, the scan finds the delimiter and checks the bytes before it at once.
#[cfg_attr(not(debug_assertions), inline(always))]
#[must_use]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn plain_len(bytes: &[u8], delimiter: u8) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    if delimiter < 0x80 {
        let below = ONES * (u64::from(delimiter) + 1);
        for chunk in bytes.chunks_exact(8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let w = u64::from_le_bytes(word);
            let found = w.wrapping_sub(below) & !w & HIGHS;
            if found != 0 {
                return i + (found.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
    }
    let rest = &bytes[i..];
    // 4 to 7 bytes left: two overlapping 4-byte words, each answering as the 8-byte words do
    // (a match in the last word is the first one, as the first word had none).
    if delimiter < 0x80
        && let (Some(first), Some(last)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>())
    {
        let below = 0x0101_0101 * (u32::from(delimiter) + 1);
        let found = |w: [u8; 4]| {
            let w = u32::from_le_bytes(w);
            w.wrapping_sub(below) & !w & 0x8080_8080
        };
        let in_first = found(*first);
        if in_first != 0 {
            return i + (in_first.trailing_zeros() / 8) as usize;
        }
        let in_last = found(*last);
        if in_last != 0 {
            return bytes.len() - 4 + (in_last.trailing_zeros() / 8) as usize;
        }
        return bytes.len();
    }
    i + rest
        .iter()
        .position(|&b| b <= delimiter)
        .unwrap_or(rest.len())
}

/// Writes `s` in the escaped form.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b <= ESCAPE {
            // `s[run..i]` ends before an ASCII byte, so on a character boundary.
            out.push_str(&s[run..i]);
            out.push(char::from(ESCAPE));
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
            run = i + 1;
        }
    }
    out.push_str(&s[run..]);
}

/// Writes `bytes` as lower-case hex.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
}

/// Writes `bytes` in the descending form, terminator included.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_desc_bytes(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2 + 1);
    for &b in bytes {
        out.push(char::from(b'p' - (b >> 4)));
        out.push(char::from(b'p' - (b & 15)));
    }
    out.push(char::from(DESC_END));
}

/// Why a variable-length field's text does not decode: the offset in the field and a reason.
pub(crate) type FieldFault = (usize, String);

#[cfg_attr(debug_assertions, inline)]
pub(crate) fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// Why `text`, which holds no escape, is not an escaped string: the first byte at or below the
/// escape, which the form always escapes.
#[inline]
pub(crate) fn escaped_fault(text: &str) -> Option<FieldFault> {
    let at = text.as_bytes().iter().position(|&b| b <= ESCAPE)?;
    Some((
        at,
        format!(
            "byte {:?} must be escaped in an escaped string",
            char::from(text.as_bytes()[at])
        ),
    ))
}

/// Decodes an escaped string field (the text between delimiters).
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn read_escaped(text: &str) -> Result<String, FieldFault> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b > ESCAPE {
            i += 1;
            continue;
        }
        if b != ESCAPE {
            return Err((
                i,
                format!(
                    "byte {:?} must be escaped in an escaped string",
                    char::from(b)
                ),
            ));
        }
        out.push_str(&text[run..i]);
        let pair = bytes.get(i + 1..i + 3).ok_or_else(|| {
            (
                i,
                "escape `-` must be followed by two hex digits".to_owned(),
            )
        })?;
        let (Some(hi), Some(lo)) = (hex_value(pair[0]), hex_value(pair[1])) else {
            return Err((
                i,
                "escape `-` must be followed by two lower-case hex digits".to_owned(),
            ));
        };
        let value = hi << 4 | lo;
        if value > ESCAPE {
            return Err((
                i,
                format!(
                    "escape `-{}{}` stands for {:?}, which is written as it is",
                    char::from(pair[0]),
                    char::from(pair[1]),
                    char::from(value)
                ),
            ));
        }
        out.push(char::from(value));
        i += 3;
        run = i;
    }
    out.push_str(&text[run..]);
    Ok(out)
}

/// Decodes a lower-case hex field.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn read_hex(text: &str) -> Result<Vec<u8>, FieldFault> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err((bytes.len(), "hex needs an even number of digits".to_owned()));
    }
    bytes
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| match (hex_value(pair[0]), hex_value(pair[1])) {
            (Some(hi), Some(lo)) => Ok(hi << 4 | lo),
            (None, _) => Err((
                2 * i,
                format!("{:?} is not a lower-case hex digit", char::from(pair[0])),
            )),
            (_, None) => Err((
                2 * i + 1,
                format!("{:?} is not a lower-case hex digit", char::from(pair[1])),
            )),
        })
        .collect()
}

/// Reads a descending byte string from the start of `text`; returns the bytes and the length of
/// the text it took (terminator included).
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn read_desc_bytes(text: &str) -> Result<(Vec<u8>, usize), FieldFault> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        match bytes.get(i) {
            Some(&DESC_END) => return Ok((out, i + 1)),
            None => return Err((i, "descending value has no `z` terminator".to_owned())),
            Some(_) => {}
        }
        let nibble = |at: usize| -> Result<u8, FieldFault> {
            match bytes.get(at) {
                Some(&b @ b'a'..=b'p') => Ok(b'p' - b),
                Some(&b) => Err((
                    at,
                    format!("{:?} is not a descending digit (a to p)", char::from(b)),
                )),
                None => Err((at, "descending value ends inside a byte".to_owned())),
            }
        };
        out.push(nibble(i)? << 4 | nibble(i + 1)?);
        i += 2;
    }
}

/// The binary form of a string or byte string: each `0x00` written as `0x00 0xff`, then the end
/// mark `0x00 0x01`, so that a value that is a prefix of another sorts first and every value ends
/// where its mark is; each byte inverted when `desc` (then a longer value sorts first).
#[inline]
pub(crate) fn write_bin_escaped(out: &mut Vec<u8>, bytes: &[u8], desc: bool) {
    // Ascending, at most 16 bytes (most keys' strings) and no zero byte: copied as fixed-size
    // words, with no call to copy a few bytes.
    if !desc && write_short(out, bytes) {
        return;
    }
    // Ascending without a zero byte: the bytes as they are, then the end mark.
    if !desc && !bytes.contains(&0) {
        out.reserve(bytes.len() + 2);
        out.extend_from_slice(bytes);
        out.extend_from_slice(&[0, 0x01]);
        return;
    }
    let flip = if desc { 0xff } else { 0 };
    out.reserve(bytes.len() + 2);
    let mut rest = bytes;
    while let Some(zero) = rest.iter().position(|&b| b == 0) {
        out.extend(rest[..zero].iter().map(|b| b ^ flip));
        out.extend_from_slice(&[flip, 0xff ^ flip]);
        rest = &rest[zero + 1..];
    }
    out.extend(rest.iter().map(|b| b ^ flip));
    out.extend_from_slice(&[flip, 0x01 ^ flip]);
}

/// [`write_bin_escaped`] of an ascending value of at most 16 bytes with no zero byte (then
/// `true`; `false`, writing nothing, otherwise).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn write_short(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    if !copy_short(out, bytes) {
        return false;
    }
    out.extend_from_slice(&[0, 0x01]);
    true
}

/// Appends `bytes`, at most 16 of them and none zero, to `out` (then `true`; `false`, writing
/// nothing, otherwise). The value is read and written as two words that overlap where it is
/// shorter than both (the second written after cutting the first back), so every copy has a
/// fixed size.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn copy_short(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let (len, start) = (bytes.len(), out.len());
    match len {
        8..=16 => {
            let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
            a.copy_from_slice(&bytes[..8]);
            b.copy_from_slice(&bytes[len - 8..]);
            if has_zero_byte(u64::from_ne_bytes(a)) || has_zero_byte(u64::from_ne_bytes(b)) {
                return false;
            }
            out.extend_from_slice(&a);
            out.truncate(start + len - 8);
            out.extend_from_slice(&b);
        }
        4..=7 => {
            let (mut a, mut b) = ([0xffu8; 8], [0xffu8; 8]);
            a[..4].copy_from_slice(&bytes[..4]);
            b[..4].copy_from_slice(&bytes[len - 4..]);
            if has_zero_byte(u64::from_ne_bytes(a)) || has_zero_byte(u64::from_ne_bytes(b)) {
                return false;
            }
            out.extend_from_slice(&a[..4]);
            out.truncate(start + len - 4);
            out.extend_from_slice(&b[..4]);
        }
        1..=3 => {
            // The first, middle and last bytes: all of a value of 1 to 3 bytes, then cut to it.
            let three = [bytes[0], bytes[len / 2], bytes[len - 1]];
            if three.contains(&0) {
                return false;
            }
            out.extend_from_slice(&three);
            out.truncate(start + len);
        }
        0 => {}
        _ => return false,
    }
    true
}

/// Whether any of the eight bytes of `x` is zero.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
const fn has_zero_byte(x: u64) -> bool {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    x.wrapping_sub(LOW) & !x & HIGH != 0
}

/// The length of the ascending value with no escape at the start of `input` (the bytes before
/// its end mark `0x00 0x01`), and whether they are all ASCII; `None` when the first zero byte is
/// not the end mark (an escape, or bytes that are not a value) or there is none.
///
/// Word at a time: a value of at most 15 bytes with 16 bytes to read (a key's string followed by
/// more fields) is found in one step, with no branch on its length.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn bin_plain_len(input: &[u8]) -> Option<(usize, bool)> {
    const LOW: u128 = 0x0101_0101_0101_0101_0101_0101_0101_0101;
    const HIGH: u128 = LOW << 7;
    let mut high = 0u128;
    let mut at = 0;
    let mut end = None;
    // Sixteen bytes a step; the lowest flagged byte of `zeros` is the first zero byte (the
    // borrow can only flag bytes above a zero byte).
    while let Some(chunk) = input.get(at..at + 16) {
        let mut word = [0u8; 16];
        word.copy_from_slice(chunk);
        let w = u128::from_le_bytes(word);
        let zeros = w.wrapping_sub(LOW) & !w & HIGH;
        if zeros != 0 {
            let z = (zeros.trailing_zeros() / 8) as usize;
            high |= w & ((1u128 << (8 * z)) - 1);
            end = Some(at + z);
            break;
        }
        high |= w;
        at += 16;
    }
    let end = match end {
        Some(end) => end,
        None => {
            let z = at + input[at..].iter().position(|&b| b == 0)?;
            for &b in &input[at..z] {
                high |= u128::from(b);
            }
            z
        }
    };
    (input.get(end + 1) == Some(&0x01)).then_some((end, high & HIGH == 0))
}

/// The first `len` bytes of `input` as a new vector. With 16 bytes to read and `len` at most 16,
/// they are copied as one fixed-size block into a vector of 16 bytes' capacity and cut back: no
/// copy call, no branch on the length.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn owned_head(input: &[u8], len: usize) -> Vec<u8> {
    match input.get(..16) {
        Some(block) if len <= 16 => {
            let mut out = Vec::with_capacity(16);
            out.extend_from_slice(block);
            out.truncate(len);
            out
        }
        _ => input[..len].to_vec(),
    }
}

/// `key[at..at + len]` as a new `String`: a short one (at most 16 bytes, with 16 bytes of the key
/// to read from `at`) copied as one fixed-size block into a string of 16 bytes' capacity and cut
/// back, as [`owned_head`] does, so that it costs no copy call and no branch on its length.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn owned_str(key: &str, at: usize, len: usize) -> String {
    match key.get(at..at + 16) {
        Some(block) if len <= 16 => {
            let mut s = String::with_capacity(16);
            s.push_str(block);
            s.truncate(len);
            s
        }
        _ => key[at..at + len].to_owned(),
    }
}

/// [`read_bin_escaped`] of an ascending string whose value has no escape (most strings): the
/// string and the bytes read (value and end mark); `None`, reading nothing, for any other bytes
/// (the general reader then decodes them or says what is wrong).
#[cfg_attr(not(debug_assertions), inline(always))]
#[allow(unsafe_code)]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn read_bin_plain_str(input: &[u8]) -> Option<(String, usize)> {
    let (len, ascii) = bin_plain_len(input)?;
    let bytes = owned_head(input, len);
    let s = if ascii {
        debug_assert!(bytes.is_ascii());
        // SAFETY: `bin_plain_len` saw every one of these `len` bytes (they are `input[..len]`,
        // which `owned_head` copied) with its high bit clear: ASCII, so valid UTF-8. The check
        // is the one `String::from_utf8` would repeat, byte by byte, out of line.
        unsafe { String::from_utf8_unchecked(bytes) }
    } else {
        String::from_utf8(bytes).ok()?
    };
    Some((s, len + 2))
}

/// Reads [`write_bin_escaped`]'s form at the start of `input`: the bytes and the length read, or
/// the offset and reason of what is wrong.
#[inline]
pub(crate) fn read_bin_escaped(input: &[u8], desc: bool) -> Result<(Vec<u8>, usize), FieldFault> {
    // Ascending with no escape (most values): the bytes before the end mark, copied once.
    if !desc && let Some((len, _)) = bin_plain_len(input) {
        return Ok((owned_head(input, len), len + 2));
    }
    read_bin_escaped_slow(input, desc)
}

/// [`read_bin_escaped`] of a value with escapes or inverted, or of bytes that are not one.
#[cfg_attr(debug_assertions, inline)]
fn read_bin_escaped_slow(input: &[u8], desc: bool) -> Result<(Vec<u8>, usize), FieldFault> {
    let flip = if desc { 0xff } else { 0 };
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let Some(zero) = input[i..].iter().position(|&b| b == flip) else {
            return Err((
                input.len(),
                "the value's end mark (0x00 0x01) is missing".to_owned(),
            ));
        };
        out.extend(input[i..i + zero].iter().map(|b| b ^ flip));
        i += zero;
        match input.get(i + 1).map(|b| b ^ flip) {
            Some(0xff) => {
                out.push(0);
                i += 2;
            }
            Some(0x01) => return Ok((out, i + 2)),
            Some(other) => {
                return Err((
                    i + 1,
                    format!(
                        "0x00 is followed by 0xff (a zero byte) or 0x01 (the end), not {other:#04x}"
                    ),
                ));
            }
            None => {
                return Err((
                    i + 1,
                    "the value's end mark (0x00 0x01) is cut short".to_owned(),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value the word-at-a-time binary readers take in, as bytes of 0 to 40 (ASCII, high
    /// bytes, invalid UTF-8, zero bytes at every place), then the end mark or a cut, an escape or
    /// a bad mark, then 0 to 20 more bytes (a key's later fields, or its end): the fast readers
    /// answer exactly what the byte-by-byte reader answers, or decline what it refuses or reads
    /// otherwise.
    #[test]
    fn word_at_a_time_binary_reads_match_the_byte_by_byte_reader() {
        let fills: [fn(usize) -> u8; 4] = [
            |i| b'a' + (i % 26) as u8,
            |i| 0x80 | (i as u8).wrapping_mul(37),
            |i| [0xc3, 0xa9][i % 2], // "é" repeated (cut in the middle when the length is odd)
            |i| (i as u8).wrapping_mul(29) | 1,
        ];
        let mut checked = 0;
        for fill in fills {
            for len in 0..40 {
                for zero_at in (0..=len).chain([usize::MAX]) {
                    for (mark, ends) in [
                        (&[0u8, 1][..], true),
                        (&[0, 0xff][..], false),
                        (&[0, 2][..], false),
                        (&[0][..], false),
                        (&[][..], false),
                    ] {
                        for after in [0usize, 1, 7, 15, 20] {
                            let mut input: Vec<u8> = (0..len).map(fill).collect();
                            if zero_at < len {
                                input[zero_at] = 0;
                            }
                            input.extend_from_slice(mark);
                            input.extend((0..after).map(|i| (i as u8) ^ 0x5a));
                            let slow = read_bin_escaped_slow(&input, false);
                            let fast = read_bin_escaped(&input, false);
                            assert_eq!(fast, slow, "{input:?}");
                            if let Some((s, used)) = read_bin_plain_str(&input) {
                                let (bytes, n) = slow.clone().expect("the slow reader reads it");
                                assert_eq!((s.as_bytes(), used), (&bytes[..], n), "{input:?}");
                            } else if ends
                                && zero_at >= len
                                && std::str::from_utf8(&input[..len]).is_ok()
                            {
                                panic!("declined a plain string: {input:?}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn owned_str_copies_exactly_the_text_asked_for() {
        let key = "a100,é,0123456789abcdefghij,x";
        for at in (0..key.len()).filter(|&i| key.is_char_boundary(i)) {
            for end in (at..=key.len()).filter(|&i| key.is_char_boundary(i)) {
                assert_eq!(owned_str(key, at, end - at), &key[at..end]);
            }
        }
    }

    #[test]
    fn plain_len_stops_at_the_first_byte_at_or_below_the_delimiter() {
        for delimiter in [0u8, 1, b',', b'/', 0x7e, 0x7f, 0x80, 0xff] {
            for len in 0..40 {
                for at in 0..=len {
                    for low in [0u8, delimiter, delimiter.saturating_sub(1)] {
                        let mut bytes: Vec<u8> = (0..len)
                            .map(|i| 0x80 | (i as u8).wrapping_mul(37))
                            .collect();
                        bytes
                            .iter_mut()
                            .for_each(|b| *b = (*b).max(delimiter.saturating_add(1)));
                        if at < len {
                            bytes[at] = low;
                        }
                        let want = bytes.iter().position(|&b| b <= delimiter).unwrap_or(len);
                        assert_eq!(plain_len(&bytes, delimiter), want, "{bytes:?} {delimiter}");
                    }
                }
            }
        }
    }

    #[test]
    fn escaped_form_escapes_only_low_bytes() {
        let mut s = String::new();
        write_escaped(&mut s, "a,b c-d.é\0");
        assert_eq!(s, "a-2cb-20c-2dd.é-00");
        assert_eq!(read_escaped(&s).unwrap(), "a,b c-d.é\0");
    }

    #[test]
    fn escaped_decode_rejects_non_canonical_escapes() {
        assert_eq!(read_escaped("a-41").unwrap_err().0, 1);
        assert_eq!(read_escaped("a-2").unwrap_err().0, 1);
        assert_eq!(read_escaped("a-2C").unwrap_err().0, 1);
        assert_eq!(read_escaped("a b").unwrap_err().0, 1);
    }

    #[test]
    fn descending_bytes_invert_order_and_round_trip() {
        let enc = |b: &[u8]| {
            let mut s = String::new();
            write_desc_bytes(&mut s, b);
            s
        };
        assert_eq!(enc(b""), "z");
        assert_eq!(enc(b"\x00\xff"), "ppaaz");
        assert!(enc(b"ab") < enc(b"a"));
        assert!(enc(b"b") < enc(b"ab"));
        assert_eq!(read_desc_bytes("ppaaz,rest").unwrap(), (vec![0, 255], 5));
        assert_eq!(read_desc_bytes("pp").unwrap_err().0, 2);
        assert_eq!(read_desc_bytes("pqz").unwrap_err().0, 1);
    }

    #[test]
    fn hex_round_trips_and_reports_offsets() {
        let mut s = String::new();
        write_hex(&mut s, &[0, 0xab, 0xff]);
        assert_eq!(s, "00abff");
        assert_eq!(read_hex(&s).unwrap(), vec![0, 0xab, 0xff]);
        assert_eq!(read_hex("0g").unwrap_err().0, 1);
        assert_eq!(read_hex("AB").unwrap_err().0, 0);
        assert_eq!(read_hex("abc").unwrap_err().0, 3);
    }

    /// The binary string form by its definition, byte by byte: each `0x00` as `0x00 0xff`, then
    /// `0x00 0x01`, every byte inverted when descending.
    fn bin_escaped_by_definition(bytes: &[u8], desc: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in bytes {
            out.extend_from_slice(if b == 0 {
                &[0, 0xff]
            } else {
                std::slice::from_ref(&b)
            });
        }
        out.extend_from_slice(&[0, 1]);
        if desc {
            out.iter_mut().for_each(|b| *b = !*b);
        }
        out
    }

    /// The short-value paths (fixed-size words, below and above 16 bytes, a zero byte anywhere)
    /// write and read what the definition says, after bytes already in the buffer and before
    /// bytes after the value.
    #[test]
    fn bin_escaped_forms_of_every_short_length_and_zero_position_are_the_definition() {
        for len in 0..40usize {
            for zero in std::iter::once(None).chain((0..len).map(Some)) {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| {
                        if Some(i) == zero {
                            0
                        } else {
                            b'a' + (i % 26) as u8
                        }
                    })
                    .collect();
                for desc in [false, true] {
                    let expected = bin_escaped_by_definition(&bytes, desc);
                    let mut out = vec![7, 7, 7];
                    write_bin_escaped(&mut out, &bytes, desc);
                    assert_eq!(&out[..3], &[7, 7, 7]);
                    assert_eq!(
                        &out[3..],
                        &expected[..],
                        "len {len}, zero {zero:?}, desc {desc}"
                    );
                    out.extend_from_slice(&[9, 9]);
                    let (read, used) = read_bin_escaped(&out[3..], desc).unwrap();
                    assert_eq!((read, used), (bytes.clone(), expected.len()));
                }
            }
        }
    }
}
