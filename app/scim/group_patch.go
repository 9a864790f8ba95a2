package scim

import (
	"fmt"
	"net/http"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/store"
)

var groupPatcher = patcher{defs: groupDefs, core: schemaGroup}

// PatchGroup applies a PATCH to a group (RFC 7644 §3.5.2). Operations on
// members run as SQL on the memberships (add, remove by value or by
// members[value eq "…"], replace), so a change of one member of a large
// group reads none of the others; the rest apply to the group's name and
// externalId. All in one transaction: every operation or none.
func (s *Service) PatchGroup(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	ops, err := readPatch(body)
	if err != nil {
		return err
	}
	if ops, err = expandGroupOps(ops); err != nil {
		return err
	}
	return s.changeGroup(w, r, func(tx *store.Store, g *store.Group, sg *store.SCIMGroup) error {
		doc := map[string]any{"id": g.ID, "displayName": g.Name}
		if sg.ExternalID != "" {
			doc["externalId"] = sg.ExternalID
		}
		for i, op := range ops {
			var err error
			if op.path != nil && strings.EqualFold(op.path.AttributePath.AttributeName, "members") {
				err = s.patchMembers(r, tx, g, op)
			} else {
				err = groupPatcher.applyOne(doc, op)
			}
			if e, ok := err.(*Error); ok {
				e.Detail = fmt.Sprintf("Operations[%d]: %s", i, e.Detail)
			}
			if err != nil {
				return err
			}
		}
		g.Name, sg.ExternalID = text(doc, "displayName"), text(doc, "externalId")
		if g.Name == "" {
			return badRequest(typeInvalidValue, "displayName is required")
		}
		return nil
	})
}

// expandGroupOps splits an operation without a path into one per
// attribute its value names, so that members go their own way.
func expandGroupOps(ops []patchOp) ([]patchOp, error) {
	var out []patchOp
	for _, op := range ops {
		obj, ok := op.value.(map[string]any)
		if op.path != nil || op.op == opRemove || !ok {
			out = append(out, op)
			continue
		}
		for k, v := range obj {
			path, err := parsePath(k)
			if err != nil {
				return nil, badRequest(typeInvalidSyntax, "unknown attribute %q", k)
			}
			out = append(out, patchOp{op: op.op, rawPath: k, path: path, value: v, hasVal: true})
		}
	}
	return out, nil
}

// patchMembers applies one operation on members to the memberships.
func (s *Service) patchMembers(r *http.Request, tx *store.Store, g *store.Group, op patchOp) error {
	ctx := r.Context()
	if uri := op.path.AttributePath.URI(); uri != "" && !strings.EqualFold(uri, schemaGroup) {
		return badRequest(typeInvalidPath, "unknown schema %q in the path", uri)
	}
	if op.path.SubAttribute != nil || op.path.AttributePath.SubAttribute != nil {
		return badRequest(typeInvalidPath, "members take no sub-attribute path: add or remove whole members")
	}
	if op.path.ValueExpression != nil {
		if op.op != opRemove {
			return badRequest(typeInvalidPath, "%s members by filter: give the members as the value instead", op.op)
		}
		ids, err := memberValues(op.path.ValueExpression)
		if err != nil {
			return err
		}
		return removeMembers(r, tx, g, ids)
	}
	var ids []string
	if op.hasVal && op.value != nil {
		def := find(groupSchema.Attributes, "members")
		v, err := normalizeValue(def, op.value, "members")
		if err != nil {
			return err
		}
		list, _ := v.([]any)
		if ids, err = memberIDs(list); err != nil {
			return err
		}
	}
	switch op.op {
	case opRemove:
		if ids == nil {
			return tx.ClearGroupMembers(ctx, g.ID)
		}
		return removeMembers(r, tx, g, ids)
	case opReplace:
		if err := tx.ClearGroupMembers(ctx, g.ID); err != nil {
			return err
		}
	}
	if err := checkMembers(r, tx, g.RealmID, ids); err != nil {
		return err
	}
	for _, id := range ids {
		if err := tx.AddGroupMember(ctx, g.ID, id); err != nil {
			return err
		}
	}
	return nil
}

func removeMembers(r *http.Request, tx *store.Store, g *store.Group, ids []string) error {
	for _, id := range ids {
		if err := tx.RemoveGroupMember(r.Context(), g.ID, id); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

// memberValues are the IDs a members filter selects: value eq "…",
// possibly several joined by or. Other filters would need every member
// read, and are refused.
func memberValues(e filter.Expression) ([]string, error) {
	switch e := e.(type) {
	case *filter.AttributeExpression:
		id, ok := e.CompareValue.(string)
		if e.Operator != filter.EQ || !strings.EqualFold(e.AttributePath.AttributeName, "value") ||
			e.AttributePath.SubAttribute != nil || !ok {
			break
		}
		return []string{id}, nil
	case *filter.LogicalExpression:
		if e.Operator != filter.OR {
			break
		}
		l, err := memberValues(e.Left)
		if err != nil {
			return nil, err
		}
		r, err := memberValues(e.Right)
		if err != nil {
			return nil, err
		}
		return append(l, r...), nil
	}
	return nil, badRequest(typeInvalidFilter, `members are selected by value: members[value eq "id"], or several joined by or`)
}
