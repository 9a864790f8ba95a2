package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/auditstreams"
	"github.com/idenplane/idenplane/app/openapi"
)

// describeAuditStreams describes the audit streams' administration
// (docs/audit-streams.md).
func describeAuditStreams(describe func(method, path string, o openapi.Op)) {
	const streams, stream1 = "/admin/realms/{realm}/audit-streams", "/admin/realms/{realm}/audit-streams/{id}"
	describe(http.MethodPost, streams, openapi.Op{Summary: "Create an audit stream",
		Description: "`type` is `syslog`, `http` or `file`, with the settings of that type under its name. " +
			"`events` takes types and groups such as `user.*` (docs/events.md); absent, every event. " +
			"The stream takes the realm's events from now on. Secrets (`http.token`, `http.authorization`) are answered as `**********`.",
		Request: auditstreams.Input{}, Status: http.StatusCreated, Response: auditstreams.Rep{},
		Example: map[string]any{"id": "0b7e…", "type": "http", "events": []string{"*"}, "enabled": true, "description": "SIEM",
			"http": map[string]any{"url": "https://splunk.example.com:8088/services/collector/event", "format": "splunk",
				"token": auditstreams.Redacted},
			"lastDeliveredSequence": 1042, "lag": 0, "createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}})
	describe(http.MethodGet, streams, openapi.Op{Summary: "List the audit streams", Response: []auditstreams.Rep{}})
	describe(http.MethodGet, stream1, openapi.Op{Summary: "Get an audit stream",
		Description: "`lastDeliveredSequence` is the last record the destination took (or the stream passed over), " +
			"`lag` the realm's records after it; `lastError` and its time say why sending last failed.",
		Response: auditstreams.Rep{}})
	describe(http.MethodPut, stream1, openapi.Op{Summary: "Replace an audit stream",
		Description: "The type stays. A secret absent, or sent back as `**********`, stays. " +
			"A stream enabled again starts at the realm's last record.",
		Request: auditstreams.Input{}, Response: auditstreams.Rep{}})
	describe(http.MethodDelete, stream1, openapi.Op{Summary: "Delete an audit stream", Description: "With its cursor.",
		Status: http.StatusNoContent})
}
