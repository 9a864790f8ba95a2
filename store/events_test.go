package store

// eventSuite is the conformance tests of the event tables.
func eventSuite() []suiteTest {
	return []suiteTest{}
}
