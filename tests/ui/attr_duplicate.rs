use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(delimiter = ',')]
#[pk(delimiter = '#')]
struct Key {
    #[pk(width = 6, width = 7)]
    id: u32,
}

fn main() {}
