use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    #[pk(escaped)]
    id: u32,
}

fn main() {}
