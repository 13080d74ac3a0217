use pk_codec::PartitionKey;

struct NotAKey {
    id: u32,
}

#[derive(PartitionKey)]
struct Key {
    id: u32,
    other: NotAKey,
}

fn main() {}
