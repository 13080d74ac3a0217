use pk_codec::PartitionKey;

// `None` and `Some(None)` would be one key.
#[derive(PartitionKey)]
struct Direct {
    maybe: Option<Option<u32>>,
}

fn main() {}
