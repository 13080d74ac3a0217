// An unknown precision is reported once, on its name.
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Event {
    #[pk(precision = hours)]
    at: std::time::SystemTime,
}

fn main() {}
