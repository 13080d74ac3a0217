use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    #[pk(width = 0)]
    id: u32,
    #[pk(width = 1)]
    delta: i64,
    #[pk(width = 41)]
    big: u128,
}

fn main() {}
