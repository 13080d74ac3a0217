use pk_codec::PartitionKey;

#[derive(PartitionKey)]
enum Key {
    A(u32),
    B(String),
}

fn main() {}
