use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(buckets(count = 16, hash(user, device)))]
struct Key {
    user: String,
    ts: u64,
}

fn main() {}
