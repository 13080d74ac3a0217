// A hash prefix over chosen fields names the leading fields.
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, fields(b)))]
struct Key {
    a: u64,
    b: u64,
}

fn main() {}
