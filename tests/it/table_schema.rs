//! Schema, key and attribute limits, and table options: every refusal with its exact error.

use pk_codec::table::{
    Attribute, AttributeValue, MAX_ATTRIBUTE_BYTES, MAX_KEY_VALUE_BYTES, PkColumn, PkType, PkValue,
    PrimaryKey, Schema, Table, TableError, TableOptions,
};

fn two_columns() -> Schema {
    Schema::new(vec![
        PkColumn::new("device", PkType::String),
        PkColumn::new("seq", PkType::Integer),
    ])
    .unwrap()
}

#[test]
fn schema_takes_one_to_four_columns() {
    assert_eq!(
        Schema::new(vec![]),
        Err(TableError::KeyColumnCount { count: 0 })
    );
    let five = (0..5)
        .map(|i| PkColumn::new(format!("c{i}"), PkType::Integer))
        .collect();
    assert_eq!(
        Schema::new(five),
        Err(TableError::KeyColumnCount { count: 5 })
    );
    let four: Vec<PkColumn> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| PkColumn::new(*n, PkType::Binary))
        .collect();
    assert_eq!(Schema::new(four).unwrap().columns().len(), 4);
}

#[test]
fn schema_refuses_bad_and_repeated_names() {
    let cases = [
        ("", "a name needs at least 1 character"),
        ("9lives", "the first character must be a letter or '_'"),
        ("card-id", "only letters, digits and '_' are allowed"),
        ("caf\u{e9}", "only letters, digits and '_' are allowed"),
    ];
    for (name, reason) in cases {
        assert_eq!(
            Schema::single_string(name),
            Err(TableError::InvalidColumnName {
                name: name.to_owned(),
                reason
            })
        );
    }
    let long = "x".repeat(256);
    assert_eq!(
        Schema::single_string(&long),
        Err(TableError::InvalidColumnName {
            name: long.clone(),
            reason: "a name has at most 255 characters"
        })
    );
    assert!(Schema::single_string(&"x".repeat(255)).is_ok());
    assert!(Schema::single_string("_Card_ID_2").is_ok());
    assert_eq!(
        Schema::new(vec![
            PkColumn::new("a", PkType::String),
            PkColumn::new("a", PkType::Integer)
        ]),
        Err(TableError::DuplicateKeyColumn { name: "a".into() })
    );
}

#[test]
fn keys_must_match_the_schema() {
    let t = Table::new(two_columns(), TableOptions::default()).unwrap();
    assert_eq!(
        t.put("dev", vec![]),
        Err(TableError::KeyArity {
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        t.put(vec![PkValue::from(1), PkValue::from(2)], vec![]),
        Err(TableError::KeyTypeMismatch {
            column: "device".into(),
            expected: PkType::String,
            found: "integer"
        })
    );
    assert_eq!(
        t.put(vec!["d".into(), PkValue::InfMax], vec![]),
        Err(TableError::InfiniteKeyValue {
            column: "seq".into()
        })
    );
    assert_eq!(
        t.get(
            PrimaryKey::new(vec![PkValue::InfMin, 1.into()]),
            &Default::default()
        ),
        Err(TableError::InfiniteKeyValue {
            column: "device".into()
        })
    );
    assert_eq!(
        t.delete(PrimaryKey::new(vec!["d".into(), "x".into()])),
        Err(TableError::KeyTypeMismatch {
            column: "seq".into(),
            expected: PkType::Integer,
            found: "string"
        })
    );
}

#[test]
fn key_values_over_1_kb_are_refused() {
    let t = Table::new(two_columns(), TableOptions::default()).unwrap();
    let ok = "k".repeat(MAX_KEY_VALUE_BYTES);
    t.put(vec![ok.into(), 1.into()], vec![]).unwrap();
    let big = "k".repeat(MAX_KEY_VALUE_BYTES + 1);
    assert_eq!(
        t.put(vec![big.into(), 1.into()], vec![]),
        Err(TableError::KeyValueTooLarge {
            column: "device".into(),
            len: 1025,
            max: 1024
        })
    );
    let bin = Table::new(
        Schema::new(vec![PkColumn::new("b", PkType::Binary)]).unwrap(),
        TableOptions::default(),
    )
    .unwrap();
    bin.put(&[0u8; 1024][..], vec![]).unwrap();
    assert_eq!(
        bin.put(&[0u8; 1025][..], vec![]),
        Err(TableError::KeyValueTooLarge {
            column: "b".into(),
            len: 1025,
            max: 1024
        })
    );
}

#[test]
fn attributes_are_checked() {
    let t = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let ok = vec![0u8; MAX_ATTRIBUTE_BYTES];
    t.put("a", vec![Attribute::new("blob", ok)]).unwrap();
    assert_eq!(
        t.put(
            "a",
            vec![Attribute::new("blob", "x".repeat(MAX_ATTRIBUTE_BYTES + 1))]
        ),
        Err(TableError::AttributeTooLarge {
            column: "blob".into(),
            len: MAX_ATTRIBUTE_BYTES + 1,
            max: MAX_ATTRIBUTE_BYTES
        })
    );
    assert_eq!(
        t.put("a", vec![Attribute::new("1st", 1)]),
        Err(TableError::InvalidColumnName {
            name: "1st".into(),
            reason: "the first character must be a letter or '_'"
        })
    );
    // A refused put leaves the row as it was.
    let row = t.get("a", &Default::default()).unwrap().unwrap();
    assert_eq!(
        row.value("blob").map(AttributeValue::size),
        Some(MAX_ATTRIBUTE_BYTES)
    );
    // Every attribute type is stored.
    t.put(
        "types",
        vec![
            Attribute::new("s", "text"),
            Attribute::new("i", -5),
            Attribute::new("d", 0.5),
            Attribute::new("b", true),
            Attribute::new("x", vec![1u8, 2]),
        ],
    )
    .unwrap();
    let row = t.get("types", &Default::default()).unwrap().unwrap();
    assert_eq!(row.value("d"), Some(&AttributeValue::Double(0.5)));
    assert_eq!(row.value("b"), Some(&AttributeValue::Boolean(true)));
    assert_eq!(row.value("x"), Some(&AttributeValue::Binary(vec![1, 2])));
    assert_eq!(row.cells.len(), 5);
}

#[test]
fn options_are_checked() {
    let s = || Schema::single_string("pk").unwrap();
    let err = |o: TableOptions| Table::new(s(), o).unwrap_err();
    assert_eq!(
        err(TableOptions::default().max_versions(0)),
        TableError::InvalidOption {
            option: "max_versions",
            value: 0,
            reason: "must be at least 1"
        }
    );
    assert_eq!(
        err(TableOptions::default().ttl_seconds(86_399)),
        TableError::InvalidOption {
            option: "ttl_seconds",
            value: 86_399,
            reason: "must be -1 (never) or at least 86400"
        }
    );
    assert!(Table::new(s(), TableOptions::default().ttl_seconds(86_400)).is_ok());
    assert!(Table::new(s(), TableOptions::default().ttl_seconds(-1)).is_ok());
    assert_eq!(
        err(TableOptions::default().max_version_offset_seconds(0)),
        TableError::InvalidOption {
            option: "max_version_offset_seconds",
            value: 0,
            reason: "must be at least 1"
        }
    );
    assert_eq!(
        err(TableOptions::default().split_size_bytes(0)),
        TableError::InvalidOption {
            option: "split_size_bytes",
            value: 0,
            reason: "must be above 0"
        }
    );
    assert_eq!(
        err(TableOptions::default()
            .split_size_bytes(1000)
            .merge_below(501, 0)),
        TableError::InvalidOption {
            option: "merge_size_bytes",
            value: 501,
            reason: "must be at most half of split_size_bytes"
        }
    );
    assert_eq!(
        err(TableOptions::default().split_load_ops(0)),
        TableError::InvalidOption {
            option: "split_load_ops",
            value: 0,
            reason: "must be above 0"
        }
    );
    assert_eq!(
        err(TableOptions::default()
            .split_load_ops(100)
            .merge_below(1, 51)),
        TableError::InvalidOption {
            option: "merge_load_ops",
            value: 51,
            reason: "must be at most half of split_load_ops"
        }
    );
    // Without merges, merge thresholds are not checked.
    assert!(
        Table::new(
            s(),
            TableOptions::default()
                .split_size_bytes(10)
                .merge_below(100, 0)
                .no_merge()
        )
        .is_ok()
    );
    assert_eq!(
        err(TableOptions::default().load_sample_every(0)),
        TableError::InvalidOption {
            option: "load_sample_every",
            value: 0,
            reason: "must be at least 1"
        }
    );
    // A u64 option above i64::MAX is reported with its own value, not clamped.
    assert_eq!(
        err(TableOptions::default()
            .split_size_bytes(u64::MAX)
            .merge_below(u64::MAX, 0)),
        TableError::InvalidOption {
            option: "merge_size_bytes",
            value: i128::from(u64::MAX),
            reason: "must be at most half of split_size_bytes"
        }
    );
    assert_eq!(
        err(TableOptions::default().load_window_ms(0)),
        TableError::InvalidOption {
            option: "load_window_ms",
            value: 0,
            reason: "must be at least 1"
        }
    );
    assert_eq!(
        err(TableOptions::default().pre_split(vec![1.into()])),
        TableError::InvalidSplitPoint {
            index: 0,
            reason: "a split point must be a real value of the partition key's type"
        }
    );
    assert_eq!(
        err(TableOptions::default().pre_split(vec!["b".into(), "b".into()])),
        TableError::InvalidSplitPoint {
            index: 1,
            reason: "split points must be strictly increasing"
        }
    );
}

#[test]
fn errors_read_well() {
    let e = TableError::KeyValueTooLarge {
        column: "device".into(),
        len: 1025,
        max: 1024,
    };
    assert_eq!(
        e.to_string(),
        "primary-key column \"device\" value is 1025 bytes, over the limit of 1024"
    );
    let wrapped = TableError::Replay {
        event: 3,
        source: Box::new(e),
    };
    assert!(
        wrapped
            .to_string()
            .starts_with("event 3 failed: primary-key")
    );
    assert!(std::error::Error::source(&wrapped).is_some());
}
