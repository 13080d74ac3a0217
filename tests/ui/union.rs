use pk_codec::PartitionKey;

#[derive(PartitionKey)]
union Key {
    a: u32,
    b: u64,
}

fn main() {}
