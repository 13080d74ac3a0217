use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Inner {
    id: u32,
}

#[derive(PartitionKey)]
struct Key {
    id: u32,
    inner: Option<Inner>,
}

fn main() {}
