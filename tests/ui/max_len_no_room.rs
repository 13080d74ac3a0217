use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, separator), max_len = 5)]
struct Key {
    id: u64,
}

fn main() {}
