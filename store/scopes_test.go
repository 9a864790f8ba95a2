package store

// scopeSuite is the conformance tests of the scope tables.
func scopeSuite() []suiteTest {
	return []suiteTest{}
}
