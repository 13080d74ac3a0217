//! The items of a `#[pk(...)]` attribute (`name`, `name = value`, `name(...)`), read with syn's
//! parsing as syn's `parse_nested_meta` reads them (which needs syn's `derive` feature): the same
//! grammar, messages and spans, so an error points where it always did.

use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Token;
use syn::buffer::Cursor;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::spanned::Spanned;

use crate::input::{Attribute, Member};

/// The path of one item: `name`, or `a::b`.
pub(crate) struct MetaPath {
    leading_colon: bool,
    segments: Vec<Ident>,
    tokens: TokenStream,
}

impl MetaPath {
    /// Whether the path is the single identifier `name`.
    pub(crate) fn is_ident(&self, name: &str) -> bool {
        self.get_ident().is_some_and(|i| i == name)
    }

    /// The path's identifier, if it is a single one.
    pub(crate) fn get_ident(&self) -> Option<&Ident> {
        match self.segments.as_slice() {
            [ident] if !self.leading_colon => Some(ident),
            _ => None,
        }
    }

    /// The segments joined by `::`.
    pub(crate) fn name(&self) -> String {
        let names: Vec<String> = self.segments.iter().map(Ident::to_string).collect();
        names.join("::")
    }

    pub(crate) fn span(&self) -> Span {
        self.tokens.span()
    }
}

/// One item, with the stream after its path (syn's `ParseNestedMeta`).
pub(crate) struct Meta<'a> {
    pub(crate) path: MetaPath,
    pub(crate) input: ParseStream<'a>,
    /// Where the item starts, for the span of [`Meta::error`].
    start: Cursor<'a>,
}

impl<'a> Meta<'a> {
    /// The stream after `=`.
    pub(crate) fn value(&self) -> syn::Result<ParseStream<'a>> {
        self.input.parse::<Token![=]>()?;
        Ok(self.input)
    }

    /// The items of `name(...)`.
    pub(crate) fn parse_nested_meta(
        &self,
        logic: impl FnMut(Meta) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let content;
        syn::parenthesized!(content in self.input);
        parse_nested(&content, logic)
    }

    /// An error spanning the item from its path to the last token read.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> syn::Error {
        let start = self.path.segments[0].span();
        let now = self.input.cursor();
        let mut cursor = self.start;
        let mut end = None;
        while cursor != now {
            let Some((tree, next)) = cursor.token_tree() else {
                break;
            };
            end = Some(match &tree {
                TokenTree::Group(g) => g.span_close(),
                other => other.span(),
            });
            cursor = next;
        }
        spanning(start, end.unwrap_or_else(|| now.span()), message)
    }
}

/// An error from `start` to `end`.
fn spanning(start: Span, end: Span, message: impl std::fmt::Display) -> syn::Error {
    let ends = [Ident::new("start", start), Ident::new("end", end)];
    syn::Error::new_spanned(
        ends.into_iter()
            .map(TokenTree::Ident)
            .collect::<TokenStream>(),
        message,
    )
}

impl Attribute {
    /// Calls `logic` for each item of `#[name(...)]`: syn's `Attribute::parse_nested_meta`.
    pub(crate) fn parse_nested_meta(
        &self,
        logic: impl FnMut(Meta) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let parser = |input: ParseStream| -> syn::Result<()> {
            let content;
            syn::bracketed!(content in input);
            let path = Ident::parse_any(&content)?;
            let args;
            match content.cursor().any_group() {
                Some((_, Delimiter::Parenthesis, _, _)) => {
                    syn::parenthesized!(args in content);
                }
                Some((_, Delimiter::Bracket, _, _)) => {
                    syn::bracketed!(args in content);
                }
                Some((_, Delimiter::Brace, _, _)) => {
                    syn::braced!(args in content);
                }
                _ if content.peek(Token![=]) => {
                    let eq: Token![=] = content.parse()?;
                    return Err(syn::Error::new(
                        eq.span,
                        format_args!("expected parentheses: #[{path}(...)]"),
                    ));
                }
                _ => {
                    return Err(spanning(
                        path.span(),
                        path.span(),
                        format_args!("expected attribute arguments in parentheses: #[{path}(...)]"),
                    ));
                }
            }
            if !content.is_empty() {
                return Err(content.error("unexpected token"));
            }
            if args.is_empty() {
                Ok(())
            } else {
                parse_nested(&args, logic)
            }
        };
        parser.parse2(TokenTree::Group(self.group.clone()).into())
    }
}

/// Items separated by commas, a trailing comma allowed: syn's `meta::parse_nested_meta`.
fn parse_nested(
    input: ParseStream,
    mut logic: impl FnMut(Meta) -> syn::Result<()>,
) -> syn::Result<()> {
    loop {
        let start = input.cursor();
        let path = parse_path(input)?;
        logic(Meta { path, input, start })?;
        if input.is_empty() {
            return Ok(());
        }
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            return Ok(());
        }
    }
}

fn parse_path(input: ParseStream) -> syn::Result<MetaPath> {
    let mut tokens = TokenStream::new();
    let leading: Option<Token![::]> = input.parse()?;
    leading.to_tokens(&mut tokens);
    let first = if input.peek(Ident::peek_any) {
        Ident::parse_any(input)?
    } else if input.is_empty() {
        return Err(input.error("expected nested attribute"));
    } else if input.peek(syn::Lit) {
        return Err(input.error("unexpected literal in nested attribute, expected ident"));
    } else {
        return Err(input.error("unexpected token in nested attribute, expected ident"));
    };
    first.to_tokens(&mut tokens);
    let mut segments = vec![first];
    while input.peek(Token![::]) {
        let colons: Token![::] = input.parse()?;
        colons.to_tokens(&mut tokens);
        let ident = Ident::parse_any(input)?;
        ident.to_tokens(&mut tokens);
        segments.push(ident);
    }
    Ok(MetaPath {
        leading_colon: leading.is_some(),
        segments,
        tokens,
    })
}

/// A field named in an attribute: an identifier, or a tuple struct's index (syn's `Member`).
impl Parse for Member {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(syn::Ident) {
            input.parse().map(Self::Named)
        } else if input.peek(syn::LitInt) {
            let lit: syn::LitInt = input.parse()?;
            if !lit.suffix().is_empty() {
                return Err(syn::Error::new(lit.span(), "expected unsuffixed integer"));
            }
            let index = lit
                .base10_digits()
                .parse()
                .map_err(|e| syn::Error::new(lit.span(), e))?;
            Ok(Self::Unnamed {
                index,
                span: lit.span(),
            })
        } else {
            Err(input.error("expected identifier or integer"))
        }
    }
}

/// A path given as a string (`#[pk(crate = "my::pk_codec")]`): `::`-separated identifiers, as
/// syn's `Path` reads one without generic arguments; its tokens.
pub(crate) fn parse_crate_path(input: ParseStream) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    let leading: Option<Token![::]> = input.parse()?;
    leading.to_tokens(&mut tokens);
    loop {
        let ident = if input.peek(Token![super])
            || input.peek(Token![self])
            || input.peek(Token![Self])
            || input.peek(Token![crate])
        {
            Ident::parse_any(input)?
        } else {
            input.parse::<Ident>()?
        };
        ident.to_tokens(&mut tokens);
        if !input.peek(Token![::]) {
            return Ok(tokens);
        }
        input.parse::<Token![::]>()?.to_tokens(&mut tokens);
    }
}

/// Skips a value (`= ...`) up to the next top-level comma.
pub(crate) fn skip_value(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tree, next)) = rest.token_tree() {
            if matches!(&tree, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}
