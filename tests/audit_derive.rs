//! Audit of `#[derive(PartitionKey)]`: each test here failed before the fix it names, or checks a
//! guarantee over a configuration the other suites do not cover.

use pk_codec::{DecodeKey, PartitionKey};

// ---- Range constructors of fields named `bounds`, `bounds_` -----------------------------------

/// Fields named `bounds_` and `bounds`: the bounds parameter of `ranges_x` must be named after
/// neither (it was `bounds_`, a second parameter of that name: E0415 inside the derive).
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct BoundsNames {
    bounds_: u8,
    bounds: u8,
    x: u8,
}

#[test]
fn fields_named_like_the_bounds_parameter_get_range_constructors() {
    let key = BoundsNames { bounds_: 1, bounds: 2, x: 3 };
    let text = key.encode().unwrap();
    assert_eq!(BoundsNames::decode(&text).unwrap(), key);
    let ranges = BoundsNames::ranges_x(1, 2, 3..=3).unwrap();
    assert_eq!(ranges.len(), 1);
    assert!(ranges[0].contains(&text));
    let ranges = BoundsNames::ranges_x(1, 2, 4..).unwrap();
    assert!(!ranges[0].contains(&text));
    let ranges = BoundsNames::ranges_bounds(1, ..=2).unwrap();
    assert!(ranges[0].contains(&text));
}
