//! Golden keys: `tests/golden/keys.jsonl` pins the key format byte for byte.
//!
//! Each line is one layout spec, one row of values and the key this version writes for them. The
//! test checks that every line still encodes to its key and its key still decodes to its values,
//! so a key written today decodes the same way in every later version.
//!
//! `tests/golden/keys_binary.jsonl` does the same for the binary form (every case with
//! `; form=binary`, keys in hex).
//!
//! Changing the file is changing the key format. To add cases, add them to [`cases`] and run
//! `PK_CODEC_BLESS=1 cargo test --test it golden`, which rewrites the file; review the diff: existing
//! lines must not change unless the format change is deliberate and documented.

use std::fmt::Write as _;

use pk_codec::{Layout, Value};
use serde_json::json;

const GOLDEN: &str = include_str!("../golden/keys.jsonl");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/keys.jsonl");

fn v(x: impl Into<Value>) -> Value {
    x.into()
}

fn floats32() -> Vec<Vec<Value>> {
    [
        f32::NEG_INFINITY,
        f32::MIN,
        -1.5,
        -0.0,
        0.0,
        f32::from_bits(1),
        1.5,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
    ]
    .into_iter()
    .map(|x| vec![Value::F32(x)])
    .collect()
}

fn floats64() -> Vec<Vec<Value>> {
    [
        f64::from_bits(0xfff8_0000_0000_0001),
        f64::NEG_INFINITY,
        -1.5,
        -0.0,
        0.0,
        f64::MIN_POSITIVE,
        1.5,
        f64::INFINITY,
        f64::NAN,
    ]
    .into_iter()
    .map(|x| vec![Value::F64(x)])
    .collect()
}

fn uuids() -> Vec<Vec<Value>> {
    [0, 0x0190_6a3c_1f2e_7a4b_8c9d_0e1f_2a3b_4c5d, u128::MAX]
        .into_iter()
        .map(|x| vec![Value::Uuid(x)])
        .collect()
}

/// Instants from the first to the last the form writes, in whole `unit`s of nanoseconds.
fn instants(unit: i128) -> Vec<Vec<Value>> {
    let first = -62_167_219_200 * 1_000_000_000;
    let last = 253_402_300_800 * 1_000_000_000 - unit;
    [
        first,
        -unit,
        0,
        1_795_343_160_123_456_789 / unit * unit,
        last,
    ]
    .into_iter()
    .map(|x| vec![Value::Timestamp(x)])
    .collect()
}

/// Every field form, order, option and prefix, at their boundaries.
fn cases() -> Vec<(&'static str, Vec<Vec<Value>>)> {
    let ints = |bits: u32| -> Vec<Vec<Value>> {
        let (min, max) = if bits == 128 {
            (i128::MIN, i128::MAX)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        };
        [min, -1, 0, 1, max]
            .into_iter()
            .map(|x| vec![Value::Int(x)])
            .collect()
    };
    let uints = |bits: u32| -> Vec<Vec<Value>> {
        let max = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        [0, 1, max]
            .into_iter()
            .map(|x| vec![Value::Uint(x)])
            .collect()
    };
    let strs = || -> Vec<Vec<Value>> {
        ["", "a", "a100", "a1001", "é€😀", "x-y.z/_"]
            .into_iter()
            .map(|s| vec![v(s)])
            .collect()
    };
    let any_strs = || -> Vec<Vec<Value>> {
        [
            "",
            "a,b",
            "a b",
            "-",
            "\0\u{1}",
            "tab\there",
            "10.10.0.1",
            "é",
        ]
        .into_iter()
        .map(|s| vec![v(s)])
        .collect()
    };
    let bytes = || -> Vec<Vec<Value>> {
        [&b""[..], b"\x00", b"\xff\x00\x7f"]
            .into_iter()
            .map(|b| vec![v(b)])
            .collect()
    };
    let card = |d: u32, s: &str, c: u64| vec![v(d), v(s), v(c)];
    vec![
        ("v: u8", uints(8)),
        ("v: u16", uints(16)),
        ("v: u32", uints(32)),
        ("v: u64", uints(64)),
        ("v: u128", uints(128)),
        ("v: u64 desc", uints(64)),
        (
            "v: u32 width=6",
            vec![vec![v(0u32)], vec![v(54u32)], vec![v(999_999u32)]],
        ),
        (
            "v: u32 width=6 desc",
            vec![vec![v(0u32)], vec![v(54u32)], vec![v(999_999u32)]],
        ),
        ("v: i8", ints(8)),
        ("v: i16", ints(16)),
        ("v: i32", ints(32)),
        ("v: i64", ints(64)),
        ("v: i128", ints(128)),
        ("v: i64 desc", ints(64)),
        (
            "v: i32 width=5",
            vec![
                vec![v(-10_000i32)],
                vec![v(-1i32)],
                vec![v(0i32)],
                vec![v(9_999i32)],
            ],
        ),
        ("v: str", strs()),
        ("v: str desc", strs()),
        ("v: str escaped", any_strs()),
        ("v: str escaped desc", any_strs()),
        ("v: bytes", bytes()),
        ("v: bytes desc", bytes()),
        ("v: bool", vec![vec![v(false)], vec![v(true)]]),
        ("v: bool desc", vec![vec![v(false)], vec![v(true)]]),
        ("v: char", vec![vec![v('a')], vec![v(',')], vec![v('😀')]]),
        (
            "v: char desc",
            vec![vec![v('a')], vec![v(',')], vec![v('😀')]],
        ),
        (
            "v: u32 optional; w: str optional",
            vec![
                vec![Value::Null, Value::Null],
                vec![v(7u32), v("")],
                vec![v(7u32), v("x")],
            ],
        ),
        (
            "v: i16 optional desc; w: bytes optional",
            vec![vec![Value::Null, Value::Null], vec![v(-7i16), v(&b""[..])]],
        ),
        (
            "v: str escaped optional; w: bool optional desc",
            vec![vec![Value::Null, Value::Null], vec![v(""), v(true)]],
        ),
        (
            "device_id: u32 width=6; seller_id: str; card_id: u64 width=4",
            vec![
                card(16, "a100", 6666),
                card(54, "a100", 6777),
                card(54, "a1001", 6777),
                card(167, "a101", 2834),
            ],
        ),
        (
            "device_id: u32 width=6; seller_id: str; card_id: u64",
            vec![card(54, "a100", 6777)],
        ),
        (
            "device_id: u32 width=6; seller_id: str; delimiter=' '",
            vec![vec![v(54u32), v("a100")]],
        ),
        (
            "device_id: u32 width=6; seller_id: str escaped; delimiter='\\x01'",
            vec![vec![v(54u32), v("a,100")]],
        ),
        (
            "device_id: u32 width=6; card_id: u64 width=6; delimiter=':'",
            vec![vec![v(54u32), v(6777u64)]],
        ),
        (
            "order_number: u64 width=6; hash=md5:4",
            (200_001..=200_005u64).map(|n| vec![v(n)]).collect(),
        ),
        (
            "order_number: u64 width=6; hash=md5:4:sep",
            vec![vec![v(200_001u64)]],
        ),
        (
            "order_number: u64 width=6; hash=md5:32:sep",
            vec![vec![v(200_001u64)]],
        ),
        (
            "order_number: u64 width=6; hash=xxh32:8",
            vec![vec![v(200_001u64)]],
        ),
        (
            "order_number: u64 width=6; hash=xxh64:16:sep",
            vec![vec![v(200_001u64)]],
        ),
        (
            "order_number: u64 width=6; hash=xxh3:4",
            vec![vec![v(200_001u64)], vec![v(200_002u64)]],
        ),
        ("ip: str; hash=md5:4:sep", vec![vec![v("10.10.0.1")]]),
        (
            "ts: u64 width=13; buckets=16:mod(ts):sep",
            vec![vec![v(1_700_000_000_000u64)], vec![v(1_700_000_000_017u64)]],
        ),
        (
            "ts: i64; buckets=16:mod(ts)",
            vec![vec![v(-1i64)], vec![v(33i64)]],
        ),
        (
            "a: u32; b: str; buckets=8:hash",
            vec![vec![v(1u32), v("x")], vec![v(2u32), v("x")]],
        ),
        (
            "a: u32; b: str; c: u8; buckets=100:hash(a,c):sep",
            vec![vec![v(1u32), v("x"), v(3u8)], vec![v(1u32), v("y"), v(3u8)]],
        ),
        // Added with the float, UUID and timestamp kinds and hash prefixes over leading fields
        // (format additions: every line above is unchanged).
        ("v: f32", floats32()),
        ("v: f32 desc", floats32()),
        ("v: f64", floats64()),
        ("v: f64 desc", floats64()),
        ("v: f64 optional", vec![vec![Value::Null], vec![v(0.5f64)]]),
        ("v: uuid", uuids()),
        ("v: uuid desc", uuids()),
        ("v: timestamp precision=s", instants(1_000_000_000)),
        ("v: timestamp", instants(1_000_000)),
        ("v: timestamp precision=us", instants(1_000)),
        ("v: timestamp precision=ns", instants(1)),
        ("v: timestamp desc", instants(1_000_000)),
        (
            "v: timestamp optional; w: u8",
            vec![vec![Value::Null, v(1u8)], vec![Value::Timestamp(0), v(1u8)]],
        ),
        (
            "device_id: u32 width=6; ts: u64 width=13; hash=md5(device_id):4:sep",
            vec![
                vec![v(54u32), v(1_700_000_000_000u64)],
                vec![v(54u32), v(1_700_000_000_001u64)],
                vec![v(167u32), v(1_700_000_000_000u64)],
            ],
        ),
        (
            "ip: str; ts: u64 width=13; seq: u8; hash=xxh3(ip,ts):8",
            vec![vec![v("10.10.0.1"), v(1_700_000_000_000u64), v(7u8)]],
        ),
        (
            "v: decimal width=8 scale=2",
            decimals(
                2,
                &[
                    "-99999.99",
                    "-12.5",
                    "-0.01",
                    "0",
                    "0.01",
                    "12.34",
                    "99999.99",
                ],
            ),
        ),
        (
            "v: decimal width=8 scale=2 desc",
            decimals(2, &["-12.5", "0", "12.34"]),
        ),
        (
            "v: decimal scale=0",
            decimals(
                0,
                &[
                    "-170141183460469231731687303715884105728",
                    "-1",
                    "0",
                    "170141183460469231731687303715884105727",
                ],
            ),
        ),
        (
            "v: decimal scale=38",
            decimals(
                38,
                &["-1.70141183460469231731687303715884105728", "0", "1.7"],
            ),
        ),
        (
            "v: decimal width=4 scale=3",
            decimals(3, &["-1", "-0.001", "0.999"]),
        ),
        (
            "v: decimal width=6 scale=2 optional; w: u8",
            vec![
                vec![Value::Null, v(1u8)],
                vec![Value::Decimal("-3.5".parse().unwrap()), v(1u8)],
            ],
        ),
        (
            "account: u32 width=6; amount: decimal width=10 scale=2 desc; buckets=8:mod(account):sep",
            vec![vec![v(54u32), Value::Decimal("199.99".parse().unwrap())]],
        ),
    ]
}

/// Decimals of `texts`, each at exactly `scale` digits after the point (as the keys decode).
fn decimals(scale: u8, texts: &[&str]) -> Vec<Vec<Value>> {
    texts
        .iter()
        .map(|t| {
            let d: pk_codec::Decimal = t.parse().unwrap();
            vec![Value::Decimal(d.rescale(scale).unwrap())]
        })
        .collect()
}

fn value_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Uint(x) => json!({ "uint": x.to_string() }),
        Value::Int(x) => json!({ "int": x.to_string() }),
        Value::Str(s) => json!({ "str": s }),
        Value::Bytes(b) => {
            json!({ "bytes": b.iter().fold(String::new(), |mut s, b| { let _ = write!(s, "{b:02x}"); s }) })
        }
        Value::Bool(b) => json!({ "bool": b }),
        Value::Char(c) => json!({ "char": c.to_string() }),
        // Floats by their bits, so that every NaN and both zeros are pinned exactly.
        Value::F32(x) => json!({ "f32_bits": format!("{:08x}", x.to_bits()) }),
        Value::F64(x) => json!({ "f64_bits": format!("{:016x}", x.to_bits()) }),
        Value::Uuid(x) => json!({ "uuid": format!("{x:032x}") }),
        Value::Timestamp(x) => json!({ "timestamp_ns": x.to_string() }),
        Value::Decimal(x) => json!({ "decimal": x.to_string() }),
        other => panic!("no golden form for {other:?}"),
    }
}

fn value_from_json(j: &serde_json::Value) -> Value {
    if j.is_null() {
        return Value::Null;
    }
    let (tag, x) = j
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("a tagged value");
    let text = || x.as_str().expect("a string");
    match tag.as_str() {
        "uint" => Value::Uint(text().parse().unwrap()),
        "int" => Value::Int(text().parse().unwrap()),
        "str" => Value::Str(text().to_owned()),
        "bytes" => Value::Bytes(
            (0..text().len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&text()[i..i + 2], 16).unwrap())
                .collect(),
        ),
        "bool" => Value::Bool(x.as_bool().unwrap()),
        "char" => Value::Char(text().chars().next().unwrap()),
        "f32_bits" => Value::F32(f32::from_bits(u32::from_str_radix(text(), 16).unwrap())),
        "f64_bits" => Value::F64(f64::from_bits(u64::from_str_radix(text(), 16).unwrap())),
        "uuid" => Value::Uuid(u128::from_str_radix(text(), 16).unwrap()),
        "timestamp_ns" => Value::Timestamp(text().parse().unwrap()),
        "decimal" => Value::Decimal(text().parse().unwrap()),
        other => panic!("unknown tag {other}"),
    }
}

fn render() -> String {
    let mut out = String::new();
    for (spec, rows) in cases() {
        let layout: Layout = spec.parse().unwrap_or_else(|e| panic!("`{spec}`: {e}"));
        for row in rows {
            let key = layout
                .encode(&row)
                .unwrap_or_else(|e| panic!("`{spec}` {row:?}: {e}"));
            let line = json!({ "layout": spec, "values": row.iter().map(value_json).collect::<Vec<_>>(), "key": key });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

#[test]
fn golden_keys_encode_and_decode_unchanged() {
    if std::env::var_os("PK_CODEC_BLESS").is_some() {
        std::fs::write(PATH, render()).expect("write the golden file");
        return;
    }
    check_golden(
        GOLDEN,
        "key",
        |layout, values| layout.encode(values).unwrap(),
        |layout, key| layout.decode(key).unwrap(),
    );
}

/// Every line of a golden file: its layout still encodes its values to its key (as the file
/// writes it, by `encode`) and decodes its key back to its values (by `decode`).
fn check_golden(
    file: &str,
    key_field: &str,
    encode: impl Fn(&Layout, &[Value]) -> String,
    decode: impl Fn(&Layout, &str) -> Vec<Value>,
) {
    let mut lines = 0;
    for (n, line) in file.lines().enumerate() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let spec = entry["layout"].as_str().unwrap();
        let layout: Layout = spec
            .parse()
            .unwrap_or_else(|e| panic!("line {}: `{spec}`: {e}", n + 1));
        let values: Vec<Value> = entry["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(value_from_json)
            .collect();
        let key = entry[key_field].as_str().unwrap();
        assert_eq!(
            encode(&layout, &values),
            key,
            "line {}: `{spec}` now encodes {values:?} differently",
            n + 1
        );
        assert_eq!(
            decode(&layout, key),
            values,
            "line {}: `{spec}` now decodes {key:?} differently",
            n + 1
        );
        lines += 1;
    }
    assert!(lines >= 100, "the golden file lost lines: {lines}");
}

#[test]
fn golden_file_covers_every_case() {
    if std::env::var_os("PK_CODEC_BLESS").is_some() {
        return;
    }
    assert_eq!(
        GOLDEN,
        render(),
        "tests/golden/keys.jsonl differs from the cases in tests/it/golden.rs: a case was added or the format changed; \
         run with PK_CODEC_BLESS=1 and review the diff"
    );
}

// ---- The binary form: `tests/golden/keys_binary.jsonl`, every case above in the binary form
// (the layout spec with `; form=binary`), keys as lower-case hex. Written once with
// `PK_CODEC_BLESS=1`; later versions must keep every line.

const GOLDEN_BINARY: &str = include_str!("../golden/keys_binary.jsonl");
const PATH_BINARY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/keys_binary.jsonl"
);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn render_binary() -> String {
    let mut out = String::new();
    for (spec, rows) in cases() {
        let spec = format!("{spec}; form=binary");
        let layout: Layout = spec.parse().unwrap_or_else(|e| panic!("`{spec}`: {e}"));
        for row in rows {
            let key = layout
                .encode_bytes(&row)
                .unwrap_or_else(|e| panic!("`{spec}` {row:?}: {e}"));
            let line = json!({ "layout": spec, "values": row.iter().map(value_json).collect::<Vec<_>>(), "key_hex": hex(&key) });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

#[test]
fn golden_binary_keys_encode_and_decode_unchanged() {
    if std::env::var_os("PK_CODEC_BLESS").is_some() {
        std::fs::write(PATH_BINARY, render_binary()).expect("write the binary golden file");
        return;
    }
    check_golden(
        GOLDEN_BINARY,
        "key_hex",
        |layout, values| hex(&layout.encode_bytes(values).unwrap()),
        |layout, key| {
            let bytes: Vec<u8> = (0..key.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&key[i..i + 2], 16).unwrap())
                .collect();
            layout.decode_bytes(&bytes).unwrap()
        },
    );
}

#[test]
fn the_binary_golden_file_covers_every_case() {
    if std::env::var_os("PK_CODEC_BLESS").is_some() {
        return;
    }
    let rendered = render_binary();
    for line in rendered.lines() {
        assert!(
            GOLDEN_BINARY.lines().any(|g| g == line),
            "a case has no line in the binary golden file (bless it): {line}"
        );
    }
}
