use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Inner {
    #[pk(desc)]
    name: String,
}

#[derive(PartitionKey)]
#[pk(delimiter = '~')]
struct Key {
    id: u32,
    inner: Inner,
}

fn main() {
    let _ = Key { id: 1, inner: Inner { name: String::new() } }.encode();
}
