package store

// groupSuite is the conformance tests of the group tables.
func groupSuite() []suiteTest {
	return []suiteTest{}
}
