use pk_codec::PartitionKey;

// `Some("")` is written `=`: a delimiter at or above `=` cannot order an optional string.
#[derive(PartitionKey)]
#[pk(delimiter = '_')]
struct Key {
    id: u32,
    nickname: Option<String>,
}

fn main() {}
