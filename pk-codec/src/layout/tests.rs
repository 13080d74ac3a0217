//! The direct paths against the general one.
//!
//! A layout writes and reads a key three ways: the whole key by the direct paths
//! ([`Plan::try_write_direct`], [`Plan::try_read_direct`]), field by field with each field's
//! direct path ([`Plan::write`], [`Plan::read`]), and every field by the general path. The first
//! two must answer exactly what the third answers (the same key or values, or the same error; an
//! encoding's output untouched on error, a decoding's vector empty) for every value and every
//! text, accepted or not, and `decode_into` the same whatever its vector held before (nothing, the
//! right kinds, other kinds, too many or too few values, what the keys before and their errors
//! left). Checked here
//! over every unsigned width the direct paths take (1 to 20) and their neighbours, both orders,
//! every integer size, values at and around the limits, mismatched values, strings at and around
//! the delimiter, optional, signed, escaped and bucketed fields, prefixes, a tight length limit,
//! and every text one edit away from each key.

use super::Layout;
use super::plan::Plan;
use crate::kinds::Value;

/// The layout as parsed (whole-key direct paths where it has them), field by field, and
/// general.
fn three(layout: &Layout) -> [Layout; 3] {
    let by_field = Layout {
        plan: layout.plan.clone().by_field(),
        ..layout.clone()
    };
    let general = Layout {
        plan: Plan::general(&layout.fields, &layout.bucket, &layout.shape),
        ..layout.clone()
    };
    [layout.clone(), by_field, general]
}

/// Encodes `values` each way, into an empty string and after existing text, and checks that the
/// answers agree; answers the key, if any.
fn check_encode(ways: &[Layout; 3], values: &[Value]) -> Option<String> {
    let answer = |layout: &Layout, before: &str| {
        let mut out = String::from(before);
        let result = layout.encode_into(values, &mut out);
        if result.is_err() {
            assert_eq!(out, before, "{layout}: output changed on error, {values:?}");
        }
        result.map(|()| out)
    };
    let general = answer(&ways[2], "");
    for way in &ways[..2] {
        assert_eq!(answer(way, ""), general, "{way}: encoding {values:?}");
        let after = answer(way, "xy");
        assert_eq!(
            after,
            general.clone().map(|k| format!("xy{k}")),
            "{way}: after text, {values:?}"
        );
    }
    general.ok()
}

/// What a vector may hold before [`Layout::decode_into`] overwrites it: nothing, a string,
/// `previous` (the values of another key: the right kinds), `previous` with more values, with
/// fewer, and with every value of another kind (strings where it has numbers, numbers where it
/// has strings).
fn befores(previous: &[Value]) -> Vec<Vec<Value>> {
    let mut longer = previous.to_vec();
    longer.extend([Value::Uint(1), Value::from("extra")]);
    let shorter = previous[..previous.len().saturating_sub(1)].to_vec();
    let other_kinds = previous
        .iter()
        .map(|v| match v {
            Value::Str(_) => Value::Uint(3),
            _ => Value::from("a string longer than any in the keys"),
        })
        .collect();
    vec![
        Vec::new(),
        vec![Value::from("kept")],
        previous.to_vec(),
        longer,
        shorter,
        other_kinds,
    ]
}

/// Decodes `key` each way: by [`Layout::decode`], and by [`Layout::decode_into`] over each of
/// [`befores`]`(previous)` (over `previous` alone unless `every_before`) and over `reused` (one
/// vector per way, carried from key to key, errors included); checks that every answer is the general path's fresh answer, and that a vector
/// is empty after an error. Answers the general path's values, if any.
fn check_decode(
    ways: &[Layout; 3],
    key: &str,
    previous: &[Value],
    every_before: bool,
    reused: &mut [Vec<Value>; 3],
) -> Option<Vec<Value>> {
    let general = ways[2].decode(key);
    for (way, reused) in ways.iter().zip(reused) {
        assert_eq!(way.decode(key), general, "{way}: decode {key:?}");
        let answer = |values: &mut Vec<Value>, before: &str| {
            let result = way.decode_into(key, values);
            assert_eq!(
                result.clone().map(|()| values.clone()),
                general,
                "{way}: decode_into {key:?} over {before}"
            );
            if result.is_err() {
                assert!(
                    values.is_empty(),
                    "{way}: {values:?} left by an error, {key:?}"
                );
            }
        };
        let befores = if every_before {
            befores(previous)
        } else {
            vec![previous.to_vec()]
        };
        for mut values in befores {
            let before = format!("{values:?}");
            answer(&mut values, &before);
        }
        answer(reused, "the vector of the keys before");
    }
    general.ok()
}

/// Every text one edit away from `key`: cut short, a character replaced, inserted or removed,
/// text appended.
fn edits(key: &str, delimiter: char) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let fill = ['0', '9', 'a', delimiter, '\u{1}', '-', '~', 'é'];
    let mut out = Vec::new();
    for i in 0..=chars.len() {
        out.push(chars[..i].iter().collect());
        for &c in &fill {
            let mut inserted = chars.clone();
            inserted.insert(i, c);
            out.push(inserted.into_iter().collect());
            if i < chars.len() && chars[i] != c {
                let mut replaced = chars.clone();
                replaced[i] = c;
                out.push(replaced.into_iter().collect());
            }
        }
        if i < chars.len() {
            let mut removed = chars.clone();
            removed.remove(i);
            out.push(removed.into_iter().collect());
        }
    }
    out.push(format!("{key}{delimiter}"));
    out.push(format!("{key}{delimiter}0"));
    out
}

/// Values to try for an unsigned integer field of `bits` bits at `width`: both limits of the
/// width and of the type and their neighbours, as `Uint` and as `Int`, and mismatched kinds.
fn uint_candidates(bits: u32, width: u32) -> Vec<Value> {
    let type_max = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let width_max = 10u128.checked_pow(width).map_or(u128::MAX, |p| p - 1);
    let mut numbers = vec![
        0u128,
        1,
        7,
        54,
        u128::from(u64::MAX),
        u128::from(u64::MAX) + 1,
        u128::MAX,
    ];
    for limit in [type_max, width_max] {
        numbers.extend([limit.saturating_sub(1), limit, limit.saturating_add(1)]);
    }
    numbers.sort_unstable();
    numbers.dedup();
    let mut values: Vec<Value> = numbers.iter().map(|&n| Value::Uint(n)).collect();
    values.extend(
        numbers
            .iter()
            .filter_map(|&n| i128::try_from(n).ok())
            .map(Value::Int),
    );
    values.extend([
        Value::Int(-1),
        Value::Int(i128::MIN),
        Value::from("7"),
        Value::Null,
        Value::Bool(true),
    ]);
    values
}

/// Strings to try for a string field: empty, short, long (past one 8-byte word), with the
/// delimiter, with bytes just below and just above it, non-ASCII; and mismatched kinds.
fn str_candidates(delimiter: char) -> Vec<Value> {
    let d = u8::try_from(delimiter).expect("an ASCII delimiter");
    let below = char::from(d - 1);
    let above = char::from(d + 1);
    let mut values: Vec<Value> = [
        String::new(),
        "a".into(),
        "a100".into(),
        "a1234567".into(),
        "a123456789abcdefgh".into(),
        format!("a{delimiter}b"),
        format!("a123456789{delimiter}"),
        format!("{below}"),
        format!("ab{below}cdefghij"),
        format!("{above}{above}"),
        "é~".into(),
        "ab c".into(),
        "a\u{0}".into(),
    ]
    .into_iter()
    .map(Value::Str)
    .collect();
    values.extend([Value::Uint(5), Value::Null, Value::Bytes(vec![1])]);
    values
}

/// Every combination of one candidate per field, or (over `limit` combinations) each candidate
/// of each field once with the first candidates of the others, and a diagonal.
fn combinations(candidates: &[Vec<Value>], limit: usize) -> Vec<Vec<Value>> {
    let total: usize = candidates.iter().map(Vec::len).product();
    if total <= limit {
        let mut all = vec![Vec::new()];
        for field in candidates {
            all = all
                .into_iter()
                .flat_map(|row: Vec<Value>| {
                    field.iter().map(move |v| {
                        let mut row = row.clone();
                        row.push(v.clone());
                        row
                    })
                })
                .collect();
        }
        return all;
    }
    let mut rows = Vec::new();
    let longest = candidates.iter().map(Vec::len).max().unwrap_or(0);
    for (f, field) in candidates.iter().enumerate() {
        for v in field {
            let mut row: Vec<Value> = candidates.iter().map(|c| c[0].clone()).collect();
            row[f] = v.clone();
            rows.push(row);
        }
    }
    for i in 0..longest {
        rows.push(candidates.iter().map(|c| c[i % c.len()].clone()).collect());
    }
    rows
}

/// Checks `spec` over its candidate values: every encoding agrees, and every decoding of every
/// key written and of the first keys' edits. Answers how many keys were written.
fn check_layout(spec: &str, candidates: &[Vec<Value>], edited_keys: usize) -> usize {
    let layout: Layout = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
    let delimiter = char::from(layout.shape.delimiter());
    let ways = three(&layout);
    let mut keys = Vec::new();
    for values in combinations(candidates, 4000) {
        if let Some(key) = check_encode(&ways, &values) {
            keys.push(key);
        }
        // One value too few and one too many.
        check_encode(&ways, &values[1..]);
        let mut more = values.clone();
        more.push(Value::Uint(0));
        check_encode(&ways, &more);
    }
    let mut reused: [Vec<Value>; 3] = Default::default();
    let mut previous = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let values = check_decode(&ways, key, &previous, true, &mut reused)
            .unwrap_or_else(|| panic!("{spec}: {key:?} does not decode"));
        if i < edited_keys {
            for edited in edits(key, delimiter) {
                check_decode(&ways, &edited, &values, false, &mut reused);
            }
        }
        previous = values;
    }
    keys.len()
}

#[test]
fn student_card_layout_takes_the_whole_key_direct_paths() {
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64; order_number: u64"
        .parse()
        .unwrap();
    assert!(layout.plan.is_direct());
    for spec in [
        "a: u32; b: i32",
        "a: u32; b: str optional",
        "a: u32 width=21",
        "a: u128 width=6",
        "a: str desc",
        "a: str escaped",
        "a: u32; hash=md5:4",
        "a: u32; buckets=4:mod(a)",
    ] {
        let layout: Layout = spec.parse().unwrap();
        assert!(!layout.plan.is_direct(), "{spec}");
    }
}

#[test]
fn every_unsigned_width_and_order_agrees_with_the_general_path() {
    for bits in [8u32, 16, 32, 64, 128] {
        for width in 1u32..=22 {
            for desc in ["", " desc"] {
                let field = format!("n: u{bits} width={width}{desc}");
                let n = uint_candidates(bits, width);
                assert!(check_layout(&field, std::slice::from_ref(&n), usize::MAX) > 0);
                // After a field (the delimiter is written and read with the digits), before one,
                // and between strings.
                let s = str_candidates(',');
                let spec = format!("s: str; {field}; m: u8 width=3");
                let m = uint_candidates(8, 3);
                assert!(check_layout(&spec, &[s.clone(), n.clone(), m], 3) > 0);
                let spec = format!("{field}; s: str; t: str");
                assert!(check_layout(&spec, &[n, s.clone(), s], 3) > 0);
            }
        }
    }
}

#[test]
fn strings_and_delimiters_agree_with_the_general_path() {
    for delimiter in [',', '\u{1}', '/', '!'] {
        let lit = match delimiter {
            '\u{1}' => "'\\x01'".to_owned(),
            d => format!("'{d}'"),
        };
        let s = str_candidates(delimiter);
        let n = uint_candidates(32, 6);
        let spec = format!("a: str; b: str; c: u32 width=6; delimiter={lit}");
        assert!(check_layout(&spec, &[s.clone(), s.clone(), n.clone()], 40) > 0);
        let spec = format!("c: u32 width=6; a: str; delimiter={lit}");
        assert!(check_layout(&spec, &[n, s], 40) > 0);
    }
}

#[test]
fn the_student_card_agrees_with_the_general_path_at_every_length_limit() {
    let device = uint_candidates(32, 6);
    let seller = str_candidates(',');
    let wide = uint_candidates(64, 20);
    for max_len in [1, 6, 7, 11, 12, 30, 48, 49, 50, 1024] {
        let spec = format!(
            "device_id: u32 width=6; seller_id: str; card_id: u64; order_number: u64 desc; max_len={max_len}"
        );
        let written = check_layout(
            &spec,
            &[device.clone(), seller.clone(), wide.clone(), wide.clone()],
            6,
        );
        // The shortest key is 49 bytes: the longer ones are refused at the lower limits.
        assert_eq!(written > 0, max_len >= 49, "{spec}");
    }
}

#[test]
fn fields_without_a_direct_path_agree_with_the_general_path() {
    let n = uint_candidates(32, 6);
    let s = str_candidates(',');
    let mut signed: Vec<Value> = [
        0i128,
        5,
        -5,
        999,
        -1000,
        9999,
        i128::from(i32::MAX),
        i128::MIN,
    ]
    .into_iter()
    .map(Value::Int)
    .collect();
    signed.extend([Value::Uint(7), Value::Uint(u128::MAX), Value::from("x")]);
    let mut optional = n.clone();
    optional.push(Value::Null);
    let mut optional_str = s.clone();
    optional_str.push(Value::Null);
    for spec in [
        "a: u32 width=6; b: i32 width=5; c: u32 width=6",
        "a: u32 width=6 optional; b: u32 width=6; c: str optional",
        "a: u32 width=6; b: str escaped; c: u32 width=6",
        "a: u32 width=6; b: str desc; c: u32 width=6",
        "a: u32 width=6; b: str; c: u32 width=6; buckets=8:mod(c):sep",
        "a: u32 width=6; b: str; c: u32 width=6; buckets=8:hash(a,b)",
        "a: u32 width=6; b: str; c: u32 width=6; hash=md5:4:sep",
        "a: u32 width=6; b: str; c: u32 width=6; hash=xxh3(a,b):8",
    ] {
        let b = if spec.contains("i32") {
            signed.clone()
        } else if spec.contains("b: u32 width=6;") {
            n.clone()
        } else if spec.contains("str optional") {
            optional_str.clone()
        } else {
            s.clone()
        };
        let a = if spec.contains("optional") {
            optional.clone()
        } else {
            n.clone()
        };
        let c = if spec.contains("c: str") {
            optional_str.clone()
        } else {
            n.clone()
        };
        assert!(check_layout(spec, &[a, b, c], 8) > 0, "{spec}");
    }
}

#[test]
fn strings_of_every_length_agree_with_the_general_path() {
    // Every length the whole-key path copies in its own way (1 to 3 bytes, 4 to 8, 9 to 16, more)
    // and the lengths around, in ASCII and with multi-byte characters at either end.
    let mut s: Vec<Value> = Vec::new();
    for len in 0..=40 {
        let ascii: String = (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        s.push(Value::Str(ascii.clone()));
        if len >= 2 {
            s.push(Value::Str(format!("é{}", &ascii[2..])));
            s.push(Value::Str(format!("{}é", &ascii[2..])));
        }
    }
    let n = uint_candidates(8, 3);
    for spec in ["s: str; n: u8 width=3", "n: u8 width=3; s: str; t: str"] {
        let candidates = if spec.starts_with('s') {
            vec![s.clone(), n.clone()]
        } else {
            vec![n.clone(), s.clone(), s.clone()]
        };
        assert!(check_layout(spec, &candidates, 2) > 0, "{spec}");
    }
}
