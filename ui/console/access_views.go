package console

// RolePage is one role's page: its description and its composites.
type RolePage struct {
	Form
	Name        string
	Description string
	// Composites are the roles it holds, and Choices those that may be
	// added: each value names the role's client ("" for the realm's) and
	// the role.
	Composites, Choices []Choice
}

// GroupNode is a group of a tree, with its subgroups.
type GroupNode struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Path        string      `json:"path"`
	ParentID    string      `json:"parentId"`
	SubGroups   []GroupNode `json:"subGroups"`
}

// GroupPage is one group's page.
type GroupPage struct {
	Form
	Group  GroupNode
	Values map[string]string
	// Parents are where the group may move ("" the top level).
	Parents []Choice
	// Members is a page of the group's members (value the user's id).
	Members      []Choice
	MembersPager Pager
	// Roles are the group's realm roles, RoleChoices those that may be
	// added; nil when the administrator may not read roles.
	Roles, RoleChoices []Choice
}

// MapperRow is a protocol mapper in its scope's list.
type MapperRow struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	MapperType string            `json:"mapperType"`
	Protocol   string            `json:"protocol"`
	Config     map[string]string `json:"config"`
}

// MapperType is a type of protocol mapper as the API describes it.
type MapperType struct {
	MapperType string   `json:"mapperType"`
	Protocol   string   `json:"protocol"`
	Required   []string `json:"required"`
	Optional   []string `json:"optional"`
	Tokens     []string `json:"tokens"`
}

// ScopePage is one client scope's page: its settings and mappers.
type ScopePage struct {
	Form
	ID       string
	Protocol string
	Values   map[string]string
	Mappers  []MapperRow
	Types    []string // the mapper types that may be added
}

// MapperForm is the form of a new or changed protocol mapper: the type's
// config keys, each an input named config.<key>, and its tokens' flags.
type MapperForm struct {
	Form
	ScopeID, ScopeName string
	ID                 string // "" for a new one
	Type               MapperType
	Values             map[string]string
}

// ClientAccessPage is a client's linked scopes and its service account's
// roles.
type ClientAccessPage struct {
	Form
	ClientID string
	// Default and Optional are the linked scopes (value the scope's id),
	// ScopeChoices those that may be linked.
	Default, Optional, ScopeChoices []Choice
	// ServiceAccount is the service account's user id, "" when the client
	// has none; Roles its realm roles and RoleChoices those that may be
	// added.
	ServiceAccount     string
	Roles, RoleChoices []Choice
}
