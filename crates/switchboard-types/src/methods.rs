//! Method-name constants for every request and notification of 2024-11-05 to 2026-07-28
//! (SPEC-NOTES §1.1, §1.2; SPEC-2026-NOTES §2.1, §2.2), and of the extensions we serve.
//!
//! Applies to both sides. The direction and the capability that gates each method are in the
//! catalogue; this module only names them.

/// `initialize` (C→S).
pub const INITIALIZE: &str = "initialize";
/// `ping` (either way).
pub const PING: &str = "ping";
/// `resources/list` (C→S).
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list` (C→S).
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read` (C→S).
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (C→S).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (C→S).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list` (C→S).
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get` (C→S).
pub const PROMPTS_GET: &str = "prompts/get";
/// `tools/list` (C→S).
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call` (C→S).
pub const TOOLS_CALL: &str = "tools/call";
/// `logging/setLevel` (C→S).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `completion/complete` (C→S).
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `sampling/createMessage` (S→C).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list` (S→C).
pub const ROOTS_LIST: &str = "roots/list";
/// `elicitation/create` (S→C, 2025-06-18+).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `tasks/get` (requestor → receiver, 2025-11-25).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (requestor → receiver, 2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (requestor → receiver, 2025-11-25).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (requestor → receiver, 2025-11-25; the tasks extension from 2026-07-28).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `server/discover` (C→S, 2026-07-28): the server's versions and capabilities.
pub const SERVER_DISCOVER: &str = "server/discover";
/// `subscriptions/listen` (C→S, 2026-07-28): a long-lived stream of change notifications.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// `notifications/initialized` (C→S).
pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled` (either way).
pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress` (either way).
pub const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
/// `notifications/message`: a log line (S→C).
pub const NOTIFICATIONS_MESSAGE: &str = "notifications/message";
/// `notifications/resources/list_changed` (S→C).
pub const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated` (S→C).
pub const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/prompts/list_changed` (S→C).
pub const NOTIFICATIONS_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/tools/list_changed` (S→C).
pub const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/roots/list_changed` (C→S).
pub const NOTIFICATIONS_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete` (S→C, 2025-11-25).
pub const NOTIFICATIONS_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/tasks/status` (receiver → requestor, 2025-11-25).
pub const NOTIFICATIONS_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/subscriptions/acknowledged` (S→C, 2026-07-28): the first message of a listen.
pub const NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";

/// `tasks/update` (C→S, the 2026-07-28 tasks extension): answers a task's input requests.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `notifications/tasks` (S→C, the 2026-07-28 tasks extension): a task's state on a listen stream.
pub const NOTIFICATIONS_TASKS: &str = "notifications/tasks";

/// `skills/list` (C→S, the skills extension `io.modelcontextprotocol/skills`): the skills a
/// server serves, each with its frontmatter and the manifest of its files.
pub const SKILLS_LIST: &str = "skills/list";
/// `skills/get` (C→S, the skills extension): one skill's entry by the URI of its `SKILL.md`.
pub const SKILLS_GET: &str = "skills/get";
/// `resources/directory/read` (C→S, the skills extension with `directoryRead`): the direct
/// children of a directory resource.
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";

/// Every request method.
pub const REQUESTS: [&str; 22] = [
    INITIALIZE,
    PING,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    PROMPTS_LIST,
    PROMPTS_GET,
    TOOLS_LIST,
    TOOLS_CALL,
    LOGGING_SET_LEVEL,
    COMPLETION_COMPLETE,
    SAMPLING_CREATE_MESSAGE,
    ROOTS_LIST,
    ELICITATION_CREATE,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_CANCEL,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
];

/// Every notification method.
pub const NOTIFICATIONS: [&str; 12] = [
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_PROGRESS,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    NOTIFICATIONS_ELICITATION_COMPLETE,
    NOTIFICATIONS_TASKS_STATUS,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
];

/// The methods of the tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`), which no
/// core schema defines.
pub const TASKS_EXTENSION_METHODS: [&str; 4] =
    [TASKS_GET, TASKS_UPDATE, TASKS_CANCEL, NOTIFICATIONS_TASKS];

/// Whether `method` is a request method of some revision up to 2026-07-28.
pub fn is_request(method: &str) -> bool {
    REQUESTS.contains(&method)
}

/// Whether `method` is a notification method of some revision up to 2026-07-28.
pub fn is_notification(method: &str) -> bool {
    NOTIFICATIONS.contains(&method)
}

/// Whether `method` is any core MCP method of 2024-11-05 to 2026-07-28.
pub fn is_known(method: &str) -> bool {
    is_request(method) || is_notification(method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_methods() {
        assert!(is_known(TOOLS_CALL));
        assert!(is_known(NOTIFICATIONS_TOOLS_LIST_CHANGED));
        assert!(is_request(TASKS_RESULT) && !is_notification(TASKS_RESULT));
        assert!(!is_known("tools/Call"));
        assert!(is_request(SERVER_DISCOVER));
        assert!(!is_known(TASKS_UPDATE), "an extension method");
        assert!(
            !is_known(SKILLS_GET),
            "an extension method (catalogue::EXTENSIONS)"
        );
    }
}
