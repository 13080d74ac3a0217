//! Compile errors of `#[derive(PartitionKey)]`: one minimal case per error in `tests/ui/`, with the
//! expected messages in the `.stderr` files next to them (regenerate with `TRYBUILD=overwrite`).

#[test]
fn derive_errors_point_at_the_offending_attribute_or_field() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
