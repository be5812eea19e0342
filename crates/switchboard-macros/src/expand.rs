//! The generated code: a registration expression per handler, wrapped for a free function (a
//! unit struct implementing `Register`) or an impl block (`RegisterShared` on the type).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, Item, ItemImpl, LitStr};

use crate::analyse::{self, Handler, Param};
use crate::options::{self, Kind};

/// The paths the generated code names (the facade, as a user's crate sees it).
fn server() -> TokenStream {
    quote!(::switchboard::server)
}

fn private() -> TokenStream {
    quote!(::switchboard::server::register::__private)
}

fn opt(s: Option<&LitStr>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// `Some("description")`: the option, else the doc comment.
fn description(h: &Handler) -> TokenStream {
    match (&h.options.description, &h.docs) {
        (Some(d), _) => quote!(::core::option::Option::Some(#d)),
        (None, Some(doc)) => quote!(::core::option::Option::Some(#doc)),
        (None, None) => quote!(::core::option::Option::None),
    }
}

fn name(h: &Handler) -> TokenStream {
    match &h.options.name {
        Some(n) => quote!(#n),
        None => {
            let n = analyse::wire_name(&h.ident);
            quote!(#n)
        }
    }
}

/// The expression that registers `h` on `builder` (a `ServerBuilder` in scope), calling the
/// handler through `callee` (`add::call` or `__this.add`); `setup` runs once before, `per_call`
/// at each call before the future is made (cloning what the future owns).
fn registration(
    h: &Handler,
    callee: &TokenStream,
    setup: &TokenStream,
    per_call: &TokenStream,
) -> TokenStream {
    let server = server();
    let private = private();
    let name = name(h);
    let title = opt(h.options.title.as_ref());
    let description = description(h);
    let await_ = if h.is_async { quote!(.await) } else { quote!() };
    // The helper's bound on the return type is what fails for an unsupported one: the call is
    // spanned at the return type so that the error points there.
    let at = h.output.span();
    let helper = match h.kind {
        Kind::Tool => quote_spanned!(at=> ::switchboard::server::register::__private::tool),
        Kind::Prompt => quote_spanned!(at=> ::switchboard::server::register::__private::prompt),
        Kind::Resource => quote_spanned!(at=> ::switchboard::server::register::__private::resource),
    };
    match h.kind {
        Kind::Tool => {
            let (args_ty, schema, defs) = tool_args(h);
            let call_args: Vec<TokenStream> = h
                .params
                .iter()
                .map(|p| match p {
                    Param::Value { ident, .. } => quote!(__args.#ident),
                    Param::Args { .. } => quote!(#server::Args(__args)),
                    Param::Context { by_ref: true } => quote!(&__cx),
                    Param::Context { by_ref: false } => quote!(__cx),
                })
                .collect();
            let fut = quote_spanned!(at=> async move { #callee(#(#call_args),*) #await_ });
            let app = app_link(h);
            let register = quote_spanned! {at=>
                builder.registered_tool(#helper::<#args_ty, _, _>(
                    #name, #title, #description, #schema,
                    move |__args: #args_ty, __cx: #server::Context| {
                        #per_call
                        #fut
                    },
                ) #app)
            };
            quote! {{
                #defs
                #setup
                #register
            }}
        }
        Kind::Prompt => {
            let arguments = h.params.iter().filter_map(|p| match p {
                Param::Value {
                    ident,
                    optional,
                    doc,
                    ..
                } => {
                    let n = analyse::wire_name(ident);
                    let required = !optional;
                    let doc = match doc {
                        Some(d) => quote!(::core::option::Option::Some(#d)),
                        None => quote!(::core::option::Option::None),
                    };
                    Some(quote!((#n, #doc, #required)))
                }
                _ => None,
            });
            let call_args = h.params.iter().map(|p| match p {
                Param::Value {
                    ident,
                    optional: false,
                    ..
                } => {
                    let n = analyse::wire_name(ident);
                    quote!(#private::prompt_arg(&mut __get.arguments, #n))
                }
                Param::Value {
                    ident,
                    optional: true,
                    ..
                } => {
                    let n = analyse::wire_name(ident);
                    quote!(#private::prompt_arg_opt(&mut __get.arguments, #n))
                }
                Param::Args { .. } => quote!(),
                Param::Context { by_ref: true } => quote!(&__get.cx),
                Param::Context { by_ref: false } => quote!(__get.cx.clone()),
            });
            let register = quote_spanned! {at=>
                #helper(
                    builder, #name, #title, #description, &[#(#arguments),*],
                    move |__get: #server::PromptGet| {
                        #per_call
                        async move {
                            #[allow(unused_mut)]
                            let mut __get = __get;
                            #callee(#(#call_args),*) #await_
                        }
                    },
                )
            };
            quote! {{
                #setup
                #register
            }}
        }
        Kind::Resource => {
            let uri = h
                .options
                .uri
                .as_ref()
                .map(|u| quote!(#u))
                .unwrap_or_default();
            let templated = h.templated;
            let mime = opt(h.options.mime_type.as_ref());
            let call_args = h.params.iter().map(|p| match p {
                Param::Value { ident, .. } => {
                    let n = analyse::wire_name(ident);
                    quote!(#private::template_var(&mut __read.vars, #n))
                }
                Param::Args { .. } => quote!(),
                Param::Context { by_ref: true } => quote!(&__read.cx),
                Param::Context { by_ref: false } => quote!(__read.cx.clone()),
            });
            let register = quote_spanned! {at=>
                #helper(
                    builder, #uri, #templated, #name, #title, #description, #mime,
                    move |__read: #server::ResourceRead| {
                        #per_call
                        async move {
                            #[allow(unused_mut)]
                            let mut __read = __read;
                            #callee(#(#call_args),*) #await_
                        }
                    },
                )
            };
            quote! {{
                #setup
                #register
            }}
        }
    }
}

/// For a tool with `app = "ui://..."`: `.map(...)` setting the tool's `_meta.ui` (the link, and
/// the visibility when given); nothing otherwise.
fn app_link(h: &Handler) -> TokenStream {
    let Some(uri) = &h.options.app else {
        return quote!();
    };
    let apps = quote!(::switchboard::types::apps);
    let visibility = match h.options.visibility.as_ref().map(options::visibility) {
        Some(Ok(v)) => {
            let mut who = Vec::new();
            if v.model {
                who.push(quote!(#apps::Visibility::Model));
            }
            if v.app {
                who.push(quote!(#apps::Visibility::App));
            }
            quote!(__ui.visibility = ::core::option::Option::Some(::std::vec![#(#who),*]);)
        }
        // Checked when the attribute was parsed.
        _ => quote!(),
    };
    quote! {
        .map(|mut __t| {
            #[allow(unused_mut)]
            let mut __ui = #apps::UiToolMeta::linked(#uri);
            #visibility
            __t.tool = __t.tool.with_ui(__ui);
            __t
        })
    }
}

/// A tool's argument type, its input schema expression, and the definitions they need (the
/// argument struct the macro writes from the parameters).
fn tool_args(h: &Handler) -> (TokenStream, TokenStream, TokenStream) {
    let private = private();
    if let Some(inner) = h.params.iter().find_map(|p| match p {
        Param::Args { inner } => Some(inner),
        _ => None,
    }) {
        return (
            quote!(#inner),
            quote!(::switchboard::server::typed::schema_of::<#inner>()),
            quote!(),
        );
    }
    let fields = h.params.iter().filter_map(|p| match p {
        Param::Value { ident, ty, doc, .. } => {
            let doc = doc.iter();
            Some(quote!(#(#[doc = #doc])* #ident: #ty))
        }
        _ => None,
    });
    let serde_path = format!("{private}::serde").replace(' ', "");
    let schemars_path = format!("{private}::schemars").replace(' ', "");
    let defs = quote! {
        #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        struct __SwitchboardArgs { #(#fields),* }
    };
    (
        quote!(__SwitchboardArgs),
        quote!(#private::params_schema::<__SwitchboardArgs>()),
        defs,
    )
}

/// `#[tool]` / `#[prompt]` / `#[resource]` on an item: a free function.
pub(crate) fn free(kind: Kind, attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let item: Item = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("#[{kind}] goes on a fn, or on a method of an impl block marked #[switchboard::handlers]"),
        )
    })?;
    let Item::Fn(f) = item else {
        return Err(syn::Error::new(
            item.span(),
            format!(
                "#[{kind}] goes on a fn, or on a method of an impl block marked #[switchboard::handlers]"
            ),
        ));
    };
    let options = options::parse(kind, attr)?;
    let h = analyse::handler(kind, options, &f.sig, &f.attrs, false)?;
    let ident = &f.sig.ident;
    let vis = &f.vis;
    let docs: Vec<_> = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let mut sig = f.sig.clone();
    sig.ident = syn::Ident::new("call", f.sig.ident.span());
    analyse::strip_param_docs(&mut sig);
    let attrs = &f.attrs;
    let block = &f.block;
    let server = server();
    let callee = quote!(#ident::call);
    let body = registration(&h, &callee, &quote!(), &quote!());
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        #vis struct #ident;

        impl #ident {
            #(#attrs)*
            #vis #sig #block
        }

        impl #server::Register for #ident {
            fn register(self, builder: #server::ServerBuilder) -> #server::ServerBuilder {
                #body
            }
        }
    })
}

/// `#[handlers]` on an impl block.
pub(crate) fn handlers(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[handlers] takes no options"));
    }
    let mut block: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[handlers] goes on an impl block: `#[handlers] impl MyServer { ... }`",
        )
    })?;
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "#[handlers] goes on an inherent impl block (`impl MyServer`), not a trait impl",
        ));
    }
    if !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.generics.span(),
            "#[handlers] cannot be used on a generic impl block",
        ));
    }
    let mut registrations = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let mut found: Option<(Kind, TokenStream, Span)> = None;
        let mut kept = Vec::new();
        for a in method.attrs.drain(..) {
            match Kind::of(a.path()) {
                Some(kind) => {
                    if found.is_some() {
                        return Err(syn::Error::new(
                            a.span(),
                            "one of #[tool], #[prompt], #[resource] per method",
                        ));
                    }
                    let args = match &a.meta {
                        syn::Meta::Path(_) => TokenStream::new(),
                        syn::Meta::List(l) => l.tokens.clone(),
                        syn::Meta::NameValue(nv) => {
                            return Err(syn::Error::new(
                                nv.span(),
                                format!("write #[{kind}(...)]"),
                            ));
                        }
                    };
                    found = Some((kind, args, a.span()));
                }
                None => kept.push(a),
            }
        }
        method.attrs = kept;
        let Some((kind, args, _)) = found else {
            continue;
        };
        let options = options::parse(kind, args)?;
        let h = analyse::handler(kind, options, &method.sig, &method.attrs, true)?;
        analyse::strip_param_docs(&mut method.sig);
        let ident = &h.ident;
        let callee = quote!(__this.#ident);
        let setup = quote!(let __this = ::std::clone::Clone::clone(&self););
        let per_call = quote!(let __this = ::std::clone::Clone::clone(&__this););
        registrations.push(registration(&h, &callee, &setup, &per_call));
    }
    if registrations.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "#[handlers] found no method marked #[tool], #[prompt] or #[resource(...)]",
        ));
    }
    let self_ty = &block.self_ty;
    let server = server();
    let builder_steps = registrations.iter().map(|r| quote!(let builder = #r;));
    let unused = format_ident!("builder");
    Ok(quote! {
        #block

        impl #server::register::RegisterShared for #self_ty {
            fn register_shared(
                self: ::std::sync::Arc<Self>,
                builder: #server::ServerBuilder,
            ) -> #server::ServerBuilder {
                #(#builder_steps)*
                #unused
            }
        }

        impl #server::Register for #self_ty {
            fn register(self, builder: #server::ServerBuilder) -> #server::ServerBuilder {
                #server::register::RegisterShared::register_shared(::std::sync::Arc::new(self), builder)
            }
        }
    })
}
