use pk_codec::PartitionKey;

// `width = 0` is a width like any other: on a string it breaks `width-on-integers`, as `width = 6`
// does, rather than being dropped.
#[derive(PartitionKey)]
struct Key {
    #[pk(width = 0)]
    name: String,
    #[pk(width = 3)]
    n: u16,
}

fn main() {}
