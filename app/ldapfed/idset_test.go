package ldapfed

import "testing"

func TestIDSet(t *testing.T) {
	s := newIDSet()
	ids := []string{
		"3f2504e0-4f89-41d3-9a0c-0305e82c3301", // kept as bytes
		"3F2504E0-4F89-41D3-9A0C-0305E82C3301", // another ID: case differs
		"3f2504e04f8941d39a0c0305e82c3301",     // no dashes: not the usual form
		"3f2504e0-4f89-41d3-9a0c-0305e82c330g", // not hex
		"uid=ann",
		"",
	}
	for _, id := range ids {
		if s.has(id) || !s.add(id) {
			t.Fatalf("%q: in the set before it was added", id)
		}
	}
	for _, id := range ids {
		if !s.has(id) || s.add(id) {
			t.Fatalf("%q: not in the set once added", id)
		}
	}
	if len(s.uuids) != 1 || len(s.other) != len(ids)-1 {
		t.Fatalf("%d UUIDs and %d others", len(s.uuids), len(s.other))
	}
	s.remove(ids[0])
	s.remove(ids[4])
	if s.has(ids[0]) || s.has(ids[4]) || !s.has(ids[1]) {
		t.Fatal("remove took the wrong IDs")
	}
}

func TestUUIDKey(t *testing.T) {
	k, ok := uuidKey("00112233-4455-6677-8899-aabbccddeeff")
	want := [16]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	if !ok || k != want {
		t.Fatalf("key %x, %v", k, ok)
	}
	for _, id := range []string{"00112233-4455-6677-8899-aabbccddeef", "00112233x4455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899-aabbccddeeff0"} {
		if _, ok := uuidKey(id); ok {
			t.Errorf("%q is a key", id)
		}
	}
}
