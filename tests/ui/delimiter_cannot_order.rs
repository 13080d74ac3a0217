use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(delimiter = '.')]
struct Key {
    #[pk(escaped)]
    name: String,
    data: Vec<u8>,
}

fn main() {}
