package store

// roleSuite is the conformance tests of the role tables.
func roleSuite() []suiteTest {
	return []suiteTest{}
}
