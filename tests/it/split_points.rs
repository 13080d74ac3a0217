//! Split points in the layout's form (`Layout::split_points`, `KeyShape::split_points_in`): a
//! table pre-split at a layout's points spreads its keys. Over random keys of bucketed and
//! hashed layouts, in both forms, the points cut the keys into groups each within 2x of even;
//! a binary layout's points are binary (the prefix's bytes), so none sorts above every binary
//! key as the text points would.

use pk_codec::{Form, Layout, Value};
use proptest::prelude::*;

use crate::support::cases;

/// How many of `keys` fall in each of the parts `points` cut the key space into.
fn group_sizes(points: &[Vec<u8>], keys: &[Vec<u8>]) -> Vec<usize> {
    let mut sizes = vec![0; points.len() + 1];
    for key in keys {
        sizes[points.partition_point(|p| p.as_slice() <= key.as_slice())] += 1;
    }
    sizes
}

/// The prefix of a design: a bucket hash, a modulo bucket or a hash prefix, its size.
fn prefix() -> impl Strategy<Value = String> {
    prop_oneof![
        (2u32..300).prop_map(|n| format!("buckets={n}:hash(device)")),
        (2u32..300).prop_map(|n| format!("buckets={n}:mod(device):sep")),
        (1000u32..2000).prop_map(|n| format!("buckets={n}:hash")),
        (1u8..=32).prop_map(|len| format!("hash=md5:{len}")),
        (1u8..=16).prop_map(|len| format!("hash=xxh3:{len}:sep")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn split_points_cut_random_keys_into_groups_within_twice_of_even(
        prefix in prefix(),
        binary in any::<bool>(),
        n in 1usize..16,
        seed in any::<u64>(),
    ) {
        let form = if binary { "binary" } else { "text" };
        let layout: Layout = format!("device: u32; seq: u64; {prefix}; form={form}").parse().unwrap();
        // Fewer points than prefix values (a small bucket count caps them).
        let n = match layout.shape().prefix() {
            pk_codec::Prefix::Bucket { count, .. } => n.min(count as usize - 1),
            _ => n,
        };
        let points = layout.split_points(n).unwrap();
        prop_assert_eq!(points.len(), n);
        prop_assert!(points.windows(2).all(|w| w[0] < w[1]), "{:?}", points);
        // Random devices (a splitmix sequence from the seed), each key once.
        let mut x = seed;
        let keys: Vec<Vec<u8>> = (0..20_000u64)
            .map(|i| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                let device = (z ^ (z >> 31)) as u32;
                layout.encode_bytes(&[Value::from(device), Value::from(i)]).unwrap()
            })
            .collect();
        let sizes = group_sizes(&points, &keys);
        let even = keys.len() as f64 / sizes.len() as f64;
        for (i, &size) in sizes.iter().enumerate() {
            prop_assert!(
                (size as f64) >= even / 2.0 && (size as f64) <= even * 2.0,
                "`{}`: group {} holds {} keys of {} ({} even); points {:?}", layout, i, size, keys.len(), even, points
            );
        }
    }
}

/// What the binary points replace: the text points of a binary layout sort above every binary
/// key (a binary prefix starts with a byte below `0`), so a table pre-split at them keeps every
/// row in its first partition.
#[test]
fn text_points_of_a_binary_layout_would_hold_every_key_in_one_part() {
    let layout: Layout = "device: u32; buckets=16:hash(device); form=binary"
        .parse()
        .unwrap();
    let keys: Vec<Vec<u8>> = (0..1000u32)
        .map(|d| layout.encode_bytes(&[Value::from(d)]).unwrap())
        .collect();
    let text = layout.shape().split_points_in(Form::Text, 3).unwrap();
    assert_eq!(group_sizes(&text, &keys), [1000, 0, 0, 0]);
    let binary = layout.split_points(3).unwrap();
    assert_eq!(
        binary,
        layout.shape().split_points_in(Form::Binary, 3).unwrap()
    );
    assert!(
        group_sizes(&binary, &keys).iter().all(|&g| g > 150),
        "{:?}",
        group_sizes(&binary, &keys)
    );
}
