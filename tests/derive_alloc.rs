//! Derived `encode_into` writes into the caller's buffer without reallocating it when it has room.
//!
//! (Counting every allocation needs a counting global allocator, which is `unsafe` code, and the
//! workspace forbids it; the generated code is straight-line `KeyWriter` calls with constant specs
//! and no runtime `Layout`, and the benchmarks measure it.)

use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Card {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(desc)]
    card_id: u64,
    #[pk(escaped)]
    note: Option<String>,
}

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, separator))]
struct Order {
    #[pk(width = 6)]
    order_number: u64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 16, hash(user, card)))]
struct Bucketed {
    user: String,
    card: Card,
    #[pk(width = 13)]
    ts: u64,
}

#[test]
fn encode_into_a_buffer_with_room_keeps_the_buffer() {
    let card = Card {
        device_id: 54,
        seller_id: "a100".into(),
        card_id: 6777,
        note: Some("a,b".into()),
    };
    let order = Order {
        order_number: 200_001,
    };
    let bucketed = Bucketed {
        user: "alice".into(),
        card: Card {
            device_id: 1,
            seller_id: "s".into(),
            card_id: 2,
            note: None,
        },
        ts: 1_700_000_000_000,
    };
    let mut out = String::with_capacity(256);
    let (ptr, cap) = (out.as_ptr(), out.capacity());
    for _ in 0..10 {
        out.clear();
        card.encode_into(&mut out).unwrap();
        assert_eq!(out, "000054,a100,99999999999999993222,=a-2cb");
        out.clear();
        order.encode_into(&mut out).unwrap();
        assert_eq!(out, "ee8f,200001");
        out.clear();
        bucketed.encode_into(&mut out).unwrap();
        assert!(
            out.ends_with("alice,000001,s,99999999999999999997,,1700000000000"),
            "{out}"
        );
    }
    assert_eq!((out.as_ptr(), out.capacity()), (ptr, cap));
}
