use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Key {
    #[pk(wdth = 6)]
    id: u32,
}

fn main() {}
