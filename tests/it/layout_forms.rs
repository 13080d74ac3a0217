//! A runtime layout's forms agree: built in code, parsed from a text spec, or loaded from a JSON or
//! TOML config file, the same declaration gives the same `Layout` and the same keys.
//!
//! Config files at their limits: extreme numbers are refused, and many fields, or a prefix that
//! names many fields, load in linear time.

use std::time::Duration;

use pk_codec::{FieldSpec, HashAlg, IntBits, Kind, Layout, Separator, Value};

use crate::support;

fn layout(spec: &str) -> Layout {
    spec.parse().unwrap_or_else(|e| panic!("`{spec}`: {e}"))
}

#[test]
fn layouts_load_from_json_and_toml_and_match_the_text_spec() {
    let json = r#"{
        "delimiter": ",",
        "prefix": { "kind": "buckets", "count": 16, "by": "modulo", "fields": ["ts"], "separator": true },
        "fields": [
            { "name": "ts", "type": "u64", "width": 13 },
            { "name": "device_id", "type": "u32", "width": 6, "order": "desc" }
        ]
    }"#;
    let toml_text = r#"
        delimiter = ","
        [prefix]
        kind = "buckets"
        count = 16
        by = "modulo"
        fields = ["ts"]
        separator = true
        [[fields]]
        name = "ts"
        type = "u64"
        width = 13
        [[fields]]
        name = "device_id"
        type = "u32"
        width = 6
        order = "desc"
    "#;
    let from_json: Layout = serde_json::from_str(json).unwrap();
    let from_toml: Layout = toml::from_str(toml_text).unwrap();
    let from_spec = layout("ts: u64 width=13; device_id: u32 width=6 desc; buckets=16:mod(ts):sep");
    assert_eq!(from_json, from_spec);
    assert_eq!(from_toml, from_spec);
    assert_eq!(
        from_spec.to_string(),
        "ts: u64 width=13; device_id: u32 width=6 desc; buckets=16:mod(ts):sep"
    );
    let key = from_toml
        .encode(&[1_700_000_000_017u64.into(), 54u32.into()])
        .unwrap();
    assert_eq!(key, "01,1700000000017,999945");
}

#[test]
fn builder_and_spec_give_the_same_layout() {
    let built = Layout::builder()
        .field(
            "order_number",
            FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(6),
        )
        .hash_prefix(HashAlg::Md5, 4, Separator::After)
        .build()
        .unwrap();
    assert_eq!(built, layout("order_number: u64 width=6; hash=md5:4:sep"));
    assert_eq!(built.encode(&[200_001u64.into()]).unwrap(), "ee8f,200001");
}

/// A prefix that names many fields loads in linear time, as a layout of many fields does
/// (`layout_config_with_many_fields_loads_in_linear_time`): each name is looked up by a map, not
/// by a scan of the fields, and each field's part in the prefix is a flag, not a search of the
/// named list.
#[test]
fn prefixes_naming_many_fields_load_in_linear_time() {
    use std::time::Duration;
    let n = 40_000;
    let fields: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"f{i}","type":"u8"}}"#))
        .collect();
    let names: Vec<String> = (0..n).map(|i| format!(r#""f{i}""#)).collect();
    for prefix in [
        format!(
            r#"{{"kind":"hash","algorithm":"md5","len":4,"fields":[{}]}}"#,
            names.join(",")
        ),
        format!(
            r#"{{"kind":"buckets","count":8,"by":"hash","fields":[{}]}}"#,
            names.join(",")
        ),
    ] {
        let json = format!(
            r#"{{"fields":[{}],"max_len":1000000,"prefix":{prefix}}}"#,
            fields.join(",")
        );
        // No speed claim: a guard against quadratic time, many times what linear time takes,
        // in CPU time (a busy machine does not slow this thread's own work).
        let (layout, took) = support::cpu_timed(|| serde_json::from_str::<Layout>(&json).unwrap());
        assert_eq!(layout.fields().len(), n);
        assert!(
            took < Duration::from_secs(5),
            "{n} fields named by the prefix loaded in {took:?} of CPU time"
        );
        let values = vec![Value::Uint(7); n];
        let key = layout.encode(&values).unwrap();
        assert_eq!(layout.decode(&key).unwrap(), values);
    }
}

#[test]
fn layout_configs_with_extreme_numbers_are_refused() {
    for json in [
        r#"{"fields":[{"name":"a","type":"u64","width":255}]}"#,
        r#"{"fields":[{"name":"a","type":"u64","width":0}]}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"max_len":18446744073709551615}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"max_len":0}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"buckets","count":4294967295,"by":"hash"}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"buckets","count":0,"by":"hash"}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"prefix":{"kind":"hash","algorithm":"md5","len":255}}"#,
        r#"{"fields":[{"name":"a","type":"u64"}],"delimiter":"é"}"#,
        r#"{"fields":[]}"#,
    ] {
        assert!(serde_json::from_str::<Layout>(json).is_err(), "{json}");
    }
    // `splits -n` at and above the cap are errors, not allocations.
    let l: Layout = "a: u64; buckets=10000:hash".parse().unwrap();
    assert!(l.shape().split_points(usize::MAX).is_err());
    let l: Layout = "a: u64; hash=md5:32".parse().unwrap();
    assert!(l.shape().split_points(usize::MAX).is_err());
    assert!(
        l.shape()
            .split_points(pk_codec::MAX_SPLIT_POINTS + 1)
            .is_err()
    );
}

#[test]
fn layout_config_with_many_fields_loads_in_linear_time() {
    // The duplicate-name check compared each field with every earlier one: 4,000 fields took
    // 0.18 s, 16,000 1.8 s, 40,000 10.3 s in a debug build, so 80,000 would take about 40 s.
    // With a set of names it is linear. The bound below is no speed claim, only a guard against
    // quadratic time coming back: it is many times what the linear check takes, under load too.
    let n = 80_000;
    let fields: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"f{i}","type":"u8"}}"#))
        .collect();
    let json = format!(r#"{{"fields":[{}]}}"#, fields.join(","));
    // CPU time, not wall time: a busy machine does not slow this thread's own work.
    let (layout, took) = support::cpu_timed(|| serde_json::from_str::<Layout>(&json).unwrap());
    assert_eq!(layout.fields().len(), n);
    assert!(
        took < Duration::from_secs(10),
        "{n} fields loaded in {took:?} of CPU time"
    );
    // A duplicate at the end is still found.
    let dup = format!(
        r#"{{"fields":[{},{{"name":"f7","type":"u8"}}]}}"#,
        fields.join(",")
    );
    let e = serde_json::from_str::<Layout>(&dup)
        .unwrap_err()
        .to_string();
    assert!(e.contains("f7") && e.contains("earlier field"), "{e}");
}
