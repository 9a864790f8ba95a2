package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/risk"
)

// describeSessionRisk describes session risk and continuous verification
// (docs/risk.md): the admin API's reads and evaluation, and the client
// SDK's posts, which the user's access token authenticates.
func describeSessionRisk(describe func(method, path string, o openapi.Op)) {
	const sessionRisk, verification = "/admin/realms/{realm}/session-risk", "/admin/realms/{realm}/continuous-verification"
	str := func(name, description string) openapi.Param {
		return openapi.Param{Name: name, Description: description, Schema: openapi.Schema{"type": "string"}}
	}
	millis := func(name, description string) openapi.Param {
		return openapi.Param{Name: name, Description: description, Schema: openapi.Schema{"type": "integer", "minimum": 0}}
	}
	window := []openapi.Param{millis("from", "From this time (Unix milliseconds)."), millis("to", "Before this time (Unix milliseconds).")}
	sessionQuery := append([]openapi.Param{str("user", "A user's ID."), str("level", "low, medium, high or critical."),
		str("signal", "A signal present."), str("status", "active, ended or ended-by-risk.")}, window...)
	eventQuery := append([]openapi.Param{str("session", "An SSO session's ID."), str("user", "A user's ID."),
		str("kind", "sign-in, refresh, device-posture, network-context, behavioral or evaluation."),
		str("signal", "A signal the observation found present.")}, window...)
	paged := func(q []openapi.Param) []openapi.Param {
		return append(append([]openapi.Param{}, q...), openapi.ParamFirst, openapi.ParamMax)
	}

	describe(http.MethodGet, sessionRisk, openapi.Op{Summary: "List session risk profiles",
		Description: "One per SSO session, the latest changed first. Filters: `user`, `level`, `signal` (present), `status`, " +
			"`from` and `to` (of the last change, Unix milliseconds, `to` excluded); paged with `first` and `max`.",
		Query: paged(sessionQuery), Response: []risk.SessionRisk{}})
	describe(http.MethodGet, sessionRisk+"/dashboard", openapi.Op{Summary: "Count session risk profiles",
		Description: "The profiles changed over `from`–`to` (the last 24 hours by default), by status, level, signal present " +
			"and the deciding session policy's action.", Query: sessionQuery, Response: risk.SessionDashboard{}})
	describe(http.MethodGet, sessionRisk+"/{sessionId}", openapi.Op{Summary: "Get a session's risk profile",
		Description: "The sign-in's assessment and what the session showed since: each signal's state and contribution, the " +
			"session policy that decided.", Response: risk.SessionRisk{}})
	describe(http.MethodPost, sessionRisk+"/{sessionId}/evaluate", openapi.Op{Summary: "Score a session again",
		Description: "With the realm's weights and session policies as they are now; a policy that ends the session " +
			"(`end-session`, `step-up`) ends it at once. Takes no body.", Response: risk.SessionRisk{}})

	describe(http.MethodGet, verification+"/events", openapi.Op{Summary: "List continuous verification events",
		Description: "Each observation of a session, newest first: its sign-in, a refresh from another address, a report " +
			"of the client SDK, an evaluation.", Query: paged(eventQuery), Response: []risk.SignalEvent{}})
	describe(http.MethodGet, verification+"/events/{id}", openapi.Op{Summary: "Get a continuous verification event",
		Response: risk.SignalEvent{}})
	describe(http.MethodGet, verification+"/dashboard", openapi.Op{Summary: "Count continuous verification events",
		Description: "Over `from`–`to` (the last 24 hours by default): by kind, by signal found present, and the sessions " +
			"and users observed.", Query: eventQuery, Response: risk.SignalsDashboard{}})
	describe(http.MethodGet, verification+"/session-profiles", openapi.Op{Summary: "List session profiles",
		Description: "What the client SDK reported of each session, the latest changed first; the filters of the session " +
			"risk list.", Query: paged(sessionQuery), Response: []risk.SessionProfile{}})
	describe(http.MethodGet, verification+"/session-profiles/{sessionId}", openapi.Op{Summary: "Get a session profile",
		Response: risk.SessionProfile{}})
	describe(http.MethodGet, verification+"/device-posture/{sessionId}", openapi.Op{Summary: "Get a session's device posture",
		Description: "The client SDK's latest report, and the `device_posture` signal it gave.", Response: risk.PostureView{}})
	describe(http.MethodGet, verification+"/network-context/{sessionId}", openapi.Op{Summary: "Get a session's network context",
		Description: "The client SDK's latest report, the addresses the session was seen at, and their signals.",
		Response:    risk.NetworkView{}})
	describe(http.MethodGet, verification+"/behavioral/{userId}", openapi.Op{Summary: "Get a user's baseline of behaviour",
		Description: "Per metric, the samples learnt, their mean and standard deviation.", Response: risk.Baseline{}})
	describe(http.MethodGet, verification+"/user/{userId}/summary", openapi.Op{Summary: "Sum up a user's continuous verification",
		Response: risk.UserSummary{}})

	accepted := risk.SignalsAccepted{SessionID: "6f1c…", ReceivedAt: 1767225600000, Session: "active"}
	describe(http.MethodPost, verification+"/device-posture", openapi.Op{Summary: "Report the device's posture",
		Description: "From the client SDK, with the user's access token: the session is the token's (`sid`); a body that " +
			"names another is 403. At most 4 KiB, and 20 posts a session in 15 minutes.",
		Request: risk.DevicePostureReport{}, Status: http.StatusAccepted, Response: risk.SignalsAccepted{}, Example: accepted})
	describe(http.MethodPost, verification+"/network-context", openapi.Op{Summary: "Report the network",
		Description: "From the client SDK, with the user's access token, as the device's posture. The address judged is the " +
			"one the server sees.", Request: risk.NetworkContextReport{}, Status: http.StatusAccepted, Response: risk.SignalsAccepted{},
		Example: accepted})
	describe(http.MethodPost, verification+"/behavioral/samples", openapi.Op{Summary: "Send samples of behaviour",
		Description: "From the client SDK, with the user's access token: at most 200 samples and 32 KiB a batch, 20 batches " +
			"a session in 15 minutes.", Request: risk.BehavioralSamples{}, Status: http.StatusAccepted, Response: risk.SignalsAccepted{},
		Example: accepted})
}
