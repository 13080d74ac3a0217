use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(delim = ',')]
struct Key {
    id: u32,
}

fn main() {}
