use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(hash(sha1, len = 4))]
struct Key {
    id: u64,
}

#[derive(PartitionKey)]
#[pk(hash(len = 4))]
struct Other {
    id: u64,
}

fn main() {}
