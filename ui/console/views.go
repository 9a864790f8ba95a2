// Package console holds the pages of the admin console (app/console):
// templ components over view structs, in the hosted pages' catalogues
// (keys under "console."). The pages carry no inline script; the one
// progressive enhancement, the copy button, is assets/static/console.js.
package console

import (
	"net/url"

	"github.com/idenplane/idenplane/app/authz"
)

// Nav is what every page shows around its content: who is signed in,
// the realm at hand, the sections, and the CSRF token of its forms.
type Nav struct {
	Username    string
	Realm       string   // the realm the page is about; "" for none
	Realms      []string // the realms the administrator may switch to
	Section     string   // the section the page belongs to (Section* constants)
	CSRF        string
	Perms       authz.Set
	Confined    bool      // the administrator acts in one realm only
	More        []NavLink // the realm's other sections the administrator may read
	Flash       []string  // what a change did, each a message
	Stylesheets []string
	Script      string
	Title       string // a message key, or run-time text
	TitleArgs   []any
}

// Can says whether the administrator holds p; the pages show the
// controls of a change only to those who may make it. The API checks
// every call all the same.
func (n Nav) Can(p authz.Permission) bool { return n.Perms.Has(p) }

// The sections of the navigation.
const (
	SectionDashboard   = "dashboard"
	SectionRealms      = "realms"
	SectionSettings    = "settings"
	SectionUsers       = "users"
	SectionClients     = "clients"
	SectionSessions    = "sessions"
	SectionLoginEvents = "login-events"
	SectionAdminEvents = "admin-events"
	SectionAccount     = "account"
	SectionKeys        = "keys"
	SectionAccounts    = "accounts"
	SectionAPIKeys     = "api-keys"
)

// NavLink is a section of the navigation.
type NavLink struct{ Section, Href, Label string }

// Form is the state of a form shown again after a refusal: every field's
// message at once, and a message about the form as a whole.
type Form struct {
	Errors map[string]string // by input name
	Alert  string
}

// Err is the message of a field, "" for none.
func (f Form) Err(name string) string { return f.Errors[name] }

// Link is one entry of a list of links.
type Link struct{ Label, Href string }

// Pager is the paging of a list: the links to the previous and next
// pages, empty where there is none.
type Pager struct {
	Prev, Next string
	From, To   int // the rows shown, 1-based; To 0 for none
	Total      int // -1 when the API does not count
}

// Confirm is a confirmation step of a destructive action.
type Confirm struct {
	Message string // message key
	Args    []any
	Action  string // where the form posts
	Cancel  string // where "cancel" leads
	Button  string // message key of the button
}

// Failure is an error page.
type Failure struct {
	Status  int
	Message string
	Back    string // a link back; "" for none
}

// RealmRow is a realm in the list.
type RealmRow struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Enabled     bool   `json:"enabled"`
}

// RealmForm is the form of a realm's settings.
type RealmForm struct {
	Form
	Values map[string]string
	Mail   Form // the test mail's form
	MailTo string
	// Events are the events' settings (nil when the administrator may
	// not read them), and the state of their form.
	Events     map[string]string
	EventsForm Form
}

// KeyRow is a realm's signing key.
type KeyRow struct {
	KID              string `json:"kid"`
	Algorithm        string `json:"algorithm"`
	Status           string `json:"status"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

// Endpoints are what an application needs to sign people in with a
// client of the realm.
type Endpoints struct {
	Issuer, Discovery, Authorization, Token, Userinfo, Logout string
	Redirect                                                  string // the client's first redirect URI
}

// MFAStatus is a user's second factors.
type MFAStatus struct {
	Enabled                bool         `json:"enabled"`
	Factors                []string     `json:"factors"`
	RecoveryCodesRemaining int          `json:"recoveryCodesRemaining"`
	Required               bool         `json:"required"` // the realm asks everyone for a second factor
	TOTP                   *TOTPRow     `json:"totp"`
	WebAuthn               []PasskeyRow `json:"webauthn"`
}

// UserRow is a user in the list.
type UserRow struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Enabled   bool   `json:"enabled"`
}

// UserList is a page of users found.
type UserList struct {
	Search string
	Users  []UserRow
	Pager  Pager
}

// UserForm is the form of a new user.
type UserForm struct {
	Form
	Values map[string]string
}

// UserPage is one user's page.
type UserPage struct {
	ID, Username string
	Form
	Values   map[string]string
	Sessions []SessionRow
	MFA      *MFAStatus // nil when the administrator may not read it
	// The user's groups and realm roles (nil when the administrator may
	// not read them), and those that may be added.
	Groups, Roles             []Choice
	GroupChoices, RoleChoices []Choice
	// The realm's custom attributes the user holds, and those they may
	// get (nil when the realm has none the administrator may see).
	Attributes       []AttributeRow
	AttributeChoices []Choice
	AttributeForm    AttributeForm
	Actions          RequiredActions
	ActionsForm      Form
	MailForm         Form          // the password reset mail's refusal
	Identities       []IdentityRow // nil when the administrator may not read them
}

// Choice is an option of a select, and an entry of a list.
type Choice struct{ Value, Label string }

// ClientRow is a client in the list.
type ClientRow struct {
	ClientID   string `json:"clientId"`
	Name       string `json:"name"`
	ClientType string `json:"clientType"`
	Enabled    bool   `json:"enabled"`
}

// ClientList is a realm's clients.
type ClientList struct {
	Clients []ClientRow
	Sort    string
}

// ClientForm is the form of a client.
type ClientForm struct {
	Form
	Values     map[string]string
	GrantTypes []string   // the grants offered
	Endpoints  *Endpoints // on a client's page
}

// ClientSecret is a client's secret, shown once.
type ClientSecret struct {
	ClientID string `json:"clientId"`
	Secret   string `json:"secret"`
	Done     string `json:"-"` // what was done, a message key
	Label    string `json:"-"` // the secret's label, a message key; "" for a client secret
	Once     string `json:"-"` // the sentence saying it is shown once, a message key; "" for a secret's
}

// APIKeyRow is a named admin API key as the API shows it; APIKey is its
// secret, in the answer of its creation or rotation only.
type APIKeyRow struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Prefix      string   `json:"prefix"`
	Permissions []string `json:"permissions"`
	State       string   `json:"state"`
	ExpiresAt   int64    `json:"expiresAt"`
	LastUsedAt  int64    `json:"lastUsedAt"`
	APIKey      string   `json:"apiKey"`
}

// AccountRow is an administrator in the list of them.
type AccountRow struct {
	ID          string   `json:"id"`
	Username    string   `json:"username"`
	Email       string   `json:"email"`
	Enabled     bool     `json:"enabled"`
	Permissions []string `json:"permissions"`
	TOTP        bool     `json:"totp"`
	Passkeys    int      `json:"passkeys"`
	Realm       string   `json:"realm"` // the realm the account is confined to; "" for any
}

// SessionRow is a session in a list.
type SessionRow struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	UserID     string `json:"userId"`
	Username   string `json:"username"`
	IPAddress  string `json:"ipAddress"`
	Start      int64  `json:"start"`
	LastAccess int64  `json:"lastAccess"`
	ClientID   string `json:"clientId"`
}

// SessionList is a page of a realm's sessions.
type SessionList struct {
	Sessions []SessionRow
	Pager    Pager
}

// LoginEventRow is a login event in a list.
type LoginEventRow struct {
	Time      int64  `json:"time"`
	Type      string `json:"type"`
	ClientID  string `json:"clientId"`
	UserID    string `json:"userId"`
	IPAddress string `json:"ipAddress"`
	Error     string `json:"error"`
}

// LoginEventList is a page of login events, filtered.
type LoginEventList struct {
	Form
	Filters map[string]string
	Export  string
	Events  []LoginEventRow
	Pager   Pager
}

// AdminEventRow is an admin event in a list.
type AdminEventRow struct {
	Time          int64  `json:"time"`
	OperationType string `json:"operationType"`
	ResourceType  string `json:"resourceType"`
	ResourcePath  string `json:"resourcePath"`
	AuthDetails   struct {
		Type      string `json:"type"`
		Username  string `json:"username"`
		IPAddress string `json:"ipAddress"`
	} `json:"authDetails"`
}

// AdminEventList is a page of admin events, filtered.
type AdminEventList struct {
	Form
	Filters map[string]string
	Export  string
	Events  []AdminEventRow
	Pager   Pager
}

// Stats are a realm's counts.
type Stats struct {
	Users              int `json:"users"`
	Clients            int `json:"clients"`
	ActiveSessions     int `json:"activeSessions"`
	LoginEventsLastDay int `json:"loginEventsLastDay"`
	LoginErrorsLastDay int `json:"loginErrorsLastDay"`
	AdminEventsLastDay int `json:"adminEventsLastDay"`
}

// Day is one day of the sign-in chart.
type Day struct {
	Date              string
	SignIns, Failures int
}

// LockedRow is a user locked out by the brute-force protection.
type LockedRow struct {
	UserID      string `json:"userId"`
	Username    string `json:"username"`
	NumFailures int    `json:"numFailures"`
	Permanent   bool   `json:"permanent"`
}

// Dashboard is the first page: one realm at a glance.
type Dashboard struct {
	Realms      []string
	Realm       string
	Stats       *Stats // nil when the administrator may not read it
	Chart       []Day  // nil likewise
	AdminEvents []AdminEventRow
	Locked      []LockedRow
	Failing     []Failing // nil when the administrator may not read it
}

// Failing is a part of the realm that fails: an LDAP directory's last
// sync.
type Failing struct {
	Name   string
	At     int64 // Unix milliseconds
	Error  string
	Failed int // entries that failed
}

// AccountView is the signed-in administrator's own page.
type AccountView struct {
	Username    string
	Realm       string // the realm they are confined to; "" for none
	Permissions []string
	AccountURL  string
	TOTPURL     string
	PasskeysURL string
}

// Error makes a Failure an error a handler may return.
func (f *Failure) Error() string { return f.Message }

// FieldSpec is one input of a generic form: its name (the API's), kind
// (text, password, url, number, check, select, textarea) and the choices
// of a select.
type FieldSpec struct {
	Name     string
	Kind     string
	Options  []string
	Required bool
	// Icons are the options' images (kind preset, radio buttons with a
	// mark each), by option.
	Icons map[string]string
}

// ResourceList is a list of one kind of a realm's resources.
type ResourceList struct {
	Columns []string // the API's field names, each labelled console.field.<name>
	Rows    []ResourceRow
	New     string // the address of the create form; "" when the administrator may not create
	Sort    string // the column the rows are sorted by
	Desc    bool   // sorted from the last
	Base    string // the list's address, for the sort links
	Pager   Pager
}

// SortLink is the address of the list sorted by column: ascending, or
// descending when it is sorted by column ascending already.
func (l ResourceList) SortLink(column string) string {
	v := url.Values{"sort": {column}}
	if column == l.Sort && !l.Desc {
		v.Set("desc", "1")
	}
	return l.Base + "?" + v.Encode()
}

// AriaSort is a column header's aria-sort: how the rows are sorted by it.
func (l ResourceList) AriaSort(column string) string {
	switch {
	case column != l.Sort:
		return "none"
	case l.Desc:
		return "descending"
	}
	return "ascending"
}

// ResourceRow is one resource in its list: the cells by column and the
// address of its deletion, "" when the administrator may not delete.
type ResourceRow struct {
	Cells  []string
	Name   string // how the row is named to assistive technology
	Href   string // the resource's own page, "" for none
	Depth  int    // the nesting of a subgroup in a tree, 0 at the top
	Delete string
}

// ResourceForm is the create form of a generic resource.
type ResourceForm struct {
	Form
	Values map[string]string
	Fields []FieldSpec
	Action string
}
