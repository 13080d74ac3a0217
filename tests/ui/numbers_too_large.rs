// Numbers beyond what an attribute's type holds break the rule that bounds them, and the error
// names that rule (it was syn's "number too large to fit in target type").
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct Width {
    #[pk(width = 300)]
    a: u64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 4294967296, modulo = a))]
struct Count {
    a: u64,
}

#[derive(PartitionKey)]
#[pk(hash(md5, len = 256))]
struct HashLen {
    a: u64,
}

#[derive(PartitionKey)]
#[pk(max_len = 340282366920938463463374607431768211456)]
struct MaxLen {
    a: u64,
}

fn main() {}
