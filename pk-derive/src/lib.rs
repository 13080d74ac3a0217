//! `#[derive(PartitionKey)]` for [pk-codec](https://docs.rs/pk-codec): use it through
//! `pk_codec::PartitionKey`, with `pk-codec`'s default `derive` feature.
//!
//! The reference of every `#[pk(...)]` attribute, with runnable examples, is the `pk_codec::_derive`
//! module of pk-codec (doc tests of a proc-macro crate cannot use the crate its output names).
//!
//! The derive writes straight-line calls to pk-codec's `KeyWriter` / `KeyReader` with constant
//! `FieldSpec`s and a constant `KeyShape`, so derived keys are byte for byte the keys of the
//! equivalent runtime `Layout` (which `PartitionKey::layout` returns).

mod ast;
mod attr;
mod errors;
mod expand;
mod input;
mod meta;
#[cfg(test)]
mod tests;
mod tpl;
mod valid;

use proc_macro::TokenStream;

/// Derives `pk_codec::PartitionKey` (and `pk_codec::DecodeKey` when no field borrows), plus
/// typed range constructors. See `pk_codec::_derive` for the attributes.
#[proc_macro_derive(PartitionKey, attributes(pk))]
pub fn derive_partition_key(input: TokenStream) -> TokenStream {
    match input::parse(input.into()) {
        Ok(input) => expand::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
