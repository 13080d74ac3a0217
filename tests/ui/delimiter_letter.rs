use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(delimiter = 'x')]
struct Key {
    id: u32,
}

#[derive(PartitionKey)]
#[pk(delimiter = '·')]
struct Other {
    id: u32,
}

fn main() {}
