//! Every refusal of the codec, with its exact error.

use std::ops::Bound;

use pk_codec::{Error, Layout, MAX_BUCKETS, Precision, Rule, Value};

fn layout(spec: &str) -> Layout {
    spec.parse().unwrap_or_else(|e| panic!("`{spec}`: {e}"))
}

fn malformed(err: Error) -> (Option<String>, usize) {
    match err {
        Error::Malformed {
            field, position, ..
        } => (field, position),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

// ---- Encoding refusals ------------------------------------------------------------------------

#[test]
fn value_wider_than_its_width_names_field_value_and_width() {
    let err = layout("device_id: u32 width=6")
        .encode(&[1_000_000u32.into()])
        .unwrap_err();
    assert_eq!(
        err,
        Error::ValueTooWide {
            field: "device_id".into(),
            value: "1000000".into(),
            width: 6
        }
    );
    let err = layout("t: i32 width=3")
        .encode(&[(-101i32).into()])
        .unwrap_err();
    assert_eq!(
        err,
        Error::ValueTooWide {
            field: "t".into(),
            value: "-101".into(),
            width: 3
        }
    );
}

#[test]
fn plain_string_with_a_byte_below_the_delimiter_is_refused_with_its_position() {
    // With `,` as delimiter "ab!" would sort before "ab": `!` is below `,`.
    let err = layout("a: str; b: u8")
        .encode(&["ab!".into(), 1u8.into()])
        .unwrap_err();
    assert_eq!(
        err,
        Error::CharBelowDelimiter {
            field: "a".into(),
            ch: '!',
            offset: 2,
            delimiter: ','
        }
    );
    assert_eq!(
        err.to_string(),
        "field `a`: character '!' at byte 2 sorts at or below the delimiter ',' and would break key order; \
         remove it or declare the field escaped"
    );
    let err = layout("a: str").encode(&["x,y".into()]).unwrap_err();
    assert!(matches!(
        err,
        Error::CharBelowDelimiter {
            ch: ',',
            offset: 1,
            ..
        }
    ));
}

/// An `Error` returned from `main` prints its `Debug` form: a delimiter there reads as the
/// character it is (`delimiter: '_'`), not as a byte (`delimiter: 95`).
#[test]
fn an_errors_debug_form_shows_delimiters_as_characters() {
    let err = "a: str".parse::<pk_codec::Layout>().unwrap();
    let err = err.encode(&["x,y".into()]).unwrap_err();
    let debug = format!("{err:?}");
    assert!(debug.contains("delimiter: ','"), "{debug}");
    let broken = "a: str optional; delimiter='_'"
        .parse::<pk_codec::Layout>()
        .unwrap_err();
    let debug = format!("{broken:?}");
    assert!(
        debug.contains("delimiter: '_'") && debug.contains("floor: '='"),
        "{debug}"
    );
    let high = pk_codec::KeyShape::new(0x7f).validate().unwrap_err();
    assert!(
        format!("{high:?}").contains(r"delimiter: '\u{7f}'"),
        "{high:?}"
    );
}

#[test]
fn runtime_values_must_fit_the_field_type() {
    let l = layout("a: u8; b: i8; c: str");
    assert_eq!(
        l.encode(&[300u32.into(), 0i8.into(), "x".into()])
            .unwrap_err(),
        Error::ValueOutOfRange {
            field: "a".into(),
            value: "300".into(),
            ty: "u8"
        }
    );
    assert_eq!(
        l.encode(&[1u8.into(), (-129i32).into(), "x".into()])
            .unwrap_err(),
        Error::ValueOutOfRange {
            field: "b".into(),
            value: "-129".into(),
            ty: "i8"
        }
    );
    assert_eq!(
        l.encode(&[1u8.into(), 0i8.into(), 5u8.into()]).unwrap_err(),
        Error::TypeMismatch {
            field: "c".into(),
            expected: "a string",
            found: "an unsigned integer"
        }
    );
    assert_eq!(
        l.encode(&[1u8.into()]).unwrap_err(),
        Error::FieldCount {
            expected: 3,
            found: 1
        }
    );
    assert_eq!(
        l.encode(&[Value::Null, 0i8.into(), "x".into()])
            .unwrap_err(),
        Error::TypeMismatch {
            field: "a".into(),
            expected: "an integer",
            found: "null"
        }
    );
    // Signed values for unsigned fields (and back) are accepted when they fit.
    assert_eq!(
        l.encode(&[7i64.into(), 7u64.into(), "x".into()]).unwrap(),
        "007,0007,x"
    );
}

#[test]
fn keys_over_the_limit_are_refused_and_the_buffer_is_left_as_it_was() {
    let l = layout("s: str escaped");
    let long = "x".repeat(1025);
    assert_eq!(
        l.encode(&[long.as_str().into()]).unwrap_err(),
        Error::KeyTooLong {
            len: 1025,
            limit: 1024
        }
    );
    assert!(l.encode(&["x".repeat(1024).as_str().into()]).is_ok());
    let small = layout("s: str; max_len=8");
    let mut buf = String::from("kept|");
    let err = small
        .encode_into(&["123456789".into()], &mut buf)
        .unwrap_err();
    assert_eq!(err, Error::KeyTooLong { len: 9, limit: 8 });
    assert_eq!(buf, "kept|");
    small.encode_into(&["1234".into()], &mut buf).unwrap();
    assert_eq!(buf, "kept|1234");
}

#[test]
fn timestamps_out_of_the_form_are_refused_naming_field_and_value() {
    let layout: Layout = "at: timestamp".parse().unwrap();
    let err = layout.encode(&[Value::Timestamp(1)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "field `at`: value 1 ns since the epoch does not fit in a timestamp of whole milliseconds"
    );
    let err = layout
        .encode(&[Value::Timestamp(253_402_300_800_000_000_000)])
        .unwrap_err();
    assert!(err.to_string().contains("years 0000 to 9999"), "{err}");
    // Text that is no real instant is refused at its byte.
    assert!(matches!(
        layout.decode("2026-02-29T00:00:00.000Z"),
        Err(Error::Malformed { position: 8, .. })
    ));
    assert_eq!(
        "at: u64 precision=ms".parse::<Layout>().unwrap_err(),
        Error::BrokenRule {
            field: Some("at".into()),
            rule: Rule::PrecisionOnNonTimestamp
        }
    );
    assert_eq!(
        "at: timestamp precision=ns"
            .parse::<Layout>()
            .unwrap()
            .fields()[0]
            .spec()
            .precision(),
        Precision::Nanos
    );
}

// ---- Layout refusals --------------------------------------------------------------------------

/// The field and message of a layout refusal: a broken rule of the format (its message names the
/// rule) or another problem of the declaration.
fn layout_err(spec: &str) -> (Option<String>, String) {
    match spec.parse::<Layout>() {
        Err(Error::InvalidLayout { field, reason }) => (field, reason),
        Err(Error::BrokenRule { field, rule }) => {
            let message = rule.to_string();
            assert!(message.contains(rule.name()), "{message}");
            (field, message)
        }
        other => panic!("`{spec}`: expected InvalidLayout or BrokenRule, got {other:?}"),
    }
}

#[test]
fn delimiters_that_cannot_order_the_fields_are_refused() {
    let (field, reason) = layout_err("a: str escaped; delimiter='.'");
    assert_eq!(field.as_deref(), Some("a"));
    assert!(reason.contains("does not sort below '-'"), "{reason}");
    let (field, _) = layout_err("a: bytes; delimiter=':'");
    assert_eq!(field.as_deref(), Some("a"));
    let (field, _) = layout_err("a: i32 optional; delimiter='-'");
    assert_eq!(field.as_deref(), Some("a"));
    let (field, reason) = layout_err("a: u32; delimiter='a'");
    assert_eq!(field, None);
    assert!(reason.contains("letter or digit"), "{reason}");
    let (_, reason) = layout_err("a: u32; delimiter='é'");
    assert!(reason.contains("ASCII"), "{reason}");
    // Fixed-width fields accept any punctuation; descending strings need it below `a`.
    assert!(
        "a: i32; b: u8 desc; delimiter='~'"
            .parse::<Layout>()
            .is_ok()
    );
    assert!("a: str desc; delimiter='_'".parse::<Layout>().is_ok());
}

#[test]
fn bad_widths_names_and_prefixes_are_refused() {
    assert_eq!(layout_err("a: u32 width=0").0.as_deref(), Some("a"));
    assert_eq!(layout_err("a: i32 width=1").0.as_deref(), Some("a"));
    assert_eq!(layout_err("a: u32 width=41").0.as_deref(), Some("a"));
    assert!(
        layout_err("a: str width=3")
            .1
            .contains("width applies to integer fields")
    );
    assert!(
        layout_err("a: u32 escaped")
            .1
            .contains("escaped applies to str")
    );
    assert!(
        layout_err("a: u8; a: u8")
            .1
            .contains("used by an earlier field")
    );
    assert!(
        layout_err("9a: u8")
            .1
            .contains("does not start with a digit")
    );
    assert!(
        layout_err("a: u8; hash=md5:33")
            .1
            .contains("1 to 32 hex characters")
    );
    assert!(layout_err("a: u8; hash=xxh32:9").1.contains("1 to 8"));
    assert!(
        layout_err("a: u8; buckets=0:hash")
            .1
            .contains("1 to 10000 buckets, not 0")
    );
    assert!(
        layout_err("a: u8; buckets=4:mod(b)")
            .1
            .contains("`b`, which is not a field")
    );
    assert!(
        layout_err("a: str; buckets=4:mod(a)")
            .1
            .contains("integer field")
    );
    assert!(
        layout_err("a: u8; hash=md5:4; max_len=4")
            .1
            .contains("no room")
    );
    assert!(layout_err("").1.contains("at least one field"));
}

#[test]
fn spec_syntax_errors_point_at_the_byte() {
    let cases = [
        ("a: u33", 3, "unknown type"),
        ("a: u8 wide", 6, "unknown modifier"),
        ("a: u8; colour=red", 7, "unknown setting"),
        ("a: u8; hash=sha1:4", 12, "unknown hash"),
        ("a: u8; delimiter=,", 17, "quoted character"),
        ("a: u8; buckets=4", 15, "buckets=N:mod"),
        ("a: u8 width=x", 12, "width"),
        ("just words", 0, "expected `name: type`"),
    ];
    for (spec, at, what) in cases {
        match spec.parse::<Layout>() {
            Err(Error::InvalidSpec { position, reason }) => {
                assert_eq!(position, at, "`{spec}`: {reason}");
                assert!(reason.contains(what), "`{spec}`: {reason}");
            }
            other => panic!("`{spec}`: expected InvalidSpec, got {other:?}"),
        }
    }
}

#[test]
fn bucket_counts_above_the_maximum_are_refused_naming_the_rule() {
    for count in [MAX_BUCKETS + 1, 100_000_000, u32::MAX] {
        let err = format!("ts: u64; buckets={count}:mod(ts)")
            .parse::<Layout>()
            .unwrap_err();
        assert_eq!(
            err,
            Error::BrokenRule {
                field: None,
                rule: Rule::BucketCount { count }
            }
        );
        assert!(err.to_string().contains("bucket-count"), "{err}");
    }
    let max: Layout = format!("ts: u64; buckets={MAX_BUCKETS}:mod(ts)")
        .parse()
        .unwrap();
    assert_eq!(max.prefix_ranges(&[]).unwrap().len(), MAX_BUCKETS as usize);
}

#[test]
fn hashed_fields_must_lead_and_exist() {
    for spec in [
        "a: u8; b: u8; hash=md5(b):4",
        "a: u8; b: u8; c: u8; hash=md5(a,c):4",
    ] {
        assert_eq!(
            spec.parse::<Layout>().unwrap_err(),
            Error::BrokenRule {
                field: None,
                rule: Rule::HashLeadingFields
            },
            "{spec}"
        );
    }
    assert!("a: u8; b: u8; hash=md5(x):4".parse::<Layout>().is_err());
    let ok: Layout = "a: u8; b: u8; hash=md5(b,a):4".parse().unwrap();
    assert_eq!(ok.to_string(), "a: u8; b: u8; hash=md5(a,b):4");
}

// ---- Decoding refusals ------------------------------------------------------------------------

#[test]
fn malformed_keys_report_the_field_and_byte_position() {
    let l = layout("device_id: u32 width=6; seller_id: str; card_id: u64 width=4");
    // A short fixed-width field is caught where its digits run out.
    assert_eq!(
        malformed(l.decode("00054,a100,6777").unwrap_err()),
        (Some("device_id".into()), 5)
    );
    assert_eq!(
        malformed(l.decode("0000x4,a100,6777").unwrap_err()),
        (Some("device_id".into()), 4)
    );
    assert_eq!(
        malformed(l.decode("000054,a100").unwrap_err()),
        (Some("card_id".into()), 11)
    );
    assert_eq!(
        malformed(l.decode("000054,a100,677").unwrap_err()),
        (Some("card_id".into()), 12)
    );
    assert_eq!(
        malformed(l.decode("000054,a100,6777,9").unwrap_err()),
        (None, 16)
    );
    assert_eq!(
        malformed(l.decode("000054,a!00,6777").unwrap_err()),
        (Some("seller_id".into()), 8)
    );
    let err = l.decode("000054,a100,67x7").unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed key at byte 14 (field `card_id`): expected a digit, found 'x'"
    );
}

#[test]
fn bad_escapes_signs_and_descending_text_are_malformed() {
    assert_eq!(
        malformed(layout("s: str escaped").decode("ab-4").unwrap_err()),
        (Some("s".into()), 2)
    );
    assert_eq!(
        malformed(layout("s: str escaped").decode("ab-61").unwrap_err()),
        (Some("s".into()), 2)
    );
    assert_eq!(
        malformed(layout("s: str desc").decode("jo").unwrap_err()),
        (Some("s".into()), 2)
    );
    assert_eq!(
        malformed(layout("b: bytes").decode("0").unwrap_err()),
        (Some("b".into()), 1)
    );
    assert_eq!(
        malformed(layout("n: i8").decode("+127").unwrap_err()),
        (Some("n".into()), 0)
    );
    assert_eq!(
        malformed(layout("x: bool").decode("2").unwrap_err()),
        (Some("x".into()), 0)
    );
    assert_eq!(
        malformed(layout("c: char").decode("ab").unwrap_err()),
        (Some("c".into()), 0)
    );
    // Descending text that is not UTF-8 (0xff) is refused, not turned into a string.
    assert!(matches!(
        layout("s: str desc").decode("aaz").unwrap_err(),
        Error::Malformed { .. }
    ));
}

#[test]
fn numbers_outside_the_type_are_refused_at_their_byte_not_truncated() {
    assert_eq!(
        layout("v: u8").decode("256").unwrap_err(),
        Error::Malformed {
            field: Some("v".into()),
            position: 0,
            reason: "value 256 does not fit in u8".into(),
        }
    );
    assert_eq!(
        layout("a: u8; v: i8").decode("001,-871").unwrap_err(),
        Error::Malformed {
            field: Some("v".into()),
            position: 4,
            reason: "value -129 does not fit in i8".into(),
        }
    );
    assert_eq!(
        malformed(layout("v: u64").decode("99999999999999999999").unwrap_err()),
        (Some("v".into()), 0)
    );
}

#[test]
fn wrong_prefixes_are_refused() {
    let l = layout("order_number: u64 width=6; hash=md5:4");
    assert_eq!(
        l.decode("0000200001").unwrap_err(),
        Error::PrefixMismatch {
            position: 0,
            found: "0000".into(),
            expected: "ee8f".into()
        }
    );
    assert_eq!(malformed(l.decode("ee8F200001").unwrap_err()), (None, 3));
    assert_eq!(malformed(l.decode("ee8").unwrap_err()), (None, 3));
    let sep = layout("order_number: u64 width=6; hash=md5:4:sep");
    assert_eq!(malformed(sep.decode("ee8f200001").unwrap_err()), (None, 4));
    let b = layout("ts: u64 width=4; buckets=16:mod(ts):sep");
    assert_eq!(
        b.decode("00,0017").unwrap_err(),
        Error::PrefixMismatch {
            position: 1,
            found: "00".into(),
            expected: "01".into()
        }
    );
    assert_eq!(b.decode("01,0017").unwrap(), vec![Value::Uint(17)]);
}

#[test]
fn ranges_over_a_hash_prefix_are_refused_with_the_way_out() {
    let l = layout("order_number: u64; hash=xxh3:4");
    let err = l
        .range(&[], Bound::Unbounded, Bound::Unbounded)
        .unwrap_err();
    assert!(
        matches!(&err, Error::RangeUnsupported { reason } if reason.contains("bucket prefix")),
        "{err}"
    );
    let b = layout("ts: u64; buckets=4:hash");
    assert!(matches!(
        b.range(&[], Bound::Unbounded, Bound::Unbounded),
        Err(Error::RangeUnsupported { .. })
    ));
    assert_eq!(
        b.ranges(&[], Bound::Unbounded, Bound::Unbounded)
            .unwrap()
            .len(),
        4
    );
}

// ---- Config file refusals ----------------------------------------------------------------------

#[test]
fn bad_config_files_say_what_is_wrong() {
    let err =
        serde_json::from_str::<Layout>(r#"{"fields": [{"name": "a", "type": "u32", "width": 0}]}"#)
            .unwrap_err();
    assert!(
        err.to_string()
            .contains("field `a`: width 0 is out of range"),
        "{err}"
    );
    let err = serde_json::from_str::<Layout>(r#"{"fields": [{"name": "a", "type": "int"}]}"#)
        .unwrap_err();
    assert!(err.to_string().contains("unknown type \"int\""), "{err}");
    let err =
        serde_json::from_str::<Layout>(r#"{"fields": [{"name": "a", "type": "u8", "colour": 1}]}"#)
            .unwrap_err();
    assert!(err.to_string().contains("unknown field `colour`"), "{err}");
    let err =
        toml::from_str::<Layout>("delimiter = \"ab\"\n[[fields]]\nname = \"a\"\ntype = \"u8\"\n")
            .unwrap_err();
    assert!(err.to_string().contains("a character"), "{err}");
}
