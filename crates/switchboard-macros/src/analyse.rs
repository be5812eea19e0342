//! Reads a handler's signature into what the expansion needs, refusing what it cannot support
//! with an error on the offending tokens.

use syn::{
    Attribute, FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type,
};

use crate::options::{Kind, Options, template_vars};

/// One parameter of a handler.
pub(crate) enum Param {
    /// A property (tool), an argument (prompt) or a template variable (resource).
    Value {
        ident: Ident,
        ty: Type,
        optional: bool,
        /// The parameter's doc comment: its description.
        doc: Option<String>,
    },
    /// A tool's whole arguments as one struct: `Args<T>`.
    Args { inner: Type },
    /// The request context, by reference or by value.
    Context { by_ref: bool },
}

/// A handler, read from its signature.
pub(crate) struct Handler {
    pub(crate) kind: Kind,
    pub(crate) options: Options,
    pub(crate) ident: Ident,
    pub(crate) docs: Option<String>,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    /// For a resource: whether its URI has variables.
    pub(crate) templated: bool,
    /// The declared return type (errors about it point there).
    pub(crate) output: Type,
}

/// The doc comment of `attrs`, lines joined, one leading space removed from each.
pub(crate) fn docs(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').map(str::to_owned).unwrap_or(l))
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The last segment of a path type, with its arguments.
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The one type argument of `Name<T>`, when `ty` is such a path.
fn single_arg<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let seg = last_segment(ty)?;
    if seg.ident != name {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name && s.arguments.is_none())
}

fn is_string(ty: &Type) -> bool {
    is_named(ty, "String")
}

/// Reads `sig` for `kind`; `in_impl` when it is a method of a `#[handlers]` impl block.
pub(crate) fn handler(
    kind: Kind,
    options: Options,
    sig: &Signature,
    attrs: &[Attribute],
    in_impl: bool,
) -> syn::Result<Handler> {
    if let Some(c) = &sig.constness {
        return Err(syn::Error::new_spanned(
            c,
            format!("a #[{kind}] function cannot be `const`"),
        ));
    }
    if let Some(u) = &sig.unsafety {
        return Err(syn::Error::new_spanned(
            u,
            format!("a #[{kind}] function cannot be `unsafe`"),
        ));
    }
    if let Some(abi) = &sig.abi {
        return Err(syn::Error::new_spanned(
            abi,
            format!("a #[{kind}] function cannot be `extern`"),
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            format!(
                "a #[{kind}] function cannot be generic: its parameters are read from JSON, which needs concrete types"
            ),
        ));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            v,
            format!("a #[{kind}] function cannot be variadic"),
        ));
    }
    let ReturnType::Type(_, output) = &sig.output else {
        let what = match kind {
            Kind::Tool => "its result (String, CallToolResult, Json<T>, Result<_, E>, ...)",
            Kind::Prompt => "its messages (String, Vec<PromptMessage>, GetPromptResult, ...)",
            Kind::Resource => "its contents (String, ResourceContents, ReadResourceResult, ...)",
        };
        return Err(syn::Error::new_spanned(
            &sig.ident,
            format!("a #[{kind}] function must return {what}"),
        ));
    };

    let mut params = Vec::new();
    let mut has_receiver = false;
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                if !in_impl {
                    return Err(syn::Error::new_spanned(
                        r,
                        format!(
                            "a method with #[{kind}] needs #[switchboard::handlers] on its impl block"
                        ),
                    ));
                }
                if r.reference.is_none() || r.mutability.is_some() || r.colon_token.is_some() {
                    return Err(syn::Error::new_spanned(
                        r,
                        format!(
                            "a #[{kind}] method takes `&self` (the value is shared by every request)"
                        ),
                    ));
                }
                has_receiver = true;
            }
            FnArg::Typed(pt) => params.push(param(kind, pt)?),
        }
    }
    if in_impl && !has_receiver {
        return Err(syn::Error::new_spanned(
            &sig.ident,
            format!("a #[{kind}] method in a #[handlers] impl block takes `&self`"),
        ));
    }
    if params
        .iter()
        .filter(|p| matches!(p, Param::Context { .. }))
        .count()
        > 1
    {
        return Err(syn::Error::new_spanned(
            &sig.inputs,
            "the request context can be taken once",
        ));
    }
    let values = params
        .iter()
        .filter(|p| !matches!(p, Param::Context { .. }))
        .count();
    if params.iter().any(|p| matches!(p, Param::Args { .. })) && values > 1 {
        return Err(syn::Error::new_spanned(
            &sig.inputs,
            "an `Args<T>` parameter takes every argument: it can only be joined by the context",
        ));
    }

    let mut templated = false;
    if kind == Kind::Resource {
        let uri = options.uri.as_ref().ok_or_else(|| {
            syn::Error::new_spanned(&sig.ident, "#[resource] needs its URI first")
        })?;
        let vars = template_vars(uri)?;
        templated = !vars.is_empty();
        for var in &vars {
            let found = params.iter().any(|p| match p {
                Param::Value { ident, .. } => ident.unraw() == *var,
                _ => false,
            });
            if !found {
                return Err(syn::Error::new_spanned(
                    uri,
                    format!(
                        "`{{{var}}}` in the URI template names no parameter of `{}`",
                        sig.ident
                    ),
                ));
            }
        }
        for p in &params {
            if let Param::Value { ident, .. } = p
                && !vars.iter().any(|v| ident.unraw() == *v)
            {
                return Err(syn::Error::new_spanned(
                    ident,
                    format!(
                        "`{ident}` is not a variable of the URI template: a resource's parameters are its template variables (and the context)"
                    ),
                ));
            }
        }
    }

    Ok(Handler {
        kind,
        options,
        ident: sig.ident.clone(),
        docs: docs(attrs),
        is_async: sig.asyncness.is_some(),
        params,
        templated,
        output: (**output).clone(),
    })
}

/// Reads one typed parameter.
fn param(kind: Kind, pt: &syn::PatType) -> syn::Result<Param> {
    let ident = match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                format!("a #[{kind}] parameter must be a plain name (`a: i64`), not a pattern"),
            ));
        }
    };
    let ty = &*pt.ty;
    if let Type::Reference(r) = ty {
        if is_named(&r.elem, "Context") {
            if r.mutability.is_some() {
                return Err(syn::Error::new_spanned(
                    r,
                    "take the context as `&Context` or `Context`",
                ));
            }
            return Ok(Param::Context { by_ref: true });
        }
        return Err(syn::Error::new_spanned(
            ty,
            format!(
                "a #[{kind}] parameter must be an owned type (`String`, not `&str`): it is read from the request"
            ),
        ));
    }
    if is_named(ty, "Context") {
        return Ok(Param::Context { by_ref: false });
    }
    if let Type::ImplTrait(_) = ty {
        return Err(syn::Error::new_spanned(
            ty,
            format!(
                "a #[{kind}] parameter cannot be `impl Trait`: it is read from JSON, which needs a concrete type"
            ),
        ));
    }
    if let Some(inner) = single_arg(ty, "Args") {
        if kind != Kind::Tool {
            return Err(syn::Error::new_spanned(
                ty,
                format!("`Args<T>` is for tools; a #[{kind}] takes one parameter per argument"),
            ));
        }
        return Ok(Param::Args {
            inner: inner.clone(),
        });
    }
    let optional = single_arg(ty, "Option").is_some();
    match kind {
        Kind::Tool => {}
        Kind::Prompt => {
            let ok = is_string(ty) || single_arg(ty, "Option").is_some_and(is_string);
            if !ok {
                return Err(syn::Error::new_spanned(
                    ty,
                    format!(
                        "prompt arguments are strings: declare `{}: String`, or `Option<String>` when it is optional",
                        ident.unraw()
                    ),
                ));
            }
        }
        Kind::Resource => {
            if !is_string(ty) {
                return Err(syn::Error::new_spanned(
                    ty,
                    format!(
                        "a URI template variable is a string: declare `{}: String`",
                        ident.unraw()
                    ),
                ));
            }
        }
    }
    Ok(Param::Value {
        ident,
        ty: ty.clone(),
        optional,
        doc: docs(&pt.attrs),
    })
}

/// Removes the doc comments of `sig`'s parameters (the compiler allows none there; they are
/// read as descriptions before this).
pub(crate) fn strip_param_docs(sig: &mut Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !a.path().is_ident("doc"));
        }
    }
}

/// `Ident::unraw` without importing the extension trait at every call.
trait Unraw {
    fn unraw(&self) -> String;
}

impl Unraw for Ident {
    fn unraw(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
    }
}

/// The parameter's name as the client sees it (`r#type` is `type`).
pub(crate) fn wire_name(ident: &Ident) -> String {
    ident.unraw()
}
