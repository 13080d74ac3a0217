use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(buckets(count = 16, modulo = user))]
struct Key {
    user: String,
    ts: Option<u64>,
}

fn main() {}
