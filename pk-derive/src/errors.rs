//! The error collector every step of the derive reports into, so that the user sees every error
//! at once (serde's `Ctxt`). The bottom of the crate: parsing (`attr.rs`, `ast.rs`), the checks
//! across fields (`valid.rs`) and `expand.rs` all push into it; it names none of them.

use proc_macro2::Span;

/// Every error found, reported together (serde's `Ctxt`).
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}
