package ldapfed

import (
	"bytes"
	"slices"
	"strings"
)

// memberIndex says which groups hold each member DN: what the member
// strategy asks for every entry of a sync, kept for the whole sync. A map
// from DN strings to slices of group DNs took about 120 bytes a
// membership (12 MB for 100,000 people in groups, twice that in the heap
// the collector lets grow); here the member DNs are packed one after
// another in one buffer with a 12-byte record each, sorted once all are
// in, and found by binary search. A DN under one of bases is kept as the
// part above it and the base's number, a byte: most members are people
// under usersDn, whose DNs are mostly that base.
type memberIndex struct {
	bases  []string // normalized, each with its leading comma; at most 255
	groups []string // group DNs, normalized
	buf    []byte   // member keys (memberKey), one after another
	recs   []memberRec
}

// memberRec is one membership: the member's key, buf[off:off+n], in the
// group groups[group].
type memberRec struct {
	off, n, group uint32
}

func newMemberIndex(bases ...string) *memberIndex {
	m := &memberIndex{}
	for _, b := range bases {
		m.bases = append(m.bases, ","+b)
	}
	return m
}

// appendKey appends the key of dn (normalized): the number of the base it
// is under (0 for none, 1 for bases[0], …) and the rest of it, so that
// two DNs have the same key only if they are the same.
func (m *memberIndex) appendKey(key []byte, dn string) []byte {
	for i, base := range m.bases {
		if rest, ok := strings.CutSuffix(dn, base); ok {
			return append(append(key, byte(i+1)), rest...)
		}
	}
	return append(append(key, 0), dn...)
}

// addGroup starts the members of the group dn (normalized) and answers
// its number, for add.
func (m *memberIndex) addGroup(dn string) uint32 {
	m.groups = append(m.groups, dn)
	return uint32(len(m.groups) - 1)
}

// add records member (normalized) in group.
func (m *memberIndex) add(member string, group uint32) {
	off := len(m.buf)
	m.buf = m.appendKey(m.buf, member)
	m.recs = append(m.recs, memberRec{off: uint32(off), n: uint32(len(m.buf) - off), group: group})
}

func (m *memberIndex) dn(r memberRec) []byte { return m.buf[r.off : r.off+r.n] }

// sort makes the index ready for groupsOf, once every membership is in.
func (m *memberIndex) sort() {
	slices.SortFunc(m.recs, func(a, b memberRec) int { return bytes.Compare(m.dn(a), m.dn(b)) })
}

// groupsOf are the DNs of the groups holding member (normalized).
func (m *memberIndex) groupsOf(member string) []string {
	key := m.appendKey(make([]byte, 0, len(member)+1), member)
	i, found := slices.BinarySearchFunc(m.recs, key, func(r memberRec, key []byte) int { return bytes.Compare(m.dn(r), key) })
	if !found {
		return nil
	}
	var out []string
	for ; i < len(m.recs) && bytes.Equal(m.dn(m.recs[i]), key); i++ {
		out = append(out, m.groups[m.recs[i].group])
	}
	return out
}
