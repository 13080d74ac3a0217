use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    price: f64,
    pair: (u32, u32),
    ids: Vec<u32>,
    raw: [u8; 4],
    maybe: Option<Option<u32>>,
}

fn main() {}
