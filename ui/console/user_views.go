package console

// AttributeRow is a custom attribute of the realm's schema on a user's
// page: its value, several one a line.
type AttributeRow struct {
	Name, Label string
	Value       string
	Multivalued bool
}

// AttributeForm is the state of a refused attribute form: the attribute
// it was about, the value posted and its message.
type AttributeForm struct {
	Name, Value, Error string
}

// TOTPRow is a user's authenticator app.
type TOTPRow struct {
	UserLabel   string `json:"userLabel"`
	CreatedDate int64  `json:"createdDate"`
}

// PasskeyRow is one of a user's security keys or passkeys.
type PasskeyRow struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	CreatedDate  int64  `json:"createdDate"`
	LastUsedDate int64  `json:"lastUsedDate"`
}

// IdentityRow is a user's account at an identity provider, linked.
type IdentityRow struct {
	IdentityProvider string `json:"identityProvider"`
	UserID           string `json:"userId"`
	UserName         string `json:"userName"`
	Email            string `json:"email"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

// RequiredActions are what a user must do at their next sign-in, as the
// API keeps them.
type RequiredActions struct {
	UpdatePassword bool // requirePasswordReset
	VerifyEmail    bool // an address not verified yet
	ConfigureTOTP  bool // the realm asks for a second factor, and the user has none
	HasEmail       bool
}

// AccountPage is one administrator's page: their grant, their sessions,
// and the form refused, if one was.
type AccountPage struct {
	Account  AccountRow
	Form     Form
	Values   map[string]string
	Sessions []AccountSession
	Realms   []string // the realms the account may be confined to
}

// AccountSession is a sign-in session of an administrator.
type AccountSession struct {
	ID         string   `json:"id"`
	IPAddress  string   `json:"ipAddress"`
	Start      int64    `json:"start"`
	LastAccess int64    `json:"lastAccess"`
	Expires    int64    `json:"expires"`
	AMR        []string `json:"amr"`
}

// errorID is the ID of an input's message, after a space, when it has
// one.
func errorID(id, err string) string {
	if err == "" {
		return ""
	}
	return " " + id + "-error"
}
