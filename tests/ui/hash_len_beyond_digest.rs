use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(hash(xxh32, len = 9))]
struct Key {
    id: u64,
}

fn main() {}
