//! The example tables of the key-design practices (Tablestore's table design guide), reproduced.
//!
//! Test vectors (DeviceID, SellerID, CardID, OrderNumber), in their original order:
//! (16, a100, 66661, 200001), (54, a100, 6777, 200003), (54, a1001, 6777, 200004),
//! (167, a101, 283408, 200002).

use pk_codec::{Error, Layout, Value};

const ROWS: [(u32, &str, u64, u64); 4] = [
    (16, "a100", 66661, 200_001),
    (54, "a100", 6777, 200_003),
    (54, "a1001", 6777, 200_004),
    (167, "a101", 283_408, 200_002),
];

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

#[test]
fn hand_spliced_colon_keys_sort_in_the_wrong_order() {
    // What people write by hand: no padding, `:` delimiter.
    let keys = ROWS.map(|(d, s, c, _)| format!("{d}:{s}:{c}")).to_vec();
    // The facts file lists this table as `16:…, 167:…, 54:a1001…, 54:a100…`; bytewise, `167:`
    // even sorts before `16:` ('7' is 0x37, ':' is 0x3a). Either way 167 comes before 54.
    assert_eq!(
        sorted(keys),
        [
            "167:a101:283408",
            "16:a100:66661",
            "54:a1001:6777",
            "54:a100:6777"
        ],
        "the facts' first table: 167 before 54"
    );
    // Padding alone does not fix it: `:` sorts above the digits.
    let keys = ROWS.map(|(d, s, c, _)| format!("{d:06}:{s}:{c}")).to_vec();
    assert_eq!(
        sorted(keys),
        [
            "000016:a100:66661",
            "000054:a1001:6777",
            "000054:a100:6777",
            "000167:a101:283408"
        ],
        "the facts' second table: a1001 before a100"
    );
}

#[test]
fn codec_refuses_the_colon_layout_that_breaks_order() -> Result<(), Error> {
    let layout: Layout =
        "device_id: u32 width=6; seller_id: str; card_id: u64 width=6; delimiter=':'".parse()?;
    let err = layout
        .encode(&[54u32.into(), "a1001".into(), 6777u64.into()])
        .unwrap_err();
    assert_eq!(
        err,
        Error::CharBelowDelimiter {
            field: "seller_id".into(),
            ch: '1',
            offset: 1,
            delimiter: ':',
        }
    );
    // With only fixed-width fields, `:` keeps order and is accepted.
    let digits: Layout = "device_id: u32 width=6; card_id: u64 width=6; delimiter=':'".parse()?;
    assert_eq!(
        digits.encode(&[54u32.into(), 6777u64.into()])?,
        "000054:006777"
    );
    // A letter never can be a delimiter.
    let err = "device_id: u32 width=6; delimiter='a'"
        .parse::<Layout>()
        .unwrap_err();
    assert!(
        matches!(err, Error::BrokenRule { field: None, .. }),
        "{err}"
    );
    Ok(())
}

#[test]
fn comma_layout_sorts_in_the_original_order() -> Result<(), Error> {
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64 width=6".parse()?;
    let keys: Vec<String> = ROWS
        .iter()
        .map(|&(d, s, c, _)| layout.encode(&[d.into(), s.into(), c.into()]))
        .collect::<Result<_, _>>()?;
    assert_eq!(
        keys,
        [
            "000016,a100,066661",
            "000054,a100,006777",
            "000054,a1001,006777",
            "000167,a101,283408"
        ]
    );
    assert_eq!(
        sorted(keys.clone()),
        keys,
        "sorted order equals the original order"
    );
    // The facts' exact strings: CardID unpadded is the last field's width 4..6.
    let facts: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64 width=4".parse()?;
    assert_eq!(
        facts.encode(&[54u32.into(), "a100".into(), 6777u64.into()])?,
        "000054,a100,6777"
    );
    Ok(())
}

#[test]
fn order_numbers_pad_to_eight_digits() -> Result<(), Error> {
    let layout: Layout = "order_number: u64 width=8".parse()?;
    assert_eq!(layout.encode(&[123u64.into()])?, "00000123");
    let spliced: Layout =
        "device_id: u32 width=2; seller: u32 width=2; order: u32 width=4".parse()?;
    assert_eq!(
        spliced.encode(&[54u32.into(), 10u32.into(), 1001u32.into()])?,
        "54,10,1001"
    );
    Ok(())
}

#[test]
fn device_id_range_is_one_range_read_on_the_spliced_key() -> Result<(), Error> {
    use std::ops::Bound::{Excluded, Included};
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64 width=6".parse()?;
    let range = layout.range(
        &[],
        Included(&Value::from(15u32)),
        Excluded(&Value::from(100u32)),
    )?;
    let inside: Vec<u32> = ROWS
        .iter()
        .filter(|&&(d, s, c, _)| {
            range.contains(&layout.encode(&[d.into(), s.into(), c.into()]).unwrap())
        })
        .map(|r| r.0)
        .collect();
    assert_eq!(inside, [16, 54, 54]);
    Ok(())
}

#[test]
fn md5_prefixes_are_real_md5_values() -> Result<(), Error> {
    let bare: Layout = "order_number: u64 width=6; hash=md5:4".parse()?;
    let sep: Layout = "order_number: u64 width=6; hash=md5:4:sep".parse()?;
    let want = [
        (200_001u64, "ee8f"),
        (200_002, "7db8"),
        (200_003, "5c74"),
        (200_004, "797e"),
        (200_005, "a210"),
    ];
    for (order, prefix) in want {
        assert_eq!(bare.encode(&[order.into()])?, format!("{prefix}{order}"));
        assert_eq!(sep.encode(&[order.into()])?, format!("{prefix},{order}"));
        // Point lookups recompute the prefix from the natural key.
        assert_eq!(
            bare.decode(&format!("{prefix}{order}"))?,
            vec![Value::Uint(u128::from(order))]
        );
    }
    let ip: Layout = "ip: str; hash=md5:4:sep".parse()?;
    assert_eq!(ip.encode(&["10.10.0.1".into()])?, "7e4a,10.10.0.1");
    let padded: Layout = "n: u32 width=6; hash=md5:4".parse()?;
    assert_eq!(padded.encode(&[1u32.into()])?, "04fc000001");
    Ok(())
}

#[test]
fn time_buckets_of_sixteen_follow_the_timestamp_modulo() -> Result<(), Error> {
    let layout: Layout = "ts: u64 width=13; buckets=16:mod(ts):sep".parse()?;
    for ts in [
        1_700_000_000_000u64,
        1_700_000_000_001,
        1_700_000_000_015,
        1_700_000_000_016,
    ] {
        let key = layout.encode(&[ts.into()])?;
        assert_eq!(key, format!("{:02},{ts}", ts % 16));
    }
    Ok(())
}
