package ldapfed

// idSet is the set of external IDs a sync has met, kept for the whole
// sync: exact, and small for a large directory. An ID in the usual form
// of a UUID (OpenLDAP's entryUUID, an objectGUID as formatGUID writes it)
// is kept as its 16 bytes, a third of the string's memory and nothing for
// the collector to scan; any other ID as it is.
type idSet struct {
	uuids map[[16]byte]struct{}
	other map[string]struct{}
}

func newIDSet() *idSet {
	return &idSet{uuids: map[[16]byte]struct{}{}, other: map[string]struct{}{}}
}

// add puts id in the set; false when it was there already.
func (s *idSet) add(id string) bool {
	if k, ok := uuidKey(id); ok {
		if _, dup := s.uuids[k]; dup {
			return false
		}
		s.uuids[k] = struct{}{}
		return true
	}
	if _, dup := s.other[id]; dup {
		return false
	}
	s.other[id] = struct{}{}
	return true
}

func (s *idSet) has(id string) bool {
	if k, ok := uuidKey(id); ok {
		_, found := s.uuids[k]
		return found
	}
	_, found := s.other[id]
	return found
}

func (s *idSet) remove(id string) {
	if k, ok := uuidKey(id); ok {
		delete(s.uuids, k)
		return
	}
	delete(s.other, id)
}

// uuidKey is the 16 bytes of a UUID written as 36 lowercase characters
// with its four dashes, and false for any other string: only one
// spelling maps to a key, so that two IDs differing in case stay two.
func uuidKey(id string) (k [16]byte, ok bool) {
	if len(id) != 36 {
		return k, false
	}
	n := 0
	for i := range len(id) {
		c := id[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return k, false
			}
			continue
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return k, false
		}
		k[n/2] |= c << (4 * (1 - n%2))
		n++
	}
	return k, true
}
