// A generic key used only as a field of another key: its own fields' rules are checked when the
// outer key's are (here `width = 1` on an `i8`, which cannot hold a sign and a digit).
use pk_codec::{KeyField, PartitionKey};

#[derive(PartitionKey)]
struct Inner<V: KeyField> {
    #[pk(width = 1)]
    v: V,
    b: u8,
}

#[derive(PartitionKey)]
struct Outer {
    inner: Inner<i8>,
}

fn main() {
    let _ = Outer { inner: Inner { v: 1, b: 2 } }.encode();
}
