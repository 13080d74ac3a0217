//! The decimal kind (`decimal scale=s`): its refusals, its three layout forms, its text, and
//! `pk` with it. Its order, round trip and damaged-key properties run with every other kind in
//! `codec_props.rs` (and `codec_props/accepted_space.rs`, out-of-range scales included); its
//! keys are pinned in `tests/golden/keys.jsonl`.

use pk_codec::{Decimal, Error, FieldSpec, Kind, Layout, Rule, Value};
use proptest::prelude::*;

use crate::support::{pk, stderr, stdout};

fn dec(text: &str) -> Value {
    Value::Decimal(text.parse().unwrap())
}

#[test]
fn a_value_with_more_digits_than_the_scale_is_refused_never_rounded() {
    let layout: Layout = "amount: decimal width=8 scale=2".parse().unwrap();
    let err = layout.encode(&[dec("1.005")]).unwrap_err();
    assert!(
        matches!(&err, Error::ValueOutOfRange { field, value, .. } if field == "amount" && value == "1.005"),
        "{err:?}"
    );
    assert!(err.to_string().contains("never rounded"), "{err}");
    // Trailing zeros are no digits of the number.
    assert_eq!(layout.encode(&[dec("1.0500")]).unwrap(), "000001.05");
    // Too many digits for the width: named with the number, not its units.
    let err = layout.encode(&[dec("100000")]).unwrap_err();
    assert!(
        matches!(&err, Error::ValueTooWide { value, width: 8, .. } if value == "100000"),
        "{err:?}"
    );
    // Integers are decimals; other kinds are not.
    assert_eq!(layout.encode(&[Value::Int(-3)]).unwrap(), "-99997.00");
    let err = layout.encode(&[Value::Str("1".into())]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TypeMismatch {
                expected: "a decimal",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_scale_the_width_cannot_hold_is_refused_naming_the_rule() {
    let err = "amount: decimal width=4 scale=4"
        .parse::<Layout>()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BrokenRule {
                rule: Rule::ParamRange {
                    param: "scale",
                    value: 4,
                    min: 0,
                    max: 3
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("param-range"), "{err}");
    let err = "amount: decimal scale=39".parse::<Layout>().unwrap_err();
    assert!(
        err.to_string().contains("scale=39 is out of range"),
        "{err}"
    );
    let err = "amount: u32 scale=2".parse::<Layout>().unwrap_err();
    assert!(err.to_string().contains("unknown modifier"), "{err}");
    let err = "amount: decimal scale=2 scale=3"
        .parse::<Layout>()
        .unwrap_err();
    assert!(err.to_string().contains("scale"), "{err}");
    let err = "amount: decimal width=41".parse::<Layout>().unwrap_err();
    assert!(err.to_string().contains("width-range"), "{err}");
    // The same refusals through a config.
    let err = serde_json::from_str::<Layout>(
        r#"{"fields": [{"name": "amount", "type": "decimal", "width": 4, "scale": 4}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("param-range"), "{err}");
    let err = serde_json::from_str::<Layout>(
        r#"{"fields": [{"name": "amount", "type": "decimal", "scale": "two"}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `scale`"), "{err}");
}

#[test]
fn the_spec_the_config_and_the_builder_agree() {
    let text: Layout = "id: u8; amount: decimal width=10 scale=2 desc optional"
        .parse()
        .unwrap();
    assert_eq!(
        text.to_string(),
        "id: u8; amount: decimal width=10 desc optional scale=2"
    );
    let json = serde_json::to_string(&text).unwrap();
    assert!(
        json.contains(r#""type":"decimal""#) && json.contains(r#""scale":2"#),
        "{json}"
    );
    let back: Layout = serde_json::from_str(&json).unwrap();
    let toml_back: Layout = toml::from_str(&toml::to_string(&text).unwrap()).unwrap();
    let built = Layout::builder()
        .field(
            "id",
            FieldSpec::new(Kind::Uint {
                bits: pk_codec::IntBits::B8,
            }),
        )
        .field(
            "amount",
            FieldSpec::new(Kind::Decimal { scale: 2 })
                .with_width(10)
                .descending()
                .optional(),
        )
        .build()
        .unwrap();
    let row = [Value::Uint(7), dec("-0.5")];
    let key = text.encode(&row).unwrap();
    for other in [&back, &toml_back, &built] {
        assert_eq!(other.encode(&row).unwrap(), key);
    }
    assert_eq!(text.decode(&key).unwrap(), row);
}

#[test]
fn text_values_parse_as_pk_reads_them() {
    let spec = FieldSpec::new(Kind::Decimal { scale: 2 });
    assert_eq!(spec.parse_value("amount", "-12.30").unwrap(), dec("-12.3"));
    for bad in ["", "1e3", "12,5", "- 1", "1.2.3", ".", "0x10"] {
        let err = spec.parse_value("amount", bad).unwrap_err();
        assert!(
            matches!(&err, Error::BadValueText { field, ty: "decimal", .. } if field == "amount"),
            "{bad:?}: {err:?}"
        );
    }
    let o = pk(&[
        "encode",
        "--spec",
        "amount: decimal width=8 scale=2",
        "-12.5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "-99987.50\n");
    let o = pk(&[
        "decode",
        "--spec",
        "amount: decimal width=8 scale=2",
        "-99987.50",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"amount":"-12.50"}"#);
    let o = pk(&[
        "encode",
        "--spec",
        "amount: decimal width=8 scale=2",
        "1.005",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("never rounded"), "{}", stderr(&o));
}

proptest! {
    /// Decimals order as their numbers, whatever their scales; equal numbers are equal values
    /// with equal hashes; text round-trips.
    #[test]
    fn decimals_compare_as_numbers(
        a in any::<i64>(), sa in 0u8..=18, b in any::<i64>(), sb in 0u8..=18,
    ) {
        let (da, db) = (Decimal::new(a.into(), sa).unwrap(), Decimal::new(b.into(), sb).unwrap());
        // Exact rationals: a / 10^sa against b / 10^sb, cross-multiplied in i128 (|a|, |b| < 2^63,
        // 10^18 < 2^60: no overflow).
        let exact = (i128::from(a) * 10i128.pow(u32::from(sb))).cmp(&(i128::from(b) * 10i128.pow(u32::from(sa))));
        prop_assert_eq!(da.cmp(&db), exact);
        if exact.is_eq() {
            use std::hash::BuildHasher;
            let s = std::hash::RandomState::new();
            prop_assert_eq!(s.hash_one(da), s.hash_one(db));
        }
        prop_assert_eq!(da.to_string().parse::<Decimal>().unwrap(), da);
        prop_assert_eq!(da.to_string().parse::<Decimal>().unwrap().scale(), sa);
    }
}

proptest! {
    /// Every decimal's text reads back to it: any units an i128 holds (its minimum included,
    /// whose magnitude an i128 does not hold) at any scale.
    #[test]
    fn every_decimal_reads_back_from_its_text(
        units in prop_oneof![any::<i128>(), Just(i128::MIN), Just(i128::MAX)],
        scale in 0u8..=Decimal::MAX_SCALE,
    ) {
        let d = Decimal::new(units, scale).unwrap();
        let back: Decimal = d.to_string().parse().unwrap();
        prop_assert_eq!((back.units(), back.scale()), (units, scale), "{}", d);
    }
}
