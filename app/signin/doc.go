// Package signin is the hosted sign-in of every protocol: the persisted
// state of one sign-in (a Flow), the one dispatcher that decides its next
// step, the steps, and the requesters that started it and finish it (an
// OpenID Connect authorization request, a SAML AuthnRequest, a device
// approval, a step-up, the account pages, an impersonation).
//
// Steps never call one another and never know the order they run in: the
// dispatcher alone reads the flow's definition. Requesters never render a
// sign-in page. The package reaches neither app nor a protocol library nor
// any module; modules plug their steps and requesters in.
package signin
