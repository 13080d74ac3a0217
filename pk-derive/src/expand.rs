//! Code generation: straight-line `KeyWriter` / `KeyReader` calls with constant specs. Cannot fail:
//! everything that could go wrong was reported by `attr.rs` and `valid.rs`.

use proc_macro2::Ident;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{self, Field, Form, Input, ScalarKind};
use crate::attr::{self, BucketBy};
use crate::errors::Errors;
use crate::input::{self, DeriveInput, GenericParam, Member};
use crate::tpl::tpl;
use crate::valid;

/// The whole derive: parse, check, generate; on errors, the errors and a stub impl.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let parsed = ast::Input::from_input(input, &mut errors);
    if let Some(parsed) = &parsed {
        valid::check(parsed, &mut errors);
    }
    match (errors.into_error(), parsed) {
        (None, Some(parsed)) => expand(&parsed),
        (error, _) => {
            let mut out = error.map(|e| e.to_compile_error()).unwrap_or_default();
            let krate = attr::crate_path(input);
            out.extend(stub(input, &krate));
            out
        }
    }
}

/// An impl that satisfies the trait, so that an error in the attributes is the only error shown.
fn stub(input: &DeriveInput, krate: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    tpl!(
        r#"
        #[automatically_derived]
        impl #impl_generics #krate::PartitionKey for #ident #ty_generics #where_clause {
            const SHAPE: #krate::KeyShape = #krate::KeyShape::new(b',');
            fn layout() -> #krate::Layout {
                ::core::unreachable!()
            }
            fn write_fields(&self, _: &mut #krate::KeyWriter<'_>) -> #krate::Result<()> {
                ::core::unreachable!()
            }
            fn encode_into(&self, _: &mut ::std::string::String) -> #krate::Result<()> {
                ::core::unreachable!()
            }
        }
        #[automatically_derived]
        impl #impl_generics #krate::KeyPart for #ident #ty_generics #where_clause {
            const NESTED: ::core::primitive::bool = true;
            const BASE_SPEC: #krate::FieldSpec = #krate::FieldSpec::new(#krate::Kind::Bool);
            fn write_part(&self, _: &#krate::FieldSpec, _: &::core::primitive::str, _: &mut #krate::KeyWriter<'_>) -> #krate::Result<()> {
                ::core::unreachable!()
            }
            fn write_part_binary(&self, _: &#krate::FieldSpec, _: &::core::primitive::str, _: &mut #krate::BinWriter<'_>) -> #krate::Result<()> {
                ::core::unreachable!()
            }
            fn layout_fields(_: &::core::primitive::str, _: #krate::FieldSpec, _: &mut ::std::vec::Vec<(::std::string::String, #krate::FieldSpec)>) {
                ::core::unreachable!()
            }
        }
        #[automatically_derived]
        impl #impl_generics #krate::DecodeKey for #ident #ty_generics #where_clause {
            fn read_fields(_: &mut #krate::KeyReader<'_>) -> #krate::Result<Self> {
                ::core::unreachable!()
            }
            fn decode(_: &::core::primitive::str) -> #krate::Result<Self> {
                ::core::unreachable!()
            }
        }
    "#,
        impl_generics,
        krate,
        ident,
        ty_generics,
        where_clause
    )
}

/// The constant `FieldSpec` of a field: its type's own kind and optionality (through the type's
/// `KeyPart` impl, so aliases and type parameters are the types they name), then the field's
/// attributes. The rules it must keep are checked in `SHAPE` (see [`Gen::checks`]).
fn spec(field: &Field<'_>, krate: &TokenStream) -> TokenStream {
    spec_with(field, krate, None)
}

/// [`spec`], with `precision` in place of the lookup of the field's precision (`None`: the lookup;
/// `Some` of nothing: no precision, where the field's spec does not depend on it).
fn spec_with(
    field: &Field<'_>,
    krate: &TokenStream,
    precision: Option<TokenStream>,
) -> TokenStream {
    let ty = field.ty;
    let base = quote_spanned!(ty.span()=> <#ty as #krate::KeyPart>::BASE_SPEC);
    let a = &field.attrs;
    let width = a.width.as_ref().map(|w| {
        let w = w.value;
        quote!(.with_width(#w))
    });
    let desc = a.desc.map(|_| quote!(.descending()));
    let escaped = a.escaped.map(|_| quote!(.escaped()));
    let precision = a.precision.as_ref().and_then(|p| {
        let lookup = precision.unwrap_or_else(|| precision_lookup(p, krate));
        (!lookup.is_empty()).then(|| quote!(.with_precision(#lookup)))
    });
    tpl!(
        r#"#base #width #desc #escaped #precision"#,
        base,
        width,
        desc,
        escaped,
        precision
    )
}

/// The precision of `#[pk(precision = name)]`, looked up by pk-codec: an unknown name is a
/// compile error on the name.
fn precision_lookup(p: &attr::WithSpan<String>, krate: &TokenStream) -> TokenStream {
    let (name, span) = (&p.value, p.span);
    respan(
        tpl!(r#"#krate::__private::precision(#name)"#, krate, name),
        span,
    )
}

/// What a field contributes to the bucket of a bucketed key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    None,
    Modulo,
    Hashed,
}

struct Gen<'i, 'a> {
    input: &'i Input<'a>,
    /// The path of pk-codec: `::pk_codec`, or what `#[pk(crate = "...")]` says.
    krate: TokenStream,
    roles: Vec<Role>,
}

impl Gen<'_, '_> {
    fn new<'i, 'a>(input: &'i Input<'a>) -> Gen<'i, 'a> {
        let mut roles = vec![Role::None; input.fields.len()];
        if let Some(h) = &input.attrs.hash {
            for m in &h.value.fields {
                if let Some((i, _)) = valid::find(input, m) {
                    roles[i] = Role::Hashed;
                }
            }
        }
        if let Some(b) = &input.attrs.buckets {
            match &b.value.by {
                BucketBy::Modulo(m) => {
                    if let Some((i, _)) = valid::find(input, m) {
                        roles[i] = Role::Modulo;
                    }
                }
                // All fields: the whole natural key is hashed, no spans needed.
                BucketBy::Hash(members) if members.is_empty() => {}
                BucketBy::Hash(members) => {
                    for m in members {
                        if let Some((i, _)) = valid::find(input, m) {
                            roles[i] = Role::Hashed;
                        }
                    }
                }
            }
        }
        Gen {
            input,
            krate: input
                .attrs
                .krate
                .clone()
                .unwrap_or_else(|| quote!(::pk_codec)),
            roles,
        }
    }

    fn has_prefix(&self) -> bool {
        self.input.attrs.hash.is_some() || self.input.attrs.buckets.is_some()
    }

    /// The `KeyShape` expression, its parameters checked by pk-codec's rulebook.
    fn shape(&self) -> TokenStream {
        let krate = &self.krate;
        let c = &self.input.attrs;
        let d = c.delimiter.as_ref().map_or(',', |d| d.value);
        let max_len = c.max_len.as_ref().map(|m| {
            let m = m.value;
            quote!(.with_max_len(#m))
        });
        let prefix = if let Some(h) = &c.hash {
            let (name, span) = (&h.value.alg.value, h.value.alg.span);
            let alg = respan(
                tpl!(r#"#krate::__private::hash_alg(#name)"#, krate, name),
                span,
            );
            let len = h.value.len.value;
            let sep = separator(krate, h.value.separator);
            let over = if h.value.fields.is_empty() {
                quote!(#krate::HashOver::Key)
            } else {
                quote!(#krate::HashOver::LeadingFields)
            };
            let prefix = tpl!(
                r#"#krate::Prefix::Hash { alg: #alg, len: #len, separator: #sep, over: #over }"#,
                krate,
                alg,
                len,
                sep,
                over
            );
            Some(with_prefix(krate, &prefix, h.span))
        } else {
            c.buckets.as_ref().map(|b| {
                let count = b.value.count.value;
                let sep = separator(krate, b.value.separator);
                let by = match b.value.by {
                    BucketBy::Modulo(_) => quote!(#krate::BucketBy::Modulo),
                    BucketBy::Hash(_) => quote!(#krate::BucketBy::Hash),
                };
                let prefix = tpl!(
                    r#"#krate::Prefix::Bucket { count: #count, by: #by, separator: #sep }"#,
                    krate,
                    count,
                    by,
                    sep
                );
                with_prefix(krate, &prefix, b.span)
            })
        };
        let span = c
            .delimiter
            .as_ref()
            .map_or_else(proc_macro2::Span::call_site, |d| d.span);
        let delimiter = respan(tpl!(r#"#krate::__private::delimiter(#d)"#, krate, d), span);
        let span = c
            .max_len
            .as_ref()
            .map_or_else(proc_macro2::Span::call_site, |m| m.span);
        let shape = tpl!(
            r#"#krate::KeyShape::new(#delimiter) #max_len #prefix"#,
            krate,
            delimiter,
            max_len,
            prefix
        );
        call_at(quote!(#krate::__private::shape), shape, span)
    }

    /// Statements, evaluated in the `SHAPE` constant, that check every field and the prefix's
    /// fields against pk-codec's rulebook: a broken rule is a compile error spanned on the field.
    fn checks(&self) -> TokenStream {
        let mut out = self.field_checks(true);
        out.extend(self.prefix_checks());
        out
    }

    /// The checks of [`Gen::checks`] that concern the fields alone (names, widths, forms, nested
    /// keys), against `__pk_shape`; with `modulo`, also the field a modulo bucket reads.
    fn field_checks(&self, modulo: bool) -> TokenStream {
        let krate = &self.krate;
        let mut out = TokenStream::new();
        for (i, field) in self.input.fields.iter().enumerate() {
            let ty = field.ty;
            let name = &field.name;
            // Every token of a check carries the field's span, so that a broken rule is reported
            // on the field, not on the derive.
            let at_field = |tokens: TokenStream| respan(tokens, field.member.span());
            let at_type = |tokens: TokenStream| respan(tokens, ty.span());
            out.extend(at_field(tpl!(
                r#"#krate::__private::field_name(#name);"#,
                krate,
                name
            )));
            // The precision is looked up first, on its own, so that an unknown name is reported
            // on the attribute (the checks below carry the field's span in every token).
            let precision = field.attrs.precision.as_ref().map(|p| {
                let var = format_ident!("__pk_precision_{}", i);
                let lookup = precision_lookup(p, krate);
                out.extend(quote!(let #var = #lookup;));
                quote!(#var)
            });
            let spec = spec_with(field, krate, precision);
            // A declared width, `0` included, needs an integer: after the field's own checks, so
            // that a nested key is refused for having attributes at all.
            let declared_width = field.attrs.width.as_ref().map(|w| {
                respan(
                    tpl!(
                        r#"#krate::__private::declared_width::<#ty>(#spec);"#,
                        krate,
                        ty,
                        spec
                    ),
                    w.span,
                )
            });
            match field.form {
                Form::Part => {
                    let a = &field.attrs;
                    let attributes = a.width.is_some()
                        || a.desc.is_some()
                        || a.escaped.is_some()
                        || a.precision.is_some();
                    out.extend(at_type(tpl!(
                        r#"
                        #krate::__private::part::<#ty>(&__pk_shape, #spec, #attributes);
                    "#,
                        krate,
                        ty,
                        spec,
                        attributes
                    )));
                    if modulo && self.roles[i] == Role::Modulo {
                        out.extend(at_type(tpl!(
                            r#"#krate::__private::modulo_part::<#ty>(#spec);"#,
                            krate,
                            ty,
                            spec
                        )));
                    }
                }
                _ => {
                    out.extend(at_type(tpl!(
                        r#"#krate::__private::field(&__pk_shape, #spec);"#,
                        krate,
                        spec
                    )));
                    if modulo && self.roles[i] == Role::Modulo {
                        out.extend(at_type(tpl!(
                            r#"#krate::__private::modulo_field(#spec);"#,
                            krate,
                            spec
                        )));
                    }
                }
            }
            out.extend(declared_width);
            // The delimiter against the field's lowest byte, reported on the `delimiter`
            // attribute (on the field without one) with the one case that applies: the panic
            // is the generated code's own, so the error names no private function.
            let floor = match field.form {
                Form::Part => tpl!(
                    r#"#krate::__private::part_floor::<#ty>(&#spec)"#,
                    krate,
                    ty,
                    spec
                ),
                _ => tpl!(r#"#krate::__private::delimiter_floor(&#spec)"#, krate, spec),
            };
            // Spanned on the attribute (on the field without one): the error points there. Only
            // `__pk_shape`, the derive's own binding, keeps the derive's span, so that it
            // resolves whatever macro wrote the attribute.
            let at = self
                .input
                .attrs
                .delimiter
                .as_ref()
                .map_or_else(|| ty.span(), |d| d.span);
            let head = respan(
                tpl!(r#"if let ::core::option::Option::Some(__pk_broken) ="#),
                at,
            );
            let call = respan(quote!(#krate::__private::floor_broken), at);
            let floor = respan(floor, at);
            let body = respan(
                tpl!(
                    r#"{
                    ::core::panic!("{}", __pk_broken);
                }"#
                ),
                at,
            );
            out.extend(tpl!(
                r#"#head #call(__pk_shape.delimiter(), #floor) #body"#,
                head,
                call,
                floor,
                body
            ));
        }
        out
    }

    /// The checks of [`Gen::checks`] that concern the prefix's fields.
    fn prefix_checks(&self) -> TokenStream {
        let mut out = TokenStream::new();
        let krate = &self.krate;
        if self.roles.contains(&Role::Hashed) {
            let flags = self.roles.iter().map(|r| *r == Role::Hashed);
            let c = &self.input.attrs;
            let (check, span) = match (&c.hash, &c.buckets) {
                (Some(h), _) => (quote!(hash_leading), h.span),
                (_, Some(b)) => (quote!(hash_runs), b.span),
                _ => (quote!(hash_runs), proc_macro2::Span::call_site()),
            };
            out.extend(respan(
                tpl!(r#"#krate::__private::#check(&[#(#flags),*]);"#, krate, check; flags),
                span,
            ));
        }
        out
    }

    /// `FIELD_FLOOR`: the lowest floor of the fields, nested keys included.
    fn field_floor(&self) -> TokenStream {
        let krate = &self.krate;
        let mut floor = quote!(::core::primitive::u8::MAX);
        for field in &self.input.fields {
            let ty = field.ty;
            // No precision: it does not change a floor, and an unknown one is reported by `SHAPE`.
            let spec = spec_with(field, &self.krate, Some(TokenStream::new()));
            let one = match field.form {
                Form::Part => {
                    quote_spanned!(ty.span()=> #krate::__private::part_floor::<#ty>(&#spec))
                }
                _ => tpl!(r#"#krate::__private::delimiter_floor(&#spec)"#, krate, spec),
            };
            floor = tpl!(
                r#"#krate::__private::min_floor(#floor, #one)"#,
                krate,
                floor,
                one
            );
        }
        floor
    }

    /// Writes field `i` of `self`; with `bookkeeping`, also declares the bucket value or span.
    fn write_field(&self, i: usize, bookkeeping: bool) -> TokenStream {
        let krate = &self.krate;
        let field = &self.input.fields[i];
        let m = &field.member;
        let ty = field.ty;
        let name = &field.name;
        let role = if bookkeeping {
            self.roles[i]
        } else {
            Role::None
        };
        match field.form {
            Form::Part => {
                let spec = spec(field, &self.krate);
                let call = quote_spanned!(ty.span()=> <#ty as #krate::KeyPart>::write_part);
                let write = tpl!(
                    r#"#call(&self.#m, &const { #spec }, #name, __pk_w)?;"#,
                    call,
                    m,
                    spec,
                    name
                );
                match role {
                    Role::Hashed => {
                        // The span starts after the delimiter the part's first field writes.
                        let skip = usize::from(i > 0);
                        // `min`: a hand-written nested key may write no field at all.
                        tpl!(
                            r#"
                            let __pk_start = __pk_w.position() + #skip;
                            #write
                            __pk_w.bucket_span(::core::cmp::min(__pk_start, __pk_w.position()));
                        "#,
                            skip,
                            write
                        )
                    }
                    Role::Modulo => tpl!(
                        r#"
                        #write
                        #krate::__private::bucket_value(__pk_w, &self.#m);
                    "#,
                        write,
                        krate,
                        m
                    ),
                    Role::None => write,
                }
            }
            _ => {
                let spec = spec(field, &self.krate);
                let call = quote_spanned!(ty.span()=> <#ty as #krate::KeyField>::encode_field);
                let write = tpl!(
                    r#"
                    #call(&self.#m, &const { #spec }, #name, __pk_w)?;
                "#,
                    call,
                    m,
                    spec,
                    name
                );
                match role {
                    Role::None => quote!(__pk_w.begin_field(); #write),
                    Role::Modulo => tpl!(
                        r#"
                        __pk_w.begin_field();
                        #write
                        #krate::__private::bucket_value(__pk_w, &self.#m);
                    "#,
                        write,
                        krate,
                        m
                    ),
                    Role::Hashed => tpl!(
                        r#"
                        __pk_w.begin_field();
                        let __pk_start = __pk_w.position();
                        #write
                        __pk_w.bucket_span(__pk_start);
                    "#,
                        write
                    ),
                }
            }
        }
    }

    /// Reads field `i` into `__pk_f{i}`.
    fn read_field(&self, i: usize, bookkeeping: bool) -> TokenStream {
        self.read_field_as(i, bookkeeping, None)
    }

    /// Reads field `i` into `__pk_f{i}`; with `borrowed`, through `BorrowDecodePart<'lifetime>`.
    fn read_field_as(
        &self,
        i: usize,
        bookkeeping: bool,
        borrowed: Option<&TokenStream>,
    ) -> TokenStream {
        let krate = &self.krate;
        let field = &self.input.fields[i];
        let ty = field.ty;
        let name = &field.name;
        let var = format_ident!("__pk_f{}", i);
        let role = if bookkeeping {
            self.roles[i]
        } else {
            Role::None
        };
        let form = if borrowed.is_some() {
            Form::Part
        } else {
            field.form
        };
        match form {
            Form::Part => {
                let spec = spec(field, &self.krate);
                let call = match borrowed {
                    Some(lt) => quote_spanned! {ty.span()=>
                        <#ty as #krate::BorrowDecodePart<#lt>>::read_part_borrowed
                    },
                    None => quote_spanned!(ty.span()=> <#ty as #krate::DecodePart>::read_part),
                };
                let read = read_into(&var, &call, &spec, name);
                match role {
                    Role::Hashed => {
                        let skip = usize::from(i > 0);
                        tpl!(
                            r#"
                            let __pk_start = __pk_r.position() + #skip;
                            #read
                            __pk_r.bucket_span(::core::cmp::min(__pk_start, __pk_r.position()));
                        "#,
                            skip,
                            read
                        )
                    }
                    Role::Modulo => tpl!(
                        r#"
                        #read
                        #krate::__private::read_bucket_value(__pk_r, &#var);
                    "#,
                        read,
                        krate,
                        var
                    ),
                    Role::None => read,
                }
            }
            _ => {
                let spec = spec(field, &self.krate);
                let call = quote_spanned!(ty.span()=> <#ty as #krate::DecodeField>::decode_field);
                let read = tpl!(
                    r#"
                    let #var = #call(&const { #spec }, #name, __pk_r)?;
                "#,
                    var,
                    call,
                    spec,
                    name
                );
                match role {
                    Role::None => tpl!(r#"__pk_r.begin_field(#name)?; #read"#, name, read),
                    Role::Modulo => tpl!(
                        r#"
                        __pk_r.begin_field(#name)?;
                        #read
                        #krate::__private::read_bucket_value(__pk_r, &#var);
                    "#,
                        name,
                        read,
                        krate,
                        var
                    ),
                    Role::Hashed => tpl!(
                        r#"
                        __pk_r.begin_field(#name)?;
                        let __pk_start = __pk_r.position();
                        #read
                        __pk_r.bucket_span(__pk_start);
                    "#,
                        name,
                        read
                    ),
                }
            }
        }
    }

    /// Writes field `i` of `self` in the binary form (no delimiters: every binary field form is
    /// self-delimiting); with `bookkeeping`, also declares the bucket value or span.
    fn write_field_bin(&self, i: usize, bookkeeping: bool) -> TokenStream {
        let krate = &self.krate;
        let field = &self.input.fields[i];
        let m = &field.member;
        let ty = field.ty;
        let name = &field.name;
        let spec = spec(field, krate);
        let call = match field.form {
            Form::Part => quote_spanned!(ty.span()=> <#ty as #krate::KeyPart>::write_part_binary),
            _ => quote_spanned!(ty.span()=> <#ty as #krate::KeyField>::encode_field_binary),
        };
        let write = tpl!(
            r#"#call(&self.#m, &const { #spec }, #name, __pk_w)?;"#,
            call,
            m,
            spec,
            name
        );
        match if bookkeeping {
            self.roles[i]
        } else {
            Role::None
        } {
            Role::None => write,
            Role::Modulo => tpl!(
                r#"
                #write
                #krate::__private::bin_bucket_value(__pk_w, &self.#m);
            "#,
                write,
                krate,
                m
            ),
            Role::Hashed => tpl!(
                r#"
                let __pk_start = __pk_w.position();
                #write
                __pk_w.bucket_span(__pk_start);
            "#,
                write
            ),
        }
    }

    /// Reads field `i` of a binary key into `__pk_f{i}`, the mirror of [`Gen::write_field_bin`].
    fn read_field_bin(&self, i: usize, bookkeeping: bool) -> TokenStream {
        let krate = &self.krate;
        let field = &self.input.fields[i];
        let ty = field.ty;
        let name = &field.name;
        let var = format_ident!("__pk_f{}", i);
        let spec = spec(field, krate);
        let call = match field.form {
            Form::Part => quote_spanned!(ty.span()=> <#ty as #krate::DecodePart>::read_part_binary),
            _ => quote_spanned!(ty.span()=> <#ty as #krate::DecodeField>::decode_field_binary),
        };
        let read = read_into(&var, &call, &spec, name);
        match if bookkeeping {
            self.roles[i]
        } else {
            Role::None
        } {
            Role::None => read,
            Role::Modulo => tpl!(
                r#"
                #read
                #krate::__private::read_bin_bucket_value(__pk_r, &#var);
            "#,
                read,
                krate,
                var
            ),
            Role::Hashed => tpl!(
                r#"
                let __pk_start = __pk_r.position();
                #read
                __pk_r.bucket_span(__pk_start);
            "#,
                read
            ),
        }
    }

    fn construct(&self) -> TokenStream {
        let inits = self.input.fields.iter().enumerate().map(|(i, f)| {
            let m = &f.member;
            let var = format_ident!("__pk_f{}", i);
            quote!(#m: #var)
        });
        tpl!(r#"Self { #(#inits),* }"#; inits)
    }

    fn layout(&self) -> TokenStream {
        let krate = &self.krate;
        let hashing = self.roles.contains(&Role::Hashed);
        let hashed_decl = hashing.then(|| {
            tpl!(r#"let mut __pk_hashed: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();"#)
        });
        let fields = self.input.fields.iter().enumerate().map(|(i, field)| {
            let name = &field.name;
            let hashed = self.roles[i] == Role::Hashed;
            match field.form {
                Form::Part => {
                    let ty = field.ty;
                    let spec = spec(field, &self.krate);
                    let push = hashed
                        .then(|| tpl!(r#"__pk_hashed.push(::std::clone::Clone::clone(&__pk_name));"#));
                    tpl!(r#"
                        let mut __pk_parts = ::std::vec::Vec::new();
                        <#ty as #krate::KeyPart>::layout_fields(#name, const { #spec }, &mut __pk_parts);
                        for (__pk_name, __pk_spec) in __pk_parts {
                            #push
                            __pk_b = __pk_b.field(__pk_name, __pk_spec);
                        }
                    "#, ty, krate, name, spec, push)
                }
                _ => {
                    let spec = spec(field, &self.krate);
                    let push = hashed
                        .then(|| tpl!(r#"__pk_hashed.push(<::std::string::String as ::core::convert::From<&::core::primitive::str>>::from(#name));"#, name));
                    tpl!(r#"
                        #push
                        __pk_b = __pk_b.field(#name, const { #spec });
                    "#, push, name, spec)
                }
            }
        });
        let c = &self.input.attrs;
        let prefix = if let Some(h) = &c.hash {
            let alg = &h.value.alg.value;
            let (len, sep) = (h.value.len.value, separator(krate, h.value.separator));
            Some(if hashing {
                tpl!(
                    r#"__pk_b = __pk_b.hash_prefix_over(#krate::__private::hash_alg(#alg), #len, #sep, __pk_hashed);"#,
                    krate,
                    alg,
                    len,
                    sep
                )
            } else {
                tpl!(
                    r#"__pk_b = __pk_b.hash_prefix(#krate::__private::hash_alg(#alg), #len, #sep);"#,
                    krate,
                    alg,
                    len,
                    sep
                )
            })
        } else {
            c.buckets.as_ref().map(|b| {
                let (count, sep) = (b.value.count.value, separator(krate, b.value.separator));
                match &b.value.by {
                    BucketBy::Modulo(m) => {
                        let name = valid::find(self.input, m).map_or_else(String::new, |(_, f)| f.name.clone());
                        tpl!(r#"__pk_b = __pk_b.buckets_by_modulo(#count, #name, #sep);"#, count, name, sep)
                    }
                    BucketBy::Hash(_) if hashing => {
                        tpl!(r#"__pk_b = __pk_b.buckets_by_hash(#count, __pk_hashed, #sep);"#, count, sep)
                    }
                    BucketBy::Hash(_) => tpl!(r#"
                        __pk_b = __pk_b.buckets_by_hash(#count, ::std::vec::Vec::<::std::string::String>::new(), #sep);
                    "#, count, sep),
                }
            })
        };
        let ident = self.input.original.ident.to_string();
        tpl!(r#"
            let __pk_shape = <Self as #krate::PartitionKey>::SHAPE;
            let mut __pk_b = #krate::Layout::builder()
                .delimiter(__pk_shape.delimiter())
                .max_len(__pk_shape.max_len())
                .form(<Self as #krate::PartitionKey>::FORM);
            #hashed_decl
            #(#fields)*
            #prefix
            match __pk_b.build() {
                ::core::result::Result::Ok(layout) => layout,
                // The derive checked everything `build` checks; reaching this is a bug in pk-derive.
                ::core::result::Result::Err(e) => ::core::panic!("pk-derive built an invalid layout for `{}`: {}", #ident, e),
            }
        "#, krate, hashed_decl, prefix, ident; fields)
    }

    /// The body of `KeyPart::layout_fields` for this key spliced into another as `__pk_field`:
    /// each field, named `__pk_field.name`, as [`Gen::layout`] lists them. Not through this key's
    /// own `layout()`, which checks its own delimiter, prefix and limit: a nested key uses none of
    /// them, so a generic key whose instance could not be a key of its own is still a valid part.
    fn nested_layout_fields(&self) -> Vec<TokenStream> {
        let krate = &self.krate;
        self.input
            .fields
            .iter()
            .map(|field| {
                let name = &field.name;
                let spec = spec(field, krate);
                let path = tpl!(r#"
                    ::std::format!("{}.{}", __pk_field, #name)
                "#, name);
                match field.form {
                    Form::Part => {
                        let ty = field.ty;
                        tpl!(r#"
                            <#ty as #krate::KeyPart>::layout_fields(&#path, const { #spec }, __pk_out);
                        "#, ty, krate, path, spec)
                    }
                    _ => tpl!(r#"
                        __pk_out.push((#path, const { #spec }));
                    "#, path, spec),
                }
            })
            .collect()
    }

    /// The parameter name of field `i` in range constructors.
    fn param(&self, i: usize) -> Ident {
        match &self.input.fields[i].member {
            Member::Named(ident) => ident.clone(),
            Member::Unnamed { .. } => format_ident!("field_{}", i),
        }
    }

    /// The parameter type for an equality condition on field `i`, and the type its bounds range over.
    fn arg_types(&self, i: usize) -> (TokenStream, TokenStream) {
        let field = &self.input.fields[i];
        let ty = field.ty;
        match field.form {
            Form::Scalar {
                kind: Some(kind),
                optional: false,
            } => match kind {
                ScalarKind::Str => (
                    quote!(&::core::primitive::str),
                    quote!(&'__pk ::core::primitive::str),
                ),
                ScalarKind::Bytes => (
                    quote!(&[::core::primitive::u8]),
                    tpl!(r#"&'__pk [::core::primitive::u8]"#),
                ),
                _ => (quote!(#ty), quote!(#ty)),
            },
            _ => (quote!(&#ty), quote!(#ty)),
        }
    }

    /// Writes a value of field `i`: `value` is a parameter of the type [`Gen::arg_types`] gives,
    /// for an equality (`bound == false`, which also declares what the field contributes to the
    /// bucket, as encoding does), or a `&` of its bound type, for a bound. With `binary`, in the
    /// binary form (a `BinWriter`, no delimiter), else in the text form (a `KeyWriter`).
    fn write_value(&self, i: usize, value: &TokenStream, bound: bool, binary: bool) -> TokenStream {
        let krate = &self.krate;
        let [h_w, h_start] = ["__pk_w", "__pk_start"].map(hygienic);
        let field = &self.input.fields[i];
        let ty = field.ty;
        let name = &field.name;
        let role = if bound { Role::None } else { self.roles[i] };
        // A hashed field's span: from `#h_start`, taken where its bytes start (each equality has a
        // writer of its own, so a part's first field writes no delimiter), to where they end.
        let (span_start, span_end) = match role {
            Role::Hashed => (
                Some(tpl!(r#"let #h_start = #h_w.position();"#, h_start, h_w)),
                // `min`: a hand-written nested key may write no field at all.
                Some(tpl!(
                    r#"#h_w.bucket_span(::core::cmp::min(#h_start, #h_w.position()));"#,
                    h_w,
                    h_start
                )),
            ),
            _ => (None, None),
        };
        let bucket_value = if binary {
            quote!(#krate::__private::bin_bucket_value)
        } else {
            quote!(#krate::__private::bucket_value)
        };
        let (target, arg) = match field.form {
            Form::Part => {
                let spec = spec(field, &self.krate);
                let bucket = (role == Role::Modulo)
                    .then(|| tpl!(r#"#bucket_value(#h_w, #value);"#, bucket_value, h_w, value));
                let write_part = if binary {
                    quote!(write_part_binary)
                } else {
                    quote!(write_part)
                };
                return tpl!(
                    r#"{
                    #span_start
                    <#ty as #krate::KeyPart>::#write_part(#value, &const { #spec }, #name, #h_w)?;
                    #span_end
                    #bucket
                    ::core::result::Result::Ok(())
                }"#,
                    span_start,
                    ty,
                    krate,
                    write_part,
                    value,
                    spec,
                    name,
                    h_w,
                    span_end,
                    bucket
                );
            }
            Form::Scalar {
                kind: Some(ScalarKind::Str),
                optional: false,
            } => (
                quote!(::core::primitive::str),
                if bound {
                    quote!(*#value)
                } else {
                    quote!(#value)
                },
            ),
            Form::Scalar {
                kind: Some(ScalarKind::Bytes),
                optional: false,
            } => (
                quote!([::core::primitive::u8]),
                if bound {
                    quote!(*#value)
                } else {
                    quote!(#value)
                },
            ),
            Form::Scalar {
                kind: Some(_),
                optional: false,
            } => (
                quote!(#ty),
                if bound {
                    quote!(#value)
                } else {
                    quote!(&#value)
                },
            ),
            _ => (quote!(#ty), quote!(#value)),
        };
        let spec = spec(field, &self.krate);
        let (begin, call) = if binary {
            (
                None,
                quote_spanned!(ty.span()=> <#target as #krate::KeyField>::encode_field_binary),
            )
        } else {
            (
                Some(quote!(#h_w.begin_field();)),
                quote_spanned!(ty.span()=> <#target as #krate::KeyField>::encode_field),
            )
        };
        let bucket = (role == Role::Modulo)
            .then(|| tpl!(r#"#bucket_value(#h_w, #arg);"#, bucket_value, h_w, arg));
        tpl!(
            r#"{
            #begin
            #span_start
            #call(#arg, &const { #spec }, #name, #h_w)?;
            #span_end
            #bucket
            ::core::result::Result::Ok(())
        }"#,
            begin,
            span_start,
            call,
            arg,
            spec,
            name,
            h_w,
            span_end,
            bucket
        )
    }

    fn ranges(&self, vis: &TokenStream) -> TokenStream {
        let krate = &self.krate;
        // Locals of the generated functions, hygienic so that a field (so a parameter) named
        // `__pk_b` cannot capture them.
        let [h_b, h_w, h_v, h_x, h_enc, h_lo, h_hi] = [
            "__pk_b", "__pk_w", "__pk_v", "__pk_x", "__pk_enc", "__pk_lo", "__pk_hi",
        ]
        .map(hygienic);
        let n = self.input.fields.len();
        let ident = &self.input.original.ident;
        // The bounds parameter, named after no field (each field is a parameter too): `bounds`,
        // or `bounds_`, `bounds__`, ... when fields take those names.
        let mut bounds_name = String::from("bounds");
        while self.input.fields.iter().any(|f| f.name == bounds_name) {
            bounds_name.push('_');
        }
        let bounds_name = format_ident!("{}", bounds_name);
        // The equality fields after which every field the prefix is computed from is given
        // (`RangeBuilder::end_hashed`): through the last hashed field, or every field for a
        // bucket hash over the whole key. A bucket hash then picks one bucket.
        let hashed_end = match &self.input.attrs.buckets {
            Some(b) if matches!(&b.value.by, BucketBy::Hash(members) if members.is_empty()) => {
                Some(n)
            }
            _ => self
                .roles
                .iter()
                .rposition(|r| *r == Role::Hashed)
                .map(|last| last + 1),
        };
        // With a hash prefix over leading fields, a range fixes those fields first: the fields
        // up to the last hashed one are equality conditions in every constructor.
        let hashed = hashed_end
            .filter(|_| self.input.attrs.hash.is_some())
            .unwrap_or(0);
        // The constructors answer the key's own form: byte ranges of binary keys for
        // `#[pk(form = binary)]` (the name pk-codec's `__private::form` maps to `Form::Binary`,
        // which `FORM` is set from; any other name is a compile error there), text ranges
        // otherwise. The return type says which.
        let binary = self
            .input
            .attrs
            .form
            .as_ref()
            .is_some_and(|f| f.value == "binary");
        let (builder, range_ty, bucket_bounds_fn, what) = if binary {
            (
                quote!(#krate::BinRangeBuilder),
                quote!(#krate::ByteRange),
                quote!(#krate::__private::bin_bucket_bounds),
                "byte ranges that hold exactly the binary keys",
            )
        } else {
            (
                quote!(#krate::RangeBuilder),
                quote!(#krate::KeyRange),
                quote!(#krate::__private::bucket_bounds),
                "key ranges that hold exactly the keys",
            )
        };
        let mut methods = Vec::new();
        for k in 0..n {
            let field = &self.input.fields[k];
            let params: Vec<Ident> = (0..=k).map(|i| self.param(i)).collect();
            let types: Vec<TokenStream> = (0..=k).map(|i| self.arg_types(i).0).collect();
            let equal: Vec<TokenStream> = (0..=k)
                .map(|i| {
                    let p = &params[i];
                    let write = self.write_value(i, &quote!(#p), false, binary);
                    let end = (Some(i + 1) == hashed_end).then(|| quote!(#h_b.end_hashed();));
                    tpl!(r#"#h_b.equal(|#h_w| #write)?; #end"#, h_b, h_w, write, end)
                })
                .collect();
            let before = if k == 0 {
                String::new()
            } else {
                let names: Vec<String> = self.input.fields[..k]
                    .iter()
                    .map(|f| format!("`{}`", f.name))
                    .collect();
                format!("whose {} equal the given values and ", names.join(", "))
            };
            let suffix = &field.method_suffix;
            let name = &field.name;
            let in_name = format_ident!("ranges_{}", suffix);
            let eq_name = format_ident!("ranges_{}_eq", suffix);
            let bound_ty = self.arg_types(k).1;
            let bound_lt = matches!(
                field.form,
                Form::Scalar {
                    kind: Some(ScalarKind::Str | ScalarKind::Bytes),
                    optional: false
                }
            )
            .then(|| quote!(<'__pk>));
            let (head_params, head_types, head_equal) = (&params[..k], &types[..k], &equal[..k]);
            let bounded = self.write_value(k, &quote!(#h_v), true, binary);
            // Bounds on a modulo bucket's field leave it some values: only their buckets are read.
            let bucket_bounds = (self.roles[k] == Role::Modulo).then(|| {
                let spec = spec(field, krate);
                tpl!(
                    r#"
                    #bucket_bounds_fn(
                        &mut #h_b,
                        &const { #spec },
                        ::core::ops::RangeBounds::start_bound(&#bounds_name),
                        ::core::ops::RangeBounds::end_bound(&#bounds_name),
                    );
                "#,
                    bucket_bounds_fn,
                    h_b,
                    spec,
                    bounds_name
                )
            });
            let order = if field.attrs.desc.is_some() {
                quote!(#krate::Order::Desc)
            } else {
                quote!(#krate::Order::Asc)
            };
            let in_doc = format!(
                "The {what} of `{ident}` {before}whose `{name}` lies within `{bounds_name}` \
                 (in value order, also for a descending field): one range, or one per bucket for a bucketed key.\n\n\
                 Generated by `#[derive(PartitionKey)]`.\n\n# Errors\n\nAn equality value or bound that does not fit \
                 its field (see `PartitionKey::encode_into`)."
            );
            let eq_doc = format!(
                "The {what} of `{ident}` {before}whose `{name}` equals the given value: \
                 one range, or one per bucket for a bucketed key.\n\nGenerated by `#[derive(PartitionKey)]`.\n\n\
                 # Errors\n\nA value that does not fit its field (see `PartitionKey::encode_into`)."
            );
            let in_method = tpl!(r#"
                #[doc = #in_doc]
                #vis fn #in_name #bound_lt(
                    #(#head_params: #head_types,)*
                    #bounds_name: impl ::core::ops::RangeBounds<#bound_ty>,
                ) -> #krate::Result<::std::vec::Vec<#range_ty>> {
                    let mut #h_b = #builder::new(&<Self as #krate::PartitionKey>::SHAPE)?;
                    #(#head_equal)*
                    let #h_enc = |#h_b: &#builder<'_>, #h_v: &#bound_ty| {
                        #h_b.bound(|#h_w| #bounded)
                    };
                    let #h_lo = match ::core::ops::RangeBounds::start_bound(&#bounds_name) {
                        ::core::ops::Bound::Included(#h_x) => ::core::ops::Bound::Included(#h_enc(&#h_b, #h_x)?),
                        ::core::ops::Bound::Excluded(#h_x) => ::core::ops::Bound::Excluded(#h_enc(&#h_b, #h_x)?),
                        ::core::ops::Bound::Unbounded => ::core::ops::Bound::Unbounded,
                    };
                    let #h_hi = match ::core::ops::RangeBounds::end_bound(&#bounds_name) {
                        ::core::ops::Bound::Included(#h_x) => ::core::ops::Bound::Included(#h_enc(&#h_b, #h_x)?),
                        ::core::ops::Bound::Excluded(#h_x) => ::core::ops::Bound::Excluded(#h_enc(&#h_b, #h_x)?),
                        ::core::ops::Bound::Unbounded => ::core::ops::Bound::Unbounded,
                    };
                    #bucket_bounds
                    #h_b.finish(
                        #h_lo.as_ref().map(::core::ops::Deref::deref),
                        #h_hi.as_ref().map(::core::ops::Deref::deref),
                        #order,
                    )
                }
            "#, in_doc, vis, in_name, bound_lt, bounds_name, bound_ty, krate, range_ty, h_b, builder, h_enc, h_v, h_w, bounded, h_lo, h_x, h_hi, bucket_bounds, order; head_params, head_types, head_equal);
            let eq_method = tpl!(r#"
                #[doc = #eq_doc]
                #vis fn #eq_name(
                    #(#params: #types,)*
                ) -> #krate::Result<::std::vec::Vec<#range_ty>> {
                    let mut #h_b = #builder::new(&<Self as #krate::PartitionKey>::SHAPE)?;
                    #(#equal)*
                    #h_b.finish(
                        ::core::ops::Bound::Unbounded,
                        ::core::ops::Bound::Unbounded,
                        #krate::Order::Asc,
                    )
                }
            "#, eq_doc, vis, eq_name, krate, range_ty, h_b, builder; params, types, equal);
            // Only the constructors that fix every hashed field (all of them without one).
            if k >= hashed {
                methods.push(in_method);
            }
            if k + 1 >= hashed {
                methods.push(eq_method);
            }
        }
        quote!(#(#methods)*)
    }
}

/// `BorrowDecodeKey` (and, for a borrowing struct, `BorrowDecodePart`): for a struct without
/// lifetimes, the owned decode; for a struct with one lifetime, every field read through
/// `BorrowDecodePart<'a>`, so `&'a str` borrows from the key. A field that cannot be read that way
/// (`&'a [u8]`) leaves the impl's bounds unmet, so the struct encodes only.
fn borrow_decode(g: &Gen<'_, '_>, input: &Input<'_>) -> Option<TokenStream> {
    let krate = &g.krate;
    let generics = &input.original.generics;
    let ident = &input.original.ident;
    let (_, ty_generics, _) = generics.split_for_impl();
    let lifetimes: Vec<&GenericParam> = generics.lifetimes().collect();
    match lifetimes.as_slice() {
        // Fields that borrow without a lifetime of the struct's (`&'static str`): no owned
        // decode to go through, so the struct encodes only.
        [] if input.fields.iter().any(|f| ast::borrows(f.ty)) => None,
        [] => {
            // The struct's parameters (no lifetimes here) after `'__pk_de`; the where clause is
            // `decode_where`'s.
            let with_de = generics.with_lifetime_first("__pk_de");
            let (impl_generics, _, _) = with_de.split_for_impl();
            let decode_where = where_clause(input, true, krate);
            Some(tpl!(
                r#"
                #[automatically_derived]
                impl #impl_generics #krate::BorrowDecodeKey<'__pk_de> for #ident #ty_generics #decode_where {
                    #[inline]
                    fn read_fields_borrowed(__pk_r: &mut #krate::KeyReader<'__pk_de>) -> #krate::Result<Self> {
                        <Self as #krate::DecodeKey>::read_fields(__pk_r)
                    }

                    #[inline]
                    fn decode_borrowed(__pk_key: &'__pk_de ::core::primitive::str) -> #krate::Result<Self> {
                        <Self as #krate::DecodeKey>::decode(__pk_key)
                    }
                }
            "#,
                impl_generics,
                krate,
                ident,
                ty_generics,
                decode_where
            ))
        }
        [one] => {
            let lt = &one.name();
            let (impl_generics, _, _) = generics.split_for_impl();
            let mut preds: Vec<TokenStream> = generics.where_predicates.clone();
            let n = input.fields.len();
            for f in &input.fields {
                let ty = f.ty;
                preds.push(tpl!(r#"#ty: #krate::BorrowDecodePart<#lt>"#, ty, krate, lt));
            }
            preds.extend(bounds(input, false, krate));
            let borrow_where = input::where_clause(&preds);
            let checks: Vec<TokenStream> = input
                .fields
                .iter()
                .map(|f| {
                    let ty = f.ty;
                    let spec = spec(f, krate);
                    respan(
                        tpl!(
                            r#"const { #krate::__private::borrow_form::<#lt, #ty>(#spec) };"#,
                            krate,
                            lt,
                            ty,
                            spec
                        ),
                        ty.span(),
                    )
                })
                .collect();
            let plain: Vec<TokenStream> = (0..n)
                .map(|i| g.read_field_as(i, false, Some(lt)))
                .collect();
            let construct = g.construct();
            // With a prefix, the fields are read by `decode_borrowed` itself, not through
            // `read_fields_borrowed`: it checks the borrowed forms too.
            let (body, prefix_checks) = if g.has_prefix() {
                let read: Vec<TokenStream> =
                    (0..n).map(|i| g.read_field_as(i, true, Some(lt))).collect();
                (
                    tpl!(r#"|__pk_r| { #(#read)* ::core::result::Result::Ok(#construct) }"#, construct; read),
                    checks.clone(),
                )
            } else {
                (
                    tpl!(
                        r#"<Self as #krate::BorrowDecodeKey<#lt>>::read_fields_borrowed"#,
                        krate,
                        lt
                    ),
                    Vec::new(),
                )
            };
            Some(tpl!(r#"
                #[automatically_derived]
                impl #impl_generics #krate::BorrowDecodeKey<#lt> for #ident #ty_generics #borrow_where {
                    #[inline]
                    fn read_fields_borrowed(__pk_r: &mut #krate::KeyReader<#lt>) -> #krate::Result<Self> {
                        #(#checks)*
                        #(#plain)*
                        ::core::result::Result::Ok(#construct)
                    }

                    #[inline]
                    fn decode_borrowed(__pk_key: &#lt ::core::primitive::str) -> #krate::Result<Self> {
                        #(#prefix_checks)*
                        #krate::__private::decode(&<Self as #krate::PartitionKey>::SHAPE, __pk_key, #body)
                    }
                }

                #[automatically_derived]
                impl #impl_generics #krate::BorrowDecodePart<#lt> for #ident #ty_generics #borrow_where {
                    #[inline]
                    fn read_part_borrowed(
                        _: &#krate::FieldSpec,
                        __pk_field: &::core::primitive::str,
                        __pk_r: &mut #krate::KeyReader<#lt>,
                    ) -> #krate::Result<Self> {
                        <Self as #krate::BorrowDecodeKey<#lt>>::read_fields_borrowed(__pk_r)
                            .map_err(|__pk_e| #krate::__private::in_part(__pk_e, __pk_field))
                    }
                }
            "#, impl_generics, krate, lt, ident, ty_generics, borrow_where, construct, body; checks, plain, prefix_checks))
        }
        _ => None,
    }
}

/// `let <var> = <call>(&const { <spec> }, "<name>", __pk_r)?;`: one field read.
fn read_into(var: &Ident, call: &TokenStream, spec: &TokenStream, name: &str) -> TokenStream {
    tpl!(
        r#"let #var = #call(&const { #spec }, #name, __pk_r)?;"#,
        var,
        call,
        spec,
        name
    )
}

/// `.with_prefix(...)` of the layout builder for a prefix attribute, the call at its span.
fn with_prefix(krate: &TokenStream, prefix: &TokenStream, span: proc_macro2::Span) -> TokenStream {
    let call = respan(
        tpl!(r#"#krate::__private::prefix(#prefix)"#, krate, prefix),
        span,
    );
    quote!(.with_prefix(#call))
}

/// The `Separator` of a prefix attribute.
fn separator(krate: &TokenStream, after: bool) -> TokenStream {
    if after {
        quote!(#krate::Separator::After)
    } else {
        quote!(#krate::Separator::None)
    }
}

/// `function(args)` with the call's own tokens at `span` and the arguments' tokens as they are, so
/// that an error inside an argument keeps its own span.
fn call_at(function: TokenStream, args: TokenStream, span: proc_macro2::Span) -> TokenStream {
    let mut group = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, args);
    group.set_span(span);
    let mut out = respan(function, span);
    out.extend([proc_macro2::TokenTree::Group(group)]);
    out
}

/// The same tokens, every one with `span` (groups included).
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                TokenTree::Group(group)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// An identifier that only the generated code can name (macro-rules hygiene), so that no
/// identifier of the user's, such as a field used as a parameter name, can capture it.
fn hygienic(name: &str) -> Ident {
    Ident::new(name, proc_macro2::Span::mixed_site())
}

/// Where-clause bounds for fields whose types mention a type parameter.
fn bounds(input: &Input<'_>, decode: bool, krate: &TokenStream) -> Vec<TokenStream> {
    let params: Vec<&Ident> = input
        .original
        .generics
        .type_params()
        .filter_map(|p| p.type_ident())
        .collect();
    if params.is_empty() {
        return Vec::new();
    }
    input
        .fields
        .iter()
        .filter(|f| ast::mentions_param(f.ty, &params))
        .map(|f| {
            let ty = f.ty;
            let bound = match (f.form, decode) {
                (Form::Part, false) => quote!(#krate::KeyPart),
                (Form::Part, true) => quote!(#krate::DecodePart),
                (_, false) => quote!(#krate::KeyField),
                (_, true) => quote!(#krate::DecodeField),
            };
            quote!(#ty: #bound)
        })
        .collect()
}

/// The struct's where clause with the bounds its fields need (`bounds`).
fn where_clause(input: &Input<'_>, decode: bool, krate: &TokenStream) -> TokenStream {
    let mut preds: Vec<TokenStream> = input.original.generics.where_predicates.clone();
    preds.extend(bounds(input, decode, krate));
    input::where_clause(&preds)
}

fn expand(input: &Input<'_>) -> TokenStream {
    let g = Gen::new(input);
    let ident = &input.original.ident;
    let vis = &input.original.vis;
    let (impl_generics, ty_generics, _) = input.original.generics.split_for_impl();
    let krate = &g.krate;
    let encode_where = where_clause(input, false, krate);
    let decode_where = where_clause(input, true, krate);

    let shape = g.shape();
    let checks = g.checks();
    // Every rule is checked in this constant, by pk-codec's own `const fn`s. For a struct without
    // type parameters a free constant names it, so `cargo check` evaluates it; for a generic
    // struct it is evaluated for each instance that is used (monomorphization).
    let shape = tpl!(
        r#"{
        let __pk_shape = #shape;
        #checks
        __pk_shape
    }"#,
        shape,
        checks
    );
    let force = (input.original.generics.type_params().next().is_none()
        && input.original.generics.const_params().next().is_none())
    .then(|| {
        let lifetimes = input.original.generics.lifetimes().map(|_| quote!('static));
        let args = (!input.original.generics.params.is_empty()).then(|| quote!(<#(#lifetimes),*>));
        tpl!(
            r#"
            const _: () = {
                let _ = <#ident #args as #krate::PartitionKey>::SHAPE;
                let _ = <#ident #args as #krate::PartitionKey>::FORM;
            };
        "#,
            ident,
            args,
            krate
        )
    });
    let floor = g.field_floor();
    // A key spliced into another is checked through this constant, which the outer key's `SHAPE`
    // evaluates: its fields' rules (not its own delimiter, prefix and limit, which a nested key
    // does not use), so that a generic key used only nested is checked too. The delimiter `\0`
    // passes every floor: the outer key checks `FIELD_FLOOR` against its own delimiter.
    let nested_checks = g.field_checks(false);
    let nested_floor = tpl!(
        r#"{
        let __pk_shape = #krate::KeyShape::new(0);
        #nested_checks
        <Self as #krate::PartitionKey>::FIELD_FLOOR
    }"#,
        krate,
        nested_checks
    );
    let layout = g.layout();
    let nested_fields = g.nested_layout_fields();
    let n = input.fields.len();
    let write_plain: Vec<TokenStream> = (0..n).map(|i| g.write_field(i, false)).collect();
    let read_plain: Vec<TokenStream> = (0..n).map(|i| g.read_field(i, false)).collect();
    let construct = g.construct();
    let (encode_body, decode_body) = if g.has_prefix() {
        let write: Vec<TokenStream> = (0..n).map(|i| g.write_field(i, true)).collect();
        let read: Vec<TokenStream> = (0..n).map(|i| g.read_field(i, true)).collect();
        (
            tpl!(r#"|__pk_w| { #(#write)* ::core::result::Result::Ok(()) }"#; write),
            tpl!(r#"|__pk_r| { #(#read)* ::core::result::Result::Ok(#construct) }"#, construct; read),
        )
    } else {
        (
            tpl!(
                r#"|__pk_w| #krate::PartitionKey::write_fields(self, __pk_w)"#,
                krate
            ),
            tpl!(r#"<Self as #krate::DecodeKey>::read_fields"#, krate),
        )
    };

    // The binary form: the same fields, each in its binary form, one after another.
    let write_plain_bin: Vec<TokenStream> = (0..n).map(|i| g.write_field_bin(i, false)).collect();
    let read_plain_bin: Vec<TokenStream> = (0..n).map(|i| g.read_field_bin(i, false)).collect();
    let (encode_bin_body, decode_bin_body) = if g.has_prefix() {
        let write: Vec<TokenStream> = (0..n).map(|i| g.write_field_bin(i, true)).collect();
        let read: Vec<TokenStream> = (0..n).map(|i| g.read_field_bin(i, true)).collect();
        (
            tpl!(r#"|__pk_w| { #(#write)* ::core::result::Result::Ok(()) }"#; write),
            tpl!(r#"|__pk_r| { #(#read)* ::core::result::Result::Ok(#construct) }"#, construct; read),
        )
    } else {
        (
            tpl!(
                r#"|__pk_w| #krate::PartitionKey::write_fields_binary(self, __pk_w)"#,
                krate
            ),
            tpl!(r#"<Self as #krate::DecodeKey>::read_fields_binary"#, krate),
        )
    };
    // `#[pk(form = name)]`, looked up by pk-codec: an unknown name is a compile error on it.
    let form = input.attrs.form.as_ref().map(|f| {
        let (name, span) = (&f.value, f.span);
        let lookup = respan(tpl!(r#"#krate::__private::form(#name)"#, krate, name), span);
        tpl!(r#"const FORM: #krate::Form = #lookup;"#, krate, lookup)
    });

    // A modulo bucket of one of the key's own fields is known before the fields are written.
    let encode_call = match g.roles.iter().position(|r| *r == Role::Modulo) {
        Some(i) => {
            let m = &input.fields[i].member;
            tpl!(
                r#"
                #krate::__private::encode_modulo(
                    &<Self as #krate::PartitionKey>::SHAPE,
                    __pk_out,
                    &self.#m,
                    #encode_body,
                )
            "#,
                krate,
                m,
                encode_body
            )
        }
        None => {
            tpl!(
                r#"#krate::__private::encode(&<Self as #krate::PartitionKey>::SHAPE, __pk_out, #encode_body)"#,
                krate,
                encode_body
            )
        }
    };

    let borrow_impl = borrow_decode(&g, input);
    let decode_impl = (!input.fields.iter().any(|f| ast::borrows(f.ty))).then(|| {
        tpl!(r#"
            #[automatically_derived]
            impl #impl_generics #krate::DecodePart for #ident #ty_generics #decode_where {
                #[inline]
                fn read_part(
                    _: &#krate::FieldSpec,
                    __pk_field: &::core::primitive::str,
                    __pk_r: &mut #krate::KeyReader<'_>,
                ) -> #krate::Result<Self> {
                    <Self as #krate::DecodeKey>::read_fields(__pk_r)
                        .map_err(|__pk_e| #krate::__private::in_part(__pk_e, __pk_field))
                }

                #[inline]
                fn read_part_binary(
                    _: &#krate::FieldSpec,
                    __pk_field: &::core::primitive::str,
                    __pk_r: &mut #krate::BinReader<'_>,
                ) -> #krate::Result<Self> {
                    <Self as #krate::DecodeKey>::read_fields_binary(__pk_r)
                        .map_err(|__pk_e| #krate::__private::in_part(__pk_e, __pk_field))
                }
            }

            #[automatically_derived]
            impl #impl_generics #krate::DecodeKey for #ident #ty_generics #decode_where {
                #[inline]
                fn read_fields(__pk_r: &mut #krate::KeyReader<'_>) -> #krate::Result<Self> {
                    #(#read_plain)*
                    ::core::result::Result::Ok(#construct)
                }

                #[inline]
                fn decode(__pk_key: &::core::primitive::str) -> #krate::Result<Self> {
                    #krate::__private::decode(&<Self as #krate::PartitionKey>::SHAPE, __pk_key, #decode_body)
                }

                #[inline]
                fn read_fields_binary(__pk_r: &mut #krate::BinReader<'_>) -> #krate::Result<Self> {
                    #(#read_plain_bin)*
                    ::core::result::Result::Ok(#construct)
                }

                #[inline]
                fn decode_binary(__pk_key: &[::core::primitive::u8]) -> #krate::Result<Self> {
                    #krate::__private::decode_bytes(&<Self as #krate::PartitionKey>::SHAPE, __pk_key, #decode_bin_body)
                }
            }
        "#, impl_generics, krate, ident, ty_generics, decode_where, construct, decode_body, decode_bin_body; read_plain, read_plain_bin)
    });

    let ranges = input
        .attrs
        .hash
        .as_ref()
        .is_none_or(|h| !h.value.fields.is_empty())
        .then(|| {
        let methods = g.ranges(vis);
        tpl!(r#"
            #[automatically_derived]
            #[allow(clippy::too_many_arguments, clippy::needless_pass_by_value, clippy::ref_option, clippy::ref_option_ref, clippy::ptr_arg)]
            impl #impl_generics #ident #ty_generics #encode_where {
                #methods
            }
        "#, impl_generics, ident, ty_generics, encode_where, methods)
    });

    tpl!(r#"
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::PartitionKey for #ident #ty_generics #encode_where {
                const SHAPE: #krate::KeyShape = #shape;
                const FIELD_FLOOR: ::core::primitive::u8 = #floor;
                #form

                fn layout() -> #krate::Layout {
                    #layout
                }

                #[inline]
                fn write_fields(&self, __pk_w: &mut #krate::KeyWriter<'_>) -> #krate::Result<()> {
                    #(#write_plain)*
                    ::core::result::Result::Ok(())
                }

                #[inline]
                fn encode_into(&self, __pk_out: &mut ::std::string::String) -> #krate::Result<()> {
                    #encode_call
                }

                #[inline]
                fn write_fields_binary(&self, __pk_w: &mut #krate::BinWriter<'_>) -> #krate::Result<()> {
                    #(#write_plain_bin)*
                    ::core::result::Result::Ok(())
                }

                #[inline]
                fn encode_binary_into(&self, __pk_out: &mut ::std::vec::Vec<::core::primitive::u8>) -> #krate::Result<()> {
                    #krate::__private::encode_bytes(&<Self as #krate::PartitionKey>::SHAPE, __pk_out, #encode_bin_body)
                }
            }

            #[automatically_derived]
            impl #impl_generics #krate::KeyPart for #ident #ty_generics #encode_where {
                const NESTED: ::core::primitive::bool = true;
                // A nested key has no spec of its own: its fields have theirs.
                const BASE_SPEC: #krate::FieldSpec = #krate::FieldSpec::new(#krate::Kind::Bool);
                const NESTED_FLOOR: ::core::primitive::u8 = #nested_floor;

                #[inline]
                fn write_part(
                    &self,
                    _: &#krate::FieldSpec,
                    __pk_field: &::core::primitive::str,
                    __pk_w: &mut #krate::KeyWriter<'_>,
                ) -> #krate::Result<()> {
                    <Self as #krate::PartitionKey>::write_fields(self, __pk_w)
                        .map_err(|__pk_e| #krate::__private::in_part(__pk_e, __pk_field))
                }

                #[inline]
                fn write_part_binary(
                    &self,
                    _: &#krate::FieldSpec,
                    __pk_field: &::core::primitive::str,
                    __pk_w: &mut #krate::BinWriter<'_>,
                ) -> #krate::Result<()> {
                    <Self as #krate::PartitionKey>::write_fields_binary(self, __pk_w)
                        .map_err(|__pk_e| #krate::__private::in_part(__pk_e, __pk_field))
                }

                fn layout_fields(
                    __pk_field: &::core::primitive::str,
                    _: #krate::FieldSpec,
                    __pk_out: &mut ::std::vec::Vec<(::std::string::String, #krate::FieldSpec)>,
                ) {
                    #(#nested_fields)*
                }
            }

            #force

            #decode_impl

            #borrow_impl

            #ranges
        };
    "#, impl_generics, krate, ident, ty_generics, encode_where, shape, floor, form, layout, encode_call, encode_bin_body, nested_floor, force, decode_impl, borrow_impl, ranges; write_plain, write_plain_bin, nested_fields)
}
