//! The attribute's own arguments: `#[tool(name = "...")]`, `#[resource("uri", mime_type = "...")]`.

use std::fmt;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitStr, Token};

/// Which attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        })
    }
}

impl Kind {
    /// The attribute named by the last segment of `path`, if it is one of ours.
    pub(crate) fn of(path: &syn::Path) -> Option<Kind> {
        let last = path.segments.last()?.ident.to_string();
        match last.as_str() {
            "tool" => Some(Kind::Tool),
            "prompt" => Some(Kind::Prompt),
            "resource" => Some(Kind::Resource),
            _ => None,
        }
    }

    fn accepted(self) -> &'static str {
        match self {
            Kind::Resource => "`name`, `title`, `description`, `mime_type`",
            Kind::Tool => "`name`, `title`, `description`, `app`, `visibility`",
            Kind::Prompt => "`name`, `title`, `description`",
        }
    }
}

/// The options written in the attribute.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    /// A tool's MCP App view (`app = "ui://..."`).
    pub(crate) app: Option<LitStr>,
    /// Who may call an app's tool (`visibility = "app"`, `"model"`, `"model, app"`).
    pub(crate) visibility: Option<LitStr>,
}

/// Who may call a tool linked to a view, as written in `visibility = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Visibility {
    pub(crate) model: bool,
    pub(crate) app: bool,
}

/// Parses `"app"`, `"model"`, `"model, app"` (commas or spaces between; each at most once).
pub(crate) fn visibility(lit: &LitStr) -> syn::Result<Visibility> {
    let text = lit.value();
    let mut v = Visibility {
        model: false,
        app: false,
    };
    for word in text.split([',', ' ']).filter(|w| !w.is_empty()) {
        let slot = match word {
            "model" => &mut v.model,
            "app" => &mut v.app,
            other => {
                return Err(syn::Error::new(
                    lit.span(),
                    format!("`{other}` is not a visibility: expected \"model\", \"app\" or both"),
                ));
            }
        };
        if std::mem::replace(slot, true) {
            return Err(syn::Error::new(
                lit.span(),
                format!("`{word}` is given twice"),
            ));
        }
    }
    if !v.model && !v.app {
        return Err(syn::Error::new(
            lit.span(),
            "an empty visibility: expected \"model\", \"app\" or both",
        ));
    }
    Ok(v)
}

/// Parses the attribute's arguments for `kind`.
pub(crate) fn parse(kind: Kind, tokens: TokenStream) -> syn::Result<Options> {
    let parser = |input: ParseStream<'_>| {
        let mut o = Options::default();
        if kind == Kind::Resource && input.peek(LitStr) {
            o.uri = Some(input.parse()?);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        while !input.is_empty() {
            let key = input.call(Ident::parse_any)?;
            input.parse::<Token![=]>()?;
            let value: LitStr = input.parse()?;
            let slot = match (key.to_string().as_str(), kind) {
                ("name", _) => &mut o.name,
                ("title", _) => &mut o.title,
                ("description", _) => &mut o.description,
                ("mime_type", Kind::Resource) => &mut o.mime_type,
                ("app", Kind::Tool) => &mut o.app,
                ("visibility", Kind::Tool) => &mut o.visibility,
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown option `{key}` for #[{kind}]: expected {}",
                            kind.accepted()
                        ),
                    ));
                }
            };
            if slot.replace(value).is_some() {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{key}` is given twice"),
                ));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(o)
    };
    let options = parser.parse2(tokens)?;
    if let Some(app) = &options.app
        && !app.value().starts_with("ui://")
    {
        return Err(syn::Error::new(
            app.span(),
            "an app view's URI starts with ui:// (`app = \"ui://server/view\"`)",
        ));
    }
    if let Some(v) = &options.visibility {
        if options.app.is_none() {
            return Err(syn::Error::new(
                v.span(),
                "`visibility` goes with `app = \"ui://...\"`: it says who may call an app's tool",
            ));
        }
        visibility(v)?;
    }
    if kind == Kind::Resource && options.uri.is_none() {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[resource] needs its URI first: #[resource(\"notes://{title}\")]",
        ));
    }
    Ok(options)
}

/// The variable names of an RFC 6570 template (`{var}` and `{+var}`), in order.
pub(crate) fn template_vars(uri: &LitStr) -> syn::Result<Vec<String>> {
    let text = uri.value();
    let mut vars = Vec::new();
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| syn::Error::new(uri.span(), "unclosed `{` in the URI template"))?;
        let name = after[..close].trim_start_matches('+');
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(syn::Error::new(
                uri.span(),
                format!(
                    "`{{{}}}` is not a variable this macro supports (`{{name}}` or `{{+name}}`)",
                    &after[..close]
                ),
            ));
        }
        vars.push(name.to_owned());
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(syn::Error::new(
            uri.span(),
            "unopened `}` in the URI template",
        ));
    }
    Ok(vars)
}
