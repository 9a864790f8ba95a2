package store

// clientSuite is the conformance tests of the client tables.
func clientSuite() []suiteTest {
	return []suiteTest{}
}
