use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(buckets(count = 16, modulo = timestamp))]
struct Key {
    ts: u64,
}

fn main() {}
