//! `#[derive(PartitionKey)]` for [pk-codec](https://docs.rs/pk-codec). Use it through `pk_codec::PartitionKey`.

use proc_macro::TokenStream;

/// Derives `pk_codec::PartitionKey` (placeholder until the derive lands).
#[proc_macro_derive(PartitionKey, attributes(pk))]
pub fn derive_partition_key(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
