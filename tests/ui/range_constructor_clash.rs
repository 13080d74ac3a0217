use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    total: u32,
    total_eq: bool,
}

#[derive(PartitionKey)]
struct Other {
    count_eq: bool,
    count: u32,
}

fn main() {}
