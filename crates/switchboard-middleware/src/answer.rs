//! What the layers answer with when they refuse or end a request.

use serde_json::json;
use switchboard_jsonrpc::HandlerResult;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorCode, ErrorObject, methods};

/// JSON-RPC's implementation-defined server error: the request was refused by a limit.
pub(crate) const LIMITED: ErrorCode = ErrorCode(-32000);

/// A refusal by a limit: -32000 with a machine-readable reason.
pub(crate) fn limited(message: String, data: serde_json::Value) -> ErrorObject {
    ErrorObject::new(LIMITED, message).with_data(data)
}

/// A request ended by a layer: for a tool call, an `isError` result saying why (a failing tool
/// is a result the model can read, not a protocol error); for any other method, -32603 with
/// `reason`.
pub(crate) fn ended(
    method: &str,
    reason: &str,
    text: String,
    data: serde_json::Value,
) -> HandlerResult {
    if method == methods::TOOLS_CALL {
        let result = json!({
            "content": [{"type": "text", "text": text}],
            "isError": true,
            "_meta": {"io.switchboard/reason": reason},
        });
        return to_raw(&result).map_err(|e| ErrorObject::internal(e.to_string()));
    }
    Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, text).with_data(data))
}
