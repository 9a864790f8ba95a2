//go:build !linux

package upgrade

// freeBytes is not measured beyond Linux, where the server is deployed:
// statfs's fields differ from one system to the next. Pre-validation
// reports the check skipped.
func freeBytes(string) (int64, error) { return 0, errFreeSpaceUnknown }
