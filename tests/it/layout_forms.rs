//! A runtime layout's forms agree: built in code, parsed from a text spec, or loaded from a JSON or
//! TOML config file, the same declaration gives the same `Layout` and the same keys.

use pk_codec::{FieldSpec, HashAlg, IntBits, Kind, Layout, Separator};

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
