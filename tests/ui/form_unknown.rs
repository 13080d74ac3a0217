// An unknown form is reported once, on its name.
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
#[pk(form = bogus)]
struct Card {
    device_id: u32,
}

fn main() {}
