package webhooks

import (
	"slices"
	"strings"
)

// EventType names an event a webhook can take (docs/events.md lists them
// with their data; a test holds the two equal).
type EventType string

// The event types, stable: receivers dispatch on them.
const (
	UserCreated    EventType = "user.created"
	UserUpdated    EventType = "user.updated"
	UserDeleted    EventType = "user.deleted"
	LoginSucceeded EventType = "login.succeeded"
	LoginFailed    EventType = "login.failed"
	WebhookTest    EventType = "webhook.test"
)

// EventTypes are every event type, in the order docs/events.md lists them.
var EventTypes = []EventType{UserCreated, UserUpdated, UserDeleted, LoginSucceeded, LoginFailed, WebhookTest}

// validPattern says whether p names an event type, or a group of them:
// "*", or a prefix ending in ".*" that some type has ("user.*").
func validPattern(p string) bool {
	if p == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(p, ".*"); ok {
		return slices.ContainsFunc(EventTypes, func(t EventType) bool { return strings.HasPrefix(string(t), prefix+".") })
	}
	return slices.Contains(EventTypes, EventType(p))
}

// matches says whether a webhook subscribed to patterns takes events of
// type t. The test event goes to the webhook it is sent to, whatever it
// subscribed to.
func matches(patterns []string, t EventType) bool {
	for _, p := range patterns {
		if p == "*" || p == string(t) {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(string(t), prefix) {
			return true
		}
	}
	return false
}
