//! The caller's token claims as a handler or layer finds them in a request's context: attached
//! alone by a transport that authorized the request, or inside an [`Arrival`] when the transport
//! also forwards headers.

use switchboard_auth::resource::{Arrival, AuthInfo};
use switchboard_jsonrpc::RequestContext;

/// The caller's token claims in a request's context: attached alone, or inside an [`Arrival`].
pub(crate) fn auth_of(cx: &RequestContext) -> Option<&AuthInfo> {
    match cx.attachment_as::<Arrival>() {
        Some(a) => a.auth(),
        None => cx.attachment_as::<AuthInfo>(),
    }
}
