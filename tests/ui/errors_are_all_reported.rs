use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(buckets(count = 8, modulo = missing))]
struct Key {
    #[pk(width = 4)]
    name: String,
    #[pk(escaped)]
    id: u32,
    price: f32,
}

fn main() {}
