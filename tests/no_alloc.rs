//! Encoding into a buffer that already has room allocates nothing; a derived `encode_into` keeps
//! the caller's buffer.
//!
//! A counting global allocator counts the allocations made by the current thread only, so tests
//! running in parallel do not disturb each other.

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;

use pk_codec::{FieldSpec, IntBits, KeyShape, Kind, Layout, PartitionKey, Prefix, Value};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    /// The largest allocation (or reallocation) requested, in bytes.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter is a
// const-initialised thread-local `Cell`, which never allocates.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LARGEST.with(|c| c.set(c.get().max(layout.size())));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LARGEST.with(|c| c.set(c.get().max(new_size)));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The largest single allocation `f` makes on this thread, in bytes.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|c| c.set(0));
    f();
    LARGEST.with(Cell::get)
}

/// How many allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

const DEVICE: FieldSpec = FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6);
const SELLER: FieldSpec = FieldSpec::new(Kind::Str);
const U64: FieldSpec = FieldSpec::new(Kind::Uint { bits: IntBits::B64 });
const I64_DESC: FieldSpec = FieldSpec::new(Kind::Int { bits: IntBits::B64 }).descending();

fn card(shape: &KeyShape, out: &mut String) {
    shape
        .encode_with(out, |w| {
            w.begin_field();
            w.uint64(&DEVICE, "device_id", 54)?;
            w.begin_field();
            w.str(&SELLER, "seller_id", "a1001")?;
            w.begin_field();
            w.uint64(&U64, "card_id", 6777)?;
            w.begin_field();
            w.int64(&I64_DESC, "ts", -1_700_000_000_000)
        })
        .unwrap();
}

#[test]
fn encoding_with_the_codec_into_a_buffer_with_room_allocates_nothing() {
    let shapes = [
        KeyShape::new(b','),
        KeyShape::new(b',').with_prefix(Prefix::Hash {
            alg: pk_codec::HashAlg::Md5,
            len: 4,
            separator: pk_codec::Separator::After,
            over: pk_codec::HashOver::Key,
        }),
        KeyShape::new(b',').with_prefix(Prefix::Hash {
            alg: pk_codec::HashAlg::Xxh3,
            len: 8,
            separator: pk_codec::Separator::None,
            over: pk_codec::HashOver::Key,
        }),
        KeyShape::new(b',').with_prefix(Prefix::Bucket {
            count: 16,
            by: pk_codec::BucketBy::Hash,
            separator: pk_codec::Separator::After,
        }),
    ];
    for shape in shapes {
        let mut out = String::with_capacity(256);
        // The buffer has room: no allocation, however many keys go through it.
        let n = allocations(|| {
            for _ in 0..100 {
                out.clear();
                card(&shape, &mut out);
            }
        });
        assert_eq!(n, 0, "{shape:?} allocated {n} times for {out:?}");
        // A buffer without room does allocate: the counter works.
        let mut empty = String::new();
        assert!(allocations(|| card(&shape, &mut empty)) > 0);
    }
}

#[test]
fn encoding_with_a_runtime_layout_into_a_buffer_with_room_allocates_nothing() {
    let layout: Layout = "device_id: u32 width=6; seller_id: str escaped; card_id: u64; flag: bool optional; buckets=16:mod(card_id):sep"
        .parse()
        .unwrap();
    let values = vec![
        Value::from(54u32),
        Value::from("a,1001"),
        Value::from(6777u64),
        Value::Null,
    ];
    let mut out = String::with_capacity(256);
    let n = allocations(|| {
        for _ in 0..100 {
            out.clear();
            layout.encode_into(&values, &mut out).unwrap();
        }
    });
    assert_eq!(n, 0, "allocated {n} times for {out:?}");
    assert_eq!(out, "09,000054,a-2c1001,00000000000000006777,");
}

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

/// `encode()` answers each key in one allocation of exactly its length (after the thread's first
/// key, which also gives the thread its scratch buffer), however many fields grow it meanwhile.
#[test]
fn encode_allocates_once_at_the_keys_length() {
    let card = Card {
        device_id: 54,
        seller_id: "a1001".into(),
        card_id: 6777,
        note: Some("a,b".into()),
    };
    let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64; order: u64"
        .parse()
        .unwrap();
    let values = vec![
        Value::from(54u32),
        Value::from("a1001"),
        Value::from(6777u64),
        Value::from(u64::MAX),
    ];
    let mut into = String::new();
    card.encode_into(&mut into).unwrap();
    let mut layout_into = String::new();
    layout.encode_into(&values, &mut layout_into).unwrap();
    // The thread's first key may allocate the scratch buffer too.
    card.encode().unwrap();
    for _ in 0..3 {
        let mut key = String::new();
        assert_eq!(allocations(|| key = card.encode().unwrap()), 1);
        assert_eq!((key.as_str(), key.capacity()), (into.as_str(), into.len()));
        let mut key = String::new();
        assert_eq!(allocations(|| key = layout.encode(&values).unwrap()), 1);
        assert_eq!(key, layout_into);
        assert_eq!(key.capacity(), key.len());
    }
    // An error answers the error, and the next key is whole.
    assert!(layout.encode(&[Value::from("x")]).is_err());
    let too_wide = Card {
        device_id: 1_000_000,
        ..card
    };
    assert!(too_wide.encode().is_err());
    assert_eq!(layout.encode(&values).unwrap(), layout_into);
}

/// The binary form as the text form: `encode_binary()` answers each key in one allocation of
/// exactly its length, and `encode_binary_into` a buffer with room allocates nothing.
#[test]
fn encode_binary_allocates_once_at_the_keys_length() {
    let card = Card {
        device_id: 54,
        seller_id: "a1001".into(),
        card_id: 6777,
        note: Some("a,b".into()),
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
    let mut into = Vec::new();
    card.encode_binary_into(&mut into).unwrap();
    // The thread's first key may allocate the scratch buffer too.
    card.encode_binary().unwrap();
    let mut room = Vec::with_capacity(256);
    for _ in 0..3 {
        let mut key = Vec::new();
        assert_eq!(allocations(|| key = card.encode_binary().unwrap()), 1);
        assert_eq!((&key, key.capacity()), (&into, into.len()));
        let n = allocations(|| {
            room.clear();
            card.encode_binary_into(&mut room).unwrap();
            room.clear();
            bucketed.encode_binary_into(&mut room).unwrap();
        });
        assert_eq!(n, 0);
    }
}

/// A key longer than the scratch buffer keeps is answered whole, and the buffer does not keep
/// its memory (the next key allocates the scratch buffer again).
#[test]
fn encode_answers_long_keys_whole() {
    let layout: Layout = "a: str; b: u8; max_len=200000".parse().unwrap();
    for len in [0, 1, 4095, 4096, 4097, 100_000] {
        let s = "x".repeat(len);
        let values = vec![Value::from(s.as_str()), Value::from(7u8)];
        let key = layout.encode(&values).unwrap();
        assert_eq!(key, format!("{s},007"));
        assert_eq!(layout.decode(&key).unwrap(), values);
    }
}

/// A key whose `encode_into` calls another key's `encode()` (the scratch buffer is in use)
/// still gets both keys right.
#[test]
fn encode_inside_encode_gets_both_keys_right() {
    struct Outer(Order);
    impl PartitionKey for Outer {
        const SHAPE: KeyShape = Order::SHAPE;
        fn layout() -> Layout {
            Order::layout()
        }
        fn write_fields(&self, w: &mut pk_codec::KeyWriter<'_>) -> pk_codec::Result<()> {
            self.0.write_fields(w)
        }
        fn encode_into(&self, out: &mut String) -> pk_codec::Result<()> {
            let inner = self.0.encode()?;
            out.push_str(&inner);
            out.push('|');
            out.push_str(&self.0.encode()?);
            Ok(())
        }
    }
    let outer = Outer(Order {
        order_number: 200_001,
    });
    for _ in 0..3 {
        assert_eq!(outer.encode().unwrap(), "ee8f,200001|ee8f,200001");
    }
}

/// A lent range read (`Table::for_each_in_range`) copied each row whole, every column and
/// version, while its partition was locked, then handed over the columns the read selects: a
/// read of one small column of rows holding a megabyte each grew its copy to a megabyte per
/// row (here 40 MB in one buffer), though the read's 4 MB cap counts selected cells only. Now a
/// long row is copied as its selected cells: the largest allocation of the read stays small,
/// and the rows it hands over are those `get_range` answers.
#[test]
fn a_lent_range_read_copies_the_cells_it_selects_not_whole_rows() {
    use pk_codec::table::{
        Attribute, AttributeValue, PrimaryKey, RangeRequest, ReadOptions, Table, TableOptions,
    };
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    for i in 0..40 {
        table
            .put(
                format!("k{i:02}"),
                vec![
                    Attribute::new("big", AttributeValue::Binary(vec![7; 1 << 20])),
                    Attribute::new("n", i64::from(i)),
                ],
            )
            .unwrap();
    }
    let req = RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1))
        .options(ReadOptions::default().columns(["n"]));
    let mut lent = Vec::new();
    let largest = largest_allocation(|| {
        table
            .for_each_in_range(&req, |row| lent.push(row.clone()))
            .unwrap();
    });
    assert!(largest < 64 * 1024, "largest allocation {largest} bytes");
    assert_eq!(lent, table.get_range(&req).unwrap().rows);
    assert_eq!(lent.len(), 40);
}
