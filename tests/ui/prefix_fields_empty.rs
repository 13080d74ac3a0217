use pk_codec::PartitionKey;

// An explicit empty list is refused, not read as "the whole key" or "every field".
#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, fields()))]
struct Hashed {
    user: String,
    ts: u64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 16, hash()))]
struct Bucketed {
    user: String,
    ts: u64,
}

fn main() {}
