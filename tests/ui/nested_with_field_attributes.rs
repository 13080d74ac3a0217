use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Inner {
    id: u32,
}

#[derive(PartitionKey)]
struct Key {
    #[pk(desc, width = 4)]
    inner: Inner,
}

fn main() {}
