use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    #[pk(width = 6)]
    name: String,
}

fn main() {}
