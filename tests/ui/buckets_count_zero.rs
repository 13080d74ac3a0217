use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(buckets(count = 0, modulo = ts))]
struct Key {
    ts: u64,
}

fn main() {}
