use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(width = 6)]
struct Key {
    #[pk(delimiter = ',')]
    id: u32,
}

fn main() {}
