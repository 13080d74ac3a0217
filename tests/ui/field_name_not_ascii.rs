use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    größe: u32,
}

fn main() {}
