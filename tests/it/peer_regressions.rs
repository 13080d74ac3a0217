//! Regressions other key codecs shipped, pinned here: a variable-length field followed by more
//! fields, escaped strings holding the terminator or low bytes and descending variable-length
//! fields keep key order, and range ends never increment a maximal byte.

use std::ops::Bound;

use pk_codec::{Layout, Value};

fn layout(spec: &str) -> Layout {
    spec.parse().unwrap_or_else(|e| panic!("`{spec}`: {e}"))
}

#[test]
fn a_variable_length_field_followed_by_more_fields_keeps_order() {
    // ordcode put ("ab", MAX) after ("abc", 0).
    for spec in [
        "s: str; n: u64",
        "s: str escaped; n: u64",
        "s: bytes; n: u64",
    ] {
        let l = layout(spec);
        let val = |s: &str| {
            if spec.contains("bytes") {
                Value::from(s.as_bytes())
            } else {
                Value::from(s)
            }
        };
        let a = l.encode(&[val("ab"), u64::MAX.into()]).unwrap();
        let b = l.encode(&[val("abc"), 0u64.into()]).unwrap();
        assert!(a < b, "`{spec}`: {a:?} !< {b:?}");
    }
}

#[test]
fn escaped_strings_holding_the_terminator_or_low_bytes_keep_order() {
    // bytekey2 and storekey 0.6 put ("a", MAX) after ("a\0\x01", 0).
    let l = layout("s: str escaped; n: u64");
    let a = l.encode(&["a".into(), u64::MAX.into()]).unwrap();
    let b = l.encode(&["a\0\u{1}".into(), 0u64.into()]).unwrap();
    assert!(a < b, "{a:?} !< {b:?}");
    // "ab" before "ab!" and "ab,": escaped bytes still sort above the end of a shorter value.
    let keys: Vec<String> = ["ab", "ab!", "ab,", "ab-", "ab."]
        .iter()
        .map(|s| l.encode(&[(*s).into(), 0u64.into()]).unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, keys);
}

#[test]
fn descending_variable_fields_invert_their_terminator() {
    // RisingWave returned wrong results when a descending field's terminator kept its order.
    let l = layout("s: str desc; n: u8");
    let keys: Vec<String> = ["b", "ab", "a", ""]
        .iter()
        .map(|s| l.encode(&[(*s).into(), 0u8.into()]).unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, keys, "descending: b, ab, a, then the empty string");
}

#[test]
fn range_ends_never_increment_a_maximal_byte() {
    // FoundationDB's prefix range computed an end by incrementing a last byte already at 0xff.
    // Here ends append the byte after the delimiter, so values ending in U+10FFFF (bytes f4 8f bf bf) work.
    let l = layout("s: str; n: u8");
    let top = "a\u{10FFFF}";
    let r = l
        .range(&[top.into()], Bound::Unbounded, Bound::Unbounded)
        .unwrap();
    assert_eq!(r.start, top);
    assert_eq!(r.end.as_deref(), Some("a\u{10FFFF}-"));
    for (s, inside) in [
        (top, true),
        ("a", false),
        ("a\u{10FFFF}\u{10FFFF}", false),
        ("b", false),
    ] {
        let key = l.encode(&[s.into(), 7u8.into()]).unwrap();
        assert_eq!(r.contains(&key), inside, "{s:?}");
    }
}
