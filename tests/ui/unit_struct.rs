use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key;

fn main() {}
