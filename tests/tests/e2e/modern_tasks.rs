//! The tasks extension of revision 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663;
//! SPEC-2026-NOTES §16), in memory against a raw peer. Every frame we emit is checked against
//! the 2026-07-28 schema; the schema has no task types, so the harness checks the extension's
//! messages (its methods and notification, `resultType: "task"` results, answers to tasks/*)
//! as JSON-RPC messages only, as the official suite does. Tests are named after the D26 tags.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::{Server, ToolError};
use switchboard::types::ErrorObject;
use switchboard::types::elicitation::{ElicitRequestFormParams, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};
use switchboard_test_support::server::slow;
use switchboard_test_support::wait;
use switchboard_tests::RawPeer;

const V: &str = "2026-07-28";
const EXT: &str = "io.modelcontextprotocol/tasks";

fn form(field: &str) -> ElicitRequestFormParams {
    serde_json::from_value(json!({"message": format!("{field}?"), "requestedSchema":
        {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}))
    .expect("form")
}

fn field(r: &ElicitResult, name: &str) -> String {
    r.content
        .as_ref()
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|c| c.get(name).and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// Whether a task state carries two input requests.
fn asks_twice(t: &Value) -> bool {
    t["inputRequests"].as_object().is_some_and(|m| m.len() == 2)
}

fn fail(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(e.to_string())
}

fn server() -> Server {
    let obj = json!({"type": "object"});
    let task =
        |name: &str, support| Tool::new(name, json!({"type": "object"})).with_task_support(support);
    Server::builder(Implementation::new("modern-tasks", "1"))
        .tool(Tool::new("sync", obj.clone()), |_| async {
            Ok(CallToolResult::text("at once"))
        })
        .tool(task("slow", TaskSupport::Optional), |call| slow(call, 0))
        .tool(task("tool_error", TaskSupport::Required), |_| async {
            // Not a wait: the task's work takes 10 ms (a slow handler).
            tokio::time::sleep(Duration::from_millis(10)).await;
            Err(ToolError::new("it failed"))
        })
        .tool(task("rpc_error", TaskSupport::Optional), |_| async {
            // Not a wait: the task's work takes 10 ms (a slow handler).
            tokio::time::sleep(Duration::from_millis(10)).await;
            Err(ToolError::Rpc(ErrorObject::internal("broken")))
        })
        .tool(
            task("two_inputs", TaskSupport::Optional),
            |call| async move {
                call.cx.run_as_task().await;
                let (a, b) = tokio::join!(
                    call.cx.elicit_as("first", form("name")),
                    call.cx.elicit_as("second", form("city"))
                );
                let (a, b) = (a.map_err(fail)?, b.map_err(fail)?);
                Ok(CallToolResult::text(format!(
                    "{} from {}",
                    field(&a, "name"),
                    field(&b, "city")
                )))
            },
        )
        .tool(
            task("mrtr_then_task", TaskSupport::Required),
            |call| async move {
                let r = call
                    .cx
                    .elicit_as("user_name", form("name"))
                    .await
                    .map_err(fail)?;
                assert!(call.cx.run_as_task().await, "the call runs as a task now");
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    field(&r, "name")
                )))
            },
        )
        .build()
        .expect("server")
}

fn meta(caps: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V,
           "io.modelcontextprotocol/clientCapabilities": caps})
}

fn with_ext() -> Value {
    json!({"elicitation": {}, "extensions": {EXT: {}}})
}

fn params(mut p: Value, caps: Value) -> Value {
    p["_meta"] = meta(caps);
    p
}

async fn connect(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    RawPeer::new(a, V)
}

struct Peer {
    raw: RawPeer,
    next: i64,
}

impl Peer {
    async fn new(s: &Server) -> Self {
        Peer {
            raw: connect(s).await,
            next: 1,
        }
    }

    async fn call(&mut self, method: &str, p: Value, caps: Value) -> Value {
        self.next += 1;
        self.raw
            .request(json!(self.next), method, params(p, caps))
            .await
    }

    async fn tool(&mut self, name: &str, args: Value) -> Value {
        self.call(
            "tools/call",
            json!({"name": name, "arguments": args}),
            with_ext(),
        )
        .await
    }

    async fn get(&mut self, id: &str) -> Value {
        let r = self
            .call("tasks/get", json!({"taskId": id}), with_ext())
            .await;
        r["result"].clone()
    }

    /// Polls until the task leaves `working` (and `from`), within five seconds.
    async fn until_not(&mut self, id: &str, from: &str) -> Value {
        let deadline = wait::Deadline::new(format!("task {id} to leave {from}"));
        loop {
            let t = self.get(id).await;
            if t["status"] != "working" && t["status"] != from {
                return t;
            }
            deadline.tick().await;
        }
    }
}

#[tokio::test]
async fn d26_137_discover_offers_the_extension_and_not_the_legacy_capability() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.call("server/discover", json!({}), json!({})).await;
    let caps = &r["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXT], json!({}), "{r}");
    assert!(caps.get("tasks").is_none(), "{r}");
    // Removed with the extension: -32601.
    for m in ["tasks/result", "tasks/list"] {
        let r = c.call(m, json!({"taskId": "x"}), with_ext()).await;
        assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
    }
}

#[tokio::test]
async fn d26_130_d26_132_without_the_extension_no_task_and_required_ones_are_refused() {
    let s = server();
    let mut c = Peer::new(&s).await;
    // Earlier declarations do not count: each request stands alone.
    c.tool("slow", json!({"ms": 20})).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 20}}),
            json!({}),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "slept 20");
    let r = c
        .call(
            "tools/call",
            json!({"name": "tool_error", "arguments": {}}),
            json!({}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {EXT: {}}})
    );
    for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let r = c
            .call(m, json!({"taskId": "x", "inputResponses": {}}), json!({}))
            .await;
        assert_eq!(r["error"]["code"], -32021, "{m}: {r}");
    }
    // A legacy task member neither errs nor makes a task (`[D26-137]`).
    let r = c
        .call(
            "tools/call",
            json!({"name": "sync", "arguments": {}, "task": {"ttl": 1000}}),
            with_ext(),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}

#[tokio::test]
async fn d26_133_d26_134_d26_135_a_task_is_created_durable_and_completes_with_the_result() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("slow", json!({"ms": 50})).await;
    let created = &r["result"];
    assert_eq!(created["resultType"], "task", "{r}");
    assert_eq!(created["status"], "working");
    assert!(created["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    assert!(created["pollIntervalMs"].as_u64().is_some(), "{r}");
    for absent in [
        "task",
        "ttl",
        "pollInterval",
        "requestState",
        "result",
        "inputRequests",
    ] {
        assert!(created.get(absent).is_none(), "{absent}: {r}");
    }
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    assert!(id.len() >= 32, "unguessable: {id}");
    // Durable: an immediate get resolves.
    let now = c.get(&id).await;
    assert_eq!(now["taskId"], id.as_str());
    assert_eq!(now["resultType"], "complete");
    let done = c.until_not(&id, "working").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 50");
    assert_eq!(done["result"]["resultType"], "complete");
    assert!(
        done["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );
    // A call that finishes at once is answered directly.
    let r = c.tool("slow", json!({"ms": 0})).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    // Unknown ids: -32602.
    let r = c
        .call("tasks/get", json!({"taskId": "nope"}), with_ext())
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn d26_135_a_tool_error_is_completed_a_protocol_error_failed() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("tool_error", json!({})).await;
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let t = c.until_not(&id, "working").await;
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["isError"], true);
    let r = c.tool("rpc_error", json!({})).await;
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let t = c.until_not(&id, "working").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["error"]["code"], -32603);
    assert!(t.get("result").is_none());
}

#[tokio::test]
async fn d26_138_d26_139_input_requests_are_answered_with_tasks_update_partly_then_fully() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("two_inputs", json!({})).await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let mut t = c.until_not(&id, "working").await;
    let deadline = wait::Deadline::new("two input requests");
    while !asks_twice(&t) {
        deadline.tick().await;
        t = c.get(&id).await;
    }
    assert_eq!(t["status"], "input_required", "{t}");
    assert_eq!(
        t["inputRequests"]["first"]["method"], "elicitation/create",
        "{t}"
    );
    assert!(t["inputRequests"].get("second").is_some(), "{t}");
    // A partial answer, and one for a key nobody asked: acknowledged, the rest still asked.
    let ack = c
        .call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                "first": {"action": "accept", "content": {"name": "Ada"}},
                "unknown": {"action": "accept"}}}),
            with_ext(),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("taskId").is_none());
    let t = c.get(&id).await;
    assert_eq!(t["status"], "input_required", "{t}");
    let keys: Vec<&String> = t["inputRequests"]
        .as_object()
        .expect("map")
        .keys()
        .collect();
    assert_eq!(keys, ["second"], "{t}");
    c.call(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"second": {"action": "accept", "content": {"city": "London"}}}}),
        with_ext(),
    )
    .await;
    let t = c.until_not(&id, "input_required").await;
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["content"][0]["text"], "Ada from London");
}

#[tokio::test]
async fn d26_136_d26_139_cancel_acknowledges_and_a_terminal_task_stays_as_it_is() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("slow", json!({"ms": 60_000})).await;
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let ack = c
        .call("tasks/cancel", json!({"taskId": id}), with_ext())
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none(), "{ack}");
    assert_eq!(c.get(&id).await["status"], "cancelled");
    // Terminal: acknowledged again, and still cancelled.
    let again = c
        .call("tasks/cancel", json!({"taskId": id}), with_ext())
        .await;
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    assert_eq!(c.get(&id).await["status"], "cancelled");
    let unknown = c
        .call("tasks/cancel", json!({"taskId": "nope"}), with_ext())
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn input_required_rounds_come_first_then_the_task() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("mrtr_then_task", json!({})).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"].get("taskId").is_none());
    let state = r["result"]["requestState"].clone();
    let r = c
        .call(
            "tools/call",
            json!({"name": "mrtr_then_task", "arguments": {}, "requestState": state,
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}}),
            with_ext(),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    assert!(r["result"].get("requestState").is_none(), "{r}");
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let t = c.until_not(&id, "working").await;
    assert_eq!(t["result"]["content"][0]["text"], "Hello, Alice!", "{t}");
}

#[tokio::test]
async fn d26_142_a_listen_for_tasks_needs_the_extension_and_carries_notifications_tasks() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c
        .call(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ["x"]}}),
            json!({}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");

    let created = c.tool("slow", json!({"ms": 300})).await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    c.raw
        .send(
            json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": params(json!({"notifications": {"taskIds": [id]}}), with_ext())}),
        )
        .await;
    let ack = c.raw.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );
    let n = c.raw.recv().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], id.as_str());
    assert_eq!(n["params"]["status"], "completed");
    assert_eq!(n["params"]["result"]["content"][0]["text"], "slept 300");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen",
        "{n}"
    );
}

#[tokio::test]
async fn d26_138_an_answer_of_the_wrong_shape_is_asked_again_under_a_new_key() {
    let s = server();
    let mut c = Peer::new(&s).await;
    let r = c.tool("two_inputs", json!({})).await;
    let id = r["result"]["taskId"].as_str().expect("a task").to_owned();
    let mut t = c.get(&id).await;
    let deadline = wait::Deadline::new("two input requests");
    while !asks_twice(&t) {
        deadline.tick().await;
        t = c.get(&id).await;
    }
    c.call(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"first": 12345}}),
        with_ext(),
    )
    .await;
    let deadline = wait::Deadline::new("two input requests after the update");
    let keys = loop {
        let t = c.get(&id).await;
        let keys: Vec<String> = t["inputRequests"]
            .as_object()
            .expect("map")
            .keys()
            .cloned()
            .collect();
        if keys.len() == 2 {
            break keys;
        }
        deadline.tick().await;
    };
    assert_eq!(keys, ["first-2", "second"], "a key is never reused");
}
