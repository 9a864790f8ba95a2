package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/webhooks"
)

// describeWebhooks describes the webhooks' administration (docs/webhooks.md).
func describeWebhooks(describe func(method, path string, o openapi.Op)) {
	const hooks, hook1 = "/admin/realms/{realm}/webhooks", "/admin/realms/{realm}/webhooks/{id}"
	describe(http.MethodPost, hooks, openapi.Op{Summary: "Create a webhook",
		Description: "The signing secret (Standard Webhooks, `whsec_…`) is in the answer's `secret`, this once. " +
			"`events` takes types and groups such as `user.*` (docs/events.md).",
		Request: webhooks.Input{}, Status: http.StatusCreated, Response: webhooks.Rep{},
		Example: map[string]any{"id": "5d1e…", "url": "https://hooks.example.com/idenplane", "events": []string{"user.*", "login.failed"},
			"enabled": true, "description": "CRM sync", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}})
	describe(http.MethodGet, hooks, openapi.Op{Summary: "List the webhooks", Response: []webhooks.Rep{}})
	describe(http.MethodGet, hook1, openapi.Op{Summary: "Get a webhook", Description: "`disabledReason` says why deliveries turned it off.",
		Response: webhooks.Rep{}})
	describe(http.MethodPut, hook1, openapi.Op{Summary: "Replace a webhook", Description: "The secret stays.",
		Request: webhooks.Input{}, Response: webhooks.Rep{}})
	describe(http.MethodPatch, hook1, openapi.Op{Summary: "Change a webhook",
		Description: "The fields given change. `rotateSecret` makes a new secret, in the answer this once; the old one signs " +
			"beside it for a day (both signatures in `webhook-signature`).",
		Request: webhooks.Patch{}, Response: webhooks.Rep{}})
	describe(http.MethodDelete, hook1, openapi.Op{Summary: "Delete a webhook", Description: "With its queued deliveries.",
		Status: http.StatusNoContent})
	describe(http.MethodPost, hook1+"/test", openapi.Op{Summary: "Send a test event",
		Description: "Queues a `webhook.test` event for this webhook; its deliveries list shows the outcome. 409 when disabled.",
		Status:      http.StatusAccepted, Response: webhooks.TestDelivery{}})
	describe(http.MethodGet, hook1+"/deliveries", openapi.Op{Summary: "List a webhook's delivery attempts",
		Description: "Newest first, paged with `first` and `max`.", Response: []webhooks.Attempt{}})
}
