use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4), buckets(count = 4, hash))]
struct Key {
    id: u64,
}

fn main() {}
